package generate

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/sluice-serving/sluice/grammar"
	"github.com/sluice-serving/sluice/scheduler"
)

// Sampling are the decoding parameters of one request, with HuggingFace's semantics: the
// scores go through the repetition penalty, then temperature, top-k and top-p, and a token is
// drawn from what remains; without sampling the best token is taken.
type Sampling struct {
	// DoSample draws at random; otherwise the most likely token is taken (greedy).
	DoSample bool
	// Temperature divides the scores (above 0; 1 leaves them).
	Temperature float64
	// TopK keeps the k best tokens (0: all).
	TopK int
	// TopP keeps the smallest set of best tokens whose probability reaches p (1: all).
	TopP float64
	// RepetitionPenalty divides the positive scores, and multiplies the negative ones, of
	// tokens already in the prompt or the output (1 or 0: none).
	RepetitionPenalty float64
	// FrequencyPenalty is subtracted from a token's score once per time it was generated,
	// and PresencePenalty once if it was generated at all (OpenAI's penalties; 0: none).
	FrequencyPenalty, PresencePenalty float64
	// MinP keeps, when sampling, the tokens whose probability is at least MinP times the
	// best one's, after the temperature (vLLM's min_p; 0: all).
	MinP float64
	// LogitBias is added to its tokens' scores before anything else (OpenAI's logit_bias:
	// -100 all but bans a token, 100 all but forces it). Ids outside the vocabulary are
	// ignored.
	LogitBias map[int64]float64
	// Seed makes a sampled output reproducible.
	Seed uint64
	// NoLogprobs skips the chosen token's log probability (reported as 0): greedy decoding
	// then needs no exponential at all, which is most of its cost over a large vocabulary.
	NoLogprobs bool
	// TopLogprobs asks for the TopLogprobs most likely tokens at each position (OpenAI's
	// logprobs); their log probabilities, and the chosen token's, are then over the whole
	// vocabulary after the penalties and the temperature, before top-k, top-p and min-p.
	TopLogprobs int
}

// sampler picks tokens for one sequence. It keeps the tokens seen so far (for the penalty)
// and its own random source, so that one seed always gives one output.
type sampler struct {
	s      Sampling
	rng    *rand.Rand
	seen   map[int64]bool // prompt and output tokens, for the repetition penalty
	counts map[int64]int  // output tokens, for the frequency and presence penalties
	probs  []float64      // scratch: the scores over the vocabulary
	order  []int32        // scratch: the candidates of a draw
	above  []int32        // scratch: the tokens a cut sorts
	// weights are each score's weight over the best, weightTop (the draw's scratch).
	weights   []float64
	weightTop float64
	// top is the alternatives of the last pick when Sampling.TopLogprobs asks for them.
	top []scheduler.Alternative
	// full reports the chosen token's log probability over the whole vocabulary (after the
	// penalties and the temperature), as its alternatives are: what a caller that lists
	// log probabilities (Params.Logprobs) reads.
	full bool
	// banned are the tokens that may not be chosen while banning is set (the end of
	// sequence and the stop tokens before the request's minimum length).
	banned  []int64
	banning bool
	// mask, when set, is the only tokens that may be chosen (a constraint's).
	mask *grammar.Mask
}

func newSampler(s Sampling, prompt []int64) *sampler {
	if s.DoSample && s.Temperature > 0 && s.Temperature < minTemperature {
		s.DoSample = false
	}
	sp := &sampler{s: s, rng: rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))}
	if s.RepetitionPenalty != 1 && s.RepetitionPenalty != 0 {
		sp.seen = make(map[int64]bool, len(prompt)+64)
		for _, id := range prompt {
			sp.seen[id] = true
		}
	}
	if s.FrequencyPenalty != 0 || s.PresencePenalty != 0 {
		sp.counts = make(map[int64]int, 64)
	}
	return sp
}

