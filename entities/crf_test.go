package entities

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// crfCase is a text of tokens with random gaps, logits and transitions.
type crfCase struct {
	text   string
	toks   Tokens
	gaps   []int // the gap class before each token, as the case was built
	logits []float32
	tr     *Transitions
}

// randomCase is a text of n tokens whose neighbours touch, or are apart by spaces, a line
// break or a tab, at random, with random logits and transitions over L labels; one case in
// four has no Break matrix.
func randomCase(rng *rand.Rand, n, L int) crfCase {
	var c crfCase
	var text strings.Builder
	seps := []struct {
		text string
		gap  int
	}{{"", gapTouching}, {" ", gapSpaced}, {"  ", gapSpaced}, {"\n", gapBreak}, {" \t", gapBreak}, {"\r\n  ", gapBreak}}
	for i := range n {
		gap := gapSpaced
		if i > 0 {
			sep := seps[rng.IntN(len(seps))]
			text.WriteString(sep.text)
			gap = sep.gap
		}
		c.gaps = append(c.gaps, gap)
		c.toks.Offsets = append(c.toks.Offsets, [2]int{text.Len(), text.Len() + 2})
		text.WriteString("ab")
	}
	c.text = text.String()
	c.logits = make([]float32, n*L)
	for i := range c.logits {
		c.logits[i] = float32(rng.NormFloat64() * 2)
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
	c.tr = &Transitions{Spaced: mat(), Touching: mat(), Break: mat()}
	if rng.IntN(4) == 0 {
		c.tr.Break = nil
	}
	return c
}

// pathScore is the CRF's score of labels, from O and back to O, by the definition.
func (c crfCase) pathScore(labels []int) float64 {
	tr := c.tr
	L := len(tr.Spaced)
	byGap := [gapClasses][][]float64{tr.Spaced, tr.Touching, tr.Break}
	if tr.Break == nil {
		byGap[gapBreak] = tr.Spaced
	}
	s := tr.Spaced[0][labels[0]]
	for p, y := range labels {
		s += float64(c.logits[p*L+y])
		if p > 0 {
			s += byGap[c.gaps[p]][labels[p-1]][y]
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
		cc := randomCase(rng, n, L)
		c, err := newCRF(cc.tr, L)
		if err != nil {
			t.Fatal(err)
		}
		in := crfPositions(cc.text, cc.toks)
		best, bestScore := []int(nil), math.Inf(-1)
		var z float64
		want := make([]float64, n*L)
		allPaths(n, L, func(labels []int) {
			s := cc.pathScore(labels)
			if s > bestScore {
				best, bestScore = append([]int(nil), labels...), s
			}
			z += math.Exp(s)
			for p, y := range labels {
				want[p*L+y] += math.Exp(s)
			}
		})
		got := c.viterbi(in, cc.logits, new(crfScratch))
		if cc.pathScore(got) < bestScore-1e-9 {
			t.Fatalf("trial %d: viterbi path %v scores below the best %v", trial, got, best)
		}
		probs := make([]float64, n*L)
		for p := range n {
			if err := softmaxRow(probs[p*L:(p+1)*L], cc.logits[p*L:(p+1)*L]); err != nil {
				t.Fatal(err)
			}
		}
		marg, ok := c.marginals(in, probs, new(crfScratch))
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
	touching := square(len(labels), 0)
	for a := 1; a < len(labels); a++ {
		for b := 1; b < len(labels); b++ {
			if labels[a][2:] != labels[b][2:] || labels[b][0] == 'B' {
				touching[a][b] = -20 // no change of type, and no new entity, inside "555-0134"
			}
		}
	}
	d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1, Transitions: &Transitions{Spaced: square(len(labels), 0), Touching: touching}})
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
	cc := randomCase(rng, 6, L)
	toks, logits, text := cc.toks, cc.logits, cc.text
	d, err := NewDecoder(DecoderConfig{ID2Label: testLabels, UnknownID: -1, Transitions: cc.tr})
	if err != nil {
		t.Fatal(err)
	}
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
	// Only special tokens, or none: nothing found, no panic (a panic is a model failure to
	// the breaker, for every caller).
	only := Tokens{Offsets: [][2]int{{0, 0}, {0, 0}}, Special: []bool{true, true}}
	if got, err := d.Decode(text, only, rows(junk, junk), StrategyNone); err != nil || len(got) != 0 {
		t.Fatalf("special tokens only: %v %v", got, err)
	}
	if got, err := d.Decode("", Tokens{}, nil, StrategyNone); err != nil || len(got) != 0 {
		t.Fatalf("no tokens: %v %v", got, err)
	}
}

func TestNewDecoderRejectsBadTransitions(t *testing.T) {
	for name, tr := range map[string]*Transitions{
		"too few rows":   {Spaced: square(4, 0), Touching: square(5, 0)},
		"short row":      {Spaced: square(5, 0), Touching: append(square(5, 0)[:4], []float64{0})},
		"not finite":     {Spaced: square(5, math.Inf(-1)), Touching: square(5, 0)},
		"missing matrix": {Spaced: square(5, 0)},
		"short break":    {Spaced: square(5, 0), Touching: square(5, 0), Break: square(4, 0)},
	} {
		if _, err := NewDecoder(DecoderConfig{ID2Label: testLabels, Transitions: tr}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The tokenizer drops whitespace, so the network reads two list items, one per line, as
// one run of entity tokens; the Break matrix (a line break or tab between tokens) splits
// them, and decodes as before where it is absent.
func TestCRFBreakMatrixSplitsEntitiesAtLineBreaks(t *testing.T) {
	labels := []string{"O", "B-DIS", "I-DIS"}
	brk := square(len(labels), 0)
	brk[1][2], brk[2][2] = -20, -20 // no entity goes on across a line break or tab
	for _, spec := range []string{"CKD\ncorneal ulcer", "CKD\tcorneal ulcer", "CKD \r\n corneal ulcer"} {
		text, toks := mk(spec)
		// "corneal" reads as going on (I) rather than starting an entity (B).
		logits := rows(
			probs(labels, "I-DIS", .8),
			probsVec(labels, map[string]float64{"I-DIS": .6, "B-DIS": .3, "O": .1}),
			probs(labels, "I-DIS", .8),
		)
		for _, tc := range []struct {
			brk  [][]float64
			want []string
		}{
			{nil, []string{strings.TrimSpace(text)}},
			{brk, []string{"CKD", "corneal ulcer"}},
		} {
			d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1,
				Transitions: &Transitions{Spaced: square(len(labels), 0), Touching: square(len(labels), 0), Break: tc.brk}})
			if err != nil {
				t.Fatal(err)
			}
			ents, err := d.Decode(text, toks, logits, StrategySimple)
			if err != nil {
				t.Fatal(err)
			}
			var gotTexts []string
			for _, g := range render(text, ents) {
				gotTexts = append(gotTexts, g.Text)
			}
			if strings.Join(gotTexts, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%q, break matrix %v: entities %q, want %q", spec, tc.brk != nil, gotTexts, tc.want)
			}
		}
	}
	// Spaces alone are no break: "corneal ulcer" stays one entity under the same matrices.
	text, toks := mk("corneal ulcer")
	d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1,
		Transitions: &Transitions{Spaced: square(len(labels), 0), Touching: square(len(labels), 0), Break: brk}})
	if err != nil {
		t.Fatal(err)
	}
	ents, err := d.Decode(text, toks, rows(probs(labels, "I-DIS", .8), probs(labels, "I-DIS", .8)), StrategySimple)
	if err != nil || len(ents) != 1 {
		t.Fatalf("spaced words: %+v, %v; want one entity", render(text, ents), err)
	}
}

