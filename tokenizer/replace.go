package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// replacer is the Replace normalizer: every leftmost non-overlapping match of the pattern
// becomes content.
type replacer struct {
	literal string
	re      *regexp.Regexp
	prefix  []byte // every regex match starts with it: text without it is left alone unsearched
	// run and runMin stand for a regex "c{n,}" (the " {2,}" every SentencePiece converter
	// writes), matched here without the regexp machinery and its allocations.
	run     rune
	runMin  int
	content []rune
}

// parseReplaceNormalizer reads HF's Replace normalizer.
func parseReplaceNormalizer(raw json.RawMessage) (normalizer, error) {
	rp, err := parseReplace(raw, "normalizer")
	if err != nil {
		return nil, err
	}
	return normalizer{{step: stepReplace, rep: rp}}, nil
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
		if err := rp.compile(*r.Pattern.Regex); err != nil {
			return nil, fmt.Errorf("tokenizer: Replace %s regex is not supported: %w", what, err)
		}
	default:
		return nil, fmt.Errorf("tokenizer: Replace %s pattern must be String or Regex", what)
	}
	return rp, nil
}

// compile sets up the replacer for a regex pattern, and the regexp-free path for "c{n,}".
func (rp *replacer) compile(pattern string) error {
	h, err := compileHFRegex(pattern)
	if err == nil && h.spaceRun != 0 {
		err = errors.New("a look-ahead")
	}
	if err != nil {
		return err
	}
	rp.re = h.re
	prefix, _ := rp.re.LiteralPrefix()
	rp.prefix = []byte(prefix)
	if m := runPattern.FindStringSubmatch(pattern); m != nil {
		if n, err := strconv.Atoi(m[2]); err == nil && n > 0 && n < 1<<16 {
			rp.run, _ = utf8.DecodeRuneInString(m[1])
			rp.runMin = n
		}
	}
	return nil
}

func (rp *replacer) apply(buf *normBuf, in, out []nchar, base int32) []nchar {
	if rp.runMin > 0 {
		return rp.applyRun(in, out, base)
	}
	if r, size := utf8.DecodeRuneInString(rp.literal); size > 0 && size == len(rp.literal) {
		// A one-character literal (Llama's " " to "▁"): each occurrence is a match of its own.
		for _, c := range in {
			if c.r != r {
				out = append(out, c)
				continue
			}
			for _, x := range rp.content {
				out = append(out, nchar{r: x, start: c.start, end: c.end})
			}
		}
		return out
	}
	b, at := spellUTF8(buf.bytes[:0], buf.at[:0], in)
	at = append(at, int32(len(in)))
	buf.bytes, buf.at = b, at
	var matches [][]int
	if rp.re != nil && len(rp.prefix) > 0 && !bytes.Contains(b, rp.prefix) {
		return append(out, in...)
	}
	if rp.re != nil {
		matches = rp.re.FindAllIndex(b, -1)
	} else if rp.literal != "" {
		for pos := 0; ; {
			k := bytes.Index(b[pos:], []byte(rp.literal))
			if k < 0 {
				break
			}
			matches = append(matches, []int{pos + k, pos + k + len(rp.literal)})
			pos += k + len(rp.literal)
		}
	}
	if len(matches) == 0 {
		return append(out, in...)
	}
	last := 0
	for _, m := range matches {
		a, e := int(at[m[0]]), int(at[m[1]])
		out = append(out, in[last:a]...)
		// HF inserts the content after removing the match, so every character of it takes
		// the alignment of the last character removed (of the one before, for an empty
		// match).
		align := nchar{start: base, end: base}
		if e > 0 {
			align = in[e-1]
		}
		for _, r := range rp.content {
			out = append(out, nchar{r: r, start: align.start, end: align.end})
		}
		last = e
	}
	return append(out, in[last:]...)
}

// applyRun is apply for a "c{n,}" pattern: each maximal run of at least runMin c's is one
// match.
func (rp *replacer) applyRun(in, out []nchar, base int32) []nchar {
	for i := 0; i < len(in); {
		if in[i].r != rp.run {
			out = append(out, in[i])
			i++
			continue
		}
		j := i + 1
		for j < len(in) && in[j].r == rp.run {
			j++
		}
		if j-i < rp.runMin {
			out = append(out, in[i:j]...)
			i = j
			continue
		}
		for _, r := range rp.content {
			out = append(out, nchar{r: r, start: in[j-1].start, end: in[j-1].end})
		}
		i = j
	}
	return out
}

// apply runs one operation; the parameterized ones are here, the rest in step.apply.
func (o normOp) apply(buf *normBuf, in, out []nchar, base int32) []nchar {
	switch o.step {
	case stepPrecompiled:
		return o.pre.apply(buf, in, out, base)
	case stepReplace:
		return o.rep.apply(buf, in, out, base)
	case stepStrip:
		lo, hi := 0, len(in)
		for o.left && lo < hi && isSpace(in[lo].r) {
			lo++
		}
		for o.right && hi > lo && isSpace(in[hi-1].r) {
			hi--
		}
		return append(out, in[lo:hi]...)
	case stepPrepend:
		return prependRunes(out, in, o.prepend)
	}
	return o.step.apply(buf, in, out, base)
}

// parseStripNormalizer reads HF's Strip normalizer.
func parseStripNormalizer(raw json.RawMessage) (normalizer, error) {
	var st struct {
		Left  *bool `json:"strip_left"`
		Right *bool `json:"strip_right"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid Strip normalizer: %w", err)
	}
	return normalizer{{step: stepStrip, left: orTrue(st.Left), right: orTrue(st.Right)}}, nil
}

// parsePrependNormalizer reads HF's Prepend normalizer.
func parsePrependNormalizer(raw json.RawMessage) (normalizer, error) {
	var pp struct {
		Prepend string `json:"prepend"`
	}
	if err := json.Unmarshal(raw, &pp); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid Prepend normalizer: %w", err)
	}
	return normalizer{{step: stepPrepend, prepend: []rune(pp.Prepend)}}, nil
}

// prependRunes is HF's NormalizedString::prepend: the prepended text replaces the first
// character, which is inserted back after it, so all of them carry its alignment. Empty
// text gets nothing.
func prependRunes(out, in []nchar, p []rune) []nchar {
	if len(in) == 0 {
		return out
	}
	for _, r := range p {
		out = append(out, nchar{r: r, start: in[0].start, end: in[0].end})
	}
	return append(out, in...)
}
