package tokclass

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomCase is a text of n tokens whose neighbours touch at random, with random logits
// and transitions over L labels.
func randomCase(rng *rand.Rand, n, L int) (Tokens, []float32, *Transitions) {
	var toks Tokens
	pos := 0
	for i := range n {
		if i > 0 && rng.IntN(2) == 0 {
			pos++ // a space
		}
		toks.Offsets = append(toks.Offsets, [2]int{pos, pos + 2})
		pos += 2
	}
	logits := make([]float32, n*L)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64() * 2)
	}
	mat := func() [][]float64 {
		m := make([][]float64, L)
		for a := range m {
			m[a] = make([]float64, L)
			for b := range m[a] {
				m[a][b] = rng.NormFloat64() * 2
			}
		}
		return m
	}
	return toks, logits, &Transitions{Spaced: mat(), Touching: mat()}
}

// pathScore is the CRF's score of labels, from O and back to O, by the definition.
func pathScore(toks Tokens, logits []float32, tr *Transitions, labels []int) float64 {
	L := len(tr.Spaced)
	s := tr.Spaced[0][labels[0]]
	for p, y := range labels {
		s += float64(logits[p*L+y])
		if p > 0 {
			m := tr.Spaced
			if toks.Offsets[p-1][1] == toks.Offsets[p][0] {
				m = tr.Touching
			}
			s += m[labels[p-1]][y]
		}
	}
	return s + tr.Spaced[labels[len(labels)-1]][0]
}

// allPaths calls f with every label sequence of length n over L labels.
func allPaths(n, L int, f func([]int)) {
	labels := make([]int, n)
	for {
		f(labels)
		i := n - 1
		for i >= 0 && labels[i] == L-1 {
			labels[i] = 0
			i--
		}
		if i < 0 {
			return
		}
		labels[i]++
	}
}

func TestCRFPathAndMarginalsMatchEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		n, L := 1+rng.IntN(5), 2+rng.IntN(3)
		toks, logits, tr := randomCase(rng, n, L)
		c, err := newCRF(tr, L)
		if err != nil {
			t.Fatal(err)
		}
		in := crfPositions(toks)
		best, bestScore := []int(nil), math.Inf(-1)
		var z float64
		want := make([]float64, n*L)
		allPaths(n, L, func(labels []int) {
			s := pathScore(toks, logits, tr, labels)
			if s > bestScore {
				best, bestScore = append([]int(nil), labels...), s
			}
			z += math.Exp(s)
			for p, y := range labels {
				want[p*L+y] += math.Exp(s)
			}
		})
		got := c.viterbi(in, logits)
		if pathScore(toks, logits, tr, got) < bestScore-1e-9 {
			t.Fatalf("trial %d: viterbi path %v scores below the best %v", trial, got, best)
		}
		probs := make([]float64, n*L)
		for p := range n {
			if err := softmaxRow(probs[p*L:(p+1)*L], logits[p*L:(p+1)*L]); err != nil {
				t.Fatal(err)
			}
		}
		marg, ok := c.marginals(in, probs)
		if !ok {
			t.Fatalf("trial %d: marginals underflowed", trial)
		}
		for i := range want {
			if math.Abs(marg[i]-want[i]/z) > 1e-9 {
				t.Fatalf("trial %d: marginal %d is %v, enumeration says %v", trial, i, marg[i], want[i]/z)
			}
		}
	}
}

// The case the CRF is for: "555-0134" read token by token comes out half phone, half fax;
// touching tokens that may not change type come out as one entity, with the CRF's
// probability as its score.
func TestCRFKeepsTouchingPiecesInOneEntity(t *testing.T) {
	labels := []string{"O", "B-PHONE", "I-PHONE", "B-FAX", "I-FAX"}
	text, toks := mk("call 555^-^0134")
	logits := rows(
		probs(labels, "O", .9),
		probsVec(labels, map[string]float64{"I-PHONE": .6, "I-FAX": .3}),
		probsVec(labels, map[string]float64{"I-PHONE": .3, "I-FAX": .55}),
		probsVec(labels, map[string]float64{"I-PHONE": .3, "I-FAX": .55}),
	)
	plain := testDecoder(t, labels)
	ents, err := plain.Decode(text, toks, logits, StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Fatalf("argmax decoding gave %+v; the case needs it to split the number", render(text, ents))
	}
	flat := func() [][]float64 {
		m := make([][]float64, len(labels))
		for a := range m {
			m[a] = make([]float64, len(labels))
		}
		return m
	}
	touching := flat()
	for a := 1; a < len(labels); a++ {
		for b := 1; b < len(labels); b++ {
			if labels[a][2:] != labels[b][2:] || labels[b][0] == 'B' {
				touching[a][b] = -20 // no change of type, and no new entity, inside "555-0134"
			}
		}
	}
	d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1, Transitions: &Transitions{Spaced: flat(), Touching: touching}})
	if err != nil {
		t.Fatal(err)
	}
	ents, err = d.Decode(text, toks, logits, StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	g := render(text, ents)
	if len(g) != 1 || g[0].Text != "555-0134" || g[0].Label != "FAX" {
		t.Fatalf("CRF decoding gave %+v, want one FAX entity over the whole number", g)
	}
	// The score is the CRF's marginal, not the softmax's 0.6 that PHONE had on "555".
	if g[0].Score <= 0.5 || g[0].Score >= 1 {
		t.Fatalf("entity score %v is not a CRF probability above one half", g[0].Score)
	}
	for _, s := range []Strategy{StrategyNone, StrategyFirst, StrategyAverage, StrategyMax} {
		ents, err := d.Decode(text, toks, logits, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Label, "FAX") {
				t.Fatalf("strategy %s: entity %+v is not FAX", s, render(text, []Entity{e}))
			}
		}
	}
}

// Special tokens are outside the CRF's sequence, as [CLS] and [SEP] were in training.
func TestCRFSkipsSpecialTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const L = 5
	toks, logits, tr := randomCase(rng, 6, L)
	d, err := NewDecoder(DecoderConfig{ID2Label: testLabels, UnknownID: -1, Transitions: tr})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", toks.Offsets[len(toks.Offsets)-1][1])
	want, err := d.Decode(text, toks, logits, StrategyNone)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := Tokens{
		Offsets: append(append([][2]int{{0, 0}}, toks.Offsets...), [2]int{0, 0}),
		Special: append(append([]bool{true}, make([]bool, len(toks.Offsets))...), true),
	}
	junk := probs(testLabels, "B-PER", .99)
	got, err := d.Decode(text, wrapped, rows(junk, logits, junk), StrategyNone)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("with specials %d entities, without %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entity %d: with specials %+v, without %+v", i, got[i], want[i])
		}
	}
}

func TestNewDecoderRejectsBadTransitions(t *testing.T) {
	sq := func(n int, v float64) [][]float64 {
		m := make([][]float64, n)
		for i := range m {
			m[i] = make([]float64, n)
			for j := range m[i] {
				m[i][j] = v
			}
		}
		return m
	}
	for name, tr := range map[string]*Transitions{
		"too few rows":   {Spaced: sq(4, 0), Touching: sq(5, 0)},
		"short row":      {Spaced: sq(5, 0), Touching: append(sq(5, 0)[:4], []float64{0})},
		"not finite":     {Spaced: sq(5, math.Inf(-1)), Touching: sq(5, 0)},
		"missing matrix": {Spaced: sq(5, 0)},
	} {
		if _, err := NewDecoder(DecoderConfig{ID2Label: testLabels, Transitions: tr}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
