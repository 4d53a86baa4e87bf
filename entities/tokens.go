package entities

import "fmt"

// Tokens is the part of a tokenizer's output that post-processing needs. It has the same
// fields, in the same order, as tokenizer.Encoding, so entities.Tokens(enc) converts one
// without this package depending on the tokenizer.
//
// Encode the text WITHOUT special tokens for windowing; Special may then be nil. When a
// Special entry is true the token is skipped by decoding, as HF skips special tokens.
type Tokens struct {
	// IDs are vocabulary ids. Decoding only reads them to recognise the unknown token
	// (see DecoderConfig.UnknownID); windowing copies them into model rows.
	IDs []int64
	// Offsets are [start, end) BYTE offsets of each token into the text.
	Offsets [][2]int
	// Special marks special tokens; nil means none.
	Special []bool
	// WordIDs gives the pre-tokenizer word index of each token (-1 for specials). When it
	// is nil, word boundaries fall back to HF's whitespace heuristic.
	WordIDs []int
}

// Len is the number of tokens.
func (t Tokens) Len() int { return len(t.Offsets) }

// validate checks that the parallel slices agree and that offsets lie inside a text of
// textLen bytes. Messages carry counts and indexes only, never content.
func (t Tokens) validate(textLen int) error {
	n := len(t.Offsets)
	if t.IDs != nil && len(t.IDs) != n {
		return fmt.Errorf("entities: %d ids for %d offsets", len(t.IDs), n)
	}
	if t.WordIDs != nil && len(t.WordIDs) != n {
		return fmt.Errorf("entities: %d word ids for %d offsets", len(t.WordIDs), n)
	}
	if t.Special != nil && len(t.Special) != n {
		return fmt.Errorf("entities: %d special flags for %d offsets", len(t.Special), n)
	}
	for i, off := range t.Offsets {
		if off[0] < 0 || off[1] < off[0] || off[1] > textLen {
			return fmt.Errorf("entities: token %d has offsets outside a text of %d bytes", i, textLen)
		}
	}
	return nil
}

func (t Tokens) special(i int) bool { return t.Special != nil && t.Special[i] }
