package grammar

import (
	"regexp/syntax"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// trimAnchors drops a leading ^ or \A and a trailing $ or \z: a constraint always matches the
// whole answer, so they say nothing.
func trimAnchors(re *syntax.Regexp) *syntax.Regexp {
	isBegin := func(r *syntax.Regexp) bool { return r.Op == syntax.OpBeginText || r.Op == syntax.OpBeginLine }
	isEnd := func(r *syntax.Regexp) bool { return r.Op == syntax.OpEndText || r.Op == syntax.OpEndLine }
	switch {
	case isBegin(re) || isEnd(re):
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case re.Op == syntax.OpConcat && len(re.Sub) > 0:
		sub := re.Sub
		if isBegin(sub[0]) {
			sub = sub[1:]
		}
		if len(sub) > 0 && isEnd(sub[len(sub)-1]) {
			sub = sub[:len(sub)-1]
		}
		re.Sub = sub
	}
	return re
}

// noAssertions refuses what a byte-at-a-time DFA cannot follow: anchors inside the pattern,
// word boundaries.
func noAssertions(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return &UnsupportedError{Feature: "an anchor inside the regular expression"}
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return &UnsupportedError{Feature: "a word boundary in the regular expression"}
	}
	for _, sub := range re.Sub {
		if err := noAssertions(sub); err != nil {
			return err
		}
	}
	return nil
}

// maxProg bounds a compiled constraint's program, and with it a DFA state's work.
const maxProg = 200_000

// compileRegex parses and compiles a pattern that must match an answer whole.
func compileRegex(pattern string) (*syntax.Prog, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		if e, ok := err.(*syntax.Error); ok {
			switch e.Code {
			case syntax.ErrLarge, syntax.ErrNestingDepth:
				return nil, &UnsupportedError{Feature: "a regular expression this large"}
			case syntax.ErrInvalidRepeatSize:
				return nil, &UnsupportedError{Feature: "counted repetitions whose product passes 1000"}
			}
		}
		return nil, &InvalidError{Reason: "the regular expression does not parse"}
	}
	re = trimAnchors(re)
	if err := noAssertions(re); err != nil {
		return nil, err
	}
	// Counted repetitions are written out by Simplify and Compile: estimate first, so that a
	// short pattern cannot make a huge program.
	if expanded(re, maxProg) > maxProg {
		return nil, &UnsupportedError{Feature: "a regular expression this large"}
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil || len(prog.Inst) > maxProg {
		return nil, &UnsupportedError{Feature: "a regular expression this large"}
	}
	return prog, nil
}

// expanded estimates the instructions re compiles to, counted repetitions written out; it
// stops counting past limit.
func expanded(re *syntax.Regexp, limit int) int {
	n := 1
	for _, sub := range re.Sub {
		n += expanded(sub, limit)
		if n > limit {
			return limit + 1
		}
	}
	if re.Op == syntax.OpRepeat {
		times := max(re.Max, re.Min+1, 1)
		if n > limit/times {
			return limit + 1
		}
		n *= times
	}
	return n
}

// dfa is the lazily built DFA of a program over bytes. A state is the sorted set of the
// program's instructions that wait for a rune (or match), and the bytes of a UTF-8 character
// begun but not complete. Its methods are called with the owner's lock held.
type dfa struct {
	prog   *syntax.Prog
	states []dstate
	byKey  map[string]int32
	// seen[pc] == walk marks the instructions one closure has passed, so that a loop of
	// instructions that read nothing ((a*)*) is walked once, not for ever.
	seen []uint32
	walk uint32
	// bytes is what the states hold, about; tooWide is set once a state would hold more than
	// maxStatePCs instructions (the step that made it leads nowhere, and the Index fails).
	bytes   int64
	tooWide bool
	// work counts the instructions the steps computed so far have visited: what the masks
	// cost the scheduler's goroutine, which bytes alone do not say (most steps make no state).
	work int64
}

// workSoft and workHard bound an Index's steps' work: past the first it is retired, past the
// second an answer on it fails. About a third of a second and a second and a half of a core; a
// JSON object's whole automaton, every byte from every state, costs just under the first.
const workSoft, workHard = 1 << 24, 1 << 26

// maxStatePCs bounds the instructions one state holds: what it costs to keep, and each step
// from it. A pattern of many optional parts ((?:a?){1000} sixty times) keeps tens of thousands
// alive at once, each a state of its own; the schemas of real answers hold tens (an enum's
// values are sorted, so that their shared prefixes merge), a client's pattern of thousands of
// words one a word.
const maxStatePCs = 8192

// stateBytes is a state's own size beside its instructions: its transitions, its key in
// byKey, the slices' headers.
const stateBytes = int64(unsafe.Sizeof(dstate{})) + 64

