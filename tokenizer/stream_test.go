package tokenizer

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDecodeStreamSpellsTheDecodedText: for random id sequences after random prompts, the
// stream's pieces, joined, are the decoded continuation, and no piece holds a broken
// character.
func TestDecodeStreamSpellsTheDecodedText(t *testing.T) {
	raw, err := os.ReadFile("../models/tiny-lm/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	vocab := int64(tok.VocabSize())
	for range 500 {
		prompt := make([]int64, 1+rng.IntN(8))
		for i := range prompt {
			prompt[i] = 5 + rng.Int64N(vocab-5)
		}
		ds := tok.NewDecodeStream(prompt)
		var got strings.Builder
		var gen []int64
		for range 1 + rng.IntN(30) {
			id := rng.Int64N(vocab)
			gen = append(gen, id)
			piece := ds.Next(id)
			if !utf8.ValidString(piece) {
				t.Fatalf("piece %q is not valid UTF-8", piece)
			}
			got.WriteString(piece)
		}
		seed := prompt[max(0, len(prompt)-contextIDs):]
		full := tok.Decode(append(append([]int64{}, seed...), gen...), true)
		want := strings.TrimPrefix(full, tok.Decode(seed, true))
		if got.String() != want {
			t.Fatalf("stream %q, decoded %q", got.String(), want)
		}
	}
	if !tok.IsSpecial(3) || tok.IsSpecial(1198) {
		t.Fatal("IsSpecial")
	}
}
