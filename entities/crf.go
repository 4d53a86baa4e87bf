package entities

import (
	"fmt"
	"math"
	"strings"
	"sync"
)

// Transitions are a linear-chain CRF's scores for a model trained with one (the shipped
// models are; config.json carries them under sluice.crf_transitions). Touching[a][b] is
// added when label b follows label a and the two tokens touch (the next starts where the
// previous ends, as the pieces of "555-0134" do), Break[a][b] when a line break or a tab
// lies between them (the tokenizer drops whitespace, so only the CRF can tell two list
// items apart from one entity), and Spaced[a][b] across any other gap: spaces, or
// offsets that overlap. Break may be nil, as in configs written before it existed;
// Spaced then stands in for it. A sequence starts and ends in label 0 ("O"), as the
// model's [CLS] and [SEP] slots did in training.
type Transitions struct {
	Spaced, Touching, Break [][]float64
}

// The class of the gap between two neighbouring tokens picks the transition matrix.
const (
	gapSpaced = iota
	gapTouching
	gapBreak
	gapClasses
)

// breakChars make a gap a break: line breaks and tabs. The recipe's nets.gap_classes uses
// the same set.
const breakChars = "\n\r\t\v\f\u0085\u2028\u2029"

// maxTransitionScore is the largest score whose exponential (the forward-backward pass's
// transition probability) is finite.
var maxTransitionScore = math.Log(math.MaxFloat64)

// crf is Transitions checked and laid out for decoding.
type crf struct {
	n int
	// score[k][a*n+b]: k is the gap class.
	score [gapClasses][]float64
	// scoreT[k][b*n+a] is score[k][a*n+b], so Viterbi's inner loop over a reads memory in
	// order.
	scoreT [gapClasses][]float64
	// prob is exp(score), for the forward-backward pass.
	prob [gapClasses][]float64
	// scratch holds *crfScratch: one decoding's buffers, handed to the next.
	scratch sync.Pool
}

// crfScratch is one decoding's buffers. A note's rows of probabilities and both passes' are
// some hundred kilobytes, garbage after every request if made anew.
type crfScratch struct {
	in                                 crfInput
	probs, alpha, beta, w, score, next []float64
	back                               []int32
	path                               []int
}

func (c *crf) getScratch() *crfScratch {
	if sc, ok := c.scratch.Get().(*crfScratch); ok {
		return sc
	}
	return &crfScratch{}
}

// putScratch hands sc to the next decoding, unless a long text grew it past what an ordinary
// note needs: that one goes to the collector, so that a long text's tables are not kept for
// the life of the process (extract's releaseHeap hands them back to the system).
func (c *crf) putScratch(sc *crfScratch) {
	if cap(sc.alpha) > maxPooledCells || cap(sc.probs) > maxPooledCells {
		return
	}
	c.scratch.Put(sc)
}

// maxPooledCells bounds a pooled scratch's rows: 1,024 tokens of 64 labels.
const maxPooledCells = 1024 * 64

// sized is buf with length n, its contents left as they were (callers write every element
// they read, or clear it).
func sized[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n, n+n/4)
	}
	return buf[:n]
}

func newCRF(t *Transitions, labels int) (*crf, error) {
	c := &crf{n: labels}
	brk := t.Break
	if brk == nil {
		brk = t.Spaced
	}
	for k, m := range [gapClasses][][]float64{t.Spaced, t.Touching, brk} {
		if len(m) != labels {
			return nil, fmt.Errorf("entities: CRF transitions have %d rows for %d labels", len(m), labels)
		}
		c.score[k] = make([]float64, 0, labels*labels)
		for _, row := range m {
			if len(row) != labels {
				return nil, fmt.Errorf("entities: a CRF transition row has %d entries for %d labels", len(row), labels)
			}
			for _, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) || v > maxTransitionScore {
					return nil, fmt.Errorf("entities: CRF transitions hold a non-finite score, or one whose exponential is")
				}
				c.score[k] = append(c.score[k], v)
			}
		}
		c.prob[k] = make([]float64, len(c.score[k]))
		c.scoreT[k] = make([]float64, len(c.score[k]))
		for i, v := range c.score[k] {
			c.prob[k][i] = math.Exp(v)
			c.scoreT[k][(i%labels)*labels+i/labels] = v
		}
	}
	return c, nil
}