// pick chooses the next token from logits and returns it with its log probability under the
// distribution it was chosen from.
func (sp *sampler) pick(logits []float32) (int64, float32) {
	if !sp.s.DoSample && sp.seen == nil && sp.counts == nil && sp.s.NoLogprobs && sp.s.TopLogprobs == 0 && sp.s.LogitBias == nil && !sp.banning {
		if sp.mask != nil {
			return int64(argmaxMasked(logits, sp.mask)), 0
		}
		return int64(argmax32(logits)), 0
	}
	n := len(logits)
	sp.probs = grow(sp.probs, n)
	for i, v := range logits {
		x := float64(v)
		if sp.s.LogitBias != nil {
			x += sp.s.LogitBias[int64(i)] // before the penalties, as vLLM applies it
		}
		if sp.seen != nil && sp.seen[int64(i)] {
			if x > 0 {
				x /= sp.s.RepetitionPenalty
			} else {
				x *= sp.s.RepetitionPenalty
			}
		}
		if x != x {
			x = math.Inf(-1) // a NaN score (a penalty's Inf-Inf, a broken model) is never chosen
		}
		sp.probs[i] = x
	}
	for id, n := range sp.counts {
		if int(id) < len(sp.probs) {
			sp.probs[id] -= float64(n)*sp.s.FrequencyPenalty + sp.s.PresencePenalty
		}
	}
	if sp.banning {
		for _, id := range sp.banned {
			if id >= 0 && int(id) < len(sp.probs) {
				sp.probs[id] = math.Inf(-1)
			}
		}
	}
	if sp.mask != nil {
		for i := range sp.probs {
			if !sp.mask.Allows(i) {
				sp.probs[i] = math.Inf(-1)
			}
		}
	}
	if !sp.s.DoSample {
		id := argmax(sp.probs)
		if math.IsInf(sp.probs[id], -1) {
			id = sp.unscored()
		}
		sp.saw(int64(id))
		if sp.s.TopLogprobs > 0 || sp.full {
			return int64(id), sp.alternatives(id)
		}
		if sp.s.NoLogprobs {
			return int64(id), 0
		}
		return int64(id), logprobOf(logSoftmaxAt(sp.probs, id))
	}
	if t := sp.s.Temperature; t > 0 && t != 1 {
		for i := range sp.probs {
			sp.probs[i] /= t
		}
	}

	keep, sum := sp.candidates()
	if sp.s.MinP > 0 {
		// A weight is a token's probability over the best one's: keep those at MinP or above
		// (the best always stays), in their order.
		kept, total := 0, 0.0
		for _, i := range sp.order[:keep] {
			if w := sp.weights[i]; w >= sp.s.MinP {
				sp.order[kept] = i
				kept++
				total += w
			}
		}
		keep, sum = kept, total
	}
	// The best token has weight 1 and is kept by every cut, so sum is at least 1 (0 only when
	// every score is -Inf). Rounding can leave u past the last weight: the draw is then the
	// last token that has one.
	u := sp.rng.Float64() * sum
	id := int32(-1)
	for _, i := range sp.order[:keep] {
		id = i
		if u -= sp.weights[i]; u < 0 {
			break
		}
	}
	if id < 0 {
		id = int32(sp.unscored()) // every score -Inf: as greedy decoding takes it
	}
	sp.saw(int64(id))
	if sp.s.TopLogprobs > 0 || sp.full {
		return int64(id), sp.alternatives(int(id)) // sp.probs still holds every score
	}
	return int64(id), logprobOf(sp.probs[id] - sp.weightTop - math.Log(sum))
}

// candidates leaves in sp.order[:keep] the tokens a draw is made among, and in sum their
// weights' total: every token in id order, or the best first where top-k or top-p cut the
// tail. A token too far below the best to weigh anything (weight) is never drawn and adds
// nothing to a sum, so it is left out, changing no draw. The picks of every stream run one
// after another on the step loop: top-k selects its k best without sorting the vocabulary,
// and top-p sorts the tokens of the most weight first, the rest only when those fall short.
func (sp *sampler) candidates() (keep int, sum float64) {
	n := len(sp.probs)
	sp.weightTop = sp.probs[argmax(sp.probs)]
	sp.weights = grow(sp.weights, n)
	sp.order = sp.order[:0]
	for i, x := range sp.probs {
		w := weight(x, sp.weightTop)
		sp.weights[i] = w
		if w > 0 {
			sp.order = append(sp.order, int32(i))
		}
	}
	k, topP := sp.s.TopK, sp.s.TopP > 0 && sp.s.TopP < 1
	switch {
	case k > 0 && k < len(sp.order):
		sp.order = sp.bestFirst(sp.order, k)
	case k > 0:
		slices.SortFunc(sp.order, sp.better)
	}
	// Summed in the candidates' order: top-p alone sums them in id order, where a sort of them
	// all would add best first; the two differ in rounding only.
	for _, i := range sp.order {
		sum += sp.weights[i]
	}
	switch {
	case topP && k <= 0:
		return sp.nucleus(sum)
	case topP:
		cum := 0.0
		for j, i := range sp.order {
			if cum += sp.weights[i]; cum >= sp.s.TopP*sum {
				return j + 1, cum
			}
		}
	}
	return len(sp.order), sum
}

