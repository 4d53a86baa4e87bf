package entities

import (
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// fastMatcher finds the matches of a pattern of the form \bX much faster than a full
// regexp scan. Go's regexp tries a match at every byte of the text; here a match is only
// tried where X can begin (a byte in first) and where \b holds, with X anchored there.
// For valid UTF-8 text the result is exactly FindAllStringIndex's: both report, left to
// right, the leftmost match with the same preference among alternatives, and X's own
// assertions see the same text around them.
type fastMatcher struct {
	source   *regexp.Regexp // the pattern this matcher was derived from
	anchored *regexp.Regexp // \A(?:X)
	first    [256]bool      // bytes a match of X can begin with
	// prefix are the bytes a match's first bytes fall in, one set per byte, as far as X
	// fixes them ("\d{4}-" fixes five): a position that fails them is passed over without
	// asking the regexp.
	prefix [][256]bool
	// required, when hasRequired, is a set every match holds a byte of ("@" for an e-mail):
	// no match begins after the last such byte of the text.
	required    [256]bool
	hasRequired bool
	// run, when hasRun, is X's leading run of one class (runMin to runMax bytes of run,
	// "[A-Za-z0-9._%+-]+" in an e-mail) and the bytes that must come next, none of the run's
	// ("@"): the run from a position must be the whole run there, then one of next.
	run            [256]bool
	after          [][256]bool // the bytes after the run, as far as they are fixed
	runWide        []rune      // the run's class as ranges, for the runes past ASCII ((?i) adds K and ſ)
	runMin, runMax int
	hasRun         bool
	// optional are the first bytes of X's leading optional parts ("https?://" of a URL): a
	// position that begins with one is left to the regexp.
	optional [256]bool
	// alphabet are the bytes a match of X can hold: an attempt from p reads no further than
	// the first byte past p that is not one (and the rune after it), which is what it is
	// charged (findAllWithin).
	alphabet [256]bool
}

// maxPrefix bounds the byte sets checked before the regexp is asked.
const maxPrefix = 8

// newFastMatcher returns nil when the pattern does not have the \bX shape, or when X
// could match the empty string or test an assertion before its first character; those
// patterns use the plain scan.
func newFastMatcher(re *regexp.Regexp) *fastMatcher {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	if tree.Op != syntax.OpConcat || len(tree.Sub) < 2 || tree.Sub[0].Op != syntax.OpWordBoundary {
		return nil
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: tree.Flags, Sub: tree.Sub[1:]}
	m := &fastMatcher{source: re}
	nullable, ok := firstBytes(rest, &m.first)
	if !ok || nullable {
		return nil
	}
	anchored, err := regexp.Compile(`\A(?:` + rest.String() + `)`)
	if err != nil {
		return nil
	}
	m.anchored = anchored
	m.prefix, _ = prefixClasses(rest, nil)
	m.required, m.hasRequired = requiredClass(rest)
	m.leadingRun(rest)
	alphabetOf(rest, &m.alphabet)
	return m
}

// alphabetOf marks in set the bytes a match of re can hold: its literals' and classes' (any
// non-ASCII rune marks every byte from 0x80 up).
func alphabetOf(re *syntax.Regexp, set *[256]bool) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			addRune(set, r, re.Flags&syntax.FoldCase != 0)
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			addRange(set, re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		for b := range set {
			set[b] = true
		}
	}
	for _, sub := range re.Sub {
		alphabetOf(sub, set)
	}
}

