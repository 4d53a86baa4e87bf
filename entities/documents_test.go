package entities

import (
	"reflect"
	"strings"
	"testing"
)

// wordOffsets is a stand-in tokenizer: one token per run of non-space bytes.
func wordOffsets(text string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(text); i++ {
		space := i == len(text) || strings.ContainsRune(" \t\r\n", rune(text[i]))
		switch {
		case !space && start < 0:
			start = i
		case space && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	return out
}

func TestDocumentsCutAtBlankLines(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"one note, no blank line", []string{"one note, no blank line"}},
		{"line one\nline two", []string{"line one\nline two"}},
		{"first note.\n\nsecond note.", []string{"first note.", "second note."}},
		{"first.\r\n \t\r\n\n second.\n\n", []string{"first.\r", "second."}},
		{"\n\n  lead blank\n\n\n\ntrail\n", []string{"lead blank", "trail\n"}},
		{"   \n\n  ", nil},
	}
	for _, c := range cases {
		offsets := wordOffsets(c.text)
		var got []string
		tokens := 0
		for _, d := range Documents(c.text, offsets) {
			got = append(got, c.text[d.Start:d.End])
			tokens += d.Last - d.First
			for _, off := range offsets[d.First:d.Last] {
				if off[0] < d.Start || off[1] > d.End {
					t.Errorf("%q: token %v outside its document [%d,%d)", c.text, off, d.Start, d.End)
				}
			}
		}
		if !reflect.DeepEqual(got, c.want) || tokens != len(offsets) {
			t.Errorf("Documents(%q) = %q holding %d of %d tokens, want %q", c.text, got, tokens, len(offsets), c.want)
		}
	}
}

// TestDocumentsHoldTokensOfWhitespace: tokenizers that keep whitespace give tokens inside a
// blank line (byte-level BPE's runs of breaks) or beginning on its last break (SentencePiece's
// "▁" before a word); each lies inside its document, so that its offsets counted from the
// document's start are in the document's text.
func TestDocumentsHoldTokensOfWhitespace(t *testing.T) {
	// runs: one token per run of non-space bytes and one per run of spaces and breaks.
	runs := func(text string) [][2]int {
		var out [][2]int
		for i := 0; i < len(text); {
			j, space := i, strings.ContainsRune(" \t\r\n", rune(text[i]))
			for j < len(text) && strings.ContainsRune(" \t\r\n", rune(text[j])) == space {
				j++
			}
			out = append(out, [2]int{i, j})
			i = j
		}
		return out
	}
	// pieces: a word's token begins at the space or break before it.
	pieces := func(text string) [][2]int {
		var out [][2]int
		for _, w := range wordOffsets(text) {
			out = append(out, [2]int{max(w[0]-1, 0), w[1]})
		}
		return out
	}
	for _, text := range []string{"Patient John Smith\n\nSeen by Dr Jane Doe", "a\n\nb", "x \n \n y",
		"Note one.\r\n\r\nNote two.", "\n\nleading", "trailing\n\n"} {
		for name, offsets := range map[string][][2]int{"runs": runs(text), "pieces": pieces(text)} {
			tokens := 0
			for _, d := range Documents(text, offsets) {
				tokens += d.Last - d.First
				for _, off := range d.Tokens(Tokens{Offsets: offsets}).Offsets {
					if off[0] < 0 || off[1] > d.End-d.Start || off[0] > off[1] {
						t.Errorf("%s of %q: a token at %v of a document of %d bytes", name, text, off, d.End-d.Start)
					}
				}
			}
			if tokens != len(offsets) {
				t.Errorf("%s of %q: %d of %d tokens in documents", name, text, tokens, len(offsets))
			}
		}
	}
}

func TestDocumentWindowsNeverHoldTwoDocuments(t *testing.T) {
	text := strings.Repeat("word ", 30) + "\n\n" + strings.Repeat("more ", 7) + "\n\n" + strings.Repeat("last ", 12)
	offsets := wordOffsets(text)
	wordIDs := make([]int, len(offsets))
	for i := range wordIDs {
		wordIDs[i] = i
	}
	docs := Documents(text, offsets)
	wins, err := PlanDocumentWindows(docs, wordIDs, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	covered := make([]bool, len(offsets))
	for _, w := range wins {
		inOne := false
		for _, d := range docs {
			inOne = inOne || (w.Start >= d.First && w.End <= d.Last)
		}
		if !inOne || w.Len() > 10 {
			t.Fatalf("window %v spans documents %v or is too long", w, docs)
		}
		for i := w.Start; i < w.End; i++ {
			covered[i] = true
		}
	}
	for i, c := range covered {
		if !c {
			t.Fatalf("token %d in no window", i)
		}
	}
	// The middle document alone plans as it does here.
	d := docs[1]
	alone, _ := PlanWordWindows(wordIDs[d.First:d.Last], 10, 3)
	var here []Window
	for _, w := range wins {
		if w.Start >= d.First && w.End <= d.Last {
			here = append(here, Window{Start: w.Start - d.First, End: w.End - d.First})
		}
	}
	if !reflect.DeepEqual(alone, here) {
		t.Fatalf("middle document windows %v here, %v alone", here, alone)
	}
}
