package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Byte-level BPE (GPT-2, RoBERTa, Longformer, ModernBERT) never meets an unknown character:
// every byte of the text is spelled as one of 256 printable characters and the vocabulary
// holds all of them. The table is GPT-2's: printable Latin-1 bytes stand for themselves, the
// rest (controls, space, NBSP, soft hyphen) take the code points from U+0100 on, in byte
// order, so a space reads as 'Ġ' and a newline as 'Ċ'.
var byteChar, charByte = func() (bc [256]rune, cb [0x144]int16) {
	for i := range cb {
		cb[i] = -1
	}
	n := rune(0)
	for b := range 256 {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			bc[b] = rune(b)
		} else {
			bc[b] = 0x100 + n
			n++
		}
		cb[bc[b]] = int16(b)
	}
	return bc, cb
}()

// mappedLen is the UTF-8 length of byte b's stand-in character, the unit HF counts BPE
// offsets in.
func mappedLen(b byte) int32 {
	if b >= 0x21 && b <= 0x7E {
		return 1
	}
	return 2
}

// spaceChar is 'Ġ', the stand-in for ' ': offset trimming treats it as whitespace.
const spaceChar = 0x120

// byteLevelPre is HF's ByteLevel pre-tokenizer: an optional space before each stretch of
// text, then GPT-2's split regex
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// which Go's regexp cannot run (no lookahead), so split matches it by hand; the classes are
// measured from HF's regex engine (tables_bytelevel.go).
type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
}

// byteLevelJSON is the ByteLevel pre-tokenizer, post-processor or decoder; each reads the
// fields it needs. HF's defaults for missing fields are all true.
type byteLevelJSON struct {
	AddPrefixSpace *bool `json:"add_prefix_space"`
	TrimOffsets    *bool `json:"trim_offsets"`
	UseRegex       *bool `json:"use_regex"`
}

// parseByteLevelPre reads a ByteLevel pre-tokenizer that is the whole pre_tokenizer.
func (t *Tokenizer) parseByteLevelPre(raw json.RawMessage) error {
	var b byteLevelJSON
	if err := json.Unmarshal(raw, &b); err != nil {
		return fmt.Errorf("tokenizer: invalid ByteLevel pre_tokenizer: %w", err)
	}
	t.byteLevel = &byteLevelPre{addPrefixSpace: orTrue(b.AddPrefixSpace), useRegex: orTrue(b.UseRegex)}
	return nil
}

// parseByteLevelStage reads a ByteLevel pre-tokenizer of a pipeline. There it may only
// spell bytes: the pipeline's own split stands in for its regex (see byteLevelLast).
func parseByteLevelStage(raw json.RawMessage, _ *stageJSON) ([]preStage, error) {
	var b byteLevelJSON
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid ByteLevel pre_tokenizer: %w", err)
	}
	if orTrue(b.UseRegex) || orTrue(b.AddPrefixSpace) {
		return nil, errors.New("tokenizer: pre_tokenizer ByteLevel in a Sequence is supported only without its regex and prefix space (as Llama-3 and Qwen files have it)")
	}
	return []preStage{{kind: stageByteLevel}}, nil
}

// Character classes of the split regex.
const (
	classOther = iota
	classLetter
	classNumber
	classSpace
)

var asciiRegexClass = func() (c [128]uint8) {
	for r := rune(0); r < 128; r++ {
		c[r] = regexClassSlow(r)
	}
	return c
}()

func regexClass(r rune) uint8 {
	if r < 128 {
		return asciiRegexClass[r]
	}
	return regexClassSlow(r)
}

func regexClassSlow(r rune) uint8 {
	switch {
	case inTable(regexLetterTable, r):
		return classLetter
	case inTable(regexNumberTable, r):
		return classNumber
	case inTable(regexSpaceTable, r):
		return classSpace
	}
	return classOther
}

// contractionEnd returns where the split patterns' first alternative, 's|'t|'re|'ve|'m|'ll|'d,
// matches from chars[i] with letters compared after fold, or i when it does not.
func contractionEnd(chars []nchar, i int, fold func(rune) rune) int {
	n := len(chars)
	if chars[i].r != '\'' || i+1 >= n {
		return i
	}
	switch fold(chars[i+1].r) {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < n && fold(chars[i+2].r) == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < n && fold(chars[i+2].r) == 'l' {
			return i + 3
		}
	}
	return i
}

// splitEnd returns where the regex match that starts at chars[i] ends. Every character is
// covered by some alternative, so matches tile the text and there is nothing in between.
// Alternatives are tried in order and the first that matches wins, as in a backtracking
// engine, not the longest.
func splitEnd(chars []nchar, i int) int {
	n := len(chars)
	c := chars[i].r
	if j := contractionEnd(chars, i, func(r rune) rune { return r }); j > i {
		return j
	}
	class := regexClass(c)
	start := i
	if c == ' ' && i+1 < n {
		// " ?" takes the space along when the next character starts one of the three runs.
		if next := regexClass(chars[i+1].r); next != classSpace {
			class, start = next, i+1
		}
	}
	if class != classSpace {
		j := start + 1
		for j < n && regexClass(chars[j].r) == class {
			j++
		}
		return j
	}
	j := i + 1
	for j < n && regexClass(chars[j].r) == classSpace {
		j++
	}
	if j < n && j-i > 1 {
		// \s+(?!\S): a run followed by a word gives its last space to that word.
		return j - 1
	}
	return j
}

