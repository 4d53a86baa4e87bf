package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The JSON shapes below are the parts of HF's tokenizer.json that this package reads.

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

type addedTokenJSON struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

type typed struct {
	Type string `json:"type"`
}

type bertNormalizerJSON struct {
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
}

type sequenceNormalizerJSON struct {
	Normalizers []json.RawMessage `json:"normalizers"`
}

type wordPieceJSON struct {
	Type                    string           `json:"type"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
	Vocab                   map[string]int64 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
}

type templateJSON struct {
	Single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"`
}

type bertProcessingJSON struct {
	Sep []json.RawMessage `json:"sep"`
	Cls []json.RawMessage `json:"cls"`
}

type wordPieceDecoderJSON struct {
	Prefix  *string `json:"prefix"`
	Cleanup *bool   `json:"cleanup"`
}

const (
	supportedNormalizers   = "BertNormalizer, Sequence, NFD, Lowercase, StripAccents"
	supportedPreTokenizers = "BertPreTokenizer"
	supportedModels        = "WordPiece"
	supportedProcessors    = "TemplateProcessing, BertProcessing"
	supportedDecoders      = "WordPiece"
)

// Load builds a Tokenizer from the contents of a HuggingFace tokenizer.json. It accepts the
// BERT family layout (see the package documentation) and names the first component it
// does not support. The truncation section is ignored: callers window long inputs.
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
	if err := checkPreTokenizer(f.PreTokenizer); err != nil {
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
	return t, nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

func componentType(raw json.RawMessage, what string) (string, error) {
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return "", fmt.Errorf("tokenizer: invalid %s section: %w", what, err)
	}
	return ty.Type, nil
}

func unsupported(what, typ, supported string) error {
	return fmt.Errorf("tokenizer: %s type %q is not supported (supported: %s)", what, typ, supported)
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := componentType(raw, "normalizer")
	if err != nil {
		return nil, err
	}
	switch typ {
	case "BertNormalizer":
		var b bertNormalizerJSON
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid BertNormalizer: %w", err)
		}
		def := func(p *bool, d bool) bool {
			if p == nil {
				return d
			}
			return *p
		}
		lowercase := def(b.Lowercase, true)
		// HF: strip_accents unset (null) means "do whatever lowercase does".
		strip := def(b.StripAccents, lowercase)
		var n normalizer
		if def(b.CleanText, true) {
			n = append(n, stepClean)
		}
		if def(b.HandleChineseChars, true) {
			n = append(n, stepChinese)
		}
		if strip {
			n = append(n, stepNFD, stepBertMarks)
		}
		if lowercase {
			n = append(n, stepLower)
		}
		return n, nil
	case "Sequence":
		var s sequenceNormalizerJSON
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid Sequence normalizer: %w", err)
		}
		var n normalizer
		for _, sub := range s.Normalizers {
			if isNull(sub) {
				continue
			}
			part, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			n = append(n, part...)
		}
		return n, nil
	case "NFD":
		return normalizer{stepNFD}, nil
	case "Lowercase":
		return normalizer{stepLower}, nil
	case "StripAccents":
		return normalizer{stepMarks}, nil
	default:
		return nil, unsupported("normalizer", typ, supportedNormalizers)
	}
}

func checkPreTokenizer(raw json.RawMessage) error {
	if isNull(raw) {
		return fmt.Errorf("tokenizer: pre_tokenizer is missing (supported: %s)", supportedPreTokenizers)
	}
	typ, err := componentType(raw, "pre_tokenizer")
	if err != nil {
		return err
	}
	if typ != "BertPreTokenizer" {
		return unsupported("pre_tokenizer", typ, supportedPreTokenizers)
	}
	return nil
}

func (t *Tokenizer) parseModel(raw json.RawMessage) error {
	if isNull(raw) {
		return errors.New("tokenizer: model section is missing")
	}
	var m wordPieceJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("tokenizer: invalid model section: %w", err)
	}
	typ := m.Type
	if typ == "" {
		// Old files leave the type out; HF then tells models apart by their fields.
		typ = "WordPiece"
		if !isNull(m.Merges) || m.ContinuingSubwordPrefix == nil {
			return errors.New("tokenizer: model has no type and does not look like WordPiece (supported: " + supportedModels + ")")
		}
	}
	if typ != "WordPiece" {
		return unsupported("model", typ, supportedModels)
	}
	if len(m.Vocab) == 0 {
		return errors.New("tokenizer: WordPiece vocab is empty")
	}
	wp := wordPiece{unk: "[UNK]", prefix: "##", maxChars: 100}
	if m.UnkToken != nil {
		wp.unk = *m.UnkToken
	}
	if m.ContinuingSubwordPrefix != nil {
		wp.prefix = *m.ContinuingSubwordPrefix
	}
	if m.MaxInputCharsPerWord != nil {
		wp.maxChars = *m.MaxInputCharsPerWord
	}
	unk, ok := m.Vocab[wp.unk]
	if !ok {
		// HF would fail on the first unknown word instead; failing at load is clearer.
		return fmt.Errorf("tokenizer: unk_token (%d bytes) is not in the WordPiece vocab of %d entries", len(wp.unk), len(m.Vocab))
	}
	wp.unkID = unk
	wp.vocab = m.Vocab
	wp.cont = make(map[string]int64)
	wp.byID = make(map[int64]string, len(m.Vocab))
	for tok, id := range m.Vocab {
		if id < 0 {
			return fmt.Errorf("tokenizer: WordPiece vocab has a negative id (%d)", id)
		}
		if prev, dup := wp.byID[id]; !dup || tok < prev {
			wp.byID[id] = tok
		}
		wp.maxLen = max(wp.maxLen, len(tok))
		if rest, ok := strings.CutPrefix(tok, wp.prefix); ok {
			wp.cont[rest] = id
			wp.maxContLen = max(wp.maxContLen, len(rest))
		}
	}
	t.model = wp
	return nil
}

