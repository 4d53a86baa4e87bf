package generate

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sluice-serving/sluice/grammar"
)

func TestGreedyTakesTheBestAndReportsItsLogprob(t *testing.T) {
	sp := newSampler(Sampling{}, nil)
	id, lp := sp.pick([]float32{1, 3, 2})
	want := 3 - math.Log(math.Exp(1)+math.Exp(3)+math.Exp(2))
	if id != 1 || math.Abs(float64(lp)-want) > 1e-6 {
		t.Fatalf("greedy = %d, %v; want 1, %v", id, lp, want)
	}
}

// TestSamplingFollowsTheDistribution draws many tokens with a fixed seed and compares their
// frequencies with softmax(logits / temperature), and checks that top-k and top-p never draw
// outside their cut.
func TestSamplingFollowsTheDistribution(t *testing.T) {
	logits := []float32{2, 1, 0, -1}
	const n = 40000
	for _, temp := range []float64{1, 0.5, 2} {
		sp := newSampler(Sampling{DoSample: true, Temperature: temp, Seed: 7}, nil)
		counts := make([]int, len(logits))
		for range n {
			id, _ := sp.pick(logits)
			counts[id]++
		}
		sum := 0.0
		for _, l := range logits {
			sum += math.Exp(float64(l) / temp)
		}
		for i, l := range logits {
			want := math.Exp(float64(l)/temp) / sum
			if got := float64(counts[i]) / n; math.Abs(got-want) > 0.01 {
				t.Errorf("temperature %v: token %d drawn %.3f of the time, want %.3f", temp, i, got, want)
			}
		}
	}
	sp := newSampler(Sampling{DoSample: true, Temperature: 1, TopK: 2, Seed: 1}, nil)
	for range 2000 {
		if id, _ := sp.pick(logits); id > 1 {
			t.Fatalf("top-k 2 drew token %d", id)
		}
	}
	// softmax(2,1,0,-1) = .64, .24, .09, .03: top-p 0.8 keeps the first two.
	sp = newSampler(Sampling{DoSample: true, Temperature: 1, TopP: 0.8, Seed: 1}, nil)
	seen := map[int64]bool{}
	for range 4000 {
		id, lp := sp.pick(logits)
		seen[id] = true
		if id == 0 && math.Abs(float64(lp)-math.Log(0.6439/(0.6439+0.2369))) > 1e-3 {
			t.Fatalf("logprob %v is not renormalised over the kept tokens", lp)
		}
	}
	if len(seen) != 2 || !seen[0] || !seen[1] {
		t.Fatalf("top-p 0.8 drew %v, want exactly tokens 0 and 1", seen)
	}
}

func TestSeedReproduces(t *testing.T) {
	draw := func(seed uint64) []int64 {
		sp := newSampler(Sampling{DoSample: true, Temperature: 1, Seed: seed}, nil)
		var out []int64
		for range 50 {
			id, _ := sp.pick([]float32{0, 0.1, 0.2, 0.3, 0.4})
			out = append(out, id)
		}
		return out
	}
	a, b, c := draw(11), draw(11), draw(12)
	same := func(x, y []int64) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) || same(a, c) {
		t.Fatalf("seed 11 twice: %v / %v; seed 12: %v", a, b, c)
	}
}

func TestRepetitionPenaltyLowersSeenTokens(t *testing.T) {
	sp := newSampler(Sampling{RepetitionPenalty: 2}, []int64{0})
	// Token 0 scores 3 but was in the prompt: 3/2 = 1.5 < 2, so token 1 wins.
	if id, _ := sp.pick([]float32{3, 2, -1}); id != 1 {
		t.Fatalf("penalised greedy chose %d, want 1", id)
	}
	// Now 1 is seen too; a negative seen score is multiplied: -1 * 2 = -2.
	if id, _ := sp.pick([]float32{-1, -1, -1.5}); id != 2 {
		t.Fatalf("chose %d, want the unseen token 2", id)
	}
}

func TestFrequencyAndPresencePenaltiesCountTheOutput(t *testing.T) {
	sp := newSampler(Sampling{FrequencyPenalty: 0.5, PresencePenalty: 0.25}, []int64{1})
	if id, _ := sp.pick([]float32{0, 1, 0.5}); id != 1 {
		t.Fatalf("first pick %d: the prompt is not penalised", id)
	}
	// Token 1 now scores 1 - 0.5 - 0.25 = 0.25 < 0.5.
	if id, _ := sp.pick([]float32{0, 1, 0.5}); id != 2 {
		t.Fatalf("second pick %d, want 2", id)
	}
}

