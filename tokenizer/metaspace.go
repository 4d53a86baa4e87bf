package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// prependScheme is when the Metaspace pre-tokenizer puts its replacement in front of a
// piece of text.
type prependScheme uint8

const (
	prependAlways prependScheme = iota
	prependFirst                // only before text that starts at the input's first byte
	prependNever
)

// metaspacePre is HF's Metaspace pre-tokenizer: spaces become the replacement ("▁"), one is
// prepended per the scheme, and with split each replacement starts a new word.
type metaspacePre struct {
	replacement rune
	scheme      prependScheme
	split       bool
}

type metaspaceJSON struct {
	Replacement    *string `json:"replacement"`
	AddPrefixSpace *bool   `json:"add_prefix_space"`
	PrependScheme  *string `json:"prepend_scheme"`
	Split          *bool   `json:"split"`
}

// parseMetaspace reads the settings the Metaspace pre-tokenizer and decoder share; what
// names which of the two it is in errors.
func parseMetaspace(raw json.RawMessage, what string) (*metaspacePre, error) {
	var j metaspaceJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid Metaspace %s: %w", what, err)
	}
	m := &metaspacePre{replacement: '▁', split: orTrue(j.Split)}
	if j.Replacement != nil {
		r, size := utf8.DecodeRuneInString(*j.Replacement)
		if size == 0 || size != len(*j.Replacement) {
			return nil, fmt.Errorf("tokenizer: Metaspace %s replacement must be one character", what)
		}
		m.replacement = r
	}
	if j.PrependScheme != nil {
		switch *j.PrependScheme {
		case "always":
		case "first":
			m.scheme = prependFirst
		case "never":
			m.scheme = prependNever
		default:
			return nil, fmt.Errorf("tokenizer: Metaspace %s prepend_scheme %q is not always, first or never", what, *j.PrependScheme)
		}
	}
	// Files written before prepend_scheme existed say add_prefix_space. HF 0.23 refuses
	// false unless prepend_scheme says never, the default being always; true changes nothing.
	if j.AddPrefixSpace != nil && !*j.AddPrefixSpace && m.scheme != prependNever {
		return nil, fmt.Errorf("tokenizer: Metaspace %s add_prefix_space false needs prepend_scheme never (HF refuses the file)", what)
	}
	return m, nil
}

// parseMetaspacePre reads a Metaspace pre-tokenizer that is the whole pre_tokenizer.
func (t *Tokenizer) parseMetaspacePre(raw json.RawMessage) error {
	ms, err := parseMetaspace(raw, "pre_tokenizer")
	if err != nil {
		return err
	}
	t.metaspace = ms
	return nil
}

// parseMetaspaceStage reads a Metaspace pre-tokenizer of a pipeline.
func parseMetaspaceStage(raw json.RawMessage, _ *stageJSON) ([]preStage, error) {
	ms, err := parseMetaspace(raw, "pre_tokenizer")
	if err != nil {
		return nil, err
	}
	return []preStage{{kind: stageMetaspace, meta: ms}}, nil
}

// metaspaceWords pre-tokenizes one stretch of normalized text with Metaspace and encodes
// each word with the model. HF's "first" scheme asks whether the stretch starts at byte 0
// of the input, which after slicing around added tokens is where its first character came
// from.
func (t *Tokenizer) metaspaceWords(enc *tokens, s *scratch, chars []nchar, word *int) {
	ms := t.metaspace
	rep := ms.replacement
	buf := s.prefixed[:0]
	first := chars[0].r
	if first == ' ' {
		first = rep
	}
	if first != rep && (ms.scheme == prependAlways || (ms.scheme == prependFirst && chars[0].start == 0)) {
		buf = append(buf, nchar{r: rep, start: chars[0].start, end: chars[0].end})
	}
	for _, c := range chars {
		if c.r == ' ' {
			c.r = rep
		}
		buf = append(buf, c)
	}
	s.prefixed = buf
	if !ms.split {
		t.wordModel.encodeWord(enc, s, buf, *word)
		*word++
		return
	}
	start := 0
	for i := 1; i <= len(buf); i++ {
		if i == len(buf) || buf[i].r == rep {
			t.wordModel.encodeWord(enc, s, buf[start:i], *word)
			*word++
			start = i
		}
	}
}

// metaspaceDecoder is HF's Metaspace decoder: replacements become spaces, except in the
// first token when the pre-tokenizer prepends, where they are dropped.
type metaspaceDecoder struct {
	replacement rune
	dropFirst   bool
}

// parseMetaspaceDecoder reads HF's Metaspace decoder, which drops the first token's
// replacement whenever the pre-tokenizer would have prepended one.
func parseMetaspaceDecoder(raw json.RawMessage) (decoder, error) {
	ms, err := parseMetaspace(raw, "decoder")
	if err != nil {
		return nil, err
	}
	return metaspaceDecoder{replacement: ms.replacement, dropFirst: ms.scheme != prependNever}, nil
}

func (d metaspaceDecoder) decode(tokens []string) string {
	var b strings.Builder
	for i, tok := range tokens {
		b.WriteString(d.decode1(i, tok))
	}
	return b.String()
}

// decode1 is the Metaspace decoding of the token at index i.
func (d metaspaceDecoder) decode1(i int, tok string) string {
	if !strings.ContainsRune(tok, d.replacement) {
		return tok
	}
	b := make([]byte, 0, len(tok))
	for _, r := range tok {
		switch {
		case r != d.replacement:
			b = utf8.AppendRune(b, r)
		case i == 0 && d.dropFirst:
		default:
			b = append(b, ' ')
		}
	}
	return string(b)
}
