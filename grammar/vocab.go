package grammar

import (
	"errors"
	"slices"
	"sync"
)

// Vocab is a model's tokens as bytes, in a trie, and its end-of-sequence tokens.
type Vocab struct {
	size   int
	eos    []int64 // within the vocabulary
	tokens [][]byte
	// The trie: node 0 is the root; a node's children are a run of edges sorted by byte.
	nodes []trieNode
	edges []trieEdge
}

type trieNode struct {
	firstEdge, edges int32
	tokens           []int32 // the tokens whose bytes end here
}

type trieEdge struct {
	b    byte
	node int32
}

// NewVocab builds the vocabulary of tokens[id] (nil or empty: a token a constrained answer
// never uses, a special one say); each of eos ends an answer (-1, or none: no end; a model may
// have several, Llama 3's three).
func NewVocab(tokens [][]byte, eos ...int64) *Vocab {
	type building struct {
		children map[byte]int
		tokens   []int32
	}
	tree := []building{{children: map[byte]int{}}}
	for id, tok := range tokens {
		if len(tok) == 0 {
			continue
		}
		n := 0
		for _, b := range tok {
			c, ok := tree[n].children[b]
			if !ok {
				c = len(tree)
				tree = append(tree, building{children: map[byte]int{}})
				tree[n].children[b] = c
			}
			n = c
		}
		tree[n].tokens = append(tree[n].tokens, int32(id))
	}
	v := &Vocab{size: len(tokens), tokens: tokens, nodes: make([]trieNode, len(tree))}
	for _, id := range eos {
		if id >= 0 && int(id) < len(tokens) && !slices.Contains(v.eos, id) {
			v.eos = append(v.eos, id)
		}
	}
	for i, t := range tree {
		v.nodes[i] = trieNode{firstEdge: int32(len(v.edges)), edges: int32(len(t.children)), tokens: t.tokens}
		for b := range 256 {
			if c, ok := t.children[byte(b)]; ok {
				v.edges = append(v.edges, trieEdge{b: byte(b), node: int32(c)})
			}
		}
	}
	return v
}

func (v *Vocab) tokenBytes(id int64) []byte { return v.tokens[id] }

// Size is the number of token ids the vocabulary spans.
func (v *Vocab) Size() int { return v.size }

// Mask is the set of tokens allowed at one point of an answer, as bits over token ids. It is
// shared and never changed once made.
type Mask struct {
	bits  []uint64
	count int
}

// NewMask is the mask of ids over a vocabulary of size tokens (ids outside it are left out).
func NewMask(size int, ids ...int) *Mask {
	m := &Mask{bits: make([]uint64, (size+63)/64)}
	for _, id := range ids {
		if id >= 0 && id < size && !m.Allows(id) {
			m.bits[id/64] |= 1 << (id % 64)
			m.count++
		}
	}
	return m
}

// Allows reports whether token id may come next.
func (m *Mask) Allows(id int) bool {
	return id >= 0 && id/64 < len(m.bits) && m.bits[id/64]&(1<<(id%64)) != 0
}

// Count is how many tokens are allowed.
func (m *Mask) Count() int { return m.count }

// Words are the mask's bits, 64 token ids a word, for a caller that walks them.
func (m *Mask) Words() []uint64 { return m.bits }

// ErrTooManyStates ends a generation whose constraint's automaton has grown past what one
// Index may hold while answers still use it.
var ErrTooManyStates = errors.New("grammar: the constraint's automaton grew past its bound")

// indexBytes is what the states of one Index may hold (each its transitions, its
// instructions and its mask) before the Index is retired: answers under way go on with it, new
// ones get a fresh one. At four times it an answer still using it fails.
const indexBytes = 32 << 20

