package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// unitJSON is a small BERT-style tokenizer.json; tests edit it as a map.
func unitJSON() map[string]any {
	vocab := map[string]any{}
	for i, tok := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "jose", "pat", "##ient",
		"a", "b", "##b", "中", ".", "!", "[", "]", "cl", "##s", "é", "e"} {
		vocab[tok] = i
	}
	added := []any{}
	for i, tok := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		added = append(added, map[string]any{"id": i, "content": tok, "single_word": false,
			"lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	return map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": added,
		"normalizer": map[string]any{"type": "BertNormalizer", "clean_text": true,
			"handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
			},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []any{2}, "tokens": []any{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []any{3}, "tokens": []any{"[SEP]"}},
			},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]",
			"continuing_subword_prefix": "##", "max_input_chars_per_word": 8, "vocab": vocab},
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadUnit(t *testing.T, edit func(m map[string]any)) *Tokenizer {
	t.Helper()
	return loadEdited(t, unitJSON(), edit)
}

// loadEdited loads the tokenizer file m after edit (nil: none) changes it.
func loadEdited(t *testing.T, m map[string]any, edit func(m map[string]any)) *Tokenizer {
	t.Helper()
	if edit != nil {
		edit(m)
	}
	tok, err := Load(mustMarshal(t, m))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return tok
}

