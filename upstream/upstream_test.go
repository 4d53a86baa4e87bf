package upstream

import (
	"encoding/json"
	"testing"
)

func TestTextOfEveryShape(t *testing.T) {
	for body, want := range map[string]string{
		`{"text":"a"}`: "a", `{"response":"b"}`: "b", `{"content":"c"}`: "c", `{"completion":"d"}`: "d", `{"output":"e"}`: "e",
		`{"choices":[{"message":{"role":"assistant","content":"f"}}]}`: "f", `{"choices":[{"text":"g"}]}`: "g",
	} {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			t.Fatal(err)
		}
		if got, err := textOf(raw); got != want || err != nil {
			t.Errorf("%s: %q %v", body, got, err)
		}
	}
	if _, err := textOf(map[string]json.RawMessage{"choices": json.RawMessage(`[]`)}); err != ErrInvalidAnswer {
		t.Errorf("no text: %v", err)
	}
	u, err := NewOpenMed(Config{URL: "http://127.0.0.1:1/x"})
	if err != nil || u.Kind() != "openmed" {
		t.Errorf("%v %v", u, err)
	}
	if _, err := NewOpenAI(Config{URL: "not a url"}); err == nil {
		t.Error("a bad URL was taken")
	}
}
