package entities

import (
	"strings"
	"testing"
)

// The cases follow HF's postprocess step by step: argmax per token, optional word
// fusion (first/average/max), then group_entities with get_tag, mean scores, and
// dropping groups whose label is ignored.
func TestDecodeStrategies(t *testing.T) {
	L := testLabels
	p := func(label string, v float64) []float32 { return probs(L, label, v) }
	tests := []struct {
		name     string
		spec     string
		logits   []float32
		strategy Strategy
		want     []got
	}{
		{
			name:     "simple groups B then I, O dropped",
			spec:     "Hello Sarah Jones today",
			logits:   rows(p("O", .9), p("B-PER", .8), p("I-PER", .6), p("O", .99)),
			strategy: StrategySimple,
			want:     []got{{"PER", "Sarah Jones", .7}},
		},
		{
			name:     "simple: two B of one tag are two entities",
			spec:     "Sarah John",
			logits:   rows(p("B-PER", .8), p("B-PER", .6)),
			strategy: StrategySimple,
			want:     []got{{"PER", "Sarah", .8}, {"PER", "John", .6}},
		},
		{
			name:     "simple: I after a different tag starts a new entity, leading I is an entity",
			spec:     "Acme Sarah",
			logits:   rows(p("I-ORG", .7), p("I-PER", .9)),
			strategy: StrategySimple,
			want:     []got{{"ORG", "Acme", .7}, {"PER", "Sarah", .9}},
		},
		{
			name:     "simple: an O token splits an entity",
			spec:     "Sarah and Jones",
			logits:   rows(p("B-PER", .8), p("O", .9), p("I-PER", .6)),
			strategy: StrategySimple,
			want:     []got{{"PER", "Sarah", .8}, {"PER", "Jones", .6}},
		},
		{
			name:     "simple splits a word whose pieces disagree (HF's Microsoft example)",
			spec:     "Micro|soft",
			logits:   rows(p("B-ORG", .9), p("I-PER", .7)),
			strategy: StrategySimple,
			want:     []got{{"ORG", "Micro", .9}, {"PER", "soft", .7}},
		},
		{
			name:     "simple: B- on a subword starts a new entity",
			spec:     "Micro|soft",
			logits:   rows(p("B-ORG", .9), p("B-ORG", .7)),
			strategy: StrategySimple,
			want:     []got{{"ORG", "Micro", .9}, {"ORG", "soft", .7}},
		},
		{
			name:     "first: the word takes its first token's label and score",
			spec:     "Micro|soft",
			logits:   rows(p("B-ORG", .9), p("I-PER", .7)),
			strategy: StrategyFirst,
			want:     []got{{"ORG", "Microsoft", .9}},
		},
		{
			name:     "first: B- inside a word does not split it",
			spec:     "Micro|soft",
			logits:   rows(p("B-ORG", .9), p("B-ORG", .7)),
			strategy: StrategyFirst,
			want:     []got{{"ORG", "Microsoft", .9}},
		},
		{
			name:     "first: first token O hides the entity of the rest of the word",
			spec:     "Micro|soft",
			logits:   rows(p("O", .6), p("B-ORG", .99)),
			strategy: StrategyFirst,
			want:     nil,
		},
		{
			name:     "max: the most confident token decides",
			spec:     "Micro|soft",
			logits:   rows(p("B-ORG", .6), p("I-PER", .9)),
			strategy: StrategyMax,
			want:     []got{{"PER", "Microsoft", .9}},
		},
		{
			name:     "max: the first of equally confident tokens wins",
			spec:     "Micro|soft",
			logits:   rows(p("B-ORG", .8), p("I-PER", .8)),
			strategy: StrategyMax,
			want:     []got{{"ORG", "Microsoft", .8}},
		},
		{
			name: "average: mean probability vector, then argmax",
			spec: "Micro|soft",
			logits: rows(
				probsVec(L, map[string]float64{"B-ORG": .5, "I-PER": .3, "O": .1, "B-PER": .05, "I-ORG": .05}),
				probsVec(L, map[string]float64{"B-ORG": .2, "I-PER": .6, "O": .1, "B-PER": .05, "I-ORG": .05}),
			),
			strategy: StrategyAverage,
			want:     []got{{"PER", "Microsoft", .45}},
		},
		{
			name:     "word strategies group words by B/I and average word scores",
			spec:     "Dr^. Jean Du|pont said",
			logits:   rows(p("O", .9), p("O", .9), p("B-PER", .9), p("I-PER", .5), p("O", .8), p("O", .9)),
			strategy: StrategyFirst,
			want:     []got{{"PER", "Jean Dupont", .7}},
		},
		{
			name:     "none: one entity per token with the full label, O dropped",
			spec:     "Sarah Jo|nes ok",
			logits:   rows(p("B-PER", .8), p("I-PER", .7), p("I-PER", .6), p("O", .9)),
			strategy: StrategyNone,
			want:     []got{{"B-PER", "Sarah", .8}, {"I-PER", "Jo", .7}, {"I-PER", "nes", .6}},
		},
		{
			name:     "punctuation split off by the pre-tokenizer is its own word",
			spec:     "Acme^, Inc^.",
			logits:   rows(p("B-ORG", .9), p("I-ORG", .6), p("I-ORG", .9), p("O", .9)),
			strategy: StrategyFirst,
			want:     []got{{"ORG", "Acme, Inc", .8}},
		},
	}
	d := testDecoder(t, L)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, toks := mk(tc.spec)
			ents, err := d.Decode(text, toks, tc.logits, tc.strategy)
			if err != nil {
				t.Fatal(err)
			}
			sameEntities(t, text, ents, tc.want)
			checkSpans(t, text, ents)
		})
	}
}

