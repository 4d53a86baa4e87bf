package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// bpeUnitJSON is a small RoBERTa-style byte-level tokenizer.json: the 256 stand-ins in byte
// order, four merges, <s> </s> and an lstrip <mask>.
func bpeUnitJSON() map[string]any {
	vocab := map[string]any{}
	for b := range 256 {
		vocab[string(byteChar[b])] = b
	}
	for i, tok := range []string{"Ġt", "he", "Ġthe", "in", "<s>", "</s>", "<mask>"} {
		vocab[tok] = 256 + i
	}
	added := []any{}
	for _, a := range []struct {
		tok    string
		id     int
		lstrip bool
	}{{"<s>", 260, false}, {"</s>", 261, false}, {"<mask>", 262, true}} {
		added = append(added, map[string]any{"id": a.id, "content": a.tok, "single_word": false,
			"lstrip": a.lstrip, "rstrip": false, "normalized": false, "special": true})
	}
	return map[string]any{
		"version":        "1.0",
		"added_tokens":   added,
		"normalizer":     nil,
		"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
		"post_processor": map[string]any{"type": "RobertaProcessing", "sep": []any{"</s>", 261}, "cls": []any{"<s>", 260}, "trim_offsets": true, "add_prefix_space": false},
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "vocab": vocab,
			"merges": []any{"Ġ t", "h e", "Ġt he", "i n"}},
	}
}

func loadBPEUnit(t *testing.T, edit func(m map[string]any)) *Tokenizer {
	t.Helper()
	return loadEdited(t, bpeUnitJSON(), edit)
}

func TestBPEEncodeByHand(t *testing.T) {
	tok := loadBPEUnit(t, nil)
	enc := tok.Encode("the thin <mask>", true)
	// "the": t + (h e); " thin": (Ġ t) h (i n), "Ġt" trimmed to its letter; the <mask> match
	// took in the space before it, and trimming gives that space back.
	wantIDs := []int64{260, 't', 257, 256, 'h', 259, 262, 261}
	wantOffsets := [][2]int{{0, 0}, {0, 1}, {1, 3}, {4, 5}, {5, 6}, {6, 8}, {9, 15}, {0, 0}}
	wantWords := []int{-1, 0, 0, 1, 1, 1, 2, -1}
	if !slices.Equal(enc.IDs, wantIDs) || !slices.Equal(enc.Offsets, wantOffsets) || !slices.Equal(enc.WordIDs, wantWords) {
		t.Fatalf("got ids %v offsets %v words %v\nwant ids %v offsets %v words %v", enc.IDs, enc.Offsets, enc.WordIDs, wantIDs, wantOffsets, wantWords)
	}
	if got := tok.Decode(enc.IDs, true); got != "the thin" {
		t.Fatalf("Decode = %q", got)
	}
	if prefix, suffix := tok.Template(); !slices.Equal(prefix, []int64{260}) || !slices.Equal(suffix, []int64{261}) {
		t.Fatalf("Template = %v %v", prefix, suffix)
	}
	if tok, ok := tok.Token(256); !ok || tok != "Ġt" {
		t.Fatalf("Token(256) = %q", tok)
	}
}

