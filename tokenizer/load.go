package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Components are parsed beside their code, as HF's tokenizers lays them out, by one
// function per type; each kind has a table from the "type" string to that function
// (normalizerParser, stageParser, parseModel, postProcessorParser, decoderParser). Adding a
// component is its function, a case in its kind's table and its name in the list below.

// fileJSON is the part of HF's tokenizer.json that this package reads.
type fileJSON struct {
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	Model         json.RawMessage  `json:"model"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Padding       *struct {
		PadID    *int64 `json:"pad_id"`
		PadToken string `json:"pad_token"`
	} `json:"padding"`
}

type typed struct {
	Type string `json:"type"`
}

// The components each kind supports, as unsupported names them.
const (
	supportedNormalizers   = "BertNormalizer, Sequence, NFD, NFC, NFKD, NFKC, Lowercase, StripAccents, Precompiled, Replace, Strip, Prepend"
	supportedPreTokenizers = "BertPreTokenizer, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, CharDelimiterSplit, Punctuation, Digits, Split, Sequence"
	supportedModels        = "WordPiece, BPE, Unigram"
	supportedProcessors    = "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence"
	supportedDecoders      = "WordPiece, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence"
)

// Load builds a Tokenizer from the contents of a HuggingFace tokenizer.json. It accepts the
// WordPiece, byte-level BPE, SentencePiece Unigram and SentencePiece BPE families and the
// components the package documentation lists, and names the first component it does not
// support. The truncation section is ignored: callers window long inputs.
func Load(tokenizerJSON []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid tokenizer.json (%d bytes): %w", len(tokenizerJSON), err)
	}
	t := &Tokenizer{}
	var err error
	if t.norm, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if err := t.parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.parseModel(f.Model); err != nil {
		return nil, err
	}
	if err := t.parseAddedTokens(f.AddedTokens); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if err := t.parseDecoder(f.Decoder); err != nil {
		return nil, err
	}
	t.padID = t.choosePadID(f)
	if t.trimOffsets != nil {
		t.countSpaces()
	}
	return t, nil
}

// isNull reports whether a section is absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// componentType reads the "type" of a component; what names its kind in errors.
func componentType(raw json.RawMessage, what string) (string, error) {
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return "", fmt.Errorf("tokenizer: invalid %s section: %w", what, err)
	}
	return ty.Type, nil
}

// unsupported is the error for a component type this package does not run.
func unsupported(what, typ, supported string) error {
	return fmt.Errorf("tokenizer: %s type %q is not supported (supported: %s)", what, typ, supported)
}

// orTrue reads an optional flag whose HF default is true.
func orTrue(p *bool) bool { return p == nil || *p }

// choosePadID prefers the padding section's id, then its token, then "[PAD]" (BERT), then
// "<pad>" (RoBERTa, whose files usually have no padding section), then 0.
func (t *Tokenizer) choosePadID(f fileJSON) int64 {
	if f.Padding != nil {
		if f.Padding.PadID != nil {
			return *f.Padding.PadID
		}
		if id, ok := t.TokenID(f.Padding.PadToken); ok && f.Padding.PadToken != "" {
			return id
		}
	}
	for _, tok := range []string{"[PAD]", "<pad>"} {
		if id, ok := t.TokenID(tok); ok {
			return id
		}
	}
	return 0
}
