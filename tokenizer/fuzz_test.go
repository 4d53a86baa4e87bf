package tokenizer

import (
	"os"
	"testing"
)

// FuzzEncode checks the invariants callers rely on for any input, valid UTF-8 or not:
// no panic, parallel slices of one length, offsets inside the text, word ids that never
// go backwards, template tokens only at the ends. Seeds run in every go test; explore with
// go test -run '^$' -fuzz FuzzEncode ./tokenizer (or make fuzz)
func FuzzEncode(f *testing.F) {
	var toks []*Tokenizer
	for _, name := range []string{"uncased", "tiny", "roberta-prefix", "modernbert", "edge-drop", "edge-affix",
		"deberta-v3", "xlm-roberta", "unigram-bytes", "llama-bpe",
		"deberta-v3-punct", "unigram-split", "wordpiece-seq", "unigram-nfkd", "wordpiece-nfkc", "llama-metaspace", "unigram-bare", "wordpiece-ws"} {
		raw, err := os.ReadFile("testdata/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		tok, err := Load(raw)
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, s := range []string{"", "Patient José [CLS] 中文 👍🏽", "a\xffb", "New York<mask> <med>", "\u0301\u0316x",
		"ǘ\u0316 İ", "\x00\u200b\ufeff", "[MASK]  x", "é <mask>  [MASK]\xf0\x9f", " 's  'll e\u0301\u0316",
		"\x01ab\r\n Ａ\u0301 ﬁ\x01 ▁ <0x41>", "  <mask>\u3000[CLS]\xe4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, tok := range toks {
			enc := tok.Encode(text, true)
			n := len(enc.IDs)
			if len(enc.Offsets) != n || len(enc.Special) != n || len(enc.WordIDs) != n {
				t.Fatalf("slice lengths differ: %d %d %d %d", n, len(enc.Offsets), len(enc.Special), len(enc.WordIDs))
			}
			prefix, suffix := tok.Template()
			lastWord := -1
			for i := range n {
				inTemplate := i < len(prefix) || i >= n-len(suffix)
				if enc.Special[i] != inTemplate {
					t.Fatalf("token %d: special %v, template position %v", i, enc.Special[i], inTemplate)
				}
				if inTemplate {
					continue
				}
				o := enc.Offsets[i]
				if o[0] < 0 || o[0] > o[1] || o[1] > len(text) {
					t.Fatalf("token %d: offsets %v outside text of %d bytes", i, o, len(text))
				}
				if enc.WordIDs[i] < lastWord {
					t.Fatalf("token %d: word id %d after %d", i, enc.WordIDs[i], lastWord)
				}
				lastWord = enc.WordIDs[i]
			}
			tok.Decode(enc.IDs, true)
		}
	})
}
