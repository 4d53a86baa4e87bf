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