// crfInput is the decoding view of one text: the non-special tokens in order.
type crfInput struct {
	idx []int   // token index of each position
	gap []uint8 // class of the gap before each position; gapSpaced for the first
}

// crfPositions lays out the non-special tokens of text (byte offsets, validated), in into's
// buffers when given.
func crfPositions(text string, toks Tokens, into ...*crfInput) crfInput {
	var in crfInput
	if len(into) > 0 {
		in = crfInput{idx: into[0].idx[:0], gap: into[0].gap[:0]}
	}
	prev := -1
	for i := range toks.Len() {
		if toks.special(i) {
			continue
		}
		g := uint8(gapSpaced)
		if prev >= 0 {
			end, start := toks.Offsets[prev][1], toks.Offsets[i][0]
			switch {
			case end == start:
				g = gapTouching
			case end < start && strings.ContainsAny(text[end:start], breakChars):
				g = gapBreak
			}
		}
		in.idx = append(in.idx, i)
		in.gap = append(in.gap, g)
		prev = i
	}
	return in
}

// viterbi returns the best label path over the positions' raw logits. It adds in float64
// in the same order as the training recipe's decoder (models/train/nets.py) and breaks ties
// towards the lower label, so both pick the same path from the same logits. Four labels are
// scored in one pass over the previous scores: each keeps its own maximum in the same order,
// so the answer is the one-at-a-time loop's, bit for bit, with four times the work in flight.
func (c *crf) viterbi(in crfInput, logits []float32, sc *crfScratch) []int {
	n, L := len(in.idx), c.n
	if n == 0 {
		return nil
	}
	sc.path, sc.back = sized(sc.path, n), sized(sc.back, n*L)
	sc.score, sc.next = sized(sc.score, L), sized(sc.next, L)
	path, back := sc.path, sc.back // back[i*L+b]: best label before b at position i
	score, next := sc.score, sc.next
	row := func(p int) []float32 { return logits[in.idx[p]*L : (in.idx[p]+1)*L] }
	first := row(0)
	for b := range L {
		score[b] = c.score[0][b] + float64(first[b]) // from O
	}
	for p := 1; p < n; p++ {
		tr := c.scoreT[in.gap[p]]
		em := row(p)[:L]
		bk := back[p*L : (p+1)*L]
		b := 0
		for ; b+4 <= L; b += 4 {
			r0, r1 := tr[b*L : (b+1)*L][:len(score)], tr[(b+1)*L : (b+2)*L][:len(score)]
			r2, r3 := tr[(b+2)*L : (b+3)*L][:len(score)], tr[(b+3)*L : (b+4)*L][:len(score)]
			m0, m1, m2, m3 := math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)
			var a0, a1, a2, a3 int
			for a, s := range score {
				if v := s + r0[a]; v > m0 {
					m0, a0 = v, a
				}
				if v := s + r1[a]; v > m1 {
					m1, a1 = v, a
				}
				if v := s + r2[a]; v > m2 {
					m2, a2 = v, a
				}
				if v := s + r3[a]; v > m3 {
					m3, a3 = v, a
				}
			}
			next[b], next[b+1], next[b+2], next[b+3] = m0+float64(em[b]), m1+float64(em[b+1]), m2+float64(em[b+2]), m3+float64(em[b+3])
			bk[b], bk[b+1], bk[b+2], bk[b+3] = int32(a0), int32(a1), int32(a2), int32(a3)
		}
		for ; b < L; b++ {
			best, arg := math.Inf(-1), 0
			into := tr[b*L : (b+1)*L][:len(score)]
			for a, s := range score {
				if v := s + into[a]; v > best {
					best, arg = v, a
				}
			}
			next[b] = best + float64(em[b])
			bk[b] = int32(arg)
		}
		score, next = next, score
	}
	best, arg := math.Inf(-1), 0
	for a := range L {
		if v := score[a] + c.score[0][a*L]; v > best { // to O
			best, arg = v, a
		}
	}
	path[n-1] = arg
	for p := n - 1; p > 0; p-- {
		path[p-1] = int(back[p*L+path[p]])
	}
	return path
}

