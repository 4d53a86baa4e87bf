package entities

import (
	"cmp"
	"strings"
	"testing"
)

func TestThreshold(t *testing.T) {
	ents := []Entity{{Label: "A", Score: .49}, {Label: "B", Score: .5}, {Label: "C", Score: .9}}
	got := Threshold(ents, .5)
	if len(got) != 2 || got[0].Label != "B" || got[1].Label != "C" {
		t.Fatalf("Threshold kept %+v", got)
	}
	if len(Threshold([]Entity{{Score: 0}}, 0)) != 1 {
		t.Fatal("threshold 0 must keep everything")
	}
}

func TestExtendToWordEnd(t *testing.T) {
	text := "Microsoft-Corp ibuprofène200mg x"
	drug := strings.Index(text, "ibup")
	x := strings.LastIndex(text, "x")
	ents := []Entity{
		{Label: "ORG", Start: 0, End: 5},            // "Micro" -> "Microsoft", stops at '-'
		{Label: "DRUG", Start: drug, End: drug + 4}, // "ibup" runs over letters, accents and digits, 10 code points at most
		{Label: "X", Start: x, End: x + 1},          // already whole
	}
	got := ExtendToWordEnd(text, ents)
	want := []string{"Microsoft", "ibuprofène200m", "x"}
	for i, w := range want {
		if s := text[got[i].Start:got[i].End]; s != w {
			t.Errorf("entity %d = %q, want %q", i, s, w)
		}
	}
}

func TestGroupAdjacent(t *testing.T) {
	// 0         1         2         3
	// 0123456789012345678901234567890123456
	text := "John Smith, Jr. met Mary at ACME Corp"
	e := func(label string, start, end int, score float64) Entity {
		return Entity{Label: label, Start: start, End: end, Score: score}
	}
	tests := []struct {
		name string
		text string // the text above when empty
		in   []Entity
		want []got
	}{
		{
			name: "one space apart merges, mean score",
			in:   []Entity{e("NAME", 0, 4, .9), e("NAME", 5, 10, .7)},
			want: []got{{"NAME", "John Smith", .8}},
		},
		{
			name: "two code points apart merges (', ')",
			in:   []Entity{e("NAME", 5, 10, .9), e("NAME", 12, 14, .5)},
			want: []got{{"NAME", "Smith, Jr", .7}},
		},
		{
			name: "three apart does not",
			in:   []Entity{e("NAME", 0, 4, .9), e("NAME", 7, 10, .5)},
			want: []got{{"NAME", "John", .9}, {"NAME", "ith", .5}},
		},
		{
			name: "different labels do not merge",
			in:   []Entity{e("NAME", 0, 4, .9), e("ORG", 5, 10, .5)},
			want: []got{{"NAME", "John", .9}, {"ORG", "Smith", .5}},
		},
		{
			name: "a merged group widens to whole words",
			in:   []Entity{e("ORG", 29, 32, .6), e("ORG", 33, 35, .8)},
			want: []got{{"ORG", "ACME Corp", .7}},
		},
		{
			// Each name on a line of its own, the CRF's break kept them apart; the one-code-
			// point gap let grouping join them ("John\nMary", one surrogate under replace).
			name: "a line break between keeps them apart",
			text: "Emergency contacts:\nJohn\nMary",
			in:   []Entity{e("first_name", 20, 24, .99), e("first_name", 25, 29, .99)},
			want: []got{{"first_name", "John", .99}, {"first_name", "Mary", .99}},
		},
		{
			// OpenMed refuses line breaks only: a table row's cells group.
			name: "a tab does not",
			text: "Diagnoses:\tasthma\tCOPD",
			in:   []Entity{e("DISEASE", 11, 17, .9), e("DISEASE", 18, 22, .7)},
			want: []got{{"DISEASE", "asthma\tCOPD", .8}},
		},
		{
			name: "chains compare with the last member only",
			in:   []Entity{e("NAME", 0, 4, .9), e("NAME", 5, 10, .6), e("NAME", 12, 14, .3), e("NAME", 20, 24, .9)},
			want: []got{{"NAME", "John Smith, Jr", .6}, {"NAME", "Mary", .9}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := cmp.Or(tc.text, text)
			out := GroupAdjacent(text, append([]Entity(nil), tc.in...))
			sameEntities(t, text, out, tc.want)
			checkSpans(t, text, out)
		})
	}
}

func TestGroupAdjacentCountsCodePoints(t *testing.T) {
	text := "Zoë–é Zoë" // "–" is 3 bytes and "é" 2
	a := Entity{Label: "N", Start: 0, End: len("Zoë"), Score: 1}
	far := Entity{Label: "N", Start: len("Zoë–é "), End: len(text), Score: 1}
	if out := GroupAdjacent(text, []Entity{a, far}); len(out) != 2 {
		t.Fatalf("three code points (six bytes) apart merged: %+v", out)
	}
	near := Entity{Label: "N", Start: len("Zoë–é"), End: len("Zoë–é"), Score: 1}
	near.End = near.Start + 1 // the space, enough for a test of the gap rule
	if out := GroupAdjacent(text, []Entity{a, near}); len(out) != 1 {
		t.Fatalf("two code points (five bytes) apart did not merge: %+v", out)
	}
}