func BenchmarkGreedyPick(b *testing.B) {
	logits := make([]float32, 5000)
	for i := range logits {
		logits[i] = float32((i*7919)%1000)/100 - 5
	}
	for _, nolp := range []bool{false, true} {
		b.Run(fmt.Sprintf("no-logprobs=%v", nolp), func(b *testing.B) {
			sp := newSampler(Sampling{NoLogprobs: nolp}, nil)
			for b.Loop() {
				sp.pick(logits)
			}
		})
	}
}

func TestGreedyWithoutLogprobsPicksTheSame(t *testing.T) {
	logits := []float32{0.5, 2, -1, 2, 1}
	a, _ := newSampler(Sampling{}, nil).pick(logits)
	b, lp := newSampler(Sampling{NoLogprobs: true}, nil).pick(logits)
	if a != 1 || b != 1 || lp != 0 {
		t.Fatalf("with %d, without %d (%v); want the first best, 1", a, b, lp)
	}
}

// TestAlternativesAreTheLikeliestInOrder: the alternatives are the best tokens over the whole
// vocabulary, ties in id order (so the greedy choice comes first), a token that cannot be
// chosen (-Inf) never among them, and the chosen token's log probability equals its entry.
func TestAlternativesAreTheLikeliestInOrder(t *testing.T) {
	sp := newSampler(Sampling{TopLogprobs: 4}, nil)
	id, lp := sp.pick([]float32{2, 2, 1, float32(math.Inf(-1))})
	top := sp.top
	if id != 0 || len(top) != 3 || top[0].ID != 0 || top[1].ID != 1 || top[2].ID != 2 {
		t.Fatalf("chose %d, alternatives %+v", id, top)
	}
	want := 2 - math.Log(2*math.Exp(2)+math.Exp(1))
	if math.Abs(float64(lp)-want) > 1e-6 || top[0].Logprob != lp || top[1].Logprob != lp {
		t.Fatalf("log probability %v (alternatives %+v), want %v", lp, top, want)
	}
}

// argmax32 is the first-greatest scan's answer, whatever the ties, infinities and NaNs.
func TestArgmax32IsTheScan(t *testing.T) {
	scan := func(v []float32) int {
		id := 0
		for i, x := range v {
			if x > v[id] {
				id = i
			}
		}
		return id
	}
	rng := rand.New(rand.NewPCG(3, 3))
	nan := float32(math.NaN())
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, float32(math.Inf(1)), float32(math.Inf(-1)), nan}
	for trial := range 40000 {
		// Short rows reach only the portable lanes; long ones the vector loop and its tail.
		n := rng.IntN(13)
		if trial%4 >= 2 {
			n = 64 + rng.IntN(200)
		}
		v := make([]float32, n)
		for i := range v {
			switch {
			case trial%2 == 0:
				v[i] = specials[rng.IntN(len(specials))]
			case n > 13 && rng.IntN(8) > 0:
				v[i] = float32(math.Inf(-1)) // the greatest is rare, anywhere, or nowhere but v[0]
			default:
				v[i] = float32(rng.IntN(4))
			}
		}
		if trial%8 == 7 && n > 0 {
			v[0] = nan
		}
		want := scan(v)
		if got := argmax32(v); got != want {
			t.Fatalf("%v: %d, want %d", v, got, want)
		}
		if got := argmax32Lanes(v); got != want {
			t.Fatalf("lanes: %v: %d, want %d", v, got, want)
		}
	}
}

// argmaxMasked is the masked sampler's greedy choice: the first greatest allowed score.
func TestArgmaxMaskedIsTheMaskedScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	nan := float32(math.NaN())
	for trial := range 5000 {
		n := 1 + rng.IntN(300)
		v := make([]float32, n)
		var ids []int
		for i := range v {
			v[i] = float32(rng.IntN(5))
			if trial%3 == 0 && rng.IntN(6) == 0 {
				v[i] = nan
			}
			if rng.IntN(4) == 0 {
				ids = append(ids, i)
			}
		}
		mask := grammar.NewMask(n, ids...)
		want := 0
		if len(ids) > 0 {
			want = ids[0]
			for _, i := range ids {
				if v[want] != v[want] && v[i] == v[i] || v[i] > v[want] {
					want = i
				}
			}
		}
		if got := argmaxMasked(v, mask); got != want {
			t.Fatalf("%v allowing %v: %d, want %d", v, ids, got, want)
		}
		if trial%3 == 0 || len(ids) == 0 {
			continue
		}
		sp := newSampler(Sampling{}, nil) // with log probabilities: the masked scores' path
		sp.mask = mask
		if id, _ := sp.pick(v); int(id) != want {
			t.Fatalf("the sampler's full path chose %d, want %d", id, want)
		}
	}
}

