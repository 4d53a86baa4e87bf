package generate

import "unicode/utf8"

// Piece is one token of a prompt as the model reads it: its id, the text it stands for and
// where that text lies in the prompt, in characters (Start inclusive, Stop exclusive). A token
// the tokenizer's template adds stands for no text: empty, at 0.
type Piece struct {
	ID          int64
	Text        string
	Start, Stop int
}

// Tokenize splits prompt as Generate encodes it, special tokens included.
func (g *Generator) Tokenize(prompt string) []Piece {
	enc := g.tok.Encode(prompt, true)
	// Offsets are bytes; clients count characters. chars[b] is the character count before
	// byte b (several tokens of one character share its offsets, so look-ups repeat).
	chars := make([]int32, len(prompt)+1)
	n := int32(0)
	for b := range len(prompt) {
		chars[b] = n
		if utf8.RuneStart(prompt[b]) {
			n++
		}
	}
	chars[len(prompt)] = n
	out := make([]Piece, len(enc.IDs))
	for i, id := range enc.IDs {
		p := Piece{ID: id}
		if o := enc.Offsets[i]; o[1] > o[0] && o[0] >= 0 && o[1] <= len(prompt) {
			p.Text = prompt[o[0]:o[1]]
			p.Start, p.Stop = int(chars[o[0]]), int(chars[o[1]])
		}
		out[i] = p
	}
	return out
}
