package models

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// MaxPositions is the longest position table a model may declare (max_position_embeddings):
// about a million, past every model of these kinds, and small enough that what is sized by it
// fits in memory.
const MaxPositions = 1 << 20

// Config is the part of a HuggingFace config.json the server needs.
type Config struct {
	ModelType             string
	Architectures         []string
	Labels                []string // Labels[i] is id2label[i]; nil for models without labels
	MaxPositionEmbeddings int
	// MaxLength is the longest token sequence the model takes, specials included: the
	// position table less the rows RoBERTa-style models reserve below their first position,
	// lowered to tokenizer_config.json's model_max_length when that is smaller.
	MaxLength int
	// PadTokenID is config.json's pad_token_id (-1 when it has none).
	PadTokenID int64
	VocabSize  int
	// TypeVocabSize is config.json's type_vocab_size: how many token types the model has
	// (BERT's 2, a query and a passage; 0 when it does not say).
	TypeVocabSize int
	// Decoder geometry (zero for encoders).
	NumLayers int
	NumHeads  int
	// NumKVHeads is how many key/value heads the KV cache holds per layer: fewer than
	// NumHeads for grouped-query attention (Llama, Mistral, Qwen), NumHeads otherwise.
	NumKVHeads int
	HeadDim    int
	// EOSTokenID is config.json's eos_token_id (-1 when it has none); where it is a list
	// (Llama 3's), its first, and EOSTokenIDs all of them.
	EOSTokenID  int64
	EOSTokenIDs []int64
	BOSTokenID  int64
	// Quantize is config.json's sluice.quantize: "int8" when the model asks to run with int8
	// matrix products on the CPU, "" otherwise.
	Quantize string
	// CRF holds the transition scores of a token classifier trained with a CRF layer
	// (config.json's sluice.crf_transitions, written by models/train); nil for others.
	CRF *CRFTransitions
}

// CRFTransitions are a CRF's label-to-label scores, each [labels][labels]: Touching
// between tokens with nothing between them, Break across a line break or a tab, Spaced
// across any other gap. Break is optional (configs written before it have none).
type CRFTransitions struct {
	Spaced   [][]float64 `json:"spaced"`
	Touching [][]float64 `json:"touching"`
	Break    [][]float64 `json:"break,omitempty"`
}

type rawConfig struct {
	ModelType             string            `json:"model_type"`
	Architectures         []string          `json:"architectures"`
	ID2Label              map[string]string `json:"id2label"`
	MaxPositionEmbeddings int               `json:"max_position_embeddings"`
	NPositions            int               `json:"n_positions"`
	VocabSize             int               `json:"vocab_size"`
	TypeVocabSize         int               `json:"type_vocab_size"`
	NumHiddenLayers       int               `json:"num_hidden_layers"`
	NLayer                int               `json:"n_layer"`
	NumAttentionHeads     int               `json:"num_attention_heads"`
	NumKeyValueHeads      int               `json:"num_key_value_heads"`
	NHead                 int               `json:"n_head"`
	HiddenSize            int               `json:"hidden_size"`
	NEmbd                 int               `json:"n_embd"`
	HeadDim               int               `json:"head_dim"`
	EOSTokenID            tokenIDs          `json:"eos_token_id"`
	PadTokenID            tokenIDs          `json:"pad_token_id"`
	BOSTokenID            tokenIDs          `json:"bos_token_id"`
	Sluice                struct {
		CRF      *CRFTransitions `json:"crf_transitions"`
		Quantize string          `json:"quantize"`
	} `json:"sluice"`
}

// ParseConfig reads config.json. id2label must map every id 0..n-1 exactly once.
func ParseConfig(data []byte) (Config, error) {
	var raw rawConfig
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("config.json: %w", err)
	}
	cfg := Config{
		ModelType:             raw.ModelType,
		Architectures:         raw.Architectures,
		MaxPositionEmbeddings: firstPositive(raw.MaxPositionEmbeddings, raw.NPositions),
		VocabSize:             raw.VocabSize,
		TypeVocabSize:         raw.TypeVocabSize,
		NumLayers:             firstPositive(raw.NumHiddenLayers, raw.NLayer),
		NumHeads:              firstPositive(raw.NumAttentionHeads, raw.NHead),
		HeadDim:               raw.HeadDim,
		EOSTokenID:            -1,
		BOSTokenID:            -1,
		PadTokenID:            -1,
	}
	if len(raw.PadTokenID) > 0 {
		cfg.PadTokenID = raw.PadTokenID[0]
	}
	if len(raw.EOSTokenID) > 0 {
		cfg.EOSTokenID, cfg.EOSTokenIDs = raw.EOSTokenID[0], raw.EOSTokenID
	}
	if len(raw.BOSTokenID) > 0 {
		cfg.BOSTokenID = raw.BOSTokenID[0]
	}
	cfg.NumKVHeads = firstPositive(raw.NumKeyValueHeads, cfg.NumHeads)
	if hidden := firstPositive(raw.HiddenSize, raw.NEmbd); cfg.HeadDim == 0 && hidden > 0 && cfg.NumHeads > 0 {
		cfg.HeadDim = hidden / cfg.NumHeads
	}
	if len(raw.ID2Label) > 0 {
		labels, err := labelList(raw.ID2Label)
		if err != nil {
			return Config{}, err
		}
		cfg.Labels = labels
	}
	switch q := raw.Sluice.Quantize; q {
	case "", "off":
	case "int8":
		cfg.Quantize = q
	default:
		return Config{}, fmt.Errorf("config.json: sluice.quantize is %q; it takes int8 or off", q)
	}
	if crf := raw.Sluice.CRF; crf != nil {
		if err := crf.check(len(cfg.Labels)); err != nil {
			return Config{}, err
		}
		cfg.CRF = crf
	}
	if cfg.MaxPositionEmbeddings <= 0 {
		return Config{}, fmt.Errorf("config.json: max_position_embeddings is missing or not positive")
	}
	if cfg.MaxPositionEmbeddings > MaxPositions {
		// Buffers are sized by it before any text comes (the warm-up's rows, the KV pool).
		return Config{}, fmt.Errorf("config.json: max_position_embeddings %d is over %d, the most Sluice serves", cfg.MaxPositionEmbeddings, MaxPositions)
	}
	cfg.MaxLength = cfg.MaxPositionEmbeddings
	if offsetPositions[cfg.ModelType] {
		// Positions count from pad_token_id+1 (HF's create_position_ids_from_input_ids), so
		// the rows below it are never a position: 514 rows hold 512 tokens.
		pad := cfg.PadTokenID
		if pad < 0 {
			pad = 1 // RoBERTa's, when config.json names none
		}
		cfg.MaxLength -= int(min(pad, int64(cfg.MaxPositionEmbeddings))) + 1
		if cfg.MaxLength <= 0 {
			return Config{}, fmt.Errorf("config.json: max_position_embeddings %d leaves no positions after pad_token_id %d", cfg.MaxPositionEmbeddings, cfg.PadTokenID)
		}
	}
	return cfg, nil
}

