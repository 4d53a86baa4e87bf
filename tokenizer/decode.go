package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// parseDecoder reads the decoder section.
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
	parse := decoderParser(typ)
	if parse == nil {
		return nil, unsupported("decoder", typ, supportedDecoders)
	}
	d, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := d.(chainDecoder); inSequence && !ok {
		return nil, fmt.Errorf("tokenizer: decoder %s inside a Sequence is not supported", typ)
	}
	return d, nil
}

// decoderParser returns the parse of a decoder type, or nil when it is not supported.
func decoderParser(typ string) func(json.RawMessage) (decoder, error) {
	switch typ {
	case "ByteLevel":
		return parseByteLevelDecoder
	case "Metaspace":
		return parseMetaspaceDecoder
	case "WordPiece":
		return parseWordPieceDecoder
	case "Sequence":
		return parseSequenceDecoder
	case "Replace":
		return parseReplaceDecoder
	case "ByteFallback":
		return chainOnlyDecoder(byteFallbackDecoder{})
	case "Fuse":
		return chainOnlyDecoder(fuseDecoder{})
	case "Strip":
		return parseStripDecoder
	}
	return nil
}

// chainOnly makes a chaining decoder usable alone: its tokens are joined as HF's decode
// joins them.
type chainOnly struct{ chainDecoder }

func (c chainOnly) decode(tokens []string) string {
	return strings.Join(c.chain(tokens), "")
}

// chainOnlyDecoder is the parse of a chaining decoder without settings.
func chainOnlyDecoder(d chainDecoder) func(json.RawMessage) (decoder, error) {
	return func(json.RawMessage) (decoder, error) { return chainOnly{d}, nil }
}

// wordPieceDecoder is HF's WordPiece decoder: continuation pieces lose their prefix and
// attach to the previous token, other tokens get a space in front, and with cleanup the
// spaces English tokenization introduced before punctuation and contractions go.
type wordPieceDecoder struct {
	prefix  string
	cleanup bool
}

type wordPieceDecoderJSON struct {
	Prefix  *string `json:"prefix"`
	Cleanup *bool   `json:"cleanup"`
}

// parseWordPieceDecoder reads HF's WordPiece decoder.
func parseWordPieceDecoder(raw json.RawMessage) (decoder, error) {
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
	return wp, nil
}

func (d *wordPieceDecoder) decode(tokens []string) string {
	return strings.Join(d.chain(tokens), "")
}

// cleanup applies HF's replacements in HF's order; each pass sees the previous one's
// output, so they cannot be merged into one strings.Replacer.
func cleanup(s string) string {
	if !strings.Contains(s, " ") {
		return s
	}
	for _, r := range cleanupPairs {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

var cleanupPairs = [...][2]string{
	{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
	{" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
}

// chainDecoder is a decoder that can sit in a decoder Sequence: like HF's decode_chain it
// maps tokens to tokens, and only the Sequence joins the result.
type chainDecoder interface {
	chain(tokens []string) []string
}

// sequenceDecoder is HF's Sequence decoder: each decoder's chain runs on the previous one's
// output, and the final tokens are concatenated.
type sequenceDecoder []chainDecoder

// parseSequenceDecoder reads HF's Sequence decoder, whose decoders must all chain.
func parseSequenceDecoder(raw json.RawMessage) (decoder, error) {
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
	return seq, nil
}

func (d sequenceDecoder) decode(tokens []string) string {
	for _, c := range d {
		tokens = c.chain(tokens)
	}
	return strings.Join(tokens, "")
}

func (d *wordPieceDecoder) chain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, tok := range tokens {
		if i != 0 {
			if strings.HasPrefix(tok, d.prefix) {
				tok = strings.Replace(tok, d.prefix, "", 1)
			} else {
				tok = " " + tok
			}
		}
		if d.cleanup {
			tok = cleanup(tok)
		}
		out[i] = tok
	}
	return out
}

func (d byteLevelDecoder) chain(tokens []string) []string { return []string{d.decode(tokens)} }

func (d metaspaceDecoder) chain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, tok := range tokens {
		out[i] = d.decode1(i, tok)
	}
	return out
}

// replaceDecoder is HF's Replace decoder: within each token, every match becomes content.
type replaceDecoder struct{ rep *replacer }

// parseReplaceDecoder reads HF's Replace decoder.
func parseReplaceDecoder(raw json.RawMessage) (decoder, error) {
	rp, err := parseReplace(raw, "decoder")
	if err != nil {
		return nil, err
	}
	return chainOnly{replaceDecoder{rp}}, nil
}

func (d replaceDecoder) chain(tokens []string) []string {
	content := string(d.rep.content)
	out := make([]string, len(tokens))
	for i, tok := range tokens {
		switch {
		case d.rep.re != nil:
			out[i] = d.rep.re.ReplaceAllLiteralString(tok, content)
		case d.rep.literal != "":
			out[i] = strings.ReplaceAll(tok, d.rep.literal, content)
		default:
			out[i] = tok
		}
	}
	return out
}

// byteFallbackDecoder is HF's ByteFallback decoder: runs of <0xXX> tokens become the text
// their bytes spell, or one U+FFFD per byte when those bytes are not valid UTF-8.
type byteFallbackDecoder struct{}

func (byteFallbackDecoder) chain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, tok := range tokens {
		if b, ok := fallbackByte(tok); ok {
			pending = append(pending, b)
			continue
		}
		flush()
		out = append(out, tok)
	}
	flush()
	return out
}

// fallbackByte reads "<0xXX>" as HF does: six bytes, and the two between "<0x" and ">"
// parsed by Rust's u8::from_str_radix, which also takes a leading '+'.
func fallbackByte(tok string) (byte, bool) {
	if len(tok) != 6 || !strings.HasPrefix(tok, "<0x") || tok[5] != '>' {
		return 0, false
	}
	digits := tok[3:5]
	if digits[0] == '+' {
		digits = digits[1:]
	}
	v := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return byte(v), true
}

// fuseDecoder is HF's Fuse decoder: all tokens become one.
type fuseDecoder struct{}

func (fuseDecoder) chain(tokens []string) []string { return []string{strings.Join(tokens, "")} }

// stripDecoder is HF's Strip decoder: up to start leading and stop trailing occurrences of
// content come off each token.
type stripDecoder struct {
	content     rune
	start, stop int
}

// parseStripDecoder reads HF's Strip decoder.
func parseStripDecoder(raw json.RawMessage) (decoder, error) {
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
}

func (d stripDecoder) chain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, tok := range tokens {
		rs := []rune(tok)
		lo := 0
		for lo < d.start && lo < len(rs) && rs[lo] == d.content {
			lo++
		}
		hi := len(rs)
		for k := 0; k < d.stop && hi > lo && rs[hi-1] == d.content; k++ {
			hi--
		}
		out[i] = string(rs[lo:hi])
	}
	return out
}