func TestLoadRejectsUnsupportedComponents(t *testing.T) {
	section := func(key string) func(m map[string]any) any { return func(m map[string]any) any { return m[key] } }
	cases := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"bpe model after BertPreTokenizer", func(m map[string]any) { section("model")(m).(map[string]any)["type"] = "BPE" },
			`tokenizer: model BPE with pre_tokenizer BertPreTokenizer is not supported (BPE needs ByteLevel, Metaspace or none)`},
		{"wordlevel model", func(m map[string]any) { section("model")(m).(map[string]any)["type"] = "WordLevel" },
			`tokenizer: model type "WordLevel" is not supported (supported: WordPiece, BPE, Unigram)`},
		{"byte-level normalizer", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "ByteLevel"} },
			`tokenizer: normalizer type "ByteLevel" is not supported (supported: BertNormalizer, Sequence, NFD, NFC, NFKD, NFKC, Lowercase, StripAccents, Precompiled, Replace, Strip, Prepend)`},
		{"nested unsupported normalizer", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "NFD"}, map[string]any{"type": "Precompiled2"}}}
		}, `tokenizer: normalizer type "Precompiled2" is not supported`},
		{"replace without pattern", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Replace", "content": " "} },
			`tokenizer: Replace normalizer pattern must be String or Regex`},
		{"replace with a regex RE2 lacks", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": `a(?=b)`}, "content": " "}
		}, `tokenizer: Replace normalizer regex is not supported`},
		{"empty charsmap", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Precompiled", "precompiled_charsmap": ""}
		}, `tokenizer: Precompiled precompiled_charsmap is truncated`},
		{"broken charsmap", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Precompiled", "precompiled_charsmap": "AwAAAAAA"}
		}, `tokenizer: Precompiled precompiled_charsmap has an invalid trie size`},
		{"WordPiece after ByteLevel", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "ByteLevel"} },
			`tokenizer: model WordPiece with pre_tokenizer ByteLevel is not supported (WordPiece needs BertPreTokenizer)`},
		{"WordPiece after Metaspace", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Metaspace"} },
			`tokenizer: model WordPiece with pre_tokenizer Metaspace is not supported (WordPiece needs BertPreTokenizer)`},
		{"unicode scripts pre-tokenizer", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "UnicodeScripts"} },
			`tokenizer: pre_tokenizer type "UnicodeScripts" is not supported (supported: BertPreTokenizer, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, CharDelimiterSplit, Punctuation, Digits, Split, Sequence)`},
		{"unsupported pre-tokenizer in a sequence", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "UnicodeScripts"}, map[string]any{"type": "Metaspace"}}}
		}, `tokenizer: pre_tokenizer type "UnicodeScripts" is not supported`},
		{"byte-level in a sequence", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Digits"}, map[string]any{"type": "ByteLevel"}}}
		}, `tokenizer: pre_tokenizer ByteLevel in a Sequence is supported only without its regex`},
		{"byte-level first in a sequence", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "ByteLevel", "use_regex": false, "add_prefix_space": false}, map[string]any{"type": "Digits"}}}
		}, `tokenizer: pre_tokenizer ByteLevel in a Sequence is supported only as its last step`},
		{"split behavior", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": "-"}, "behavior": "Sideways"}
		}, `tokenizer: Split behavior "Sideways" is not supported`},
		{"split regex", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `(?<=a)b`}, "behavior": "Isolated"}
		}, `tokenizer: Split pre_tokenizer regex is not supported`},
		{"no pre-tokenizer", func(m map[string]any) { m["pre_tokenizer"] = nil },
			`tokenizer: pre_tokenizer is missing (supported: BertPreTokenizer, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, CharDelimiterSplit, Punctuation, Digits, Split, Sequence)`},
		{"metaspace prepend scheme", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "prepend_scheme": "sometimes"}
		}, `tokenizer: Metaspace pre_tokenizer prepend_scheme "sometimes" is not always, first or never`},
		{"metaspace legacy add_prefix_space false", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "add_prefix_space": false}
		}, `tokenizer: Metaspace pre_tokenizer add_prefix_space false needs prepend_scheme never`},
		{"unigram without metaspace", func(m map[string]any) {
			m["model"] = map[string]any{"type": "Unigram", "unk_id": 0, "vocab": []any{[]any{"<unk>", 0}}}
		}, `tokenizer: model Unigram with pre_tokenizer BertPreTokenizer is not supported`},
		{"unigram without unk", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace"}
			m["model"] = map[string]any{"type": "Unigram", "unk_id": nil, "vocab": []any{[]any{"<unk>", 0}}}
		}, `tokenizer: Unigram unk_id null is not supported`},
		{"unigram unk outside vocab", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace"}
			m["model"] = map[string]any{"type": "Unigram", "unk_id": 1, "vocab": []any{[]any{"<unk>", 0}}}
		}, `tokenizer: Unigram unk_id 1 is outside the vocab of 1 entries`},
		{"unigram entry not a pair", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace"}
			m["model"] = map[string]any{"type": "Unigram", "unk_id": 0, "vocab": []any{"<unk>"}}
		}, `tokenizer: Unigram vocab entry 0 must be a [piece, score] pair`},
		{"roberta processing without ids", func(m map[string]any) { m["post_processor"] = map[string]any{"type": "RobertaProcessing"} },
			`tokenizer: RobertaProcessing cls must be a [token, id] pair`},
		{"two templates in a sequence", func(m map[string]any) {
			m["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{m["post_processor"], m["post_processor"]}}
		}, `tokenizer: a Sequence post_processor with more than one part that adds tokens is not supported`},
		{"processing in a sequence", func(m map[string]any) {
			m["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{map[string]any{"type": "PairOnly"}}}
		}, `tokenizer: post_processor type "PairOnly" is not supported (supported: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)`},
		{"ctc decoder", func(m map[string]any) { m["decoder"] = map[string]any{"type": "CTC"} },
			`tokenizer: decoder type "CTC" is not supported (supported: WordPiece, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence)`},
		{"no model", func(m map[string]any) { delete(m, "model") }, `tokenizer: model section is missing`},
		{"empty vocab", func(m map[string]any) { section("model")(m).(map[string]any)["vocab"] = map[string]any{} },
			`tokenizer: WordPiece vocab is empty`},
		{"unk not in vocab", func(m map[string]any) { section("model")(m).(map[string]any)["unk_token"] = "<secret-unk>" },
			`tokenizer: unk_token (12 bytes) is not in the WordPiece vocab of 20 entries`},
		{"template with two sequences", func(m map[string]any) {
			pp := section("post_processor")(m).(map[string]any)
			pp["single"] = append(pp["single"].([]any), map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}})
		}, `only one $A sequence is supported`},
		{"template names an unknown special", func(m map[string]any) {
			pp := section("post_processor")(m).(map[string]any)
			pp["special_tokens"] = map[string]any{}
		}, `names a special token missing from special_tokens`},
		{"bert processing without ids", func(m map[string]any) {
			m["post_processor"] = map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]"}, "cls": []any{"[CLS]", 2}}
		}, `BertProcessing sep must be a [token, id] pair`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := unitJSON()
			c.edit(m)
			_, err := Load(mustMarshal(t, m))
			if err == nil {
				t.Fatalf("Load succeeded, want error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error %q repeats file content", err)
			}
		})
	}
	if _, err := Load([]byte("{not json")); err == nil || !strings.HasPrefix(err.Error(), "tokenizer: invalid tokenizer.json (9 bytes)") {
		t.Fatalf("invalid JSON: got %v", err)
	}
}