// leadingRun sets the run filter when X (after optional parts, whose first bytes are then
// left to the regexp) begins with elements that match only runes of one class, at least one
// of them, followed by something that cannot be empty and begins with no rune of the class:
// "[A-Za-z0-9._%+-]+@" (an e-mail), "(?:Jan|Feb|...)[a-z]* \d" (a date), or the first round of
// a repeated group, "(?:\d{1,3}\.){3}" (an address). A match from p then holds the whole run
// of the class there, so that run's length and the bytes after it can be checked first.
func (m *fastMatcher) leadingRun(x *syntax.Regexp) {
	if x.Op != syntax.OpConcat {
		return
	}
	seq := x.Sub
	for len(seq) > 1 && seq[0].Op == syntax.OpQuest {
		if _, ok := firstBytes(seq[0].Sub[0], &m.optional); !ok {
			return
		}
		seq = seq[1:]
	}
	if h := seq[0]; h.Op == syntax.OpPlus || h.Op == syntax.OpRepeat && h.Min > 0 {
		inner := h.Sub[0]
		if inner.Op == syntax.OpCapture {
			inner = inner.Sub[0]
		}
		if inner.Op == syntax.OpConcat {
			seq = inner.Sub // its first round: a match begins with one
		}
	}
	// The class is the first class-bound element's; literals before it must fall in it.
	var class []rune
	for _, el := range seq {
		if c, _, _, ok := runeRun(el, nil); ok {
			class = c
			break
		}
		if el.Op != syntax.OpLiteral && el.Op != syntax.OpAlternate {
			break
		}
	}
	if class == nil {
		return
	}
	lo, hi, k := 0, 0, 0
	for ; k < len(seq); k++ {
		c, l, h, ok := runeRun(seq[k], class)
		if !ok {
			break
		}
		class, lo = c, lo+l
		if h < 0 || hi < 0 {
			hi = -1
		} else {
			hi += h
		}
	}
	if k == 0 || k == len(seq) || lo < 1 {
		return
	}
	var run [256]bool
	wide := false
	for i := 0; i+1 < len(class); i += 2 {
		for r := class[i]; r <= class[i+1] && r < utf8.RuneSelf; r++ {
			run[r] = true
		}
		wide = wide || class[i+1] >= utf8.RuneSelf
	}
	tail := &syntax.Regexp{Op: syntax.OpConcat, Flags: x.Flags, Sub: seq[k:]}
	var next [256]bool
	if nullable, ok := firstBytes(tail, &next); !ok || nullable || wide && !oneByte(&next) {
		return // what follows could begin with a rune of the run
	}
	for b := range run {
		if run[b] && next[b] {
			return
		}
	}
	after, _ := prefixClasses(tail, nil)
	if len(after) == 0 {
		after = [][256]bool{next}
	}
	m.run, m.after, m.runWide, m.runMin, m.runMax, m.hasRun = run, after, class, lo, hi, true
}

// runeRun reports whether re matches only runes of one class, and how many: lo to hi (hi < 0:
// any). With class nil, only a class (or a repeat of one) names it; given a class, re's
// literals, classes, sequences and alternatives must all fall in it.
func runeRun(re *syntax.Regexp, class []rune) (_ []rune, lo, hi int, ok bool) {
	switch re.Op {
	case syntax.OpCharClass:
		if class == nil {
			return re.Rune, 1, 1, true
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if !rangeIn(class, re.Rune[i], re.Rune[i+1]) {
				return nil, 0, 0, false
			}
		}
		return class, 1, 1, true
	case syntax.OpCapture:
		return runeRun(re.Sub[0], class)
	case syntax.OpPlus, syntax.OpStar, syntax.OpQuest, syntax.OpRepeat:
		c, l, h, ok := runeRun(re.Sub[0], class)
		if !ok {
			return nil, 0, 0, false
		}
		switch re.Op {
		case syntax.OpPlus:
			return c, l, -1, true
		case syntax.OpStar:
			return c, 0, -1, true
		case syntax.OpQuest:
			return c, 0, h, true
		}
		if re.Max < 0 || h < 0 {
			return c, l * re.Min, -1, true
		}
		return c, l * re.Min, h * re.Max, true
	}
	if class == nil {
		return nil, 0, 0, false
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			for _, f := range foldOrbit(r, re.Flags&syntax.FoldCase != 0) {
				if !inClass(class, f) {
					return nil, 0, 0, false
				}
			}
		}
		return class, len(re.Rune), len(re.Rune), true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			_, l, h, ok := runeRun(sub, class)
			if !ok {
				return nil, 0, 0, false
			}
			lo += l
			if h < 0 || hi < 0 {
				hi = -1
			} else {
				hi += h
			}
		}
		return class, lo, hi, true
	case syntax.OpAlternate:
		lo = -1
		for _, sub := range re.Sub {
			_, l, h, ok := runeRun(sub, class)
			if !ok {
				return nil, 0, 0, false
			}
			if lo < 0 || l < lo {
				lo = l
			}
			if h < 0 || hi < 0 {
				hi = -1
			} else {
				hi = max(hi, h)
			}
		}
		return class, lo, hi, true
	}
	return nil, 0, 0, false
}

// rangeIn reports whether class covers every rune from lo to hi.
func rangeIn(class []rune, lo, hi rune) bool {
	for i := 0; i+1 < len(class); i += 2 {
		if class[i] <= lo && hi <= class[i+1] {
			return true
		}
	}
	return false
}

// foldOrbit is r and, folding case, every rune that folds to it.
func foldOrbit(r rune, fold bool) []rune {
	out := []rune{r}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			out = append(out, f)
		}
	}
	return out
}

func inClass(class []rune, r rune) bool {
	for i := 0; i+1 < len(class); i += 2 {
		if class[i] <= r && r <= class[i+1] {
			return true
		}
	}
	return false
}