// TestScoresThatOverflowAreChosenFrom: settings that overflow the scores (a temperature near
// 0, a repetition penalty near 0) and scores that are not numbers (a broken model) never
// panic, take the best token where there is one, and report a log probability JSON can
// carry.
func TestScoresThatOverflowAreChosenFrom(t *testing.T) {
	logits := []float32{1.5, 3, -2, 0.5}
	tiny := math.SmallestNonzeroFloat64
	cases := []struct {
		name   string
		s      Sampling
		prompt []int64
		logits []float32
		want   int64 // -1: any
	}{
		{"temperature 1e-308 and min_p", Sampling{DoSample: true, Temperature: 1e-308, MinP: 0.5}, nil, logits, 1},
		{"temperature 1e-308", Sampling{DoSample: true, Temperature: 1e-308}, nil, logits, 1},
		{"temperature 1e-308, top-k and top-p", Sampling{DoSample: true, Temperature: 1e-308, TopK: 2, TopP: 0.5}, nil, logits, 1},
		{"temperature 1e-308 and logprobs", Sampling{DoSample: true, Temperature: 1e-308, TopLogprobs: 2}, nil, logits, 1},
		{"repetition penalty near 0", Sampling{DoSample: true, Temperature: 1, RepetitionPenalty: tiny, MinP: 0.5}, []int64{1}, logits, 1},
		{"repetition penalty near 0, greedy", Sampling{RepetitionPenalty: tiny, TopLogprobs: 2}, []int64{1}, logits, 1},
		{"NaN scores", Sampling{DoSample: true, Temperature: 0.7, MinP: 0.1}, nil, []float32{float32(math.NaN()), 2, float32(math.NaN()), 1}, -1},
		{"+Inf scores", Sampling{DoSample: true, Temperature: 0.7, TopP: 0.9}, nil, []float32{1, float32(math.Inf(1)), 0, float32(math.Inf(1))}, -1},
		{"every score NaN", Sampling{DoSample: true, Temperature: 1, MinP: 0.5, TopLogprobs: 1}, nil, []float32{float32(math.NaN()), float32(math.NaN())}, -1},
	}
	for _, c := range cases {
		sp := newSampler(c.s, c.prompt)
		for range 50 {
			id, lp := sp.pick(c.logits)
			if c.want >= 0 && id != c.want || id < 0 || int(id) >= len(c.logits) {
				t.Fatalf("%s: chose %d, want %d", c.name, id, c.want)
			}
			if !(lp >= minLogprob && lp <= 0) {
				t.Fatalf("%s: log probability %v", c.name, lp)
			}
			for _, a := range sp.top {
				if !(a.Logprob >= minLogprob && a.Logprob <= 0) {
					t.Fatalf("%s: an alternative's log probability %v", c.name, a.Logprob)
				}
			}
		}
		if c.name == "+Inf scores" {
			if id, _ := sp.pick(c.logits); id != 1 && id != 3 {
				t.Fatalf("%s: chose %d, not one of the +Inf scores", c.name, id)
			}
		}
	}
}

// TestAConstraintHoldsWhenEveryScoreOverflows: a repetition penalty large enough to take every
// token the constraint allows to -Inf leaves the choice among them, greedy or sampled, and
// past min_tokens' ban where another is allowed; without a constraint, past the ban too.
func TestAConstraintHoldsWhenEveryScoreOverflows(t *testing.T) {
	logits := []float32{1.5, 3, -2, -3, -4}
	for _, s := range []Sampling{{RepetitionPenalty: math.MaxFloat64}, {RepetitionPenalty: math.MaxFloat64, NoLogprobs: true},
		{RepetitionPenalty: math.MaxFloat64, DoSample: true, Temperature: 1, TopP: 0.9}} {
		for _, banning := range []bool{false, true} {
			sp := newSampler(s, []int64{2, 3, 4})
			sp.mask = grammar.NewMask(len(logits), 2, 3, 4)
			sp.banned, sp.banning = []int64{2}, banning
			want := map[bool]int64{false: 2, true: 3}[banning]
			if id, lp := sp.pick(logits); id != want || !(lp >= minLogprob && lp <= 0) {
				t.Errorf("%+v, banning %v: chose %d (log probability %v), want %d", s, banning, id, lp, want)
			}
			// Without a constraint, the first token min_tokens does not ban.
			sp = newSampler(s, []int64{0, 1, 2, 3, 4})
			sp.banned, sp.banning = []int64{0}, banning
			if id, _ := sp.pick([]float32{-1, -2, -3, -4, -5}); id != map[bool]int64{false: 0, true: 1}[banning] {
				t.Errorf("%+v, banning %v, no constraint: chose %d", s, banning, id)
			}
		}
	}
}