func TestLoadRejectsBPEOptions(t *testing.T) {
	model := func(m map[string]any) map[string]any { return m["model"].(map[string]any) }
	cases := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"dropout", func(m map[string]any) { model(m)["dropout"] = 0.1 }, `tokenizer: BPE dropout must be null for inference`},
		{"byte fallback", func(m map[string]any) { model(m)["byte_fallback"] = true }, `tokenizer: BPE byte_fallback with pre_tokenizer ByteLevel is not supported`},
		{"empty vocab", func(m map[string]any) { model(m)["vocab"] = map[string]any{} }, `tokenizer: BPE vocab is empty`},
		{"negative id", func(m map[string]any) { model(m)["vocab"].(map[string]any)["x"] = -1 }, `tokenizer: BPE vocab id -1 is outside`},
		{"unk not in vocab", func(m map[string]any) { model(m)["unk_token"] = "<secret-unk>" },
			`tokenizer: unk_token (12 bytes) is not in the BPE vocab of 263 entries`},
		{"merge of three", func(m map[string]any) { model(m)["merges"] = []any{"Ġ t", "a b c"} },
			`tokenizer: BPE merge 2 is not two tokens separated by one space`},
		{"merge outside the vocab", func(m map[string]any) { model(m)["merges"] = []any{[]any{"Ġ", "secret"}} },
			`tokenizer: BPE merge 1 names a token missing from the vocab`},
		{"merged token outside the vocab", func(m map[string]any) { model(m)["merges"] = []any{"Ġ t", "x y"} },
			`tokenizer: BPE merge 2 names a token missing from the vocab`},
		{"merges neither form", func(m map[string]any) { model(m)["merges"] = 7 },
			`tokenizer: BPE merges must be "a b" strings or [a, b] pairs`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := bpeUnitJSON()
			c.edit(m)
			_, err := Load(mustMarshal(t, m))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load error %v, want one containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error %q repeats file content", err)
			}
		})
	}
	// Both merge forms and a zero dropout load the same model.
	pairs := loadBPEUnit(t, func(m map[string]any) {
		model(m)["merges"] = []any{[]any{"Ġ", "t"}, []any{"h", "e"}, []any{"Ġt", "he"}, []any{"i", "n"}}
		model(m)["dropout"] = 0.0
	})
	if got := pairs.Encode(" the thin", false).IDs; !slices.Equal(got, []int64{258, 256, 'h', 259}) {
		t.Fatalf("pair merges: ids %v", got)
	}
}

