package models

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/sluice-serving/sluice/tokenizer"
)

// Model is one loaded model directory.
type Model struct {
	Name      string
	Config    Config
	Tokenizer *tokenizer.Tokenizer
	ONNX      []byte
	// DecodeInPlace holds decode_inplace.onnx when the directory has one: a decoder's
	// network for one new token a row after a past, or first prompts, with its keys and values
	// updated in place (engine.Decoder.AddInPlaceDecode; models/train/export_inplace.py writes
	// tiny-lm's).
	DecodeInPlace []byte
	// Generation holds generation_config.json verbatim when the directory has one.
	Generation []byte
	// TokenizerConfig holds tokenizer_config.json verbatim when the directory has one (its
	// chat template is package chat's to read).
	TokenizerConfig []byte
	// Digest is the SHA-256 (hex) of config.json, tokenizer_config.json and tokenizer.json:
	// what a measurement of the model's answers depends on besides its graph.
	Digest string
	// Sentence is a sentence-transformers embedder's pooling (modules.json); nil for others.
	Sentence *Sentence
}

// Load reads the model directory dir from fsys. Errors name the file and what is wrong with
// it, never any content of the model beyond structure.
func Load(fsys fs.FS, dir string) (*Model, error) {
	read := func(name string) ([]byte, error) {
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("models: model %q: %w", dir, err)
		}
		return data, nil
	}
	cfgJSON, err := read("config.json")
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(cfgJSON)
	if err != nil {
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	tokCfg, err := fs.ReadFile(fsys, path.Join(dir, "tokenizer_config.json"))
	switch {
	case err == nil:
		if err := cfg.applyTokenizerConfig(tokCfg); err != nil {
			return nil, fmt.Errorf("models: model %q: %w", dir, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	tokJSON, err := read("tokenizer.json")
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(tokJSON)
	if err != nil {
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	onnx, err := fs.ReadFile(fsys, path.Join(dir, "model.onnx"))
	if errors.Is(err, fs.ErrNotExist) {
		// sentence-transformers' own ONNX layout keeps the graph under onnx/.
		onnx, err = fs.ReadFile(fsys, path.Join(dir, "onnx", "model.onnx"))
	}
	if err != nil {
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	sentence, err := readSentence(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	if sentence != nil && sentence.MaxSeqLength > 0 && sentence.MaxSeqLength < cfg.MaxLength {
		cfg.MaxLength = sentence.MaxSeqLength
	}
	gen, err := fs.ReadFile(fsys, path.Join(dir, "generation_config.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	inPlace, err := fs.ReadFile(fsys, path.Join(dir, "decode_inplace.onnx"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("models: model %q: %w", dir, err)
	}
	h := sha256.New()
	for _, part := range [][]byte{cfgJSON, tokCfg, tokJSON} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return &Model{Name: path.Base(dir), Config: cfg, Tokenizer: tok, ONNX: onnx, DecodeInPlace: inPlace, Generation: gen, TokenizerConfig: tokCfg,
		Digest: hex.EncodeToString(h.Sum(nil)), Sentence: sentence}, nil
}
