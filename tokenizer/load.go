package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// RobertaProcessing only.
	TrimOffsets    *bool `json:"trim_offsets"`
	AddPrefixSpace *bool `json:"add_prefix_space"`
}

// byteLevelJSON is the ByteLevel pre-tokenizer, post-processor or decoder; each reads the
// fields it needs. HF's defaults for missing fields are all true.
type byteLevelJSON struct {
	AddPrefixSpace *bool `json:"add_prefix_space"`
	TrimOffsets    *bool `json:"trim_offsets"`
	UseRegex       *bool `json:"use_regex"`
}

func orTrue(p *bool) bool { return p == nil || *p }

type wordPieceDecoderJSON struct {
	Prefix  *string `json:"prefix"`
	Cleanup *bool   `json:"cleanup"`
}

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
			n = append(n, normOp{step: stepClean})
		}
		if def(b.HandleChineseChars, true) {
			n = append(n, normOp{step: stepChinese})
		}
		if strip {
			n = append(n, ops(stepNFD, stepBertMarks)...)
		}
		if lowercase {
			n = append(n, normOp{step: stepLower})
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
		return ops(stepNFD), nil
	case "NFC":
		return ops(stepNFC), nil
	case "NFKD":
		return ops(stepNFKD), nil
	case "NFKC":
		return ops(stepNFKC), nil
	case "Lowercase":
		return ops(stepLower), nil
	case "StripAccents":
		return ops(stepMarks), nil
	case "Precompiled":
		var p struct {
			Charsmap *string `json:"precompiled_charsmap"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.Charsmap == nil {
			return nil, errors.New("tokenizer: invalid Precompiled normalizer: precompiled_charsmap must be a string")
		}
		pre, err := parsePrecompiled(*p.Charsmap)
		if err != nil {
			return nil, err
		}
		return normalizer{{step: stepPrecompiled, pre: pre}}, nil
	case "Replace":
		rp, err := parseReplace(raw, "normalizer")
		if err != nil {
			return nil, err
		}
		return normalizer{{step: stepReplace, rep: rp}}, nil
	case "Strip":
		var st struct {
			Left  *bool `json:"strip_left"`
			Right *bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid Strip normalizer: %w", err)
		}
		return normalizer{{step: stepStrip, left: orTrue(st.Left), right: orTrue(st.Right)}}, nil
	case "Prepend":
		var pp struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &pp); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid Prepend normalizer: %w", err)
		}
		return normalizer{{step: stepPrepend, prepend: []rune(pp.Prepend)}}, nil
	default:
		return nil, unsupported("normalizer", typ, supportedNormalizers)
	}
}

func (t *Tokenizer) parsePreTokenizer(raw json.RawMessage) error {
	if isNull(raw) {
		// Only SentencePiece BPE (Llama) does without; parseModel refuses it for the rest.
		t.noPreTokenizer = true
		return nil
	}
	typ, err := componentType(raw, "pre_tokenizer")
	if err != nil {
		return err
	}
	if typ == "Sequence" {
		// Converters wrap a single pre-tokenizer in a Sequence (DeBERTa-v3's Metaspace).
		var seq struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return fmt.Errorf("tokenizer: invalid Sequence pre_tokenizer: %w", err)
		}
		if len(seq.PreTokenizers) == 1 {
			return t.parsePreTokenizer(seq.PreTokenizers[0])
		}
		return t.parseStages(raw)
	}
	switch typ {
	case "WhitespaceSplit", "Whitespace", "CharDelimiterSplit", "Punctuation", "Digits", "Split":
		return t.parseStages(raw)
	case "BertPreTokenizer":
	case "Metaspace":
		ms, err := parseMetaspace(raw, "pre_tokenizer")
		if err != nil {
			return err
		}
		t.metaspace = ms
	case "ByteLevel":
		var b byteLevelJSON
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("tokenizer: invalid ByteLevel pre_tokenizer: %w", err)
		}
		t.byteLevel = &byteLevelPre{addPrefixSpace: orTrue(b.AddPrefixSpace), useRegex: orTrue(b.UseRegex)}
	default:
		return unsupported("pre_tokenizer", typ, supportedPreTokenizers)
	}
	return nil
}

func (t *Tokenizer) parseStages(raw json.RawMessage) error {
	stages, err := parseStages(raw)
	if err != nil {
		return err
	}
	if n := len(stages); n > 0 && stages[n-1].kind == stageByteLevel {
		// Llama-3 and Qwen split with their own regex, then hand each piece to a ByteLevel
		// that only spells its bytes: the byte-level BPE model does that spelling.
		stages, t.byteLevelLast = stages[:n-1], true
		if len(stages) == 0 {
			t.byteLevel = &byteLevelPre{}
			return nil
		}
	}
	for _, st := range stages {
		if st.kind == stageByteLevel {
			return errors.New("tokenizer: pre_tokenizer ByteLevel in a Sequence is supported only as its last step")
		}
	}
	if len(stages) == 0 {
		// An empty Sequence leaves each stretch of text whole.
		t.noPreTokenizer = true
		return nil
	}
	t.stages = stages
	return nil
}

func (t *Tokenizer) parseModel(raw json.RawMessage) error {
	if isNull(raw) {
		return errors.New("tokenizer: model section is missing")
	}
	typ, err := componentType(raw, "model")
	if err != nil {
		return err
	}
	if t.noPreTokenizer && typ != "BPE" && typ != "Unigram" && t.stages == nil {
		return fmt.Errorf("tokenizer: pre_tokenizer is missing (supported: %s)", supportedPreTokenizers)
	}
	if typ == "Unigram" {
		if t.byteLevel != nil || t.byteLevelLast {
			return errors.New("tokenizer: model Unigram with pre_tokenizer ByteLevel is not supported")
		}
		if t.metaspace == nil && t.stages == nil && !t.noPreTokenizer {
			return errors.New("tokenizer: model Unigram with pre_tokenizer BertPreTokenizer is not supported")
		}
		u, err := parseUnigram(raw)
		if err != nil {
			return err
		}
		t.unigram, t.wordModel, t.vocab = u, u, u.vocab
		t.byID = make(map[int64]string, len(u.pieces))
		for id, tok := range u.pieces {
			t.byID[int64(id)] = tok
		}
		return nil
	}
	var m wordPieceJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("tokenizer: invalid model section: %w", err)
	}
	if typ == "" {
		// Old files leave the type out; HF then tells models apart by their fields.
		switch {
		case !isNull(m.Merges):
			typ = "BPE"
		case m.ContinuingSubwordPrefix != nil:
			typ = "WordPiece"
		default:
			return errors.New("tokenizer: model has no type and looks like neither WordPiece nor BPE (supported: " + supportedModels + ")")
		}
	}
	switch typ {
	case "WordPiece":
		if t.byteLevel != nil || t.byteLevelLast {
			return errors.New("tokenizer: model WordPiece with pre_tokenizer ByteLevel is not supported (WordPiece needs BertPreTokenizer)")
		}
		if t.metaspace != nil {
			return errors.New("tokenizer: model WordPiece with pre_tokenizer Metaspace is not supported (WordPiece needs BertPreTokenizer)")
		}
		return t.parseWordPiece(m)
	case "BPE":
		if t.byteLevel == nil && t.metaspace == nil && !t.noPreTokenizer && t.stages == nil {
			return errors.New("tokenizer: model BPE with pre_tokenizer BertPreTokenizer is not supported (BPE needs ByteLevel, Metaspace or none)")
		}
		bpe, err := parseBPE(raw)
		if err != nil {
			return err
		}
		bpe.byteLevel = t.byteLevel != nil || t.byteLevelLast
		if bpe.byteLevel && bpe.byteFallback {
			return errors.New("tokenizer: BPE byte_fallback with pre_tokenizer ByteLevel is not supported")
		}
		t.bpe, t.wordModel, t.vocab = bpe, bpe, bpe.vocab
		t.byID = make(map[int64]string, len(bpe.vocab))
		for tok, id := range bpe.vocab {
			if prev, dup := t.byID[id]; !dup || tok < prev {
				t.byID[id] = tok
			}
		}
		return nil
	default:
		return unsupported("model", typ, supportedModels)
	}
}

func (t *Tokenizer) parseWordPiece(m wordPieceJSON) error {
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
	t.wordModel = &t.model
	t.vocab, t.byID = wp.vocab, wp.byID
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
		cls, err := processingID(bp.Cls, typ, "cls")
		if err != nil {
			return err
		}
		sep, err := processingID(bp.Sep, typ, "sep")
		if err != nil {
			return err
		}
		t.prefix, t.suffix = []int64{cls}, []int64{sep}
	case "RobertaProcessing":
		var rp bertProcessingJSON
		if err := json.Unmarshal(raw, &rp); err != nil {
			return fmt.Errorf("tokenizer: invalid RobertaProcessing: %w", err)
		}
		cls, err := processingID(rp.Cls, typ, "cls")
		if err != nil {
			return err
		}
		sep, err := processingID(rp.Sep, typ, "sep")
		if err != nil {
			return err
		}
		t.prefix, t.suffix = []int64{cls}, []int64{sep}
		if orTrue(rp.TrimOffsets) {
			t.trimOffsets = &offsetTrim{addPrefixSpace: orTrue(rp.AddPrefixSpace)}
		}
	case "ByteLevel":
		// Adds no tokens; it only trims offsets, when asked to.
		var b byteLevelJSON
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("tokenizer: invalid ByteLevel post_processor: %w", err)
		}
		if t.prefix == nil {
			t.prefix, t.suffix = []int64{}, []int64{}
		}
		if orTrue(b.TrimOffsets) {
			t.trimOffsets = &offsetTrim{addPrefixSpace: orTrue(b.AddPrefixSpace)}
		}
	case "Sequence":
		// Llama-3.1's: a ByteLevel that trims offsets (or not) and a template that adds
		// <|begin_of_text|>; each part does what it does alone. Two parts that both add
		// tokens would add both sets, which one template here cannot hold.
		var seq struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return fmt.Errorf("tokenizer: invalid Sequence post_processor: %w", err)
		}
		adders := 0
		for _, p := range seq.Processors {
			if sub, err := componentType(p, "post_processor"); err == nil && sub != "ByteLevel" {
				adders++
			}
			if err := t.parsePostProcessor(p); err != nil {
				return err
			}
		}
		if adders > 1 {
			return errors.New("tokenizer: a Sequence post_processor with more than one part that adds tokens is not supported")
		}
	default:
		return unsupported("post_processor", typ, supportedProcessors)
	}
	t.hasPost = true
	return nil
}

// processingID reads the id out of BertProcessing's and RobertaProcessing's ["[CLS]", 101]
// pairs.
func processingID(pair []json.RawMessage, typ, name string) (int64, error) {
	var id int64
	if len(pair) != 2 || json.Unmarshal(pair[1], &id) != nil {
		return 0, fmt.Errorf("tokenizer: %s %s must be a [token, id] pair", typ, name)
	}
	return id, nil
}

// countSpaces records, for offset trimming, how many whitespace characters each vocab
// entry starts and ends with (added tokens are counted by what they match, as they are
// found). Ids index a slice when they are dense, as in every real vocab.
func (t *Tokenizer) countSpaces() {
	maxID := int64(-1)
	for _, id := range t.vocab {
		maxID = max(maxID, id)
	}
	dense := maxID < int64(2*len(t.vocab)+1024)
	if dense {
		t.spaces = make([]uint32, maxID+1)
	} else {
		t.spacesSparse = make(map[int64]uint32)
	}
	set := func(id int64, s string) {
		v := countSpaceRuns(s)
		switch {
		case dense:
			t.spaces[id] = v
		case v != 0:
			t.spacesSparse[id] = v
		}
	}
	for id, tok := range t.byID {
		set(id, tok)
	}
}

func (t *Tokenizer) parseDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	d, err := parseDecoder(raw, false)
	if err != nil {
		return err
	}
	t.decoder = d
	return nil
}

// parseDecoder reads one decoder; inSequence asks for one that can be chained.
func parseDecoder(raw json.RawMessage, inSequence bool) (decoder, error) {
	typ, err := componentType(raw, "decoder")
	if err != nil {
		return nil, err
	}
	var d decoder
	switch typ {
	case "ByteLevel":
		d = byteLevelDecoder{}
	case "Metaspace":
		ms, err := parseMetaspace(raw, "decoder")
		if err != nil {
			return nil, err
		}
		d = metaspaceDecoder{replacement: ms.replacement, dropFirst: ms.scheme != prependNever}
	case "WordPiece":
		var j wordPieceDecoderJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid WordPiece decoder: %w", err)
		}
		wp := &wordPieceDecoder{prefix: "##", cleanup: true}
		if j.Prefix != nil {
			wp.prefix = *j.Prefix
		}
		if j.Cleanup != nil {
			wp.cleanup = *j.Cleanup
		}
		d = wp
	case "Sequence":
		var j struct {
			Decoders []json.RawMessage `json:"decoders"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid Sequence decoder: %w", err)
		}
		var seq sequenceDecoder
		for _, sub := range j.Decoders {
			part, err := parseDecoder(sub, true)
			if err != nil {
				return nil, err
			}
			seq = append(seq, part.(chainDecoder))
		}
		d = seq
	case "Replace":
		rp, err := parseReplace(raw, "decoder")
		if err != nil {
			return nil, err
		}
		return chainOnly{replaceDecoder{rp}}, nil
	case "ByteFallback":
		return chainOnly{byteFallbackDecoder{}}, nil
	case "Fuse":
		return chainOnly{fuseDecoder{}}, nil
	case "Strip":
		var j struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("tokenizer: invalid Strip decoder: %w", err)
		}
		r, size := utf8.DecodeRuneInString(j.Content)
		if size == 0 || size != len(j.Content) || j.Start < 0 || j.Stop < 0 {
			return nil, errors.New("tokenizer: Strip decoder needs one content character and non-negative start and stop")
		}
		return chainOnly{stripDecoder{content: r, start: j.Start, stop: j.Stop}}, nil
	default:
		return nil, unsupported("decoder", typ, supportedDecoders)
	}
	if _, ok := d.(chainDecoder); inSequence && !ok {
		return nil, fmt.Errorf("tokenizer: decoder %s inside a Sequence is not supported", typ)
	}
	return d, nil
}