func TestDecodeLabelsWithoutPrefix(t *testing.T) {
	L := []string{"O", "PER", "B-DATE-TIME", "I-DATE-TIME"}
	d := testDecoder(t, L)
	text, toks := mk("Sarah Jones on May 5")
	logits := rows(probs(L, "PER", .8), probs(L, "PER", .6), probs(L, "O", .9),
		probs(L, "B-DATE-TIME", .9), probs(L, "I-DATE-TIME", .7))
	ents, err := d.Decode(text, toks, logits, StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	// A bare label continues itself (HF's get_tag); only the B-/I- prefix is removed.
	sameEntities(t, text, ents, []got{{"PER", "Sarah Jones", .7}, {"DATE-TIME", "May 5", .8}})
}

func TestDecodeIgnoreLabels(t *testing.T) {
	d, err := NewDecoder(DecoderConfig{ID2Label: testLabels, IgnoreLabels: []string{"O", "ORG"}, UnknownID: -1})
	if err != nil {
		t.Fatal(err)
	}
	text, toks := mk("Sarah Acme")
	logits := rows(probs(testLabels, "B-PER", .8), probs(testLabels, "B-ORG", .9))
	ents, err := d.Decode(text, toks, logits, StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"PER", "Sarah", .8}})
}

// Without word ids, HF's fallback decides words by the character before the token and
// the token's first character; an unknown token always starts a word.
func TestDecodeFallbackWordHeuristic(t *testing.T) {
	L := testLabels
	d, err := NewDecoder(DecoderConfig{ID2Label: L, UnknownID: 1})
	if err != nil {
		t.Fatal(err)
	}
	text, toks := mk("New^-^York Sa|rah")
	toks.WordIDs = nil
	logits := rows(probs(L, "B-ORG", .9), probs(L, "O", .9), probs(L, "O", .9), probs(L, "B-PER", .8), probs(L, "O", .9))
	ents, err := d.Decode(text, toks, logits, StrategyFirst)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"ORG", "New-York", .9}, {"PER", "Sarah", .8}})

	toks.IDs[4] = 1 // "rah" is now the unknown token: a word of its own, labelled O
	ents, err = d.Decode(text, toks, logits, StrategyFirst)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"ORG", "New-York", .9}, {"PER", "Sa", .8}})
}

