package entities

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/tokenizer"
)

// The shipped PII model's tokenizer and labels, with a fake model in place of ONNX
// Runtime: real byte offsets and word ids on non-ASCII text, windows of the model's real
// maximum length, and an entity on every window border.
func TestWithShippedPIITokenizer(t *testing.T) {
	raw, err := os.ReadFile("../models/pii/tokenizer.json")
	if err != nil {
		t.Skipf("shipped PII tokenizer not present: %v", err)
	}
	tok, err := tokenizer.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ID2Label              map[string]string `json:"id2label"`
		MaxPositionEmbeddings int               `json:"max_position_embeddings"`
	}
	rawCfg, err := os.ReadFile("../models/pii/config.json")
	if err != nil {
		t.Skipf("shipped PII config not present: %v", err)
	}
	if err := json.Unmarshal(rawCfg, &cfg); err != nil {
		t.Fatal(err)
	}
	labels := make([]string, len(cfg.ID2Label))
	for k, v := range cfg.ID2Label {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(labels) {
			t.Fatalf("bad id2label key %q", k)
		}
		labels[i] = v
	}
	labelID := func(l string) int {
		for i, x := range labels {
			if x == l {
				return i
			}
		}
		t.Skipf("the shipped PII model has no label %q", l)
		return 0
	}
	d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1})
	if err != nil {
		t.Fatal(err)
	}

	// Synthetic note; every name is an entity the fake model knows.
	names := []string{"Zoë-Anne", "Ngọc Anh", "Łukasz", "François", "Renée"}
	var b strings.Builder
	var nameSpans [][2]int
	for i := 0; b.Len() < 2500; i++ {
		n := names[i%len(names)]
		b.WriteString("Seen today 👩‍⚕️ by the team; patient ")
		nameSpans = append(nameSpans, [2]int{b.Len(), b.Len() + len(n)})
		b.WriteString(n)
		b.WriteString(" reports mild héadache, call 555-123-4567. 北京 ")
	}
	text := b.String()
	enc := tok.Encode(text, false)
	toks := Tokens(enc)
	n := toks.Len()
	truth := make([]int, n)
	for i, off := range toks.Offsets {
		for _, s := range nameSpans {
			if off[0] >= s[0] && off[1] <= s[1] {
				if off[0] == s[0] {
					truth[i] = labelID("B-first_name")
				} else {
					truth[i] = labelID("I-first_name")
				}
			}
		}
	}

	prefix, suffix := tok.Template()
	budget, err := ContentBudget(cfg.MaxPositionEmbeddings, len(prefix), len(suffix))
	if err != nil {
		t.Fatal(err)
	}
	wins, err := PlanWordWindows(toks.WordIDs, budget, 32)
	if err != nil {
		t.Fatal(err)
	}
	if len(wins) < 4 {
		t.Fatalf("expected a long text, got %d windows over %d tokens", len(wins), n)
	}
	checkWindows(t, n, budget, wins)
	rowsIn, err := BuildRows(toks.IDs, wins, prefix, suffix, tok.PadID(), cfg.MaxPositionEmbeddings)
	if err != nil {
		t.Fatal(err)
	}
	const k = 8 // tokens of context the fake model needs on a cut side
	nl := len(labels)
	out := make([]float32, rowsIn.Count*rowsIn.Width*nl)
	for wi, w := range wins {
		for i := w.Start; i < w.End; i++ {
			label := truth[i]
			if (w.Start > 0 && i-w.Start < k) || (w.End < n && w.End-1-i < k) {
				label = 0
			}
			copy(out[(wi*rowsIn.Width+len(prefix)+i-w.Start)*nl:], probs(labels, labels[label], .9))
		}
	}
	// The fake model must actually miss name tokens somewhere, or this proves nothing.
	missed := 0
	for wi, w := range wins {
		for i := w.Start; i < w.End; i++ {
			at := (wi*rowsIn.Width + len(prefix) + i - w.Start) * nl
			if truth[i] != 0 && out[at] > out[at+truth[i]] {
				missed++
			}
		}
	}
	if missed == 0 {
		t.Fatal("no name token falls near a window cut; change the text")
	}
	t.Logf("%d tokens, %d windows, %d name tokens missed near cuts", n, len(wins), missed)
	merged, err := MergeLogits(wins, n, out, rowsIn.Width, len(prefix), nl)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Strategy{StrategySimple, StrategyFirst, StrategyAverage, StrategyMax} {
		ents, err := d.Decode(text, toks, merged, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != len(nameSpans) {
			t.Fatalf("%v: %d entities for %d names", s, len(ents), len(nameSpans))
		}
		for i, e := range ents {
			if e.Label != "first_name" || [2]int{e.Start, e.End} != nameSpans[i] {
				t.Fatalf("%v: entity %d = %s %q, want %q", s, i, e.Label, text[e.Start:e.End], text[nameSpans[i][0]:nameSpans[i][1]])
			}
		}
		checkSpans(t, text, ents)
	}

	// The PII options add the phone numbers from the patterns; code point offsets agree
	// with slicing the text as a list of code points, as Python does.
	ents, err := d.Extract(text, toks, merged, PIIOptions())
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, text, ents)
	phones := 0
	for _, e := range ents {
		if e.Label == "phone_number" && text[e.Start:e.End] == "555-123-4567" {
			phones++
		}
	}
	if phones != len(nameSpans) {
		t.Errorf("%d phone numbers found, want %d", phones, len(nameSpans))
	}
	runes := []rune(text)
	for i, sp := range CodePointSpans(text, ents) {
		if string(runes[sp.Start:sp.End]) != text[ents[i].Start:ents[i].End] {
			t.Fatalf("entity %d: code point span %v selects different text", i, sp)
		}
	}
}
