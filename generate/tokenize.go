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
	out := make([]Piece, len(enc.IDs))
	// Offsets are bytes; clients count characters. Both only grow along the prompt, so one
	// pass converts them.
	bytePos, charPos := 0, 0
	chars := func(b int) int {
		if b < bytePos {
			return utf8.RuneCountInString(prompt[:b])
		}
		charPos += utf8.RuneCountInString(prompt[bytePos:b])
		bytePos = b
		return charPos
	}
	for i, id := range enc.IDs {
		p := Piece{ID: id}
		if o := enc.Offsets[i]; o[1] > o[0] && o[0] >= 0 && o[1] <= len(prompt) {
			p.Text = prompt[o[0]:o[1]]
			p.Start = chars(o[0])
			p.Stop = chars(o[1])
		}
		out[i] = p
	}
	return out
}