// inRun reports whether r is in the leading run's class.
func (m *fastMatcher) inRun(r rune) bool {
	if r < utf8.RuneSelf {
		return m.run[r]
	}
	return inClass(m.runWide, r)
}

// findAll is FindAllStringIndex(text, -1) for the source pattern; text must be valid
// UTF-8.
func (m *fastMatcher) findAll(text string) [][]int {
	out, _ := m.findAllWithin(text, attemptBudget(len(text)))
	return out
}

// attemptBudget bounds the text the anchored attempts on a text of n bytes may read, summed:
// an attempt may read as far as the pattern's alphabet reaches, so that a text made of one
// pattern's near misses ("a.a.a." to a URL's) would cost the square of its length, where the
// plain scan costs its length. A note's attempts, each a word or so long, stay far under it.
func attemptBudget(n int) int { return 4*n + 1<<16 }

// findAllWithin is findAll with the attempts' budget given; past it the plain scan answers
// (the same matches), and fellBack says so.
func (m *fastMatcher) findAllWithin(text string, budget int) (out [][]int, fellBack bool) {
	end := len(text)
	if m.hasRequired {
		for end > 0 && !m.required[text[end-1]] {
			end--
		}
		end-- // the last byte a match must reach; no match begins after it
	}
	runEnd := 0   // where the leading run that prefixAt last walked ends
	reachEnd := 0 // where the span of the alphabet's bytes last walked ends
	for p := 0; p <= end && p < len(text); p++ {
		if !m.first[text[p]] || !utf8.RuneStart(text[p]) || !wordBoundaryAt(text, p) || !m.prefixAt(text, p, &runEnd) {
			continue
		}
		if p >= reachEnd {
			for reachEnd = p; reachEnd < len(text) && m.alphabet[text[reachEnd]]; reachEnd++ {
			}
		}
		if budget -= reachEnd - p + utf8.UTFMax; budget < 0 {
			return m.source.FindAllStringIndex(text, -1), true
		}
		loc := m.anchored.FindStringIndex(text[p:])
		if loc == nil {
			continue
		}
		out = append(out, []int{p, p + loc[1]})
		p += loc[1] - 1 // the match is not empty; the loop's p++ lands on its end
	}
	return out, false
}

// prefixAt reports whether text from p can begin a match by the prefix's sets and the
// leading run: a position that cannot is passed over without asking the regexp. runEnd is
// where the run walked last ends: a position inside it shares its end, so that each run is
// walked once, not once a position.
func (m *fastMatcher) prefixAt(text string, p int, runEnd *int) bool {
	if len(text)-p < len(m.prefix) {
		return false
	}
	for i := range m.prefix {
		if !m.prefix[i][text[p+i]] {
			return false
		}
	}
	if m.hasRun && !m.optional[text[p]] {
		j := *runEnd
		if p >= j {
			for j = p; j < len(text); {
				r, size := rune(text[j]), 1
				if r >= utf8.RuneSelf {
					r, size = utf8.DecodeRuneInString(text[j:])
				}
				if !m.inRun(r) {
					break
				}
				j += size
			}
			*runEnd = j
		}
		// The run's runes from p, counted as far as its bounds ask.
		limit := m.runMin
		if m.runMax >= 0 {
			limit = m.runMax + 1
		}
		n := 0
		for k := p; k < j && n < limit; n++ {
			if text[k] < utf8.RuneSelf {
				k++
			} else {
				_, size := utf8.DecodeRuneInString(text[k:])
				k += size
			}
		}
		if n < m.runMin || (m.runMax >= 0 && n > m.runMax) || len(text)-j < len(m.after) {
			return false
		}
		for i := range m.after {
			if !m.after[i][text[j+i]] {
				return false
			}
		}
	}
	return true
}

// prefixClasses appends to out the sets of the bytes every match of re begins with, one per
// byte, while each element of re is one ASCII byte for certain: a literal, a class, either
// repeated a fixed least number of times. It stops after an element that may be wider (a
// non-ASCII rune, a case that folds to one) or whose width varies, and at an optional part or
// an alternative; cont says whether re was walked to its end.
func prefixClasses(re *syntax.Regexp, out [][256]bool) (_ [][256]bool, cont bool) {
	if len(out) >= maxPrefix {
		return out, false
	}
	fold := re.Flags&syntax.FoldCase != 0
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			set := runeSet(r, fold)
			out = append(out, set)
			if !oneByte(&set) || len(out) >= maxPrefix {
				return out, false
			}
		}
		return out, true
	case syntax.OpCharClass:
		set := classSet(re.Rune)
		return append(out, set), oneByte(&set)
	case syntax.OpCapture:
		return prefixClasses(re.Sub[0], out)
	case syntax.OpPlus:
		out, _ = prefixClasses(re.Sub[0], out) // its first round, then a width unknown
		return out, false
	case syntax.OpRepeat:
		for range re.Min {
			if out, cont = prefixClasses(re.Sub[0], out); !cont {
				return out, false
			}
		}
		return out, re.Min == re.Max && re.Min > 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if out, cont = prefixClasses(sub, out); !cont {
				return out, false
			}
		}
		return out, true
	}
	return out, false
}

