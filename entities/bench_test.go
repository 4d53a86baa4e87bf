package entities

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchRow is a 128-token row shaped like the shipped NER model's output: 13 entity
// types in BIO (27 labels), a few multi-token entities, subwords.
func benchRow(b *testing.B) (*Decoder, string, Tokens, []float32) {
	b.Helper()
	labels := []string{"O"}
	for _, t := range []string{"COND", "MED", "PROC", "DOSE", "FREQ", "ROUTE", "DATE", "NAME", "AGE", "LAB", "VAL", "UNIT", "ANAT"} {
		labels = append(labels, "B-"+t, "I-"+t)
	}
	d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1})
	if err != nil {
		b.Fatal(err)
	}
	sentence := "pt seen on 01^/^15^/^2024 with hyper|tension , started lis|ino|pril 10 mg po daily ^. "
	var spec strings.Builder
	for {
		_, toks := mk(spec.String() + sentence)
		if toks.Len() > 128 {
			break
		}
		spec.WriteString(sentence)
	}
	s := spec.String()
	for _, t := mk(s); t.Len() < 128; _, t = mk(s) {
		s += "ok "
	}
	text, toks := mk(s)
	toks.Offsets, toks.WordIDs, toks.IDs = toks.Offsets[:128], toks.WordIDs[:128], toks.IDs[:128]
	rng := rand.New(rand.NewPCG(7, 7))
	logits := make([]float32, 128*len(labels))
	for i := range 128 {
		for j := range labels {
			logits[i*len(labels)+j] = float32(rng.NormFloat64())
		}
		hot := 0
		if rng.IntN(3) == 0 {
			hot = 1 + rng.IntN(len(labels)-1)
		}
		logits[i*len(labels)+hot] += 6
	}
	return d, text, toks, logits
}

func BenchmarkDecodeSimple128(b *testing.B) {
	d, text, toks, logits := benchRow(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(text, toks, logits, StrategySimple); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeSimpleCRF128 is BenchmarkDecodeSimple128 with CRF transitions: the
// Viterbi path and the forward-backward marginals on top of the softmax.
func BenchmarkDecodeSimpleCRF128(b *testing.B) {
	plain, text, toks, logits := benchRow(b)
	rng := rand.New(rand.NewPCG(9, 9))
	mat := func() [][]float64 {
		m := make([][]float64, len(plain.labels))
		for i := range m {
			m[i] = make([]float64, len(plain.labels))
			for j := range m[i] {
				m[i][j] = rng.NormFloat64()
			}
		}
		return m
	}
	d, err := NewDecoder(DecoderConfig{ID2Label: plain.labels, UnknownID: -1, Transitions: &Transitions{Spaced: mat(), Touching: mat()}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(text, toks, logits, StrategySimple); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAverage128(b *testing.B) {
	d, text, toks, logits := benchRow(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(text, toks, logits, StrategyAverage); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtractAnalyze128(b *testing.B) {
	d, text, toks, logits := benchRow(b)
	opts := AnalyzeOptions()
	opts.GroupEntities = true
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Extract(text, toks, logits, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtractPII128(b *testing.B) {
	d, text, toks, logits := benchRow(b)
	opts := PIIOptions()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Extract(text, toks, logits, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindowsMerge1024 plans, lays out and merges a 1024-token text into 126-token
// windows with stride 32 (the model work in between is not counted).
func BenchmarkWindowsMerge1024(b *testing.B) {
	const n, nl = 1024, 27
	ids := make([]int64, n)
	words := make([]int, n)
	for i := range words {
		words[i] = i * 2 / 3
	}
	b.ReportAllocs()
	for b.Loop() {
		wins, err := PlanWordWindows(words, 126, 32)
		if err != nil {
			b.Fatal(err)
		}
		r, err := BuildRows(ids, wins, []int64{101}, []int64{102}, 0, 128)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]float32, r.Count*r.Width*nl)
		if _, err := MergeLogits(wins, n, out, r.Width, 1, nl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListsApply: a request's lists at their bounds (1,000 terms each, of one to three
// words) over a 100,000-character note with 2,000 found spans.
func BenchmarkListsApply(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		w := make([]byte, 3+rng.IntN(6))
		for i := range w {
			w[i] = letters[rng.IntN(len(letters))]
		}
		return string(w)
	}
	terms := func() []string {
		out := make([]string, MaxListTerms)
		for i := range out {
			out[i] = word()
			for range rng.IntN(3) {
				out[i] += " " + word()
			}
		}
		return out
	}
	allow, deny := terms(), terms()
	var text strings.Builder
	var ents []Entity
	for text.Len() < 100_000 {
		switch rng.IntN(20) {
		case 0:
			text.WriteString(deny[rng.IntN(len(deny))])
		case 1:
			text.WriteString(allow[rng.IntN(len(allow))])
		case 2:
			ents = append(ents, Entity{Label: "name", Start: text.Len(), End: text.Len() + 5})
			text.WriteString("Alice")
		default:
			text.WriteString(word())
		}
		text.WriteString([]string{" ", ", ", ". ", "\n"}[rng.IntN(4)])
	}
	l, errs := NewLists(allow, deny)
	if errs != nil {
		b.Fatal(errs)
	}
	s := text.String()
	b.ReportAllocs()
	for b.Loop() {
		l.Apply(s, ents)
	}
}

// BenchmarkNewLists: indexing both lists at their bounds, once per request.
func BenchmarkNewLists(b *testing.B) {
	terms := make([]string, MaxListTerms)
	for i := range terms {
		terms[i] = "term number " + strings.Repeat("x", i%40) + " of the list"
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := NewLists(terms, terms); errs != nil {
			b.Fatal(errs)
		}
	}
}
