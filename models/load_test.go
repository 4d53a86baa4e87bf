package models

import (
	"io/fs"
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
		"quantize int4":  `{"max_position_embeddings": 8, "sluice": {"quantize": "int4"}}`,
		"eos of text":    `{"max_position_embeddings": 8, "eos_token_id": "2"}`,
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
	if cfg.NumKVHeads != 4 {
		t.Fatalf("without num_key_value_heads the cache has every head; got %d", cfg.NumKVHeads)
	}
	// Llama 3 writes its ends of sequence as a list; a null id is none.
	cfg, err = ParseConfig([]byte(`{"max_position_embeddings": 8, "eos_token_id": [128001, null, 128008, 128009], "bos_token_id": 128000, "pad_token_id": null}`))
	if err != nil || cfg.EOSTokenID != 128001 || len(cfg.EOSTokenIDs) != 3 || cfg.EOSTokenIDs[2] != 128009 || cfg.BOSTokenID != 128000 || cfg.PadTokenID != -1 {
		t.Fatalf("token id lists: %+v, %v", cfg, err)
	}
	if g, err := ParseGeneration([]byte(`{"eos_token_id": [128001, 128009], "max_new_tokens": 5}`)); err != nil || len(g.EOSTokenIDs) != 2 || g.MaxNewTokens != 5 {
		t.Fatalf("generation_config.json's ends of sequence: %+v, %v", g, err)
	}
	if cfg, err := ParseConfig([]byte(`{"max_position_embeddings": 8, "sluice": {"quantize": "int8"}}`)); err != nil || cfg.Quantize != "int8" {
		t.Fatalf("sluice.quantize not read: %q, %v", cfg.Quantize, err)
	}
	cfg, err = ParseConfig([]byte(`{"max_position_embeddings": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
		"num_key_value_heads": 2, "hidden_size": 128}`))
	if err != nil || cfg.NumKVHeads != 2 || cfg.NumHeads != 8 || cfg.HeadDim != 16 {
		t.Fatalf("grouped-query attention not read: %+v, %v", cfg, err)
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

func TestMaxLength(t *testing.T) {
	cases := []struct {
		name, config, tokConfig string
		want                    int
	}{
		{"bert", `{"model_type": "bert", "max_position_embeddings": 512}`, "", 512},
		{"roberta reserves pad+1 rows", `{"model_type": "roberta", "max_position_embeddings": 514, "pad_token_id": 1}`, "", 512},
		{"xlm-roberta without pad id", `{"model_type": "xlm-roberta", "max_position_embeddings": 514}`, "", 512},
		{"camembert padding at 0", `{"model_type": "camembert", "max_position_embeddings": 514, "pad_token_id": 0}`, "", 513},
		{"tokenizer config lowers it", `{"model_type": "deberta-v2", "max_position_embeddings": 512}`, `{"model_max_length": 256}`, 256},
		{"HF's no-limit marker", `{"model_type": "modernbert", "max_position_embeddings": 8192}`, `{"model_max_length": 1000000000000000019884624838656}`, 8192},
		{"larger than the table", `{"model_type": "bert", "max_position_embeddings": 128}`, `{"model_max_length": 512}`, 128},
		{"no model_max_length", `{"model_type": "bert", "max_position_embeddings": 128}`, `{"do_lower_case": true}`, 128},
	}
	for _, c := range cases {
		fsys := dirWith(c.config, c.tokConfig)
		m, err := Load(fsys, "m")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m.Config.MaxLength != c.want {
			t.Errorf("%s: MaxLength %d, want %d", c.name, m.Config.MaxLength, c.want)
		}
	}
	for name, tc := range map[string]string{"zero": `{"model_max_length": 0}`, "fraction": `{"model_max_length": 12.5}`, "not json": `{`} {
		if _, err := Load(dirWith(`{"max_position_embeddings": 128}`, tc), "m"); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") {
			t.Errorf("%s: err = %v, want one naming tokenizer_config.json", name, err)
		}
	}
	for _, huge := range []string{"4611686018427387904", "1048577"} {
		if _, err := ParseConfig([]byte(`{"model_type": "bert", "max_position_embeddings": ` + huge + `}`)); err == nil ||
			!strings.Contains(err.Error(), "max_position_embeddings") {
			t.Errorf("a position table of %s rows: %v", huge, err)
		}
	}
	if _, err := ParseConfig([]byte(`{"model_type": "roberta", "max_position_embeddings": 2, "pad_token_id": 1}`)); err == nil {
		t.Error("a RoBERTa position table with no room for a token was accepted")
	}
}

// dirWith is a model directory "m" holding config.json, tokenizer_config.json (when given)
// and the shipped pii model's tokenizer and graph.
func dirWith(config, tokConfig string) fstest.MapFS {
	fsys := fstest.MapFS{"m/config.json": {Data: []byte(config)}}
	for _, name := range []string{"tokenizer.json", "model.onnx"} {
		data, err := fs.ReadFile(Embedded(), "pii/"+name)
		if err != nil {
			panic(err)
		}
		fsys["m/"+name] = &fstest.MapFile{Data: data}
	}
	if tokConfig != "" {
		fsys["m/tokenizer_config.json"] = &fstest.MapFile{Data: []byte(tokConfig)}
	}
	return fsys
}

// TestIsEncoderReadsTheSmallFilesOnly: embedders and cross-encoders are told from the rest by
// config.json and modules.json, without their graphs (absent here).
func TestEncoderKindReadsTheSmallFilesOnly(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, name := range []string{"embed-mini", "rerank-mini", "tiny-lm"} {
		for _, file := range []string{"config.json", "modules.json", "1_Pooling/config.json"} {
			if data, err := fs.ReadFile(Embedded(), name+"/"+file); err == nil {
				fsys[name+"/"+file] = &fstest.MapFile{Data: data}
			}
		}
	}
	for name, want := range map[string]EncoderKind{"embed-mini": Embedder, "rerank-mini": CrossEncoder, "tiny-lm": NotEncoder} {
		if got, err := EncoderKindOf(fsys, name); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
	if _, err := EncoderKindOf(fsys, "absent"); err == nil {
		t.Error("a directory without config.json")
	}
}