// runeSet is the first bytes of r (and, folding case, of the runes it folds to).
func runeSet(r rune, fold bool) (set [256]bool) {
	addRune(&set, r, fold)
	return set
}

// classSet is the first bytes of the runes of a class's ranges.
func classSet(ranges []rune) (set [256]bool) {
	for i := 0; i+1 < len(ranges); i += 2 {
		addRange(&set, ranges[i], ranges[i+1])
	}
	return set
}

// oneByte says whether every byte of set is ASCII: the rune there is one byte wide.
func oneByte(set *[256]bool) bool {
	for b := utf8.RuneSelf; b < 256; b++ {
		if set[b] {
			return false
		}
	}
	return true
}

// requiredClass returns the smallest set of ASCII bytes that every match of re holds one of:
// a literal or class of re's top-level sequence (not optional, not an alternative's), or of
// a part repeated at least once.
func requiredClass(re *syntax.Regexp) (best [256]bool, ok bool) {
	size := 257
	var walk func(re *syntax.Regexp)
	consider := func(set *[256]bool) {
		if !oneByte(set) {
			return
		}
		n := 0
		for _, in := range set {
			if in {
				n++
			}
		}
		if n > 0 && n < size {
			best, size, ok = *set, n, true
		}
	}
	walk = func(re *syntax.Regexp) {
		fold := re.Flags&syntax.FoldCase != 0
		switch re.Op {
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				set := runeSet(r, fold)
				consider(&set)
			}
		case syntax.OpCharClass:
			set := classSet(re.Rune)
			consider(&set)
		case syntax.OpCapture, syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min > 0 {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				walk(sub)
			}
		}
	}
	walk(re)
	return best, ok
}

// wordBoundaryAt is regexp's \b at byte p: ASCII word characters on one side only.
// Any byte of a multi-byte character is a non-word character, as the rune is.
func wordBoundaryAt(text string, p int) bool {
	before := p > 0 && isASCIIWord(text[p-1])
	after := p < len(text) && isASCIIWord(text[p])
	return before != after
}

func isASCIIWord(b byte) bool {
	return b < utf8.RuneSelf && syntax.IsWordChar(rune(b))
}

// firstBytes adds to set every byte a match of re can begin with, and reports whether
// re can match the empty string. ok is false when an assertion could be tested before
// the first character, where the anchored form would see different context.
func firstBytes(re *syntax.Regexp, set *[256]bool) (nullable, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return false, true
	case syntax.OpEmptyMatch:
		return true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true, true
		}
		addRune(set, re.Rune[0], re.Flags&syntax.FoldCase != 0)
		return false, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			addRange(set, re.Rune[i], re.Rune[i+1])
		}
		return false, true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		addRange(set, 0, unicode.MaxRune)
		return false, true
	case syntax.OpCapture:
		return firstBytes(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := firstBytes(re.Sub[0], set)
		return true, ok
	case syntax.OpPlus:
		return firstBytes(re.Sub[0], set)
	case syntax.OpRepeat:
		n, ok := firstBytes(re.Sub[0], set)
		return n || re.Min == 0, ok
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			n, ok := firstBytes(sub, set)
			if !ok {
				return false, false
			}
			if !n {
				return false, true
			}
		}
		return true, true
	case syntax.OpAlternate:
		nullable := false
		for _, sub := range re.Sub {
			n, ok := firstBytes(sub, set)
			if !ok {
				return false, false
			}
			nullable = nullable || n
		}
		return nullable, true
	default: // assertions: ^ $ \A \z \b \B
		return false, false
	}
}

func addRune(set *[256]bool, r rune, fold bool) {
	addRange(set, r, r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			addRange(set, f, f)
		}
	}
}

// addRange marks the first bytes of the runes in [lo, hi]; any non-ASCII rune marks
// every byte from 0x80 up, which over-approximates its UTF-8 lead byte.
func addRange(set *[256]bool, lo, hi rune) {
	for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
		set[r] = true
	}
	if hi >= utf8.RuneSelf {
		for b := utf8.RuneSelf; b < 256; b++ {
			set[b] = true
		}
	}
}