// Index is a compiled constraint over one vocabulary: its DFA and, per state, the mask of
// tokens allowed there. Masks and transitions are computed when first needed, under mu, and
// kept; an Index is shared by every generation with the same constraint until it is retired.
type Index struct {
	v     *Vocab
	mu    sync.Mutex
	d     *dfa
	masks []*Mask
	// maskBytes is what the masks computed hold. soft is the bytes (states' and masks') at
	// which the Index retires (Cache.Get compiles the constraint anew), hard those at which an
	// answer still using it fails.
	maskBytes  int64
	soft, hard int64
	// maskWork bounds one mask's steps' work (instructions visited): what one step of the
	// scheduler may wait on it.
	maskWork int64
	retired  bool
}

// maskWork is about a tenth of a second of a core: an answer's masks under a JSON object's
// constraint, over vocabularies of 117,000 and 155,000 tokens, cost thousands each.
const maskWork = 1 << 22

// pieceWork is a piece of a mask's walk (instructions visited and trie edges followed, about
// a tenth of a millisecond) between two of its pauses (Matcher.Prepare).
const pieceWork = 1 << 12

func newIndex(v *Vocab, d *dfa) *Index {
	// At least a thousand plain states, however large the vocabulary's masks.
	soft := max(int64(indexBytes), 1000*(stateBytes+int64(v.size/8)))
	return &Index{v: v, d: d, soft: soft, hard: 4 * soft, maskWork: maskWork}
}

// Retired reports whether the Index has grown past its bound; a new answer should use the
// constraint compiled anew.
func (ix *Index) Retired() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.retired
}

// grew checks the DFA's size after it may have grown. Called with mu held.
func (ix *Index) grew() error {
	n, work := ix.d.bytes+ix.maskBytes, ix.d.work
	if n > ix.soft || work > workSoft || ix.d.tooWide {
		ix.retired = true
	}
	if n > ix.hard || work > workHard || ix.d.tooWide {
		return ErrTooManyStates
	}
	return nil
}

// Start is a matcher at the beginning of an answer.
func (ix *Index) Start() *Matcher { return &Matcher{ix: ix} }

// Matcher follows one answer through its constraint. It is used by one goroutine at a time.
type Matcher struct {
	ix    *Index
	state int32
	err   error
}

// Allowed is the set of tokens that keep the answer within the language: those whose bytes
// continue it, and the end of sequence where the answer may end. The set is empty only when
// the vocabulary cannot write what must come next.
func (m *Matcher) Allowed() (*Mask, error) { return m.allowed(nil) }

// Prepare makes the mask Allowed will answer with, if it is not made, and calls pause between
// pieces of its walk (about a tenth of a millisecond each) with the Index free for other
// answers: a walk of a large vocabulary takes turns with what pause waits for. When pause
// returns false the walk stops and the mask is left unmade (the answer is given up). A
// failure is Allowed's to report.
func (m *Matcher) Prepare(pause func() bool) { _, _ = m.allowed(pause) }

func (m *Matcher) allowed(pause func() bool) (*Mask, error) {
	if m.err != nil {
		return nil, m.err
	}
	ix := m.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	mask, err := ix.computeMask(m.state, pause)
	switch {
	case err == errGivenUp:
		return nil, err
	case err != nil:
		m.err = err
		return nil, err
	}
	return mask, nil
}

// errGivenUp: Prepare's pause said to stop; nothing is wrong with the answer.
var errGivenUp = errors.New("grammar: the mask's walk was given up")

// Ready reports whether Allowed would answer at once: the mask at the answer's state is made
// (by this answer or another on the same Index), or the answer has failed. Where it is not,
// Allowed may walk the whole vocabulary; a caller that must not wait calls it elsewhere first.
func (m *Matcher) Ready() bool {
	if m.err != nil {
		return true
	}
	m.ix.mu.Lock()
	defer m.ix.mu.Unlock()
	return m.ix.madeMask(m.state) != nil
}

// unlockedFor calls pause with mu released, taken again however pause returns. Called with
// mu held.
func (ix *Index) unlockedFor(pause func() bool) bool {
	ix.mu.Unlock()
	defer ix.mu.Lock()
	return pause()
}

