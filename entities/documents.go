package entities

import "slices"

// Document is one document of a text: the bytes [Start, End) of the text, and the tokens
// [First, Last) whose offsets lie in them.
type Document struct {
	Start, End  int
	First, Last int
}

// Documents cuts a text into its documents at blank lines (a line break, then spaces or tabs
// or nothing, then another line break): notes pasted one after another, or sent one after
// another in a stream, are read each on its own, so that a note gives the same spans alone
// as after others. Every token falls in exactly one document; a text without a blank line is
// one document; one without tokens has none. offsets are the tokens' byte offsets in text, in
// order, as Tokens holds them.
//
// A token that begins at or after a blank line's first break belongs to the next document,
// which then begins where that token does: tokenizers that keep whitespace (byte-level BPE's
// "ĊĊ", SentencePiece's "▁" that takes the break before a word) give tokens inside the blanks.
func Documents(text string, offsets [][2]int) []Document {
	var docs []Document
	start, first := 0, 0
	closeAt := func(end int) {
		last := first
		for last < len(offsets) && offsets[last][0] < end {
			last++
		}
		d := Document{Start: start, End: end, First: first, Last: last}
		if last > first {
			d.Start, d.End = min(d.Start, offsets[first][0]), max(d.End, offsets[last-1][1])
		}
		docs = append(docs, d)
		first = last
	}
	for i := 0; i < len(text); i++ {
		if end, ok := BlankLine(text, i); ok {
			closeAt(i)
			start, i = end, end-1
		}
	}
	closeAt(len(text))
	// A document of blanks (or of nothing, before a leading blank line) holds no tokens.
	return slices.DeleteFunc(docs, func(d Document) bool { return d.First == d.Last })
}

// BlankLine says whether a blank line begins at text[i] (a line break, spaces or tabs or
// nothing, another line break), and where the blanks after it end: where a document, if any,
// begins. It is the one reading of a document's end, for Documents and for the streams that
// cut their windows where a document begins.
func BlankLine(text string, i int) (end int, ok bool) {
	if i < 0 || i >= len(text) || text[i] != '\n' {
		return 0, false
	}
	j := i + 1
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
		j++
	}
	if j >= len(text) || text[j] != '\n' {
		return 0, false
	}
	for j < len(text) && (text[j] == '\n' || text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
		j++
	}
	return j, true
}

// Tokens is the part of toks that lies in d, with offsets counted from d.Start, as
// toks would be for d's text alone.
func (d Document) Tokens(toks Tokens) Tokens {
	out := Tokens{Offsets: make([][2]int, d.Last-d.First)}
	for i, off := range toks.Offsets[d.First:d.Last] {
		out.Offsets[i] = [2]int{off[0] - d.Start, off[1] - d.Start}
	}
	if toks.IDs != nil {
		out.IDs = toks.IDs[d.First:d.Last]
	}
	if toks.Special != nil {
		out.Special = toks.Special[d.First:d.Last]
	}
	if toks.WordIDs != nil {
		out.WordIDs = toks.WordIDs[d.First:d.Last]
	}
	return out
}

// PlanDocumentWindows is PlanWordWindows over each document of docs on its own, in token
// numbers of the whole text: no window holds tokens of two documents, so no document's
// spans depend on its neighbours'.
func PlanDocumentWindows(docs []Document, wordIDs []int, maxContent, stride int) ([]Window, error) {
	var out []Window
	for _, d := range docs {
		var ids []int
		if wordIDs != nil {
			ids = wordIDs[d.First:d.Last]
		}
		wins, err := planWindows(d.Last-d.First, ids, maxContent, stride)
		if err != nil {
			return nil, err
		}
		for _, w := range wins {
			out = append(out, Window{Start: w.Start + d.First, End: w.End + d.First})
		}
	}
	return out, nil
}