func TestExtractAnalyzeAndPIIOptions(t *testing.T) {
	L := []string{"O", "B-NAME", "I-NAME", "B-DATE", "I-DATE"}
	d := testDecoder(t, L)
	text, toks := mk("Patient Jo|hn Smith DOB^: 01^/^15^/^1970 .")
	p := func(l string, v float64) []float32 { return probs(L, l, v) }
	logits := rows(
		p("O", .99),                      // Patient
		p("B-NAME", .9), p("B-NAME", .6), // Jo ##hn: the subword wrongly starts a new name
		p("I-NAME", .8),          // Smith
		p("O", .99), p("O", .99), // DOB :
		p("B-DATE", .7),                                   // 01
		p("I-DATE", .4),                                   // /
		p("I-DATE", .8), p("I-DATE", .8), p("I-DATE", .8), // 15 / 1970
		p("O", .99), // .
	)

	// /analyze defaults: simple, no threshold, no grouping. "Jo" is extended to "John"
	// by the span fix; "hn Smith" stays a second entity.
	ents, err := d.Extract(text, toks, logits, AnalyzeOptions())
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{
		{"NAME", "John", .9},
		{"NAME", "hn Smith", .7},
		{"DATE", "01/15/1970", (.7 + .4 + .8*3) / 5},
	})

	// Grouping joins the overlapping names.
	opts := AnalyzeOptions()
	opts.GroupEntities = true
	ents, err = d.Extract(text, toks, logits, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"NAME", "John Smith", .8}, {"DATE", "01/15/1970", .7}})

	// PII defaults: threshold .5 drops nothing here (group scores are averaged before),
	// grouping, then smart merging re-cuts the date on the pattern: 0.6 x model + 0.4 x
	// pattern score, and the pattern sees "dob" nearby (0.6 + 0.3).
	ents, err = d.Extract(text, toks, logits, PIIOptions())
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"NAME", "John Smith", .8}, {"DATE", "01/15/1970", .6*.7 + .4*.9}})

	// The threshold applies before grouping: "hn Smith" (.7) and the date (.7) go, "John"
	// stays alone. Pattern-only units are then not re-added when switched off.
	opts = PIIOptions()
	opts.ConfidenceThreshold = .75
	opts.SmartMerge.AllowPatternOnly = false
	ents, err = d.Extract(text, toks, logits, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"NAME", "John", .9}})
	// With pattern-only units allowed (OpenMed's default) the date comes back from the
	// pattern alone, below the threshold, as in OpenMed.
	opts.SmartMerge.AllowPatternOnly = true
	ents, err = d.Extract(text, toks, logits, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"NAME", "John", .9}, {"date", "01/15/1970", .9}})
}

// TestAnalyzeWithoutAggregationAnswersLabelsWithoutPrefix: /analyze's aggregation_strategy
// null is HF's raw tokens, whose labels OpenMed's formatter strips of B-/I-. Extract kept
// them ("B-PER" "Alice", "I-PER" "Smith"), so the tokens of one name were two labels and
// grouping could not join them.
func TestAnalyzeWithoutAggregationAnswersLabelsWithoutPrefix(t *testing.T) {
	d := testDecoder(t, testLabels)
	text, toks := mk("met Alice Smith today")
	logits := rows(probs(testLabels, "O", .9), probs(testLabels, "B-PER", .9), probs(testLabels, "I-PER", .9), probs(testLabels, "O", .9))
	opts := AnalyzeOptions()
	opts.Strategy = StrategyNone
	ents, err := d.Extract(text, toks, logits, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"PER", "Alice", .9}, {"PER", "Smith", .9}})
	opts.GroupEntities = true
	if ents, err = d.Extract(text, toks, logits, opts); err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"PER", "Alice Smith", .9}})
	// Decode alone stays HF's: full labels.
	raw, err := d.Decode(text, toks, logits, StrategyNone)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, raw, []got{{"B-PER", "Alice", .9}, {"I-PER", "Smith", .9}})
}

// TestGroupingLeavesEntitiesInTextOrder: a group widened to its word's start ("abcde" from
// "d" and "e") came after an entity that begins inside that word ("cde"), though Extract's
// result is sorted by start.
func TestGroupingLeavesEntitiesInTextOrder(t *testing.T) {
	d := testDecoder(t, testLabels)
	text, toks := mk("see ab|c|d|e now")
	logits := rows(probs(testLabels, "O", .9), probs(testLabels, "O", .9), probs(testLabels, "B-PER", .9),
		probs(testLabels, "B-ORG", .9), probs(testLabels, "B-ORG", .9), probs(testLabels, "O", .9))
	opts := AnalyzeOptions()
	opts.GroupEntities = true
	ents, err := d.Extract(text, toks, logits, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"ORG", "abcde", .9}, {"PER", "cde", .9}})
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{ConfidenceThreshold: -0.1}, {ConfidenceThreshold: 1.5}, {Strategy: 9}, {ConfidenceThreshold: nan()}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := PIIOptions().Validate(); err != nil {
		t.Error(err)
	}
}
