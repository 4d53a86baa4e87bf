package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// layoutFamilies are the encoder layouts of models/testdata/layouts (gen_layouts.py): one
// small model directory per architecture, with the inputs optimum exports for it and a
// tokenizer of its family.
var layoutFamilies = []string{"bert", "distilbert", "roberta", "xlm-roberta", "deberta-v2", "modernbert"}

// TestEveryEncoderLayoutServes loads each layout directory as a user's own model
// (SLUICE_MODELS_DIR) and serves it through ONNX Runtime and HTTP. The layouts' graphs label
// known token ids, so the answer is exact: Jonathan's pieces are first_name, and Smithers's
// pieces are B-last_name, O, I-last_name..., which word-level aggregation must fuse into one
// word the way HF's pipeline does for that tokenizer family.
func TestEveryEncoderLayoutServes(t *testing.T) {
	const text = "Patient Jonathan Smithers was admitted for review."
	want := []servedEntity{
		{Text: "Jonathan", Label: "first_name", Start: 8, End: 16},
		{Text: "Smithers", Label: "last_name", Start: 17, End: 25},
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "models", "testdata", "layouts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range layoutFamilies {
		t.Run(family, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, family, "model.onnx")); err != nil {
				t.Fatal(err)
			}
			srv := startServer(t, "SLUICE_MODELS_DIR="+dir, "SLUICE_PII_MODEL="+family,
				"SLUICE_ANALYZE_MODEL="+family, "SLUICE_GENERATE_MODEL=none")
			status, body := srv.post(t, "/pii/extract", map[string]any{"text": text})
			if status != 200 {
				t.Fatalf("/pii/extract status %d: %v", status, body)
			}
			if got := entitiesOf(t, body); !reflect.DeepEqual(got, want) {
				t.Errorf("/pii/extract: %+v, want %+v", got, want)
			}
			status, body = srv.post(t, "/analyze", map[string]any{"text": text, "aggregation_strategy": "first"})
			if status != 200 {
				t.Fatalf("/analyze status %d: %v", status, body)
			}
			if got := entitiesOf(t, body); !reflect.DeepEqual(got, want) {
				t.Errorf("/analyze, first: %+v, want %+v", got, want)
			}
		})
	}
}