// nucleus is top-p over every weighted token (sp.order, their total sum): the best first
// until their weight reaches TopP of the total. Every token at or above a floor comes before
// every token below it in that order, so a sort of the tokens above a floor whose weight
// reaches the mark cuts where a sort of all would. The floor is found by halving, a pass over
// the weights each (no exponential, no sort), so the sort is of about the nucleus alone; a
// floor that rounding leaves short sorts them all.
func (sp *sampler) nucleus(sum float64) (keep int, cum float64) {
	target := sp.s.TopP * sum
	massAbove := func(floor float64) float64 {
		m := 0.0
		for _, i := range sp.order {
			if w := sp.weights[i]; w >= floor {
				m += w
			}
		}
		return m
	}
	// In nats below the best: the tokens within lo weigh less than the mark, those within hi
	// at least as much (within negligible, every weighted token).
	lo, hi := -1.0, float64(negligible)
	for range 16 {
		if mid := (lo + hi) / 2; massAbove(math.Exp(-mid)) >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	for _, floor := range [...]float64{math.Exp(-hi - 1e-6), 0} {
		sp.above = sp.above[:0]
		for _, i := range sp.order {
			if sp.weights[i] >= floor {
				sp.above = append(sp.above, i)
			}
		}
		slices.SortFunc(sp.above, sp.better)
		cum = 0
		for j, i := range sp.above {
			if cum += sp.weights[i]; cum >= target {
				sp.order = append(sp.order[:0], sp.above[:j+1]...)
				return j + 1, cum
			}
		}
	}
	sp.order = append(sp.order[:0], sp.above...)
	return len(sp.order), cum
}

// better orders token ids best first: the higher score, then the lower id.
func (sp *sampler) better(a, b int32) int {
	switch x, y := sp.probs[a], sp.probs[b]; {
	case x > y:
		return -1
	case x < y:
		return 1
	}
	return cmp.Compare(a, b)
}

// bestFirst is the k best of ids (k < len(ids)), best first, selected through a heap of k
// whose root is the worst kept: O(n log k) where a sort is O(n log n). It reuses ids.
func (sp *sampler) bestFirst(ids []int32, k int) []int32 {
	h := append(sp.above[:0], ids[:k]...)
	worse := func(a, b int32) bool { return sp.better(a, b) > 0 }
	down := func(at int) {
		for {
			c := 2*at + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && worse(h[c+1], h[c]) {
				c++
			}
			if !worse(h[c], h[at]) {
				return
			}
			h[at], h[c] = h[c], h[at]
			at = c
		}
	}
	for at := k/2 - 1; at >= 0; at-- {
		down(at)
	}
	for _, i := range ids[k:] {
		if sp.better(i, h[0]) < 0 {
			h[0] = i
			down(0)
		}
	}
	slices.SortFunc(h, sp.better)
	sp.above = h
	return append(ids[:0], h...)
}

// unscored is the choice where every score is -Inf (a penalty that overflowed them, a
// broken model's): the first token the constraint (if any) allows and min_tokens does not
// ban, so that an answer never leaves its constraint; 0 where there is none.
func (sp *sampler) unscored() int {
	ok := func(id int) bool { return !sp.banning || !slices.Contains(sp.banned, int64(id)) }
	if sp.mask == nil {
		for id := range sp.probs {
			if ok(id) {
				return id
			}
		}
		return 0
	}
	for wi, w := range sp.mask.Words() {
		for ; w != 0; w &= w - 1 {
			if id := wi*64 + bits.TrailingZeros64(w); ok(id) {
				return id
			}
		}
	}
	return 0
}

// alternatives fills sp.top with the TopLogprobs best tokens of sp.probs and returns the
// log probability of id, all over the whole vocabulary.
func (sp *sampler) alternatives(id int) float32 {
	m := sp.probs[argmax(sp.probs)]
	sum := 0.0
	for _, x := range sp.probs {
		sum += weight(x, m)
	}
	norm := m + math.Log(sum)
	k := min(sp.s.TopLogprobs, len(sp.probs))
	var top []scheduler.Alternative // handed to the stream: a fresh slice each time
	if k > 0 {
		top = make([]scheduler.Alternative, 0, k)
	}
	for i, x := range sp.probs {
		lp := logprobOf(x - norm)
		if k == 0 || math.IsInf(x, -1) || (len(top) == k && lp <= top[k-1].Logprob) {
			continue // a banned token is no alternative; a tie keeps the lower id
		}
		a := scheduler.Alternative{ID: int64(i), Logprob: lp}
		at, _ := slices.BinarySearchFunc(top, a, func(e, t scheduler.Alternative) int {
			if e.Logprob >= t.Logprob {
				return -1 // after the entries as likely as it: ids in order among ties
			}
			return 1
		})
		if len(top) == k {
			top = top[:k-1]
		}
		top = slices.Insert(top, at, a)
	}
	sp.top = top
	return logprobOf(sp.probs[id] - norm)
}

// minLogprob stands for a log probability of -Inf (a token the request banned), which JSON
// cannot carry; vLLM reports the same floor.
const minLogprob = -9999

// logprobOf is lp as reported: at least minLogprob, and minLogprob for a NaN (scores of +Inf
// give Inf-Inf), so that every event can be written as JSON.
func logprobOf(lp float64) float32 {
	if !(lp >= minLogprob) {
		return minLogprob
	}
	return float32(lp)
}

// minTemperature is the lowest temperature sampled at; below it a request decodes greedily,
// as vLLM does, since dividing the scores by less overflows them and leaves one token anyway.
const minTemperature = 1e-5

func (sp *sampler) saw(id int64) {
	if sp.seen != nil {
		sp.seen[id] = true
	}
	if sp.counts != nil {
		sp.counts[id]++
	}
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// argmaxMasked is the first greatest of the scores mask allows (a NaN never greatest), read
// a word of the mask at a time, so that a state that allows a few tokens reads a few scores.
// With none a number it is the first allowed id; with none allowed, 0.
func argmaxMasked(v []float32, mask *grammar.Mask) int {
	best, id, first := float32(math.Inf(-1)), -1, -1
	for wi, w := range mask.Words() {
		for w != 0 {
			i := wi*64 + bits.TrailingZeros64(w)
			w &= w - 1
			if i >= len(v) {
				break
			}
			if first < 0 {
				first = i
			}
			if id < 0 && v[i] == v[i] || v[i] > best {
				best, id = v[i], i
			}
		}
	}
	switch {
	case id >= 0:
		return id
	case first >= 0:
		return first
	}
	return 0
}

// argmax32Lanes is argmax32 in portable Go. Four lanes each take every fourth score, so four
// comparisons are in flight instead of one chain; ties between lanes go to the lower index,
// which is the scan's first.
func argmax32Lanes(v []float32) int {
	if len(v) == 0 || v[0] != v[0] {
		return 0
	}
	negInf := float32(math.Inf(-1))
	b0, b1, b2, b3 := negInf, negInf, negInf, negInf
	i0, i1, i2, i3 := -1, -1, -1, -1
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		if w[0] > b0 {
			b0, i0 = w[0], i
		}
		if w[1] > b1 {
			b1, i1 = w[1], i+1
		}
		if w[2] > b2 {
			b2, i2 = w[2], i+2
		}
		if w[3] > b3 {
			b3, i3 = w[3], i+3
		}
	}
	for ; i < len(v); i++ {
		if v[i] > b0 {
			b0, i0 = v[i], i
		}
	}
	best, id := negInf, -1
	for _, c := range [4]struct {
		v float32
		i int
	}{{b0, i0}, {b1, i1}, {b2, i2}, {b3, i3}} {
		if c.i >= 0 && (c.v > best || c.v == best && (id < 0 || c.i < id)) {
			best, id = c.v, c.i
		}
	}
	if id < 0 {
		return 0 // every score -Inf (or NaN): the scan keeps the first
	}
	return id
}

// negligible is how far below the best score a score's weight is taken as 0: e^-30 is under
// 1e-13, so across a vocabulary of millions the mass left out stays below 1e-6. Skipping the
// exponential for the long tail is what makes a token's log probability cheap (tiny-lm's
// greedy steps spent a third of their CPU in math.Exp over every score).
const negligible = 30

// weight is e^(x - top), or 0 for a score too far below the best to matter.
func weight(x, top float64) float64 {
	switch {
	case math.IsInf(top, -1):
		return 0 // every score banned: none has a weight
	case x == top:
		return 1 // the best itself, even when it is +Inf (where x-top is NaN)
	}
	if x < top-negligible {
		return 0
	}
	return math.Exp(x - top)
}

// logSoftmaxAt is log(softmax(v)[i]).
func logSoftmaxAt(v []float64, i int) float64 {
	m := v[argmax(v)]
	sum := 0.0
	for _, x := range v {
		sum += weight(x, m)
	}
	return v[i] - m - math.Log(sum)
}

func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}
