package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Post-processors decide the template ids Encode puts around the text (prefix, suffix),
// whether offsets are trimmed (trimOffsets), and how two sequences are joined (pair: a
// cross-encoder's query and passage, with their token types).

// parsePostProcessor reads the post_processor section, or one part of a Sequence.
func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	typ, err := componentType(raw, "post_processor")
	if err != nil {
		return err
	}
	parse := postProcessorParser(typ)
	if parse == nil {
		return unsupported("post_processor", typ, supportedProcessors)
	}
	if err := parse(t, raw); err != nil {
		return err
	}
	t.hasPost = true
	return nil
}

// postProcessorParser returns the parse of a post-processor type, or nil when it is not
// supported.
func postProcessorParser(typ string) func(*Tokenizer, json.RawMessage) error {
	switch typ {
	case "TemplateProcessing":
		return (*Tokenizer).parseTemplateProcessing
	case "BertProcessing":
		return (*Tokenizer).parseBertProcessing
	case "RobertaProcessing":
		return (*Tokenizer).parseRobertaProcessing
	case "ByteLevel":
		return (*Tokenizer).parseByteLevelProcessor
	case "Sequence":
		return (*Tokenizer).parseSequenceProcessor
	}
	return nil
}

type templatePiece struct {
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID int64  `json:"type_id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID     string `json:"id"`
		TypeID int64  `json:"type_id"`
	} `json:"Sequence"`
}

type templateJSON struct {
	Single        []templatePiece `json:"single"`
	Pair          []templatePiece `json:"pair"`
	SpecialTokens map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"`
}

// parseTemplateProcessing reads HF's TemplateProcessing: the special tokens of its single
// template before $A become the prefix, those after it the suffix.
func (t *Tokenizer) parseTemplateProcessing(raw json.RawMessage) error {
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
	t.pair = nil
	if p, ok := pairOf(tp); ok {
		t.pair = &p
	}
	return nil
}

// pairOf reads a TemplateProcessing's pair template of the one shape a pair is joined by
// (specials, $A, specials, $B, specials); false for none or another shape, which Pair then
// does not claim to know.
func pairOf(tp templateJSON) (PairTemplate, bool) {
	var p PairTemplate
	part := 0 // 0 before A, 1 between, 2 after B
	for _, piece := range tp.Pair {
		switch {
		case piece.Sequence != nil && piece.Sequence.ID == "A" && part == 0:
			p.TypeA, part = piece.Sequence.TypeID, 1
		case piece.Sequence != nil && piece.Sequence.ID == "B" && part == 1:
			p.TypeB, part = piece.Sequence.TypeID, 2
		case piece.SpecialToken != nil:
			st, ok := tp.SpecialTokens[piece.SpecialToken.ID]
			if !ok {
				return PairTemplate{}, false
			}
			ids, types := &p.Before, &p.BeforeTypes
			if part == 1 {
				ids, types = &p.Between, &p.BetweenTypes
			} else if part == 2 {
				ids, types = &p.After, &p.AfterTypes
			}
			for _, id := range st.IDs {
				*ids, *types = append(*ids, id), append(*types, piece.SpecialToken.TypeID)
			}
		default:
			return PairTemplate{}, false
		}
	}
	return p, part == 2
}

type bertProcessingJSON struct {
	Sep []json.RawMessage `json:"sep"`
	Cls []json.RawMessage `json:"cls"`
	// RobertaProcessing only.
	TrimOffsets    *bool `json:"trim_offsets"`
	AddPrefixSpace *bool `json:"add_prefix_space"`
}

// parseBertProcessing reads HF's BertProcessing: [CLS] text [SEP].
func (t *Tokenizer) parseBertProcessing(raw json.RawMessage) error {
	_, err := t.parseClsSep(raw, "BertProcessing")
	return err
}

// parseRobertaProcessing reads HF's RobertaProcessing: BertProcessing's template, and
// offset trimming unless trim_offsets is false.
func (t *Tokenizer) parseRobertaProcessing(raw json.RawMessage) error {
	rp, err := t.parseClsSep(raw, "RobertaProcessing")
	if err != nil {
		return err
	}
	if orTrue(rp.TrimOffsets) {
		t.trimOffsets = &offsetTrim{addPrefixSpace: orTrue(rp.AddPrefixSpace)}
	}
	return nil
}

// parseClsSep sets the template of BertProcessing and RobertaProcessing (typ) from their
// cls and sep, and returns what it read for RobertaProcessing's other fields.
func (t *Tokenizer) parseClsSep(raw json.RawMessage, typ string) (bertProcessingJSON, error) {
	var bp bertProcessingJSON
	if err := json.Unmarshal(raw, &bp); err != nil {
		return bp, fmt.Errorf("tokenizer: invalid %s: %w", typ, err)
	}
	cls, err := processingID(bp.Cls, typ, "cls")
	if err != nil {
		return bp, err
	}
	sep, err := processingID(bp.Sep, typ, "sep")
	if err != nil {
		return bp, err
	}
	t.prefix, t.suffix = []int64{cls}, []int64{sep}
	// [CLS] A [SEP] B [SEP], B and its [SEP] of type 1; RoBERTa's <s> A </s></s> B </s>, of
	// type 0 throughout (its models have one token type).
	t.pair = &PairTemplate{Before: []int64{cls}, BeforeTypes: []int64{0}, Between: []int64{sep}, BetweenTypes: []int64{0},
		After: []int64{sep}, AfterTypes: []int64{1}, TypeB: 1}
	if typ == "RobertaProcessing" {
		t.pair = &PairTemplate{Before: []int64{cls}, BeforeTypes: []int64{0}, Between: []int64{sep, sep}, BetweenTypes: []int64{0, 0},
			After: []int64{sep}, AfterTypes: []int64{0}}
	}
	return bp, nil
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

// parseSequenceProcessor reads HF's Sequence post-processor. Llama-3.1's is a ByteLevel
// that trims offsets (or not) and a template that adds <|begin_of_text|>; each part does
// what it does alone. Two parts that both add tokens would add both sets, which one
// template here cannot hold.
func (t *Tokenizer) parseSequenceProcessor(raw json.RawMessage) error {
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
	return nil
}

// PairTemplate is how the post-processor joins two sequences into one input (a
// cross-encoder's query and passage): the ids before A, between A and B and after B, each
// with its token type, and the types of A's and B's own tokens.
type PairTemplate struct {
	Before, Between, After                []int64
	BeforeTypes, BetweenTypes, AfterTypes []int64
	TypeA, TypeB                          int64
}

// Pair is the pair template; false when the post-processor writes one this package does not
// read (a TemplateProcessing pair of another shape). A tokenizer without a post-processor
// joins two sequences with nothing between them.
func (t *Tokenizer) Pair() (PairTemplate, bool) {
	switch {
	case !t.hasPost:
		return PairTemplate{TypeB: 1}, true // HF types the second sequence 1 whatever joins it
	case t.pair == nil:
		return PairTemplate{}, false
	}
	p := *t.pair
	for _, s := range []*[]int64{&p.Before, &p.Between, &p.After, &p.BeforeTypes, &p.BetweenTypes, &p.AfterTypes} {
		*s = slices.Clone(*s)
	}
	return p, true
}