func TestDecodeSkipsSpecialTokens(t *testing.T) {
	L := testLabels
	d := testDecoder(t, L)
	text, toks := mk("Sarah Jones")
	// Wrap in [CLS] ... [SEP] as a tokenizer with specials would.
	toks = Tokens{
		IDs:     append(append([]int64{101}, toks.IDs...), 102),
		Offsets: append(append([][2]int{{0, 0}}, toks.Offsets...), [2]int{0, 0}),
		WordIDs: append(append([]int{-1}, toks.WordIDs...), -1),
		Special: []bool{true, false, false, true},
	}
	logits := rows(probs(L, "B-ORG", .99), probs(L, "B-PER", .8), probs(L, "I-PER", .6), probs(L, "I-ORG", .99))
	for _, s := range []Strategy{StrategySimple, StrategyFirst, StrategyAverage, StrategyMax} {
		ents, err := d.Decode(text, toks, logits, s)
		if err != nil {
			t.Fatal(err)
		}
		sameEntities(t, text, ents, []got{{"PER", "Sarah Jones", .7}})
	}
}

func TestDecodeTrimsAndSnapsSpans(t *testing.T) {
	L := testLabels
	d := testDecoder(t, L)
	text := " José \u00a0"
	// Offsets that start on a space and end inside the two-byte "é".
	toks := Tokens{Offsets: [][2]int{{0, 5}}, WordIDs: []int{0}}
	ents, err := d.Decode(text, toks, probs(L, "B-PER", .9), StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"PER", "José", .9}})

	toks = Tokens{Offsets: [][2]int{{6, 9}}, WordIDs: []int{0}} // only whitespace
	ents, err = d.Decode(text, toks, probs(L, "B-PER", .9), StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("a whitespace-only span should be dropped, got %+v", ents)
	}
}

func TestDecodeErrors(t *testing.T) {
	L := testLabels
	d := testDecoder(t, L)
	const secret = "CANARY-Zq7"
	text, toks := mk(secret + " lives")
	good := rows(probs(L, "O", .9), probs(L, "O", .9))
	bad := []struct {
		name   string
		toks   Tokens
		logits []float32
		s      Strategy
	}{
		{"short logits", toks, good[:7], StrategySimple},
		{"offset past text", Tokens{Offsets: [][2]int{{0, 99}, {0, 1}}}, good, StrategySimple},
		{"reversed offsets", Tokens{Offsets: [][2]int{{3, 1}, {0, 1}}}, good, StrategySimple},
		{"word id count", Tokens{Offsets: toks.Offsets, WordIDs: []int{0}}, good, StrategyFirst},
		{"NaN logit", toks, rows(probs(L, "O", .9), []float32{0, float32(nan()), 0, 0, 0}), StrategySimple},
		{"unknown strategy", toks, good, Strategy(42)},
	}
	for _, tc := range bad {
		_, err := d.Decode(text, tc.toks, tc.logits, tc.s)
		if err == nil {
			t.Errorf("%s: want an error", tc.name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "lives") {
			t.Errorf("%s: error leaks text: %v", tc.name, err)
		}
	}
	if _, err := NewDecoder(DecoderConfig{}); err == nil {
		t.Error("a decoder without labels should be refused")
	}
}

func nan() float64 { var z float64; return z / z }

func TestParseStrategy(t *testing.T) {
	for i, name := range []string{"none", "SIMPLE", "First", "average", "max"} {
		s, err := ParseStrategy(name)
		if err != nil || s != Strategy(i) {
			t.Errorf("ParseStrategy(%q) = %v, %v", name, s, err)
		}
		if s.String() != strings.ToLower(name) {
			t.Errorf("String() = %q", s.String())
		}
	}
	if _, err := ParseStrategy("longest"); err == nil {
		t.Error("unknown strategy accepted")
	}
}