// madeMask is the mask at state s if an answer has made it, else nil. Called with mu held.
func (ix *Index) madeMask(s int32) *Mask {
	if int(s) < len(ix.masks) {
		return ix.masks[s]
	}
	return nil
}

// Advance moves past token id, which the last Allowed allowed; the end of sequence leaves the
// state as it is.
func (m *Matcher) Advance(id int64) {
	if m.err != nil || slices.Contains(m.ix.v.eos, id) || id < 0 || int(id) >= m.ix.v.size {
		return
	}
	ix := m.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	s := m.state
	bytes := ix.v.tokenBytes(id)
	if len(bytes) == 0 {
		m.err = errOutside
		return
	}
	for _, b := range bytes {
		if s = ix.d.step(s, b); s == dead {
			m.err = errOutside
			return
		}
	}
	m.state = s
	m.err = ix.grew()
}

var errOutside = errors.New("grammar: a token outside the constraint was chosen")

// Complete reports whether the answer is whole and nothing may follow it: the generation
// ends here.
func (m *Matcher) Complete() bool {
	if m.err != nil {
		return false
	}
	m.ix.mu.Lock()
	defer m.ix.mu.Unlock()
	return m.ix.d.states[m.state].final
}

// Accepting reports whether the answer, as it stands, is a word of the language.
func (m *Matcher) Accepting() bool {
	if m.err != nil {
		return false
	}
	m.ix.mu.Lock()
	defer m.ix.mu.Unlock()
	return m.ix.d.states[m.state].accept
}

// computeMask is the mask at state s, made by walking the trie from s if no answer has made
// it: a token is allowed when every byte of it keeps the DFA alive. Called with mu held; a
// non-nil pause is called between pieces of the walk with mu released (the walk's frames are
// states, which are never removed, so another answer's steps meanwhile change nothing it
// holds).
func (ix *Index) computeMask(s int32, pause func() bool) (*Mask, error) {
	if made := ix.madeMask(s); made != nil {
		return made, nil
	}
	v := ix.v
	mask := &Mask{bits: make([]uint64, (v.size+63)/64)}
	type frame struct{ node, state int32 }
	stack := []frame{{0, s}}
	// own is this walk's work, which the other answers' steps during a pause are not. A
	// piece is paced by that work and by the trie's edges it follows, four to an instruction
	// (an edge is a lookup where the DFA's steps are made already): a walk of a vocabulary
	// of 117,000 tokens (320,000 edges) is about twenty pieces with no new state.
	var own, edges int64
	piece := ix.d.work
	for len(stack) > 0 {
		if pause != nil && ix.d.work-piece+edges/4 > pieceWork {
			own += ix.d.work - piece
			if !ix.unlockedFor(pause) {
				return nil, errGivenUp
			}
			if made := ix.madeMask(s); made != nil {
				return made, nil // another answer's walk finished first
			}
			piece, edges = ix.d.work, 0
		}
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &v.nodes[f.node]
		if f.node != 0 {
			for _, id := range n.tokens {
				mask.bits[id/64] |= 1 << (id % 64)
				mask.count++
			}
		}
		for _, e := range v.edges[n.firstEdge : n.firstEdge+n.edges] {
			if next := ix.d.step(f.state, e.b); next != dead {
				stack = append(stack, frame{e.node, next})
			}
		}
		edges += int64(n.edges)
		if err := ix.grew(); err != nil {
			return nil, err
		}
		if own+ix.d.work-piece > ix.maskWork {
			ix.retired = true
			return nil, ErrTooManyStates
		}
	}
	if ix.d.states[s].accept {
		for _, eos := range v.eos {
			if !mask.Allows(int(eos)) {
				mask.count++
			}
			mask.bits[eos/64] |= 1 << (eos % 64)
		}
	}
	for len(ix.masks) <= int(s) {
		ix.masks = append(ix.masks, nil)
	}
	ix.masks[s] = mask
	ix.maskBytes += 8 * int64(len(mask.bits))
	return mask, nil
}
