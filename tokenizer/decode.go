package tokenizer

import "strings"

// wordPieceDecoder is HF's WordPiece decoder: continuation pieces lose their prefix and
// attach to the previous token, other tokens get a space in front, and with cleanup the
// spaces English tokenization introduced before punctuation and contractions go.
type wordPieceDecoder struct {
	prefix  string
	cleanup bool
}

func (d *wordPieceDecoder) decode(tokens []string) string {
	var b strings.Builder
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
		b.WriteString(tok)
	}
	return b.String()
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