// The gap classes must be those of the recipe's nets.gap_classes: touching when a token
// starts where the one before ends, a break when a line break or tab lies between, spaced
// otherwise (other Unicode spaces, overlapping offsets, the first token); special tokens
// are not in the sequence, so the gap runs from the last token before them.
func TestCRFPositionsClassifyGaps(t *testing.T) {
	for _, tc := range []struct {
		sep  string
		want uint8
	}{
		{"", gapTouching}, {" ", gapSpaced}, {"\u00a0", gapSpaced}, {"\u3000", gapSpaced},
		{"\n", gapBreak}, {"\r", gapBreak}, {"\t", gapBreak}, {"\v", gapBreak}, {"\f", gapBreak},
		{"\u0085", gapBreak}, {"\u2028", gapBreak}, {"\u2029", gapBreak}, {"  \n  ", gapBreak},
	} {
		text := "ab" + tc.sep + "cd"
		toks := Tokens{Offsets: [][2]int{{0, 2}, {2 + len(tc.sep), 4 + len(tc.sep)}}}
		in := crfPositions(text, toks)
		if len(in.gap) != 2 || in.gap[0] != gapSpaced || in.gap[1] != tc.want {
			t.Errorf("separator %q: gaps %v, want [%d %d]", tc.sep, in.gap, gapSpaced, tc.want)
		}
	}
	// "ab\ncd" with a special token between the two words and one overlapping the second.
	text := "ab\ncd"
	toks := Tokens{
		Offsets: [][2]int{{0, 0}, {0, 2}, {0, 0}, {3, 5}, {4, 5}, {0, 0}},
		Special: []bool{true, false, true, false, false, true},
	}
	in := crfPositions(text, toks)
	if want := []int{1, 3, 4}; len(in.idx) != 3 || in.idx[0] != want[0] || in.idx[1] != want[1] || in.idx[2] != want[2] {
		t.Fatalf("positions %v, want %v", in.idx, want)
	}
	if want := []uint8{gapSpaced, gapBreak, gapSpaced}; string(in.gap) != string(want) {
		t.Fatalf("gaps %v, want %v", in.gap, want)
	}
}

// square is an n x n matrix of v.
func square(n int, v float64) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range m[i] {
			m[i][j] = v
		}
	}
	return m
}