// TestMergeHeapMatchesScan: long words merge on a heap, short ones by scanning; both must
// give the same tokens for any word, which the golden files only show for the words they
// happen to hold.
func TestMergeHeapMatchesScan(t *testing.T) {
	tok := loadTestdata(t, "gpt2")
	m := tok.bpe
	rng := rand.New(rand.NewPCG(7, 8))
	const alphabet = "eeeettaaoinshrdlu  cmfwypvbgkqjxz'.,0123456789"
	var s scratch
	for range 2000 {
		w := make([]byte, 1+rng.IntN(200))
		for i := range w {
			if rng.IntN(10) == 0 {
				w[i] = byte(rng.IntN(256))
			} else {
				w[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		scan := m.mergeScan(slices.Clone(m.initialSymbols(&s, w)))
		heap := m.mergeHeap(&s, slices.Clone(m.initialSymbols(&s, w)))
		heap = slices.DeleteFunc(heap, func(x bpeSym) bool { return x.end <= x.start })
		same := len(scan) == len(heap)
		for i := 0; same && i < len(scan); i++ {
			same = scan[i].id == heap[i].id && scan[i].start == heap[i].start && scan[i].end == heap[i].end
		}
		if !same {
			t.Fatalf("word %q: scan %v, heap %v", w, scan, heap)
		}
	}
}

// TestNFCShortcut: text nfcStable lets through must be text that full NFC leaves as it is,
// alignments included; checked for every code point on its own.
func TestNFCShortcut(t *testing.T) {
	var buf normBuf
	var out []nchar
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		in := []nchar{{r: r, start: 3, end: 3 + int32(utf8.RuneLen(r))}}
		if !nfcStable(in) {
			continue
		}
		out = nfcFull(&buf, in, out[:0], 3, false)
		if len(out) != 1 || out[0] != in[0] {
			t.Fatalf("U+%04X passes the shortcut but NFC gives %v", r, out)
		}
	}
}

func TestAppendLossyLikeRust(t *testing.T) {
	const rep = "\uFFFD"
	for in, want := range map[string]string{
		"plain":                 "plain",
		"a\xffb":                "a" + rep + "b",
		"\xf0\x9f\x98":          rep, // a cut 4-byte sequence is one maximal subpart
		"\xf0\x9f\x98\x80":      "😀",
		"\xed\xa0\x80":          rep + rep + rep, // a surrogate's bytes are three
		"\xe0\x80\x80":          rep + rep + rep, // overlong
		"\xf4\x90\x80\x80":      rep + rep + rep + rep,
		"\xe2\x82":              rep,
		"\xe2\x82x\xe2\x82\xac": rep + "x€",
		"\xc3":                  rep,
		"\x80\x80":              rep + rep,
		"\uFFFD":                rep,
	} {
		if got := string(appendLossy(nil, []byte(in))); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestByteLevelDecoder(t *testing.T) {
	// A token not spelled in stand-ins (an added run of real spaces) keeps its own bytes.
	got := byteLevelDecoder{}.decode([]string{"Hello", "ĠwÃ©", "   ", "Ċ", "ðŁĺ"})
	if want := "Hello wé   \n\uFFFD"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestSplitLikeGPT2Regex(t *testing.T) {
	cases := map[string][]string{
		"Hello  world":      {"Hello", " ", " world"},
		"I'm don't we'LL":   {"I", "'m", " don", "'t", " we", "'", "LL"},
		"a   ":              {"a", "   "},
		" \t\nx":            {" \t", "\n", "x"},
		"x\u00a0\u00a0y":    {"x", "\u00a0", "\u00a0", "y"},
		"12ab 3.5!?  'sx":   {"12", "ab", " 3", ".", "5", "!?", " ", " '", "sx"},
		"é😀 中文":             {"é", "😀", " 中文"},
		"\u1c89\u1c8a 10⁻³": {"\u1c89\u1c8a", " 10", "⁻", "³"},
	}
	for text, want := range cases {
		var chars []nchar
		for i, r := range text {
			chars = append(chars, nchar{r: r, start: int32(i), end: int32(i + utf8.RuneLen(r))})
		}
		var got []string
		for i := 0; i < len(chars); {
			j := splitEnd(chars, i)
			got = append(got, text[chars[i].start:chars[j-1].end])
			i = j
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q want %q", text, got, want)
		}
	}
}

// TestBPEPadID: RoBERTa files have no padding section; "<pad>" is their pad token.
func TestBPEPadID(t *testing.T) {
	tok := loadBPEUnit(t, func(m map[string]any) {
		m["model"].(map[string]any)["vocab"].(map[string]any)["<pad>"] = 263
	})
	if tok.PadID() != 263 {
		t.Fatalf("PadID = %d", tok.PadID())
	}
}

// TestDroppedCharacterShiftsOffsetsAsHFDoes: character-level BPE with neither an unk token
// nor byte fallback drops a character it cannot spell, and HF places every later symbol
// right after the previous one, so their offsets shift into the dropped character. The
// expected byte offsets are tokenizers@0.23.2's (code points [[0,1],[1,2]], [[0,1],[0,1]],
// [[0,1],[1,2]] and [[0,1],[1,2]]) for a file with vocab {a, b} and no merges.
func TestDroppedCharacterShiftsOffsetsAsHFDoes(t *testing.T) {
	tok, err := Load([]byte(`{"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"added_tokens":[],
		"model":{"type":"BPE","unk_token":null,"byte_fallback":false,"fuse_unk":false,"vocab":{"a":0,"b":1},"merges":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][][2]int{
		"a☃b":  {{0, 1}, {1, 4}},
		"☃ab":  {{0, 3}, {0, 3}},
		"ab☃":  {{0, 1}, {1, 2}},
		"a☃☃b": {{0, 1}, {1, 4}},
	} {
		if got := tok.Encode(text, false).Offsets; !slices.Equal(got, want) {
			t.Errorf("%q: offsets %v, HF's %v", text, got, want)
		}
	}
}
