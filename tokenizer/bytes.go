package tokenizer

import (
	"slices"
	"strings"
)

// TokenBytes is what token id adds to a decoded text that precedes it: a byte-level token's
// own bytes (a piece of a character included), a byte-fallback token's byte, any other token
// as the decoder writes it after a word. False for a special token, an id the vocabulary
// lacks, or a tokenizer without a decoder. Constrained generation follows an answer byte by
// byte with these.
func (t *Tokenizer) TokenBytes(id int64) ([]byte, bool) {
	tok, ok := t.Token(id)
	if !ok || t.IsSpecial(id) || t.decoder == nil {
		return nil, false
	}
	if _, ok := t.decoder.(byteLevelDecoder); ok {
		out := make([]byte, 0, len(tok))
		for _, r := range tok {
			if r >= rune(len(charByte)) || charByte[r] < 0 {
				return []byte(tok), true // not spelled in stand-ins: its own UTF-8, as decode reads it
			}
			out = append(out, byte(charByte[r]))
		}
		return out, true
	}
	if t.fallsBackToBytes() {
		if b, ok := fallbackByte(tok); ok {
			return []byte{b}, true
		}
	}
	// After a word, so that a decoder that strips or joins at the start of a text (Strip,
	// WordPiece's "##") treats the token as it would mid-answer.
	const before = "a"
	rest, ok := strings.CutPrefix(t.decoder.decode([]string{before, tok}), before)
	if !ok {
		return nil, false
	}
	return []byte(rest), true
}

// fallsBackToBytes reports whether the decoder reads <0xXX> tokens as bytes (ByteFallback,
// alone or in a Sequence, where the parse wraps it to decode alone).
func (t *Tokenizer) fallsBackToBytes() bool {
	isFallback := func(d any) bool {
		if c, ok := d.(chainOnly); ok {
			_, ok := c.chainDecoder.(byteFallbackDecoder)
			return ok
		}
		return false
	}
	if seq, ok := t.decoder.(sequenceDecoder); ok {
		return slices.ContainsFunc(seq, func(d chainDecoder) bool { return isFallback(d) })
	}
	return isFallback(t.decoder)
}