func TestEncodeEdgeCases(t *testing.T) {
	tok := loadUnit(t, nil)
	type tk struct {
		id   int64
		off  [2]int
		word int
	}
	cases := []struct {
		name string
		text string
		want []tk
	}{
		{"empty", "", nil},
		{"whitespace only", " \t\n\u00a0\u3000 ", nil},
		{"control characters only", "\x00\u200b\ufeff\ufffd", nil},
		{"accent stripped, offsets cover the original bytes", "José", []tk{{5, [2]int{0, 5}, 0}}},
		{"decomposed accent stays outside the offsets, as in HF", "Jose\u0301", []tk{{5, [2]int{0, 4}, 0}}},
		{"continuation pieces", "Patient!", []tk{{6, [2]int{0, 3}, 0}, {7, [2]int{3, 7}, 0}, {13, [2]int{7, 8}, 1}}},
		{"literal special token is matched before normalization", "a[CLS]b", []tk{
			{8, [2]int{0, 1}, 0}, {2, [2]int{1, 6}, 1}, {9, [2]int{6, 7}, 2}}},
		{"lowercase special is ordinary text", "[cls]", []tk{
			{14, [2]int{0, 1}, 0}, {16, [2]int{1, 3}, 1}, {17, [2]int{3, 4}, 1}, {15, [2]int{4, 5}, 2}}},
		{"chinese characters are words", "a中b", []tk{
			{8, [2]int{0, 1}, 0}, {11, [2]int{1, 4}, 1}, {9, [2]int{4, 5}, 2}}},
		{"unknown character makes the whole word unknown", "abz", []tk{{1, [2]int{0, 3}, 0}}},
		{"word longer than max_input_chars_per_word", "abbbbbbbb a", []tk{{1, [2]int{0, 9}, 0}, {8, [2]int{10, 11}, 1}}},
		{"word of exactly max_input_chars_per_word", "abbbbbbb", []tk{
			{8, [2]int{0, 1}, 0}, {10, [2]int{1, 2}, 0}, {10, [2]int{2, 3}, 0}, {10, [2]int{3, 4}, 0},
			{10, [2]int{4, 5}, 0}, {10, [2]int{5, 6}, 0}, {10, [2]int{6, 7}, 0}, {10, [2]int{7, 8}, 0}}},
		{"emoji is unknown", "a 👍🏽", []tk{{8, [2]int{0, 1}, 0}, {1, [2]int{2, 10}, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc := tok.Encode(c.text, false)
			var got []tk
			for i := range enc.IDs {
				if enc.Special[i] {
					t.Errorf("token %d marked special without a template", i)
				}
				got = append(got, tk{enc.IDs[i], enc.Offsets[i], enc.WordIDs[i]})
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Encode(%q)\n got %v\nwant %v", c.text, got, c.want)
			}
		})
	}
}

func TestEncodeWithTemplate(t *testing.T) {
	tok := loadUnit(t, nil)
	enc := tok.Encode("a b", true)
	want := Encoding{
		IDs:     []int64{2, 8, 9, 3},
		Offsets: [][2]int{{0, 0}, {0, 1}, {2, 3}, {0, 0}},
		Special: []bool{true, false, false, true},
		WordIDs: []int{-1, 0, 1, -1},
	}
	if !slices.Equal(enc.IDs, want.IDs) || !slices.Equal(enc.Offsets, want.Offsets) ||
		!slices.Equal(enc.Special, want.Special) || !slices.Equal(enc.WordIDs, want.WordIDs) {
		t.Fatalf("got %+v\nwant %+v", enc, want)
	}
	empty := tok.Encode("", true)
	if !slices.Equal(empty.IDs, []int64{2, 3}) || !slices.Equal(empty.WordIDs, []int{-1, -1}) {
		t.Fatalf("empty text with template: %+v", empty)
	}

	prefix, suffix := tok.Template()
	if !slices.Equal(prefix, []int64{2}) || !slices.Equal(suffix, []int64{3}) {
		t.Fatalf("Template = %v, %v", prefix, suffix)
	}
	prefix[0] = 99 // callers get copies
	if p, _ := tok.Template(); p[0] != 2 {
		t.Fatal("Template exposed internal state")
	}

	bert := loadUnit(t, func(m map[string]any) {
		m["post_processor"] = map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 3}, "cls": []any{"[CLS]", 2}}
	})
	if p, s := bert.Template(); !slices.Equal(p, []int64{2}) || !slices.Equal(s, []int64{3}) {
		t.Fatalf("BertProcessing Template = %v, %v", p, s)
	}

	none := loadUnit(t, func(m map[string]any) { m["post_processor"] = nil })
	if p, s := none.Template(); p != nil || s != nil {
		t.Fatalf("no post-processor: Template = %v, %v", p, s)
	}
	if got := none.Encode("a", true).IDs; !slices.Equal(got, []int64{8}) {
		t.Fatalf("no post-processor: Encode with specials = %v", got)
	}
}

