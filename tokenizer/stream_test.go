package tokenizer

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
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

// TestDecodeStreamHoldsOnlyPartsOfACharacter: a U+FFFD that no byte can complete (the model's
// own character, a byte that cannot begin or go on with one) goes out with its id, and the
// decoded window stays a character's worth long; it was held as half a character, so nothing
// streamed until Flush and each id decoded every id held (16,384 took 26 s). The first bytes
// of a character are still held until it completes or breaks, and the stream spells the text
// decoded whole.
func TestDecodeStreamHoldsOnlyPartsOfACharacter(t *testing.T) {
	tok := loadTestdata(t, "gpt2")
	byteID := map[byte]int64{}
	for id := range int64(tok.VocabSize()) {
		if b, ok := tok.TokenBytes(id); ok && len(b) == 1 {
			byteID[b[0]] = id
		}
	}
	fffd := tok.Encode("\uFFFD", false).IDs
	if len(fffd) != 1 || len(byteID) != 256 {
		t.Fatalf("U+FFFD is %d ids, %d bytes have a token; the test assumes GPT-2's one and 256", len(fffd), len(byteID))
	}
	bytesOf := func(s string) []int64 {
		var ids []int64
		for i := range len(s) {
			ids = append(ids, byteID[s[i]])
		}
		return ids
	}
	eot, _ := tok.TokenID("<|endoftext|>")
	prompt := tok.Encode("Patient", false).IDs
	for _, c := range []struct {
		name   string
		ids    []int64
		pieces []string // what each Next gives
	}{
		{"U+FFFD generated", []int64{fffd[0], fffd[0], fffd[0]}, []string{"\uFFFD", "\uFFFD", "\uFFFD"}},
		{"bytes no character begins with", bytesOf("\x80\xff\xc0"), []string{"\uFFFD", "\uFFFD", "\uFFFD"}},
		{"a character in bytes", bytesOf("\xf0\x9f\x98\x80"), []string{"", "", "", "😀"}},
		{"a character broken by a letter", bytesOf("\xe4\xb8a"), []string{"", "", "\uFFFDa"}},
		{"a character broken by U+FFFD", append(bytesOf("\xe4"), fffd[0]), []string{"", "\uFFFD\uFFFD"}},
		{"a character's bytes either side of a special token", append(append(bytesOf("\xc3"), eot), bytesOf("\xa9")...), []string{"", "", "é"}},
		// Ids that each complete one character and begin the next hold the stream on, however
		// many: a bound of four cut the fifth character in two, and its end was lost.
		{"ids that complete a character and begin one", append([]int64{21253}, slices.Repeat([]int64{47490}, 6)...), nil},
		{"a run of lead bytes", bytesOf("\xe9\x85\xd7\xdc\xd1\xa8"), nil},
	} {
		ds := tok.NewDecodeStream(prompt)
		var got strings.Builder
		for i, id := range c.ids {
			piece := ds.Next(id)
			if c.pieces != nil && piece != c.pieces[i] {
				t.Errorf("%s: id %d gave %q, want %q", c.name, i, piece, c.pieces[i])
			}
			got.WriteString(piece)
		}
		got.WriteString(ds.Flush())
		seed := prompt[max(0, len(prompt)-contextIDs):]
		want := strings.TrimPrefix(tok.Decode(append(append([]int64{}, seed...), c.ids...), true), tok.Decode(seed, true))
		if got.String() != want {
			t.Errorf("%s: stream %q, decoded whole %q", c.name, got.String(), want)
		}
	}

	ds := tok.NewDecodeStream(prompt)
	for i := range 1000 {
		if piece := ds.Next(fffd[0]); piece != "\uFFFD" {
			t.Fatalf("U+FFFD %d gave %q", i, piece)
		}
		if window := len(ds.ids) - ds.start; window > 2 {
			t.Fatalf("after %d U+FFFD the decoded window is %d ids", i+1, window)
		}
	}

	// Special tokens, which decode to nothing, do not lengthen the window either, between a
	// character's bytes or not.
	ds = tok.NewDecodeStream(prompt)
	var sent strings.Builder
	for _, id := range append(append(bytesOf("\xe4"), slices.Repeat([]int64{eot}, 1000)...), bytesOf("\xb8\xad")...) {
		sent.WriteString(ds.Next(id))
		if window := len(ds.ids) - ds.start; window > contextIDs+3 {
			t.Fatalf("the decoded window grew to %d ids", window)
		}
	}
	if sent.String() != "中" {
		t.Fatalf("a character's bytes either side of 1000 special tokens: %q", sent.String())
	}
}

// TestDecodeStreamHoldsFallbackBytes: byte fallback's <0xXX> tokens are a character's bytes
// whether ByteFallback decodes alone or in a Sequence (where TokenBytes read them as the text
// U+FFFD, so that the stream held nothing): a character's first bytes are held, and a byte no
// character begins with goes out at once.
func TestDecodeStreamHoldsFallbackBytes(t *testing.T) {
	raw, err := os.ReadFile("testdata/llama-bpe.json")
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	for _, decoder := range []any{file["decoder"], map[string]any{"type": "ByteFallback"}} {
		file["decoder"] = decoder
		raw, _ := json.Marshal(file)
		tok, err := Load(raw)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, piece := range []string{"<0xE4>", "<0xB8>", "<0xAD>", "▁", "<0x80>"} {
			id, ok := tok.TokenID(piece)
			if !ok {
				t.Fatalf("no token %s", piece)
			}
			ids = append(ids, id)
		}
		prompt := tok.Encode("Patient", false).IDs
		ds := tok.NewDecodeStream(prompt)
		var got []string
		for _, id := range ids {
			got = append(got, ds.Next(id))
		}
		whole := strings.TrimPrefix(tok.Decode(append(slices.Clone(prompt), ids...), true), tok.Decode(prompt, true))
		if got[0] != "" || got[1] != "" || got[2] != "中" || got[4] != "\uFFFD" || strings.Join(got, "") != whole {
			t.Errorf("decoder %v: %q, decoded whole %q", decoder, got, whole)
		}
	}
}