// marginals returns, for every position, the probability the CRF gives each label there
// (rows of L, summing to 1), by the forward-backward pass in probability space,
// renormalised at every position. probs holds each position's softmax row: a per-position
// constant factor does not change a CRF's marginals. ok is false if the pass underflowed,
// which a sane model never makes it do.
func (c *crf) marginals(in crfInput, probs []float64, sc *crfScratch) (out []float64, ok bool) {
	n, L := len(in.idx), c.n
	sc.alpha, sc.beta, sc.w = sized(sc.alpha, n*L), sized(sc.beta, n*L), sized(sc.w, L)
	alpha, beta, w := sc.alpha, sc.beta, sc.w
	clear(alpha) // the forward pass adds into it
	step := func(p int) []float64 { return c.prob[in.gap[p]] }
	for b := range L {
		alpha[b] = c.prob[0][b] * probs[b]
	}
	if !normalize(alpha[:L]) {
		return nil, false
	}
	for p := 1; p < n; p++ {
		tr, prev, cur := step(p), alpha[(p-1)*L:p*L], alpha[p*L:(p+1)*L]
		// Four previous labels a go into each cur[b] at once, added in a's order as one at a
		// time would (a zero pa adds an exact zero), so the sums are the same bit for bit.
		a := 0
		for ; a+4 <= L; a += 4 {
			p0, p1, p2, p3 := prev[a], prev[a+1], prev[a+2], prev[a+3]
			r0, r1 := tr[a*L : (a+1)*L][:len(cur)], tr[(a+1)*L : (a+2)*L][:len(cur)]
			r2, r3 := tr[(a+2)*L : (a+3)*L][:len(cur)], tr[(a+3)*L : (a+4)*L][:len(cur)]
			for b := range cur {
				cur[b] = cur[b] + p0*r0[b] + p1*r1[b] + p2*r2[b] + p3*r3[b]
			}
		}
		for ; a < L; a++ {
			pa := prev[a]
			for b, t := range tr[a*L : (a+1)*L][:len(cur)] {
				cur[b] += pa * t
			}
		}
		for b := range L {
			cur[b] *= probs[p*L+b]
		}
		if !normalize(cur) {
			return nil, false
		}
	}
	last := beta[(n-1)*L:]
	for a := range L {
		last[a] = c.prob[0][a*L]
	}
	if !normalize(last) {
		return nil, false
	}
	for p := n - 2; p >= 0; p-- {
		tr, nxt, cur := step(p+1), beta[(p+1)*L:(p+2)*L], beta[p*L:(p+1)*L]
		for b := range L {
			w[b] = probs[(p+1)*L+b] * nxt[b]
		}
		// Four labels a summed in one pass over w, each in b's order.
		a := 0
		for ; a+4 <= L; a += 4 {
			r0, r1 := tr[a*L : (a+1)*L][:len(w)], tr[(a+1)*L : (a+2)*L][:len(w)]
			r2, r3 := tr[(a+2)*L : (a+3)*L][:len(w)], tr[(a+3)*L : (a+4)*L][:len(w)]
			var s0, s1, s2, s3 float64
			for b, wb := range w {
				s0 += r0[b] * wb
				s1 += r1[b] * wb
				s2 += r2[b] * wb
				s3 += r3[b] * wb
			}
			cur[a], cur[a+1], cur[a+2], cur[a+3] = s0, s1, s2, s3
		}
		for ; a < L; a++ {
			var s float64
			for b, t := range tr[a*L : (a+1)*L][:len(w)] {
				s += t * w[b]
			}
			cur[a] = s
		}
		if !normalize(cur) {
			return nil, false
		}
	}
	for i := range alpha {
		alpha[i] *= beta[i]
	}
	for p := range n {
		if !normalize(alpha[p*L : (p+1)*L]) {
			return nil, false
		}
	}
	return alpha, true
}

// normalize scales xs to sum 1 and reports whether that was possible.
func normalize(xs []float64) bool {
	var s float64
	for _, x := range xs {
		s += x
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return false
	}
	for i := range xs {
		xs[i] /= s
	}
	return true
}