// drawBySortingAll is a draw as the plain reading of the cuts makes it: where a cut is asked
// for, every token sorted best first (ties in id order), top-k, top-p and min-p applied along that order, then a walk of
// the weights with u in [0, 1). The sampler's own draw must choose what it chooses.
func drawBySortingAll(scores []float64, s Sampling, u float64) int {
	top := scores[argmax(scores)]
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	if s.TopK > 0 || s.TopP > 0 && s.TopP < 1 { // uncut, the tokens in id order draw as well
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	}
	keep := len(order)
	if s.TopK > 0 {
		keep = min(keep, s.TopK)
	}
	sum := 0.0
	for _, i := range order[:keep] {
		sum += weight(scores[i], top)
	}
	if s.TopP > 0 && s.TopP < 1 {
		cum := 0.0
		for j, i := range order[:keep] {
			if cum += weight(scores[i], top); cum >= s.TopP*sum {
				keep, sum = j+1, cum
				break
			}
		}
	}
	if s.MinP > 0 {
		kept := order[:0]
		sum = 0
		for _, i := range order[:keep] {
			if w := weight(scores[i], top); w >= s.MinP {
				kept, sum = append(kept, i), sum+w
			}
		}
		order, keep = kept, len(kept)
	}
	u *= sum
	id := -1
	for _, i := range order[:keep] {
		w := weight(scores[i], top)
		if w > 0 {
			id = i
		}
		if u -= w; u < 0 {
			break
		}
	}
	return id
}

// TestCutsChooseAsASortOfEveryTokenWould: top-k selects its best without sorting the
// vocabulary, and top-p sorts the heaviest tokens first; over vocabularies peaked and flat,
// with ties and banned tokens, each draw is the one a sort of every token gives.
func TestCutsChooseAsASortOfEveryTokenWould(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for c := range 3000 {
		n := 1 + r.IntN(400)
		spread := []float64{0.05, 1, 3, 12, 60}[r.IntN(5)]
		logits := make([]float32, n)
		for i := range logits {
			switch x := r.NormFloat64() * spread; {
			case r.IntN(20) == 0:
				logits[i] = float32(math.Inf(-1))
			case r.IntN(4) == 0:
				logits[i] = float32(math.Round(x)) // ties
			default:
				logits[i] = float32(x)
			}
		}
		s := Sampling{DoSample: true, Temperature: []float64{0.5, 1, 1.7}[r.IntN(3)], TopK: []int{0, 0, 1, 2, 7, 40}[r.IntN(6)],
			TopP: []float64{0, 0.1, 0.5, 0.9, 0.999, 1}[r.IntN(6)], MinP: []float64{0, 0, 0.05}[r.IntN(3)], Seed: uint64(c), NoLogprobs: true}
		if s.TopK == 0 && s.TopP == 0 {
			s.TopP = 0.95
		}
		sp := newSampler(s, nil)
		uniform := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15)) // the sampler's own source
		for range 3 {
			scores := make([]float64, n)
			for i, v := range logits {
				scores[i] = float64(v) / s.Temperature
			}
			got, _ := sp.pick(logits)
			want := drawBySortingAll(scores, s, uniform.Float64())
			if want < 0 {
				want = 0 // every score -Inf: the first token, as unscored takes it
			}
			if int(got) != want {
				t.Fatalf("case %d (%d tokens, spread %v, %+v): drew %d, a sort of every token %d", c, n, spread, s, got, want)
			}
		}
	}
}

// BenchmarkSampledPick is one sampled token's pick over tiny-lm's vocabulary and Llama 3's,
// scores spread as a model's are (normal, σ 3), by cut: each runs on the step loop, one row
// after another.
func BenchmarkSampledPick(b *testing.B) {
	for _, vocab := range []int{5000, 128256} {
		r := rand.New(rand.NewPCG(1, 2))
		logits := make([]float32, vocab)
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 3)
		}
		for _, c := range []struct {
			name string
			s    Sampling
		}{
			{"temperature", Sampling{DoSample: true, Temperature: 1, NoLogprobs: true}},
			{"top-k=40", Sampling{DoSample: true, Temperature: 1, TopK: 40, NoLogprobs: true}},
			{"top-p=0.9", Sampling{DoSample: true, Temperature: 1, TopP: 0.9, NoLogprobs: true}},
			{"top-k=50,top-p=0.95", Sampling{DoSample: true, Temperature: 0.8, TopK: 50, TopP: 0.95, NoLogprobs: true}},
		} {
			b.Run(fmt.Sprintf("vocab=%d/%s", vocab, c.name), func(b *testing.B) {
				sp := newSampler(c.s, nil)
				for b.Loop() {
					sp.pick(logits)
				}
			})
		}
	}
}
