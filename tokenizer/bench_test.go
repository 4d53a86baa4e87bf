package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// Run: go test -run '^$' -bench . -benchmem ./models/wordpiece/
// tokens/s counts the tokens of the plain encodings, on one goroutine.

func benchTexts(b *testing.B) []string {
	f, err := os.Open("testdata/golden/cased.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(gunzip(b, f))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	sc.Scan() // meta
	var texts []string
	for sc.Scan() {
		var rec struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			b.Fatal(err)
		}
		texts = append(texts, rec.Text)
	}
	return texts
}

func benchEncode(b *testing.B, file string, texts []string) {
	tok, err := Load(readTokenizerFile(b, file))
	if err != nil {
		b.Fatal(err)
	}
	perRound, size := 0, 0
	for _, t := range texts {
		perRound += len(tok.Encode(t, false).IDs)
		size += len(t)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		for _, t := range texts {
			tok.Encode(t, false)
		}
	}
	b.ReportMetric(float64(perRound)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkEncode(b *testing.B) {
	mixed := benchTexts(b)
	clinical := make([]string, 0, 200)
	for i := range 200 {
		clinical = append(clinical, "Patient John Smith was admitted to St. Mary's Hospital on 2024-03-05 with "+
			"community-acquired pneumonia; started amoxicillin 500 mg BID, follow-up in two weeks. "+
			"BP 120/80, HR 88, SpO2 97% on room air, creatinine 1.2 mg/dL."[i%7:])
	}
	for _, name := range []string{"cased", "uncased"} {
		b.Run(name+"/mixed", func(b *testing.B) { benchEncode(b, "testdata/"+name+".json", mixed) })
		b.Run(name+"/clinical", func(b *testing.B) { benchEncode(b, "testdata/"+name+".json", clinical) })
	}
	// One file of each other family: byte-level BPE, the SentencePiece Unigram layouts (whose
	// Precompiled normalizer and Viterbi cost more per character than WordPiece) and
	// SentencePiece BPE with byte fallback (one word per stretch of text, merged on a heap).
	for _, name := range []string{"gpt2", "deberta-v3", "xlm-roberta", "unigram-bytes", "llama-bpe"} {
		b.Run(name+"/mixed", func(b *testing.B) { benchEncode(b, "testdata/"+name+".json", mixed) })
		b.Run(name+"/clinical", func(b *testing.B) { benchEncode(b, "testdata/"+name+".json", clinical) })
	}
	// A real decoder vocabulary of today's size: Qwen3's 151k pieces behind GPT-4's split.
	b.Run("qwen3/mixed", func(b *testing.B) { benchEncode(b, "testdata/qwen3.json.gz", mixed) })
	b.Run("qwen3/clinical", func(b *testing.B) { benchEncode(b, "testdata/qwen3.json.gz", clinical) })
	// The shipped vocabularies: pii's 5,000 pieces, and clinical-ner's with 111,890 whole words
	// after them (longer entries, so more lookups per word before a match).
	for _, name := range []string{"pii", "clinical-ner"} {
		b.Run("shipped-"+name+"/clinical", func(b *testing.B) { benchEncode(b, "../models/"+name+"/tokenizer.json", clinical) })
	}
}