// chainOnly makes a chaining decoder usable alone: its tokens are joined as HF's decode
// joins them.
type chainOnly struct{ chainDecoder }

func (c chainOnly) decode(tokens []string) string {
	return strings.Join(c.chain(tokens), "")
}

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

// runPattern recognizes "c{n,}" for a character c that is no regex syntax.
var runPattern = regexp.MustCompile(`^([^\\.+*?()|\[\]{}^$])\{([0-9]+),\}$`)

// parseReplace reads a Replace normalizer or decoder: a pattern that is either a literal
// ({"String": ...}) or a regex ({"Regex": ...}), and the content that replaces each match.
// Regexes run on Go's RE2 after compileHFRegex gives \s and \d HF's Unicode meaning; RE2
// agrees with HF's Oniguruma on leftmost-first matching, and patterns it cannot run, or
// whose classes would differ, fail Load.
func parseReplace(raw json.RawMessage, what string) (*replacer, error) {
	var r struct {
		Pattern struct {
			String *string `json:"String"`
			Regex  *string `json:"Regex"`
		} `json:"pattern"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid Replace %s: %w", what, err)
	}
	rp := &replacer{content: []rune(r.Content)}
	switch {
	case r.Pattern.String != nil:
		rp.literal = *r.Pattern.String
	case r.Pattern.Regex != nil:
		h, err := compileHFRegex(*r.Pattern.Regex)
		if err == nil && h.spaceRun != 0 {
			err = errors.New("a look-ahead")
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: Replace %s regex is not supported: %w", what, err)
		}
		re := h.re
		rp.re = re
		prefix, _ := re.LiteralPrefix()
		rp.prefix = []byte(prefix)
		if m := runPattern.FindStringSubmatch(*r.Pattern.Regex); m != nil {
			if n, err := strconv.Atoi(m[2]); err == nil && n > 0 && n < 1<<16 {
				rp.run, _ = utf8.DecodeRuneInString(m[1])
				rp.runMin = n
			}
		}
	default:
		return nil, fmt.Errorf("tokenizer: Replace %s pattern must be String or Regex", what)
	}
	return rp, nil
}
