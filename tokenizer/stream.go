package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// DecodeStream turns generated ids into text one id at a time, emitting only text that later
// ids cannot change: decoders rewrite earlier text (WordPiece's cleanup joins " ." to ".",
// byte-level pieces complete a character only with the next byte), so each id's text is the
// difference between decoding a short window with and without it, as HuggingFace's text
// generation server does. Ids whose bytes (TokenBytes) end in the first bytes of a character,
// decoded as U+FFFD, are held back until the character completes; nothing ever emits half a
// character. A U+FFFD that no byte can complete (the model's own, or bytes that are not UTF-8)
// goes out at once: held, it would hold the stream to its end, each id decoding the whole held
// window again. Where a new id rewrites text already emitted (SentencePiece's byte fallback
// turns a whole run of byte tokens into U+FFFD once one of them breaks UTF-8), what was sent
// stands and the new text is what lies past as many characters as were sent, as HF's server
// slices it; the stream moves on rather than waiting for a prefix that will never come back.
type DecodeStream struct {
	t     *Tokenizer
	ids   []int64
	start int // first id of the window that is decoded
	read  int // ids before this one have had their text emitted
}

// contextIDs is how many ids of the prompt seed the window, so that the first generated id
// gets the space (or not) it would have after the prompt.
const contextIDs = 5

// NewDecodeStream starts a stream after prompt, whose own text is not emitted.
func (t *Tokenizer) NewDecodeStream(prompt []int64) *DecodeStream {
	seed := prompt[max(0, len(prompt)-contextIDs):]
	ids := make([]int64, len(seed), len(seed)+64)
	copy(ids, seed)
	return &DecodeStream{t: t, ids: ids, read: len(ids)}
}

// Next adds id and returns the text it completes; "" when it completes none yet (the rest
// comes with a later id). Special tokens add no text.
func (d *DecodeStream) Next(id int64) string {
	if tok, ok := d.t.Token(id); !ok || d.t.specials[tok] {
		return "" // Decode passes over it: kept in the window, it would only lengthen it
	}
	d.ids = append(d.ids, id)
	after := d.t.Decode(d.ids[d.start:], true)
	if endsIncomplete(after) && d.partial() {
		return ""
	}
	return d.advance(after)
}

// partial reports whether the ids not yet emitted end in the first bytes of a character,
// which later bytes could complete. Not bounded by a count of ids: an id that completes one
// character and begins the next (GPT-2 has them) holds the stream on, and what is held goes
// out whole as soon as an id leaves no character begun (a bound cut a character in two).
func (d *DecodeStream) partial() bool {
	held := d.ids[d.read:]
	var tail []byte
	for i := len(held) - 1; i >= 0 && len(tail) < utf8.UTFMax; i-- {
		b, _ := d.t.TokenBytes(held[i])
		tail = append(b[max(0, len(b)-utf8.UTFMax):len(b):len(b)], tail...)
	}
	for i := len(tail) - 1; i >= max(0, len(tail)-utf8.UTFMax+1); i-- {
		if utf8.RuneStart(tail[i]) {
			return !utf8.FullRune(tail[i:])
		}
	}
	return false
}

// Flush returns the text Next held back, for a stream that ends: a character that will
// never complete is spelled U+FFFD, as Decode spells it.
func (d *DecodeStream) Flush() string {
	if d.read == len(d.ids) {
		return ""
	}
	return d.advance(d.t.Decode(d.ids[d.start:], true))
}

// advance emits what after, the window decoded through the newest id, adds to the window
// decoded without the ids not yet emitted, and starts the next window at them.
func (d *DecodeStream) advance(after string) string {
	before := d.t.Decode(d.ids[d.start:d.read], true)
	text, ok := strings.CutPrefix(after, before)
	if !ok {
		text = after
		for range utf8.RuneCountInString(before) {
			if text == "" {
				break
			}
			_, size := utf8.DecodeRuneInString(text)
			text = text[size:]
		}
	}
	if text == "" {
		return ""
	}
	d.start, d.read = d.read, len(d.ids)
	return text
}

// IsSpecial reports whether id is a special added token (an end of sequence, a separator).
func (t *Tokenizer) IsSpecial(id int64) bool {
	a, ok := t.addedByID[id]
	return ok && t.specials[a.decoded]
}

func endsIncomplete(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r == utf8.RuneError
}
