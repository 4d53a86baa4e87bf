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
		"deberta-v3-punct", "unigram-split", "wordpiece-seq", "unigram-nfkd", "wordpiece-nfkc", "llama-metaspace", "unigram-bare", "wordpiece-ws",
		"llama3-layout"} {
		tok := loadTestdata(f, name)
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

// FuzzLoad feeds Load tokenizer files that are damaged anywhere: Load either returns an
// error or a Tokenizer that encodes and decodes without panicking. A user's model directory
// is input like any other; a corrupt file must stop start-up with a message, not a trace.
// The seeds are small files of each family, so mutations reach every parser (the vocab, the
// merges, the Precompiled charsmap's trie, the templates, the pre-tokenizer pipeline).
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"tiny"} {
		raw, err := os.ReadFile("testdata/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, seed := range fuzzLoadSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tok, err := Load(raw)
		if err != nil {
			return
		}
		for _, text := range []string{"Patient José 中文 ab▁c [CLS] <s>", "\x00\xff  x", ""} {
			enc := tok.Encode(text, true)
			tok.Decode(enc.IDs, false)
			tok.NewDecodeStream(enc.IDs).Next(0)
		}
		tok.Decode([]int64{-1, 0, 1 << 40}, true)
	})
}

// fuzzLoadSeeds are minimal files of the families the real test files are too large to
// mutate quickly: Unigram behind Precompiled (a charsmap of three rules, "Ａ" -> "A", "Å" ->
// "A" + U+030A, U+2002 -> " ", trained by python3-sentencepiece from a rule TSV) and
// Metaspace, SentencePiece BPE with byte fallback, byte-level BPE, and a pre-tokenizer
// Sequence with Split, Digits and Punctuation.
var fuzzLoadSeeds = []string{
	`{"normalizer":{"type":"Sequence","normalizers":[{"type":"Precompiled","precompiled_charsmap":"AAQAAAAIAwDDGAIAhQUAAAQAAICABAIAAAAAgLy8AgCCCQAAoQUAAAIAAIALAAAACgAAAA0AAAAMAAAADwAAAA4AAAARAAAAEAAAABMAAAASAAAAFQAAABQAAAAXAAAAFgAAABkAAAAYAAAAGwAAABoAAAAdAAAAHAAAAB8AAAAeAAAA4pACACAAAAAjAAAAIgAAACUAAAAkAAAAJwAAACYAAAApAAAAKAAAACsAAAAqAAAALQAAAO9cAgAvAAAALgAAADEAAAAwAAAAMwAAADIAAAA1AAAANAAAADcAAAA2AAAAOQAAADgAAAA7AAAAOgAAAD0AAAA8AAAAPwAAAD4AAABBAAAAQAAAAEMAAABCAAAARQAAAEQAAABHAAAARgAAAEkAAABIAAAASwAAAEoAAABNAAAATAAAAE8AAABOAAAAUQAAAFAAAABTAAAAUgAAAFUAAABUAAAAVwAAAFYAAABZAAAAWAAAAFsAAABaAAAAXQAAAFwAAABfAAAAXgAAAGEAAABgAAAAYwAAAGIAAABlAAAAZAAAAGcAAABmAAAAaQAAAGgAAABrAAAAagAAAG0AAABsAAAAbwAAAG4AAABxAAAAcAAAAHMAAAByAAAAdQAAAHQAAAB3AAAAdgAAAHkAAAB4AAAAewAAAHoAAAB9AAAAfAAAAH8AAAB+AAAAgQAAAIAAAACDAAAAggAAAIUAAACEAAAAhwAAAIYAAACJAAAAiAAAAIsAAACKAAAAjQAAAIwAAACPAAAAjgAAAJEAAACQAAAAkwAAAJIAAACVAAAAlAAAAJcAAACWAAAAmQAAAJgAAACbAAAAmgAAAJ0AAACcAAAAnwAAAJ4AAAChAAAAoAAAAKMAAACiAAAApQAAAKQAAACnAAAApgAAAKkAAACoAAAAqwAAAKoAAACtAAAArAAAAK8AAACuAAAAsQAAALAAAACzAAAAsgAAALUAAAC0AAAAtwAAALYAAAC5AAAAuAAAALsAAAC6AAAAvQAAALwAAAC/AAAAvgAAAMEAAADAAAAAwwAAAMIAAADFAAAAxAAAAMcAAADGAAAAyQAAAMgAAADLAAAAygAAAM0AAADMAAAAzwAAAM4AAADRAAAA0AAAANMAAADSAAAA1QAAANQAAADXAAAA1gAAANkAAADYAAAA2wAAANoAAADdAAAA3AAAAN8AAADeAAAA4QAAAOAAAADjAAAA4gAAAOUAAADkAAAA5wAAAOYAAADpAAAA6AAAAOsAAADqAAAA7QAAAOwAAADvAAAA7gAAAPEAAADwAAAA8wAAAPIAAAD1AAAA9AAAAPcAAAD2AAAA+QAAAPgAAAD7AAAA+gAAAP0AAAD8AAAA/wAAAP4AAAAgAEEAQcyKAA=="},{"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "}]},
	 "pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true},
	 "model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],["▁",-1.5],["a",-2.0],["b",-2.5],["▁ab",-1.0],["A",-2.0]],"byte_fallback":false},
	 "post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[6],"tokens":["[CLS]"]}}},
	 "decoder":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true},
	 "added_tokens":[{"id":6,"content":"[CLS]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}]}`,
	`{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},
	 "pre_tokenizer":null,
	 "model":{"type":"BPE","unk_token":"<unk>","byte_fallback":true,"fuse_unk":true,"vocab":{"<unk>":0,"<s>":1,"<0x41>":2,"<0xC3>":3,"▁":4,"a":5,"b":6,"ab":7,"▁ab":8},"merges":["a b","▁ ab"]},
	 "post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}},
	 "decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},
	 "added_tokens":[{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}]}`,
	`{"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true},
	 "model":{"type":"BPE","vocab":{"a":0,"b":1,"Ġ":2,"Ġa":3,"ab":4},"merges":[["Ġ","a"],["a","b"]]},
	 "post_processor":{"type":"RobertaProcessing","sep":["b",1],"cls":["a",0],"trim_offsets":true,"add_prefix_space":true},
	 "decoder":{"type":"ByteLevel"},"added_tokens":[]}`,
	`{"normalizer":{"type":"NFKC"},
	 "pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"[0-9]+"},"behavior":"Isolated","invert":false},{"type":"Digits","individual_digits":true},{"type":"Punctuation","behavior":"Isolated"},{"type":"WhitespaceSplit"}]},
	 "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[UNK]":0,"a":1,"##b":2,"1":3}},
	 "post_processor":null,"decoder":{"type":"WordPiece","prefix":"##","cleanup":true},"added_tokens":[]}`,
}