// offsetPositions are the model types whose position ids start after the padding index.
var offsetPositions = map[string]bool{
	"roberta": true, "xlm-roberta": true, "xlm-roberta-xl": true, "camembert": true,
	"longformer": true, "data2vec-text": true, "mpnet": true, "ibert": true,
}

// tokenizerConfig is the part of tokenizer_config.json the server reads.
type tokenizerConfig struct {
	ModelMaxLength *float64 `json:"model_max_length"`
}

// applyTokenizerConfig lowers cfg.MaxLength to model_max_length when the file sets a smaller
// one. HF writes a huge number (1e30) for "no limit", which leaves the model's own.
func (cfg *Config) applyTokenizerConfig(data []byte) error {
	var tc tokenizerConfig
	if err := json.Unmarshal(data, &tc); err != nil {
		return fmt.Errorf("tokenizer_config.json: %w", err)
	}
	if tc.ModelMaxLength == nil {
		return nil
	}
	switch n := *tc.ModelMaxLength; {
	case !(n >= 1):
		return fmt.Errorf("tokenizer_config.json: model_max_length must be positive")
	case n >= float64(cfg.MaxLength):
	case n != math.Trunc(n):
		return fmt.Errorf("tokenizer_config.json: model_max_length must be a whole number")
	default:
		cfg.MaxLength = int(n)
	}
	return nil
}

func labelList(id2label map[string]string) ([]string, error) {
	ids := make([]int, 0, len(id2label))
	byID := make(map[int]string, len(id2label))
	for k, v := range id2label {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("config.json: id2label key %q is not a non-negative integer", k)
		}
		ids = append(ids, id)
		byID[id] = v
	}
	sort.Ints(ids)
	labels := make([]string, len(ids))
	for i, id := range ids {
		if id != i {
			return nil, fmt.Errorf("config.json: id2label has no entry for id %d", i)
		}
		labels[i] = byID[id]
	}
	return labels, nil
}

func firstPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// check requires every matrix given to be square over the model's labels.
func (t *CRFTransitions) check(labels int) error {
	if labels == 0 {
		return fmt.Errorf("config.json: sluice.crf_transitions given for a model without id2label")
	}
	matrices := map[string][][]float64{"spaced": t.Spaced, "touching": t.Touching}
	if t.Break != nil {
		matrices["break"] = t.Break
	}
	for name, m := range matrices {
		if len(m) != labels {
			return fmt.Errorf("config.json: sluice.crf_transitions.%s has %d rows for %d labels", name, len(m), labels)
		}
		for _, row := range m {
			if len(row) != labels {
				return fmt.Errorf("config.json: sluice.crf_transitions.%s has a row of %d for %d labels", name, len(row), labels)
			}
		}
	}
	return nil
}

// tokenIDs is a token id field that HF writes as a number, a list of them (Llama 3's
// eos_token_id) or null.
type tokenIDs []int64

func (t *tokenIDs) UnmarshalJSON(data []byte) error {
	var one *int64
	if err := json.Unmarshal(data, &one); err == nil {
		if *t = nil; one != nil {
			*t = tokenIDs{*one}
		}
		return nil
	}
	var list []*int64
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("a token id must be a number or a list of numbers")
	}
	*t = nil
	for _, id := range list {
		if id != nil { // a null in the list is no id, not token 0
			*t = append(*t, *id)
		}
	}
	return nil
}

// GenerationDefaults are the parts of generation_config.json the server uses.
type GenerationDefaults struct {
	// MaxNewTokens is the default limit of generated tokens (0: the file sets none).
	MaxNewTokens int `json:"max_new_tokens"`
	// EOSTokenIDs are the file's ends of sequence, which HF's generate and vLLM end a
	// generation at beside config.json's (a chat model's end of turn, often).
	EOSTokenIDs tokenIDs `json:"eos_token_id"`
}

// ParseGeneration reads generation_config.json; empty data gives the zero defaults.
func ParseGeneration(data []byte) (GenerationDefaults, error) {
	var g GenerationDefaults
	if len(data) == 0 {
		return g, nil
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return g, fmt.Errorf("generation_config.json: %w", err)
	}
	if g.MaxNewTokens < 0 {
		return g, fmt.Errorf("generation_config.json: max_new_tokens is negative")
	}
	return g, nil
}
