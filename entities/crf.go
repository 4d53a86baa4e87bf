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
	// stride is n rounded up to a multiple of four: the matrices' rows are that long, the
	// columns past n holding -Inf (score) or 0 (prob, probT), so that the kernels take every
	// column in fours. The padding's results are never read.
	stride int
	// score[k][a*stride+b]: k is the gap class.
	score [gapClasses][]float64
	// prob is exp(score), for the forward-backward pass, and probT its transpose, which the
	// backward pass reads as the forward pass reads prob.
	prob, probT [gapClasses][]float64
	// scratch holds *crfScratch: one decoding's buffers, handed to the next.
	scratch sync.Pool
}

// crfScratch is one decoding's buffers. A note's rows of probabilities and both passes' are
// some hundred kilobytes, garbage after every request if made anew.
type crfScratch struct {
	in                                      crfInput
	probs, alpha, beta, w, score, next, acc []float64
	arg                                     []int64
	back                                    []int32
	path                                    []int
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
	S := (labels + 3) &^ 3
	c := &crf{n: labels, stride: S}
	brk := t.Break
	if brk == nil {
		brk = t.Spaced
	}
	for k, m := range [gapClasses][][]float64{t.Spaced, t.Touching, brk} {
		if len(m) != labels {
			return nil, fmt.Errorf("entities: CRF transitions have %d rows for %d labels", len(m), labels)
		}
		score, prob, probT := make([]float64, labels*S), make([]float64, labels*S), make([]float64, labels*S)
		for a, row := range m {
			if len(row) != labels {
				return nil, fmt.Errorf("entities: a CRF transition row has %d entries for %d labels", len(row), labels)
			}
			for b := range S {
				if b >= labels {
					score[a*S+b] = math.Inf(-1)
					continue
				}
				v := row[b]
				if math.IsNaN(v) || math.IsInf(v, 0) || v > maxTransitionScore {
					return nil, fmt.Errorf("entities: CRF transitions hold a non-finite score, or one whose exponential is")
				}
				score[a*S+b], prob[a*S+b], probT[b*S+a] = v, math.Exp(v), math.Exp(v)
			}
		}
		c.score[k], c.prob[k], c.probT[k] = score, prob, probT
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
// towards the lower label, so both pick the same path from the same logits; every label's
// best predecessor is one column of maxPlus, whose columns are the one-at-a-time loop's bit
// for bit however many run at once.
func (c *crf) viterbi(in crfInput, logits []float32, sc *crfScratch) []int {
	n, L, S := len(in.idx), c.n, c.stride
	if n == 0 {
		return nil
	}
	sc.path, sc.back = sized(sc.path, n), sized(sc.back, n*L)
	sc.score, sc.next, sc.arg = sized(sc.score, S), sized(sc.next, S), sized(sc.arg, S)
	path, back := sc.path, sc.back // back[i*L+b]: best label before b at position i
	score, next, arg := sc.score, sc.next, sc.arg
	row := func(p int) []float32 { return logits[in.idx[p]*L : (in.idx[p]+1)*L] }
	first := row(0)
	for b := range L {
		score[b] = c.score[0][b] + float64(first[b]) // from O
	}
	for p := 1; p < n; p++ {
		maxPlus(next, arg, score[:L], c.score[in.gap[p]])
		em := row(p)[:L]
		bk := back[p*L : (p+1)*L]
		for b := range L {
			next[b] += float64(em[b])
			bk[b] = int32(arg[b])
		}
		score, next = next, score
	}
	best, at := math.Inf(-1), 0
	for a := range L {
		if v := score[a] + c.score[0][a*S]; v > best { // to O
			best, at = v, a
		}
	}
	path[n-1] = at
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
	n, L, S := len(in.idx), c.n, c.stride
	sc.alpha, sc.beta = sized(sc.alpha, n*L), sized(sc.beta, n*L)
	sc.w, sc.acc = sized(sc.w, L), sized(sc.acc, S)
	alpha, beta, w, acc := sc.alpha, sc.beta, sc.w, sc.acc
	for b := range L {
		alpha[b] = c.prob[0][b] * probs[b]
	}
	if !normalize(alpha[:L]) {
		return nil, false
	}
	for p := 1; p < n; p++ {
		// Each cur[b] sums prev[a]*prob[a,b] in a's order, from zero.
		cur := alpha[p*L : (p+1)*L]
		clear(acc)
		sumProduct(acc, alpha[(p-1)*L:p*L], c.prob[in.gap[p]])
		for b := range L {
			cur[b] = acc[b] * probs[p*L+b]
		}
		if !normalize(cur) {
			return nil, false
		}
	}
	last := beta[(n-1)*L:]
	for a := range L {
		last[a] = c.prob[0][a*S]
	}
	if !normalize(last) {
		return nil, false
	}
	for p := n - 2; p >= 0; p-- {
		nxt, cur := beta[(p+1)*L:(p+2)*L], beta[p*L:(p+1)*L]
		for b := range L {
			w[b] = probs[(p+1)*L+b] * nxt[b]
		}
		// Each cur[a] sums prob[a,b]*w[b] in b's order: a column of the transpose.
		clear(acc)
		sumProduct(acc, w, c.probT[in.gap[p+1]])
		copy(cur, acc)
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
