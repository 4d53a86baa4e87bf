package tokenizertest

import (
	"encoding/json"
	"testing"

	"github.com/sluice-serving/sluice/tokenizer"
)

// WithAddedToken is the tokenizer of raw (a tokenizer.json) with one more added token, content
// at id, not special: as a tokenizer grows a token its model's graph was not resized for.
func WithAddedToken(t testing.TB, raw []byte, id int64, content string) *tokenizer.Tokenizer {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	added, _ := file["added_tokens"].([]any)
	file["added_tokens"] = append(added, map[string]any{"id": id, "content": content,
		"single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false})
	extra, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(extra)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