func (t *Tokenizer) parseAddedTokens(list []addedTokenJSON) error {
	t.addedByContent = make(map[string]*addedToken, len(list))
	t.addedByID = make(map[int64]*addedToken, len(list))
	t.specials = make(map[string]bool)
	var raw, norm []*addedToken
	for _, a := range list {
		if a.Content == "" {
			continue
		}
		if a.ID < 0 {
			return fmt.Errorf("tokenizer: added token has a negative id (%d)", a.ID)
		}
		normalized := !a.Special
		if a.Normalized != nil {
			normalized = *a.Normalized
		}
		tok := &addedToken{
			id: a.ID, content: a.Content, decoded: a.Content, pattern: a.Content,
			singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip,
			normalized: normalized, special: a.Special,
		}
		if normalized && len(t.norm) > 0 {
			// HF matches normalized added tokens against normalized text and decodes them
			// to their normalized form.
			tok.pattern = t.norm.normalizeString(a.Content)
			tok.decoded = tok.pattern
		}
		t.addedByContent[a.Content] = tok
		t.addedByID[a.ID] = tok
		if a.Special {
			t.specials[a.Content] = true
		}
		if tok.pattern == "" {
			continue
		}
		if normalized {
			norm = append(norm, tok)
		} else {
			raw = append(raw, tok)
		}
	}
	t.rawMatcher = newMatcher(raw)
	t.normMatcher = newMatcher(norm)
	return nil
}

func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	typ, err := componentType(raw, "post_processor")
	if err != nil {
		return err
	}
	switch typ {
	case "TemplateProcessing":
		var tp templateJSON
		if err := json.Unmarshal(raw, &tp); err != nil {
			return fmt.Errorf("tokenizer: invalid TemplateProcessing: %w", err)
		}
		seen := false
		prefix, suffix := []int64{}, []int64{}
		for i, piece := range tp.Single {
			switch {
			case piece.Sequence != nil:
				if seen || piece.Sequence.ID != "A" {
					return fmt.Errorf("tokenizer: TemplateProcessing single template piece %d: only one $A sequence is supported", i)
				}
				seen = true
			case piece.SpecialToken != nil:
				st, ok := tp.SpecialTokens[piece.SpecialToken.ID]
				if !ok {
					return fmt.Errorf("tokenizer: TemplateProcessing single template piece %d names a special token missing from special_tokens", i)
				}
				if seen {
					suffix = append(suffix, st.IDs...)
				} else {
					prefix = append(prefix, st.IDs...)
				}
			default:
				return fmt.Errorf("tokenizer: TemplateProcessing single template piece %d is neither SpecialToken nor Sequence", i)
			}
		}
		if !seen {
			return errors.New("tokenizer: TemplateProcessing single template has no $A sequence")
		}
		t.prefix, t.suffix = prefix, suffix
	case "BertProcessing":
		var bp bertProcessingJSON
		if err := json.Unmarshal(raw, &bp); err != nil {
			return fmt.Errorf("tokenizer: invalid BertProcessing: %w", err)
		}
		cls, err := processingID(bp.Cls, "cls")
		if err != nil {
			return err
		}
		sep, err := processingID(bp.Sep, "sep")
		if err != nil {
			return err
		}
		t.prefix, t.suffix = []int64{cls}, []int64{sep}
	default:
		return unsupported("post_processor", typ, supportedProcessors)
	}
	t.hasPost = true
	return nil
}

// processingID reads the id out of BertProcessing's ["[CLS]", 101] pairs.
func processingID(pair []json.RawMessage, name string) (int64, error) {
	var id int64
	if len(pair) != 2 || json.Unmarshal(pair[1], &id) != nil {
		return 0, fmt.Errorf("tokenizer: BertProcessing %s must be a [token, id] pair", name)
	}
	return id, nil
}

func (t *Tokenizer) parseDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	typ, err := componentType(raw, "decoder")
	if err != nil {
		return err
	}
	if typ != "WordPiece" {
		return unsupported("decoder", typ, supportedDecoders)
	}
	var d wordPieceDecoderJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("tokenizer: invalid WordPiece decoder: %w", err)
	}
	dec := &wordPieceDecoder{prefix: "##", cleanup: true}
	if d.Prefix != nil {
		dec.prefix = *d.Prefix
	}
	if d.Cleanup != nil {
		dec.cleanup = *d.Cleanup
	}
	t.decoder = dec
	return nil
}

// choosePadID prefers the padding section's id, then its token, then "[PAD]", then 0.
func (t *Tokenizer) choosePadID(f fileJSON) int64 {
	if f.Padding != nil {
		if f.Padding.PadID != nil {
			return *f.Padding.PadID
		}
		if id, ok := t.TokenID(f.Padding.PadToken); ok && f.Padding.PadToken != "" {
			return id
		}
	}
	if id, ok := t.TokenID("[PAD]"); ok {
		return id
	}
	return 0
}