// dstate is one DFA state. next[b] is 0 until computed, then the next state's id + 1, or -1
// when byte b leads nowhere.
type dstate struct {
	pcs     []uint32
	pending []byte
	accept  bool // the answer may end here
	final   bool // and nothing may follow
	next    [256]int32
}

const dead = -1

// newDFA is prog's DFA with its start state; a start wider than maxStatePCs is refused.
func newDFA(prog *syntax.Prog) (*dfa, error) {
	d := &dfa{prog: prog, byKey: map[string]int32{}, seen: make([]uint32, len(prog.Inst))}
	d.newWalk()
	pcs := d.closure(nil, uint32(prog.Start))
	if d.intern(pcs, nil) == dead {
		return nil, errTooWide
	}
	return d, nil
}

// errTooWide is a constraint whose automaton's states hold more alternatives at once than a
// state may.
var errTooWide = &UnsupportedError{Feature: "a constraint with more than " + strconv.Itoa(maxStatePCs) + " alternatives open at once"}

// newWalk begins the closures of one step: an instruction one of them passed is not passed
// again by the next.
func (d *dfa) newWalk() {
	d.walk++
	if d.walk == 0 { // wrapped: no stale mark may equal the new walk
		clear(d.seen)
		d.walk = 1
	}
}

// closure adds pc and what it reaches without reading a rune to set, skipping what this walk
// has passed already.
func (d *dfa) closure(set []uint32, pc uint32) []uint32 {
	stack := []uint32{pc}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.seen[pc] == d.walk {
			continue
		}
		d.seen[pc] = d.walk
		inst := &d.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, inst.Arg, inst.Out)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			stack = append(stack, inst.Out)
		case syntax.InstFail:
		default: // a rune instruction or Match
			set = append(set, pc)
		}
	}
	return set
}

