package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Sentence is how a sentence-transformers model (modules.json beside config.json) turns its
// token states into one vector: its Pooling module's mode and dimension, and whether a
// Normalize module follows.
type Sentence struct {
	// Pooling is "mean", "cls", "lasttoken" or "max".
	Pooling   string
	Dimension int
	Normalize bool
	// MaxSeqLength is sentence_bert_config.json's max_seq_length (0: none), the length the
	// model was trained at, which Load makes the model's MaxLength when shorter.
	MaxSeqLength int
}

// Poolings are the pooling modes served.
var Poolings = []string{"mean", "cls", "lasttoken", "max"}

// readSentence reads modules.json and its Pooling module's config; nil without modules.json.
func readSentence(fsys fs.FS, dir string) (*Sentence, error) {
	data, err := fs.ReadFile(fsys, path.Join(dir, "modules.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var modules []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &modules); err != nil {
		return nil, fmt.Errorf("modules.json: %w", err)
	}
	s := &Sentence{}
	pooling := ""
	for _, m := range modules {
		switch {
		case strings.HasSuffix(m.Type, ".Pooling"):
			pooling = m.Path
		case strings.HasSuffix(m.Type, ".Normalize"):
			s.Normalize = true
		case strings.HasSuffix(m.Type, ".Transformer"):
		default:
			return nil, fmt.Errorf("modules.json: module type %q is not served (Transformer, Pooling and Normalize are)", m.Type)
		}
	}
	if pooling == "" {
		return nil, errors.New("modules.json: no Pooling module")
	}
	cfgData, err := fs.ReadFile(fsys, path.Join(dir, pooling, "config.json"))
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Dimension int  `json:"word_embedding_dimension"`
		CLS       bool `json:"pooling_mode_cls_token"`
		Mean      bool `json:"pooling_mode_mean_tokens"`
		Max       bool `json:"pooling_mode_max_tokens"`
		SqrtLen   bool `json:"pooling_mode_mean_sqrt_len_tokens"`
		Last      bool `json:"pooling_mode_lasttoken"`
		Weighted  bool `json:"pooling_mode_weightedmean_tokens"`
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil {
		return nil, fmt.Errorf("%s/config.json: %w", pooling, err)
	}
	modes := 0
	for _, m := range []struct {
		on   bool
		name string
	}{{cfg.CLS, "cls"}, {cfg.Mean, "mean"}, {cfg.Max, "max"}, {cfg.Last, "lasttoken"}} {
		if m.on {
			s.Pooling = m.name
			modes++
		}
	}
	switch {
	case cfg.SqrtLen || cfg.Weighted:
		return nil, fmt.Errorf("%s/config.json: mean_sqrt_len and weightedmean pooling are not served", pooling)
	case modes != 1:
		return nil, fmt.Errorf("%s/config.json: want exactly one pooling mode, got %d", pooling, modes)
	case cfg.Dimension <= 0:
		return nil, fmt.Errorf("%s/config.json: word_embedding_dimension must be positive", pooling)
	}
	s.Dimension = cfg.Dimension
	if data, err := fs.ReadFile(fsys, path.Join(dir, "sentence_bert_config.json")); err == nil {
		var sb struct {
			MaxSeqLength int `json:"max_seq_length"`
		}
		if err := json.Unmarshal(data, &sb); err != nil {
			return nil, fmt.Errorf("sentence_bert_config.json: %w", err)
		}
		s.MaxSeqLength = max(sb.MaxSeqLength, 0)
	}
	return s, nil
}

// IsCrossEncoder reports whether the model scores a pair of texts with one logit: a sequence
// classifier with one label, as sentence-transformers' CrossEncoder exports them.
func (m *Model) IsCrossEncoder() bool { return m.Config.IsCrossEncoder() }

// IsCrossEncoder is Model.IsCrossEncoder from config.json alone.
func (c Config) IsCrossEncoder() bool {
	for _, a := range c.Architectures {
		if strings.HasSuffix(a, "ForSequenceClassification") {
			return len(c.Labels) == 1
		}
	}
	return false
}

// EncoderKind is what an encoder directory serves, as Load would read it.
type EncoderKind int

const (
	NotEncoder   EncoderKind = iota
	Embedder                 // a sentence-transformers layout (modules.json)
	CrossEncoder             // a sequence classifier with one label, and no modules.json
)

// EncoderKindOf reads, from the small files alone (config.json, modules.json), whether the
// model directory dir holds an embedder or a cross-encoder: what one asks before reading a
// graph that may be gigabytes.
func EncoderKindOf(fsys fs.FS, dir string) (EncoderKind, error) {
	data, err := fs.ReadFile(fsys, path.Join(dir, "config.json"))
	if err != nil {
		return NotEncoder, fmt.Errorf("models: model %q: %w", dir, err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return NotEncoder, fmt.Errorf("models: model %q: %w", dir, err)
	}
	s, err := readSentence(fsys, dir)
	switch {
	case err != nil:
		return NotEncoder, fmt.Errorf("models: model %q: %w", dir, err)
	case s != nil:
		return Embedder, nil
	case cfg.IsCrossEncoder():
		return CrossEncoder, nil
	}
	return NotEncoder, nil
}
