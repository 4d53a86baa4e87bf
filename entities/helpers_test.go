package entities

import (
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var testLabels = []string{"O", "B-PER", "I-PER", "B-ORG", "I-ORG"}

func testDecoder(t testing.TB, labels []string) *Decoder {
	t.Helper()
	d, err := NewDecoder(DecoderConfig{ID2Label: labels, UnknownID: -1})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mk builds a text and its tokens from a spec: spaces separate words, '|' splits a word
// into pieces (subwords of one word) and '^' starts a new word with no space before it,
// the way a BERT pre-tokenizer splits punctuation off.
func mk(spec string) (string, Tokens) {
	var text strings.Builder
	var toks Tokens
	word := -1
	pieceStart := -1
	newWord := true
	flush := func() {
		if pieceStart >= 0 && pieceStart < text.Len() {
			if newWord {
				word++
			}
			toks.Offsets = append(toks.Offsets, [2]int{pieceStart, text.Len()})
			toks.WordIDs = append(toks.WordIDs, word)
			toks.IDs = append(toks.IDs, int64(100+len(toks.IDs)))
		}
		pieceStart = -1
	}
	for _, r := range spec {
		switch {
		case r == '|':
			flush()
			newWord = false
		case r == '^':
			flush()
			newWord = true
		case unicode.IsSpace(r):
			flush()
			newWord = true
			text.WriteRune(r)
		default:
			if pieceStart < 0 {
				pieceStart = text.Len()
			}
			text.WriteRune(r)
		}
	}
	flush()
	return text.String(), toks
}

// probs makes one logits row whose softmax is p on label and the rest of the mass
// spread evenly over the other labels.
func probs(labels []string, label string, p float64) []float32 {
	row := make([]float32, len(labels))
	rest := math.Log((1 - p) / float64(len(labels)-1))
	for i, l := range labels {
		if l == label {
			row[i] = float32(math.Log(p))
		} else {
			row[i] = float32(rest)
		}
	}
	return row
}

// probsVec makes a logits row whose softmax is the given distribution (missing labels
// share what is left).
func probsVec(labels []string, dist map[string]float64) []float32 {
	var sum float64
	for _, p := range dist {
		sum += p
	}
	missing := len(labels) - len(dist)
	row := make([]float32, len(labels))
	for i, l := range labels {
		p, ok := dist[l]
		if !ok {
			p = (1 - sum) / float64(missing)
		}
		row[i] = float32(math.Log(p))
	}
	return row
}

func rows(rs ...[]float32) []float32 {
	var out []float32
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

// got is an entity as text, for readable comparisons.
type got struct {
	Label string
	Text  string
	Score float64
}

func render(text string, ents []Entity) []got {
	out := make([]got, len(ents))
	for i, e := range ents {
		out[i] = got{e.Label, text[e.Start:e.End], e.Score}
	}
	return out
}

func sameEntities(t *testing.T, text string, ents []Entity, want []got) {
	t.Helper()
	g := render(text, ents)
	if len(g) != len(want) {
		t.Fatalf("got %d entities %+v, want %d %+v", len(g), g, len(want), want)
	}
	for i := range want {
		if g[i].Label != want[i].Label || g[i].Text != want[i].Text || math.Abs(g[i].Score-want[i].Score) > 1e-6 {
			t.Errorf("entity %d = %+v, want %+v", i, g[i], want[i])
		}
	}
}

// checkSpans asserts the span invariants every output must keep.
func checkSpans(t *testing.T, text string, ents []Entity) {
	t.Helper()
	for i, e := range ents {
		if e.Start < 0 || e.End > len(text) || e.Start >= e.End {
			t.Fatalf("entity %d has span [%d,%d) in %d bytes", i, e.Start, e.End, len(text))
		}
		if !utf8.RuneStart(text[e.Start]) || (e.End < len(text) && !utf8.RuneStart(text[e.End])) {
			t.Fatalf("entity %d span [%d,%d) cuts a UTF-8 sequence", i, e.Start, e.End)
		}
		first, _ := utf8.DecodeRuneInString(text[e.Start:e.End])
		last, _ := utf8.DecodeLastRuneInString(text[e.Start:e.End])
		if unicode.IsSpace(first) || unicode.IsSpace(last) {
			t.Fatalf("entity %d span [%d,%d) has edge whitespace", i, e.Start, e.End)
		}
		if math.IsNaN(e.Score) || e.Score < 0 || e.Score > 1+1e-9 {
			t.Fatalf("entity %d score %v out of [0,1]", i, e.Score)
		}
	}
}
