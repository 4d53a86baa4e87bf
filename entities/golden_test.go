package entities

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// testdata/hf_aggregation_golden.json holds random cases (spec in mk's syntax, logits)
// with the entities HF's post-processing gives for each strategy. The expected values
// were computed once, outside this repository, by a literal Python transcription of
// transformers' TokenClassificationPipeline post-processing in float32 numpy, with
// is_subword true for '|' pieces as HF computes it for a "##" WordPiece tokenizer. Ties
// between labels are frequent on purpose (integer logits).
func TestHFGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/hf_aggregation_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Labels []string
		Cases  []struct {
			Spec   string
			Logits []float32
			Want   map[string][][3]any
		}
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 100 {
		t.Fatalf("only %d golden cases", len(golden.Cases))
	}
	d := testDecoder(t, golden.Labels)
	for ci, c := range golden.Cases {
		text, toks := mk(c.Spec)
		for name, want := range c.Want {
			s, err := ParseStrategy(name)
			if err != nil {
				t.Fatal(err)
			}
			ents, err := d.Decode(text, toks, c.Logits, s)
			if err != nil {
				t.Fatal(err)
			}
			g := render(text, ents)
			if len(g) != len(want) {
				t.Fatalf("case %d %s: got %v, want %v", ci, name, g, want)
			}
			for i, w := range want {
				if g[i].Label != w[0].(string) || g[i].Text != w[1].(string) || math.Abs(g[i].Score-w[2].(float64)) > 2e-6 {
					t.Fatalf("case %d %s entity %d: got %+v, want %v", ci, name, i, g[i], w)
				}
			}
		}
	}
}

// testdata/hf_heuristic_golden.json (gen_hf_heuristic.py) holds random cases in the offset
// styles of tokenizers without word ids (byte-level BPE with and without trimmed offsets,
// SentencePiece), with what HF's pipeline answers for each strategy when it must guess word
// boundaries from spaces. Offsets there are code points; spans are compared after the
// whitespace trim the decoder applies and HF does not.
func TestHFGoldenWithoutWordIDs(t *testing.T) {
	raw, err := os.ReadFile("testdata/hf_heuristic_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Labels    []string
		UnknownID int64 `json:"unknown_id"`
		Cases     []struct {
			Style   string
			Text    string
			IDs     []int64
			Offsets [][2]int
			Logits  []float32
			Want    map[string][][4]any
		}
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 100 {
		t.Fatalf("only %d golden cases", len(golden.Cases))
	}
	d, err := NewDecoder(DecoderConfig{ID2Label: golden.Labels, UnknownID: golden.UnknownID})
	if err != nil {
		t.Fatal(err)
	}
	for ci, c := range golden.Cases {
		byteAt := codePointBytes(c.Text)
		toks := Tokens{IDs: c.IDs}
		for _, o := range c.Offsets {
			toks.Offsets = append(toks.Offsets, [2]int{byteAt[o[0]], byteAt[o[1]]})
		}
		for name, want := range c.Want {
			s, err := ParseStrategy(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Decode(c.Text, toks, c.Logits, s)
			if err != nil {
				t.Fatal(err)
			}
			var trimmed []Entity
			for _, w := range want {
				e := Entity{Label: w[0].(string), Start: byteAt[int(w[1].(float64))], End: byteAt[int(w[2].(float64))], Score: w[3].(float64)}
				trimmed = appendClean(trimmed, c.Text, e)
			}
			if len(got) != len(trimmed) {
				t.Fatalf("case %d (%s) %s: got %+v, want %+v", ci, c.Style, name, got, trimmed)
			}
			for i, w := range trimmed {
				g := got[i]
				if g.Label != w.Label || g.Start != w.Start || g.End != w.End || math.Abs(g.Score-w.Score) > 2e-6 {
					t.Fatalf("case %d (%s) %s entity %d: got %+v, want %+v", ci, c.Style, name, i, g, w)
				}
			}
		}
	}
}

// codePointBytes maps each code point offset of text (and its end) to a byte offset.
func codePointBytes(text string) []int {
	at := make([]int, 0, len(text)+1)
	for i := range text {
		at = append(at, i)
	}
	return append(at, len(text))
}
