package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// wordPieceDecoder is HF's WordPiece decoder: continuation pieces lose their prefix and
// attach to the previous token, other tokens get a space in front, and with cleanup the
// spaces English tokenization introduced before punctuation and contractions go.
type wordPieceDecoder struct {
	prefix  string
	cleanup bool
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