func TestStripAccentsFollowsLowercaseWhenNull(t *testing.T) {
	setNorm := func(lower bool, strip any) func(m map[string]any) {
		return func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "BertNormalizer", "clean_text": true,
				"handle_chinese_chars": true, "strip_accents": strip, "lowercase": lower}
		}
	}
	cases := []struct {
		lower bool
		strip any
		text  string
		want  int64
	}{
		{true, nil, "é", 19},   // null + lowercase: accents stripped
		{false, nil, "é", 18},  // null + cased: accents kept
		{true, false, "é", 18}, // explicit false wins over lowercase
		{false, true, "é", 19}, // explicit true strips even when cased
	}
	for _, c := range cases {
		tok := loadUnit(t, setNorm(c.lower, c.strip))
		if got := tok.Encode(c.text, false).IDs; !slices.Equal(got, []int64{c.want}) {
			t.Errorf("lowercase=%v strip_accents=%v: got %v want [%d]", c.lower, c.strip, got, c.want)
		}
	}
}

func TestInvalidUTF8StaysInBounds(t *testing.T) {
	tok := loadUnit(t, nil)
	for _, text := range []string{"\xff", "a\xffb", "jos\xc3", "\xe4\xb8", "[CLS]\x80[SEP]", "\xf0\x9f\x91 a"} {
		enc := tok.Encode(text, true)
		prev := 0
		for i, o := range enc.Offsets {
			if enc.Special[i] {
				continue
			}
			if o[0] < prev || o[0] > o[1] || o[1] > len(text) {
				t.Fatalf("Encode(%q): offsets %v out of order or bounds", text, enc.Offsets)
			}
			prev = o[0]
		}
	}
}

