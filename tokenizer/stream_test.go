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

// TestDecodeStreamByteLevel: with byte-level BPE a token may hold part of a character, so the
// stream must hold bytes back until their character is whole. For random ids after real
// prompts, the pieces joined are the decoded continuation up to what is still held, and
// what is held is an unfinished character.
func TestDecodeStreamByteLevel(t *testing.T) {
	for _, name := range []string{"gpt2", "roberta"} {
		tok := loadTestdata(t, name)
		prompts := []string{"Patient José reports", "血压 120/80 毫米汞柱 😀", "<s> hello", "x"}
		rng := rand.New(rand.NewPCG(9, 10))
		vocab := int64(tok.VocabSize())
		held := 0
		for i := range 400 {
			prompt := tok.Encode(prompts[i%len(prompts)], false).IDs
			ds := tok.NewDecodeStream(prompt)
			var got strings.Builder
			var gen []int64
			for range 1 + rng.IntN(30) {
				id := rng.Int64N(vocab)
				if rng.IntN(3) == 0 {
					// Tokens of multi-byte characters, which split them most often.
					id = tok.Encode(string([]rune("é中😀👍🏽ǘ")[rng.IntN(6)]), false).IDs[0]
				}
				gen = append(gen, id)
				piece := ds.Next(id)
				if !utf8.ValidString(piece) {
					t.Fatalf("%s: piece %q is not valid UTF-8", name, piece)
				}
				got.WriteString(piece)
			}
			seed := prompt[max(0, len(prompt)-contextIDs):]
			full := tok.Decode(append(append([]int64{}, seed...), gen...), true)
			want, ok := strings.CutPrefix(full, tok.Decode(seed, true))
			if !ok {
				t.Fatalf("%s: decoding the prompt's ids is not a prefix of decoding them with more", name)
			}
			rest, ok := strings.CutPrefix(want, got.String())
			if !ok || (rest != "" && !strings.HasSuffix(rest, "\uFFFD")) {
				t.Fatalf("%s: stream %q, decoded %q", name, got.String(), want)
			}
			if rest != "" {
				held++
			}
			if flushed := ds.Flush(); flushed != rest {
				t.Fatalf("%s: Flush gave %q for the held-back %q", name, flushed, rest)
			}
		}
		if held == 0 {
			t.Fatalf("%s: no stream ended holding a partial character; the test lost its point", name)
		}
	}
}

// TestByteFallbackRewriteDoesNotStallTheStream: SentencePiece byte fallback decodes a run of
// byte tokens that breaks UTF-8 as U+FFFD for every byte, the valid ones before the break
// included. A stream cannot take back "x(" once sent; it goes on with what lies past the
// characters it sent, as HF's server does, instead of waiting for a prefix that never comes
// back (which held every later token until the end, and with it every stop sequence).
func TestByteFallbackRewriteDoesNotStallTheStream(t *testing.T) {
	tok := loadTestdata(t, "llama-bpe")
	var ids []int64
	for _, b := range []string{"<0x78>", "<0x28>", "<0xB0>"} {
		id, ok := tok.TokenID(b)
		if !ok {
			t.Fatalf("no byte token %s", b)
		}
		ids = append(ids, id)
	}
	if got := tok.Decode(ids, true); got != "\uFFFD\uFFFD\uFFFD" {
		t.Fatalf("byte fallback decodes the run as %q; the test assumes HF's U+FFFD per byte", got)
	}
	prompt := tok.Encode("Patient", false).IDs
	ds := tok.NewDecodeStream(prompt)
	var got strings.Builder
	for _, id := range ids {
		got.WriteString(ds.Next(id))
	}
	got.WriteString(ds.Flush())
	if got.String() != "x(\uFFFD" {
		t.Fatalf("stream then Flush: %q, want %q", got.String(), "x(\uFFFD")
	}
	if ds.Flush() != "" {
		t.Fatal("a second Flush repeated text")
	}

	ds = tok.NewDecodeStream(prompt)
	got.Reset()
	for _, id := range append(ids, tok.Encode(" hello world", false).IDs...) {
		got.WriteString(ds.Next(id))
	}
	if !strings.HasSuffix(got.String(), " hello world") {
		t.Fatalf("after the rewritten run the stream gave %q; the words after it were held back", got.String())
	}
}
