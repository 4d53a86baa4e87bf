package main

import (
	"encoding/json"
	"testing"
	"unicode"
)

// wordish approximates a BERT pre-tokenizer: runs of letters or digits, and every punctuation
// character on its own. WordPiece then splits rare words further, so the real token count is
// higher: with the shipped PII and clinical tokenizers the texts measured 19-31, 104-128 and
// 623 tokens, about 1.45 tokens per pre-token. The bounds are in pre-tokens.
func wordish(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		case unicode.IsSpace(r):
			inWord = false
		default:
			n++
			inWord = false
		}
	}
	return n
}

func TestCorpusLengthClassesHaveTheirSizes(t *testing.T) {
	c, err := NewCorpus()
	if err != nil {
		t.Fatal(err)
	}
	bounds := map[string][2]int{lengthShort: {10, 25}, lengthMedium: {65, 100}, lengthLong: {360, 480}}
	for _, class := range lengthClasses {
		set := c.bodies[class]
		if len(set) == 0 {
			t.Fatalf("%s: no texts", class)
		}
		for i, body := range set {
			var req struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatalf("%s #%d: body is not {\"text\": ...}: %v", class, i, err)
			}
			n := wordish(req.Text)
			if b := bounds[class]; n < b[0] || n > b[1] {
				t.Errorf("%s #%d: %d pre-tokens, want %d..%d", class, i, n, b[0], b[1])
			}
		}
	}
	if string(c.Body(lengthLong, 0)) == string(c.Body(lengthLong, 1)) {
		t.Error("long texts should vary between requests")
	}
	if string(c.Body(lengthShort, 0)) != string(c.Body(lengthShort, uint64(len(c.bodies[lengthShort])))) {
		t.Error("Body should wrap around the class")
	}
}