func TestVocabularyLookups(t *testing.T) {
	tok := loadUnit(t, func(m map[string]any) {
		m["added_tokens"] = append(m["added_tokens"].([]any), map[string]any{"id": 20, "content": "New York",
			"single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false})
	})
	if id, ok := tok.TokenID("##ient"); !ok || id != 7 {
		t.Errorf("TokenID(##ient) = %d, %v", id, ok)
	}
	if _, ok := tok.TokenID("missing"); ok {
		t.Error("TokenID found a token that is not there")
	}
	if s, ok := tok.Token(7); !ok || s != "##ient" {
		t.Errorf("Token(7) = %q, %v", s, ok)
	}
	if _, ok := tok.Token(1000); ok {
		t.Error("Token found an id that is not there")
	}
	// HF decodes a normalized added token to its normalized form but looks it up by content.
	if id, ok := tok.TokenID("New York"); !ok || id != 20 {
		t.Errorf("TokenID(New York) = %d, %v", id, ok)
	}
	if s, _ := tok.Token(20); s != "new york" {
		t.Errorf("Token(20) = %q, want the normalized form", s)
	}
	if enc := tok.Encode("in NEW York", false); !slices.Equal(enc.IDs, []int64{1, 20}) || enc.Offsets[1] != [2]int{3, 11} {
		t.Errorf("normalized added token: %+v", enc)
	}
	if got := tok.VocabSize(); got != 21 {
		t.Errorf("VocabSize = %d, want 21", got)
	}
}

func TestPadID(t *testing.T) {
	cases := []struct {
		name string
		edit func(m map[string]any)
		want int64
	}{
		{"[PAD] token", nil, 0},
		{"padding pad_id", func(m map[string]any) { m["padding"] = map[string]any{"pad_id": 4, "pad_token": "[MASK]"} }, 4},
		{"padding pad_token only", func(m map[string]any) { m["padding"] = map[string]any{"pad_token": "[SEP]"} }, 3},
		{"no pad token at all", func(m map[string]any) {
			vocab := m["model"].(map[string]any)["vocab"].(map[string]any)
			delete(vocab, "[PAD]")
			vocab["[UNK]"] = 7
			m["added_tokens"] = []any{}
		}, 0},
	}
	for _, c := range cases {
		if got := loadUnit(t, c.edit).PadID(); got != c.want {
			t.Errorf("%s: PadID = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestDecode(t *testing.T) {
	tok := loadUnit(t, nil)
	ids := []int64{2, 6, 7, 13, 8, 10, 999, 1, 3}
	if got, want := tok.Decode(ids, false), "[CLS] patient! ab [UNK] [SEP]"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
	if got, want := tok.Decode(ids, true), "patient! ab"; got != want {
		t.Errorf("Decode skipping specials = %q, want %q", got, want)
	}
	raw := loadUnit(t, func(m map[string]any) { m["decoder"] = nil })
	if got, want := raw.Decode([]int64{6, 7, 13}, false), "pat ##ient !"; got != want {
		t.Errorf("Decode without decoder = %q, want %q", got, want)
	}
	if got := tok.Decode(nil, true); got != "" {
		t.Errorf("Decode(nil) = %q", got)
	}
}

func TestConcurrentEncodeMatchesSequential(t *testing.T) {
	tok := loadTestdata(t, "uncased")
	texts := []string{"Patient José Müller, 45, admitted with 肺炎 👍🏽.", "[CLS] literal", "",
		strings.Repeat("long words ", 50), "Zoë\u0301 İstanbul \u200b tab\there"}
	want := make([]Encoding, len(texts))
	for i, text := range texts {
		want[i] = tok.Encode(text, true)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				i := (g + k) % len(texts)
				got := tok.Encode(texts[i], true)
				if !slices.Equal(got.IDs, want[i].IDs) || !slices.Equal(got.Offsets, want[i].Offsets) {
					errs <- fmt.Sprintf("goroutine %d text %d differs", g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestGeneratedTablesAreSorted(t *testing.T) {
	for name, tab := range map[string][]runeRange{"removed": removedTable, "cleanSpace": cleanSpaceTable,
		"punct": punctTable, "space": spaceTable, "mark": markTable, "bertMark": bertMarkTable, "chinese": chineseTable} {
		for i, r := range tab {
			if r.lo > r.hi || (i > 0 && r.lo <= tab[i-1].hi) {
				t.Errorf("%s table: range %d (%X-%X) out of order", name, i, r.lo, r.hi)
			}
		}
	}
	for i := 1; i < len(decompTable); i++ {
		if decompTable[i].r <= decompTable[i-1].r {
			t.Fatalf("decompTable out of order at %d", i)
		}
	}
	for i := 1; i < len(lowerTable); i++ {
		if lowerTable[i].r <= lowerTable[i-1].r {
			t.Fatalf("lowerTable out of order at %d", i)
		}
	}
	for i := 1; i < len(combiningTable); i++ {
		if combiningTable[i].lo <= combiningTable[i-1].hi {
			t.Fatalf("combiningTable out of order at %d", i)
		}
	}
	// decompose and lower rely on nothing below these bounds being in the tables.
	if decompTable[0].r < 0xC0 || combiningTable[0].lo < 0x300 || markTable[0].lo < 0x300 || bertMarkTable[0].lo < 0x300 {
		t.Fatal("fast paths assume no table entries below their bounds")
	}
	if !utf8.ValidRune(lowerTable[len(lowerTable)-1].r) {
		t.Fatal("lowerTable holds an invalid rune")
	}
}