// byteLevelWords pre-tokenizes one stretch of normalized text and BPE-encodes each word.
func (t *Tokenizer) byteLevelWords(enc *tokens, s *scratch, chars []nchar, word *int) {
	if t.byteLevel.addPrefixSpace && chars[0].r != ' ' {
		// HF prepends the space by replacing the first character with " " plus itself, so
		// both carry that character's span of the original text.
		s.prefixed = append(s.prefixed[:0], nchar{r: ' ', start: chars[0].start, end: chars[0].end})
		s.prefixed = append(s.prefixed, chars...)
		chars = s.prefixed
	}
	if !t.byteLevel.useRegex {
		t.bpe.encodeWord(enc, s, chars, *word)
		*word++
		return
	}
	for i := 0; i < len(chars); {
		j := splitEnd(chars, i)
		t.bpe.encodeWord(enc, s, chars[i:j], *word)
		*word++
		i = j
	}
}

// offsetTrim is the offset trimming of the RobertaProcessing and ByteLevel post-processors:
// a token's offsets lose the spaces its spelling starts or ends with.
type offsetTrim struct {
	addPrefixSpace bool
}

// parseByteLevelProcessor reads HF's ByteLevel post-processor. It adds no tokens; it only
// trims offsets, when asked to.
func (t *Tokenizer) parseByteLevelProcessor(raw json.RawMessage) error {
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
	return nil
}

// matchedSpaces gives the whitespace counts of an added token found in the text: HF trims it
// by the text it matched, which includes what lstrip and rstrip took in, not by its content.
type matchedSpaces struct {
	idx    int32 // index among the text's tokens
	spaces uint32
}

// trim adjusts the offsets of body, the tokens of the text without the template's, the way
// HF's process_offsets does. HF counts in characters (its bindings report character
// offsets, converted before post-processing), so moving by n spaces here steps over n
// characters of the original text, not n bytes: they differ when a prefix space stands on a
// multi-byte first character.
func (t *Tokenizer) trim(body tokens, matched []matchedSpaces, text string) {
	for i := range body {
		tok := &body[i]
		var lead, trail int
		if len(matched) > 0 && int(matched[0].idx) == i {
			lead, trail = int(matched[0].spaces>>16), int(matched[0].spaces&0xFFFF)
			matched = matched[1:]
		} else {
			lead, trail = t.spaceRuns(tok.id)
		}
		if lead == 0 && trail == 0 {
			continue
		}
		start, end := int(tok.start), int(tok.end)
		if lead > 0 {
			if lead == 1 && t.trimOffsets.addPrefixSpace && (i == 0 || start == 0) {
				// The one space is the one the pre-tokenizer added; it stays.
				lead = 0
			}
			for ; lead > 0 && start < end; lead-- {
				_, size := utf8.DecodeRuneInString(text[start:])
				start += size
			}
			start = min(start, end)
		}
		if trail > 0 {
			e := end
			for ; trail > 0 && e > 0; trail-- {
				_, size := utf8.DecodeLastRuneInString(text[:e])
				e -= size
			}
			if trail == 0 {
				end = max(e, start)
			}
		}
		tok.start, tok.end = int32(start), int32(end)
	}
}

// spaceRuns counts the whitespace characters ('Ġ' included) that token id's spelling starts
// and ends with.
func (t *Tokenizer) spaceRuns(id int64) (lead, trail int) {
	if id >= 0 && id < int64(len(t.spaces)) {
		v := t.spaces[id]
		return int(v >> 16), int(v & 0xFFFF)
	}
	v := t.spacesSparse[id]
	return int(v >> 16), int(v & 0xFFFF)
}

// countSpaceRuns packs the leading and trailing whitespace counts of s (16 bits each).
func countSpaceRuns(s string) uint32 {
	isWS := func(r rune) bool { return r == spaceChar || isSpace(r) }
	lead, trail := 0, 0
	for _, r := range s {
		if !isWS(r) {
			break
		}
		lead++
	}
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !isWS(r) {
			break
		}
		trail++
		i -= size
	}
	return uint32(min(lead, 0xFFFF))<<16 | uint32(min(trail, 0xFFFF))
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

// byteLevelDecoder is HF's ByteLevel decoder: each token spelled wholly in stand-in
// characters becomes the bytes they stand for, any other token (an added token with a real
// space, say) its own UTF-8; the bytes of all tokens are then read as UTF-8 the way Rust's
// from_utf8_lossy does.
type byteLevelDecoder struct{}

// parseByteLevelDecoder reads HF's ByteLevel decoder, which has no settings.
func parseByteLevelDecoder(json.RawMessage) (decoder, error) { return byteLevelDecoder{}, nil }

func (byteLevelDecoder) decode(tokens []string) string {
	var raw []byte
	for _, tok := range tokens {
		n := len(raw)
		mapped := true
		for _, r := range tok {
			if r >= rune(len(charByte)) || charByte[r] < 0 {
				mapped = false
				break
			}
			raw = append(raw, byte(charByte[r]))
		}
		if !mapped {
			raw = append(raw[:n], tok...)
		}
	}
	return string(appendLossy(make([]byte, 0, len(raw)), raw))
}

// appendLossy appends b with every ill-formed stretch replaced by U+FFFD, one per maximal
// prefix of a well-formed sequence (Unicode's "maximal subpart" practice, which Rust
// follows; Go's utf8 package would give one per byte instead).
func appendLossy(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			dst = append(dst, b[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			dst = append(dst, b[i:i+size]...)
			i += size
			continue
		}
		i += maximalSubpart(b[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// maximalSubpart is the length of the longest prefix of b (at least one byte) that starts a
// well-formed UTF-8 sequence; b is known not to hold a whole one.
func maximalSubpart(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