// intern returns the id of the state (pcs, pending), making it when new; dead (and tooWide
// set) for one of more than maxStatePCs instructions. pcs is sorted here.
func (d *dfa) intern(pcs []uint32, pending []byte) int32 {
	if len(pcs) > maxStatePCs {
		d.tooWide = true
		return dead
	}
	slices.Sort(pcs)
	key := make([]byte, 0, 4*len(pcs)+len(pending)+1)
	for _, pc := range pcs {
		key = append(key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	key = append(append(key, 0xff), pending...)
	if id, ok := d.byKey[string(key)]; ok {
		return id
	}
	st := dstate{pcs: slices.Clone(pcs), pending: slices.Clone(pending)}
	if len(pending) == 0 {
		onlyMatch := true
		for _, pc := range pcs {
			if d.prog.Inst[pc].Op == syntax.InstMatch {
				st.accept = true
			} else {
				onlyMatch = false
			}
		}
		st.final = st.accept && onlyMatch
	}
	id := int32(len(d.states))
	d.states = append(d.states, st)
	d.byKey[string(key)] = id
	d.bytes += stateBytes + 8*int64(len(pcs)) + 2*int64(len(pending)) // pcs and the key's copy of them
	return id
}

// step is the state after byte b from state s, or dead.
func (d *dfa) step(s int32, b byte) int32 {
	if n := d.states[s].next[b]; n != 0 {
		if n < 0 {
			return dead
		}
		return n - 1
	}
	next := d.computeStep(s, b)
	if next == dead {
		d.states[s].next[b] = -1
	} else {
		d.states[s].next[b] = next + 1
	}
	return next
}

func (d *dfa) computeStep(s int32, b byte) int32 {
	st := &d.states[s]
	d.work += int64(len(st.pcs)) + 1
	if len(st.pending) > 0 && st.pending[0] == wholeClass {
		return d.stepWhole(st.pcs, st.pending, b)
	}
	buf := append(slices.Clip(st.pending), b)
	if len(buf) == 1 && b < utf8.RuneSelf {
		return d.advance(st.pcs, rune(b))
	}
	if !utf8.FullRune(buf) {
		lo, hi, ok := completions(buf)
		if !ok {
			return dead
		}
		// The instructions that take every rune buf can become, and those that take some.
		var whole, some []uint32
		for _, pc := range st.pcs {
			switch d.reads(pc, lo, hi) {
			case readsAll:
				whole = append(whole, pc)
			case readsSome:
				some = append(some, pc)
			}
		}
		switch {
		case len(whole) == 0 && len(some) == 0:
			return dead
		case len(some) == 0:
			// Which rune it becomes no longer matters, only how many bytes are left and
			// what the next may be: one state for every such prefix.
			need, nextLo, nextHi := continuation(buf)
			return d.intern(whole, []byte{wholeClass, byte(need), nextLo, nextHi})
		}
		return d.intern(append(whole, some...), buf)
	}
	r, size := utf8.DecodeRune(buf)
	if (r == utf8.RuneError && size <= 1) || size != len(buf) {
		return dead
	}
	return d.advance(st.pcs, r)
}

// wholeClass marks a pending state whose instructions all take any rune the character can
// become (0xFF never occurs in UTF-8): pending is {wholeClass, bytes left, next byte's lowest,
// next byte's highest}.
const wholeClass = 0xFF

func (d *dfa) stepWhole(pcs []uint32, pending []byte, b byte) int32 {
	left, lo, hi := pending[1], pending[2], pending[3]
	if b < lo || b > hi {
		return dead
	}
	if left > 1 {
		return d.intern(slices.Clone(pcs), []byte{wholeClass, left - 1, 0x80, 0xBF})
	}
	var next []uint32
	d.newWalk()
	for _, pc := range pcs {
		next = d.closure(next, d.prog.Inst[pc].Out)
	}
	if len(next) == 0 {
		return dead
	}
	return d.intern(next, nil)
}

// continuation is how many bytes the incomplete sequence buf still needs, and the range the
// next one must fall in.
func continuation(buf []byte) (need int, lo, hi byte) {
	total := 2
	switch c := buf[0]; {
	case c >= 0xF0:
		total = 4
	case c >= 0xE0:
		total = 3
	}
	lo, hi = 0x80, 0xBF
	if len(buf) == 1 {
		switch buf[0] {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
	}
	return total - len(buf), lo, hi
}

// advance is the state after rune r from the instructions pcs.
func (d *dfa) advance(pcs []uint32, r rune) int32 {
	var next []uint32
	d.newWalk()
	for _, pc := range pcs {
		inst := &d.prog.Inst[pc]
		if inst.Op != syntax.InstMatch && inst.MatchRune(r) {
			next = d.closure(next, inst.Out)
		}
	}
	if len(next) == 0 {
		return dead
	}
	return d.intern(next, nil)
}

// How an instruction stands to the runes of a range.
const (
	readsNone = iota
	readsSome
	readsAll
)

// reads says whether instruction pc takes none, some or all of the runes in [lo, hi].
func (d *dfa) reads(pc uint32, lo, hi rune) int {
	inst := &d.prog.Inst[pc]
	switch inst.Op {
	case syntax.InstRuneAny:
		return readsAll
	case syntax.InstRuneAnyNotNL:
		if lo <= '\n' && '\n' <= hi {
			return readsSome
		}
		return readsAll
	case syntax.InstRune1:
		return pointIn(inst.Rune[0], lo, hi)
	case syntax.InstRune:
		if len(inst.Rune) == 1 {
			if syntax.Flags(inst.Arg)&syntax.FoldCase == 0 {
				return pointIn(inst.Rune[0], lo, hi)
			}
			// A folded literal: the runes of its orbit.
			r0 := inst.Rune[0]
			for r := unicode.SimpleFold(r0); ; r = unicode.SimpleFold(r) {
				if r >= lo && r <= hi {
					return readsSome
				}
				if r == r0 {
					return readsNone
				}
			}
		}
		covered := rune(0)
		for i := 0; i+1 < len(inst.Rune); i += 2 {
			a, b := max(inst.Rune[i], lo), min(inst.Rune[i+1], hi)
			if a <= b {
				covered += b - a + 1
			}
		}
		switch {
		case covered == 0:
			return readsNone
		case covered == hi-lo+1:
			return readsAll
		}
		return readsSome
	}
	return readsNone // Match reads nothing
}

func pointIn(r, lo, hi rune) int {
	switch {
	case r < lo || r > hi:
		return readsNone
	case lo == hi:
		return readsAll
	}
	return readsSome
}

// completions is the range of runes that the incomplete UTF-8 sequence buf can still become,
// or false when no well-formed sequence starts with it.
func completions(buf []byte) (lo, hi rune, ok bool) {
	var need int
	// The first continuation byte's bounds depend on the lead byte (no overlong forms, no
	// surrogates, nothing past U+10FFFF); later ones are 0x80-0xBF.
	firstLo, firstHi := byte(0x80), byte(0xBF)
	switch c := buf[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 2
	case c == 0xE0:
		need, firstLo = 3, 0xA0
	case c == 0xED:
		need, firstHi = 3, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 3
	case c == 0xF0:
		need, firstLo = 4, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 4
	case c == 0xF4:
		need, firstHi = 4, 0x8F
	default:
		return 0, 0, false
	}
	if len(buf) >= need {
		return 0, 0, false
	}
	low := make([]byte, need)
	high := make([]byte, need)
	copy(low, buf)
	copy(high, buf)
	for i := 1; i < need; i++ {
		bl, bh := byte(0x80), byte(0xBF)
		if i == 1 {
			bl, bh = firstLo, firstHi
		}
		if i < len(buf) {
			if buf[i] < bl || buf[i] > bh {
				return 0, 0, false
			}
			continue
		}
		low[i], high[i] = bl, bh
	}
	lo, _ = utf8.DecodeRune(low)
	hi, _ = utf8.DecodeRune(high)
	return lo, hi, lo != utf8.RuneError && hi != utf8.RuneError
}
