package entities

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var fuzzPatterns = DefaultPIIPatterns()

var fuzzLabels = []string{"O", "B-PER", "I-PER", "B-DATE", "I-DATE", "phone_number", "B-ssn"}

// fuzzTokens cuts text into word pieces of one to three code points, steered by seed, and
// sometimes corrupts an offset so that the validation path is exercised too.
func fuzzTokens(text string, seed []byte) Tokens {
	var toks Tokens
	next := func() byte {
		if len(seed) == 0 {
			return 1
		}
		b := seed[0]
		seed = seed[1:]
		return b
	}
	word := -1
	inWord := false
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			inWord = false
			i += size
			continue
		}
		if !inWord {
			word++
			inWord = true
		}
		start := i
		for n := 1 + int(next()%3); n > 0 && i < len(text); n-- {
			r, size = utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += size
		}
		toks.Offsets = append(toks.Offsets, [2]int{start, i})
		toks.WordIDs = append(toks.WordIDs, word)
		toks.IDs = append(toks.IDs, int64(next()%8))
	}
	if b := next(); b%17 == 0 && len(toks.Offsets) > 0 {
		k := int(b) % len(toks.Offsets)
		toks.Offsets[k][1] += int(next()) - 128 // may leave the text or reverse the span
	}
	if b := next(); b%5 == 0 {
		toks.WordIDs = nil // HF's fallback heuristic
	}
	return toks
}

func fuzzLogits(n int, seed []byte) []float32 {
	out := make([]float32, n*len(fuzzLabels))
	for i := range out {
		if len(seed) > 0 {
			out[i] = float32(int8(seed[i%len(seed)]^byte(i))) / 8
		}
	}
	return out
}

func FuzzExtract(f *testing.F) {
	f.Add("Patient John Smith, DOB 01/15/1970, SSN 123-45-6789, call 555-123-4567.", []byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add("Zoë Ngọc Anh à 北京 ☕ 👩‍⚕️ café", []byte{200, 7, 34, 99})
	f.Add("", []byte{})
	f.Add("   \u00a0\t\n ", []byte{0})
	f.Add("a", []byte{17, 255, 0})
	f.Add("jane@example.org GB82 WEST 1234 5698 7654 32 DEUTDEFF 10.0.0.1 http://x.io/a b", []byte{9, 9, 9})
	d, err := NewDecoder(DecoderConfig{ID2Label: fuzzLabels, UnknownID: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, seed []byte) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		for _, p := range fuzzPatterns {
			compareMatchers(t, &p, text)
		}
		toks := fuzzTokens(text, slices.Clone(seed))
		logits := fuzzLogits(toks.Len(), seed)
		valid := toks.validate(len(text)) == nil
		for s := StrategyNone; s <= StrategyMax; s++ {
			for _, opts := range []Options{AnalyzeOptions(), PIIOptions()} {
				opts.Strategy = s
				if len(seed) > 0 && seed[0]%2 == 0 {
					opts.GroupEntities = true
				}
				ents, err := d.Extract(text, toks, logits, opts)
				if err != nil {
					if valid {
						t.Fatalf("valid input refused: %v", err)
					}
					continue
				}
				if !valid {
					t.Fatal("invalid offsets accepted")
				}
				checkSpans(t, text, ents)
				spans := CodePointSpans(text, ents)
				for i, e := range ents {
					if spans[i].Start != utf8.RuneCountInString(text[:e.Start]) || spans[i].End != utf8.RuneCountInString(text[:e.End]) {
						t.Fatalf("code point span %v wrong for [%d,%d)", spans[i], e.Start, e.End)
					}
				}
			}
		}
		if !valid {
			return
		}
		// Windowing: plan, lay out, run an "identity" model, merge: the merged logits
		// must be the original ones whatever the window layout.
		size := 1 + len(seed)%9
		stride := 0
		if size > 1 && len(seed) > 0 {
			stride = int(seed[len(seed)-1]) % size
		}
		ids := toks.WordIDs
		var wins []Window
		if ids != nil {
			wins, err = PlanWordWindows(ids, size, stride)
		} else {
			wins, err = PlanWindows(toks.Len(), size, stride)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkWindows(t, toks.Len(), size, wins)
		r, err := BuildRows(toks.IDs, wins, []int64{101}, []int64{102}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		nl := len(fuzzLabels)
		out := make([]float32, r.Count*r.Width*nl)
		for wi, w := range wins {
			for i := w.Start; i < w.End; i++ {
				copy(out[(wi*r.Width+1+i-w.Start)*nl:], logits[i*nl:(i+1)*nl])
			}
		}
		merged, err := MergeLogits(wins, toks.Len(), out, r.Width, 1, nl)
		if toks.Len() == 0 {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(merged, logits) {
			t.Fatal("merged logits differ from the per-token logits")
		}
	})
}
