package models

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedModelsLoad(t *testing.T) {
	for _, name := range EmbeddedNames() {
		m, err := Load(Embedded(), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.ONNX) == 0 || m.Tokenizer == nil || m.Config.MaxPositionEmbeddings <= 0 {
			t.Fatalf("%s: incomplete model: %+v", name, m.Config)
		}
	}
	for _, name := range []string{"pii", "clinical-ner"} {
		ner, _ := Load(Embedded(), name)
		if len(ner.Config.Labels) == 0 || ner.Config.Labels[0] != "O" {
			t.Fatalf("%s labels = %v", name, ner.Config.Labels)
		}
		// The shipped token classifiers were trained with a CRF; without its scores the
		// server would decode them token by token, below their measured F1.
		if ner.Config.CRF == nil || len(ner.Config.CRF.Touching) != len(ner.Config.Labels) {
			t.Fatalf("%s: no CRF transitions in config.json", name)
		}
		if len(ner.Config.CRF.Break) != len(ner.Config.Labels) {
			t.Fatalf("%s: no CRF transitions across line breaks in config.json", name)
		}
	}
	lm, _ := Load(Embedded(), "tiny-lm")
	if lm.Config.NumLayers <= 0 || lm.Config.NumHeads <= 0 || lm.Config.HeadDim <= 0 || lm.Config.EOSTokenID < 0 || len(lm.Generation) == 0 {
		t.Fatalf("tiny-lm decoder geometry missing: %+v", lm.Config)
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := map[string]string{
		"not json":       `{`,
		"no positions":   `{"id2label": {"0": "O"}}`,
		"gap in labels":  `{"max_position_embeddings": 8, "id2label": {"0": "O", "2": "B-X"}}`,
		"bad label id":   `{"max_position_embeddings": 8, "id2label": {"zero": "O"}}`,
		"crf, no labels": `{"max_position_embeddings": 8, "sluice": {"crf_transitions": {"spaced": [[0]], "touching": [[0]]}}}`,
		"crf too small":  `{"max_position_embeddings": 8, "id2label": {"0": "O", "1": "I-X"}, "sluice": {"crf_transitions": {"spaced": [[0, 0], [0, 0]], "touching": [[0, 0]]}}}`,
		"crf ragged":     `{"max_position_embeddings": 8, "id2label": {"0": "O", "1": "I-X"}, "sluice": {"crf_transitions": {"spaced": [[0, 0], [0]], "touching": [[0, 0], [0, 0]]}}}`,
		"break ragged":   `{"max_position_embeddings": 8, "id2label": {"0": "O", "1": "I-X"}, "sluice": {"crf_transitions": {"spaced": [[0, 0], [0, 0]], "touching": [[0, 0], [0, 0]], "break": [[0, 0], [0]]}}}`,
	}
	for name, cfg := range cases {
		if _, err := ParseConfig([]byte(cfg)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	cfg, err := ParseConfig([]byte(`{"n_positions": 64, "n_layer": 2, "n_head": 4, "n_embd": 128}`))
	if err != nil || cfg.MaxPositionEmbeddings != 64 || cfg.HeadDim != 32 || cfg.NumLayers != 2 {
		t.Fatalf("GPT-2 names not read: %+v, %v", cfg, err)
	}
	cfg, err = ParseConfig([]byte(`{"max_position_embeddings": 8, "id2label": {"0": "O", "1": "I-X"},
		"sluice": {"crf_transitions": {"spaced": [[0, -1], [-2, 0]], "touching": [[0, -3], [-4, 0]]}}}`))
	if err != nil || cfg.CRF == nil || cfg.CRF.Touching[1][0] != -4 || cfg.CRF.Spaced[0][1] != -1 {
		t.Fatalf("CRF transitions not read: %+v, %v", cfg.CRF, err)
	}
	cfg, err = ParseConfig([]byte(`{"max_position_embeddings": 8, "id2label": {"0": "O", "1": "I-X"},
		"sluice": {"crf_transitions": {"spaced": [[0, 0], [0, 0]], "touching": [[0, 0], [0, 0]], "break": [[0, -5], [-6, -7]]}}}`))
	if err != nil || cfg.CRF == nil || cfg.CRF.Break[1][1] != -7 || cfg.CRF.Break[0][1] != -5 {
		t.Fatalf("CRF break transitions not read: %+v, %v", cfg.CRF, err)
	}
}

func TestLoadNamesTheMissingFile(t *testing.T) {
	fsys := fstest.MapFS{"m/config.json": {Data: []byte(`{"max_position_embeddings": 8}`)}}
	_, err := Load(fsys, "m")
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Fatalf("err = %v, want one naming tokenizer.json", err)
	}
}
