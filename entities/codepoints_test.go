package entities

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCodePointSpans(t *testing.T) {
	text := "Père Noël 👩‍⚕️ saw 北京协和医院 and café au lait ☕"
	find := func(s string) Entity {
		i := strings.Index(text, s)
		if i < 0 {
			t.Fatalf("%q not in text", s)
		}
		return Entity{Start: i, End: i + len(s)}
	}
	// Deliberately out of order, with a repeated and an empty entity.
	ents := []Entity{find("café"), find("Père"), find("北京协和医院"), find("👩‍⚕️"), find("☕"), find("Noël"), find("café"), {Start: 0, End: 0}}
	spans := CodePointSpans(text, ents)
	runes := []rune(text)
	for i, e := range ents {
		wantStart := utf8.RuneCountInString(text[:e.Start])
		wantEnd := utf8.RuneCountInString(text[:e.End])
		if spans[i] != (Span{wantStart, wantEnd}) {
			t.Errorf("entity %d: %v, want [%d,%d)", i, spans[i], wantStart, wantEnd)
		}
		if string(runes[spans[i].Start:spans[i].End]) != text[e.Start:e.End] {
			t.Errorf("entity %d: code point slice differs from byte slice", i)
		}
	}
	// A ZWJ emoji sequence is several code points, as Python counts it.
	if s := spans[3]; s.End-s.Start != 4 {
		t.Errorf("👩‍⚕️ spans %d code points, want 4", s.End-s.Start)
	}
	// Out-of-range offsets are clamped, not a panic.
	odd := CodePointSpans(text, []Entity{{Start: -3, End: len(text) + 9}})
	if odd[0] != (Span{0, len(runes)}) {
		t.Errorf("clamped span %v", odd[0])
	}
	if len(CodePointSpans(text, nil)) != 0 {
		t.Error("no entities, no spans")
	}
}

// End to end on non-ASCII text: byte offsets from the tokenizer, entities snapped and
// converted, matching what Python would slice.
func TestDecodeNonASCII(t *testing.T) {
	L := []string{"O", "B-LOC", "I-LOC", "B-PER", "I-PER"}
	d := testDecoder(t, L)
	text, toks := mk("Zoë Ngọc|Anh à 北|京 ☕ 👩‍⚕️")
	logits := rows(probs(L, "B-PER", .9), probs(L, "I-PER", .8), probs(L, "I-PER", .7), probs(L, "O", .9),
		probs(L, "B-LOC", .9), probs(L, "I-LOC", .9), probs(L, "O", .9), probs(L, "B-PER", .6))
	ents, err := d.Extract(text, toks, logits, AnalyzeOptions())
	if err != nil {
		t.Fatal(err)
	}
	sameEntities(t, text, ents, []got{{"PER", "Zoë NgọcAnh", .8}, {"LOC", "北京", .9}, {"PER", "👩‍⚕️", .6}})
	spans := CodePointSpans(text, ents)
	runes := []rune(text)
	for i, e := range ents {
		if string(runes[spans[i].Start:spans[i].End]) != text[e.Start:e.End] {
			t.Errorf("entity %d: code point span %v does not select %q", i, spans[i], text[e.Start:e.End])
		}
	}
}
