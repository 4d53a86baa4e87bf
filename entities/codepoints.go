package entities

import (
	"slices"
	"unicode/utf8"
)

// Span is a [Start, End) range in Unicode code points, the unit Python clients index
// strings by.
type Span struct {
	Start, End int
}

// CodePointSpans converts the byte offsets of ents into code point offsets, in one pass
// over the text whatever the order of the entities. Result i belongs to ents[i]. Offsets
// outside the text are clamped to it; an offset inside a UTF-8 sequence (which Decode
// never produces) is rounded down to the start of that character. Each invalid byte
// counts as one code point, as it would once decoded to U+FFFD.
func CodePointSpans(text string, ents []Entity) []Span {
	// Each entity contributes two byte offsets; sort their positions once and walk the
	// text counting code points as it goes.
	type mark struct {
		byteOff int
		slot    *int
	}
	out := make([]Span, len(ents))
	marks := make([]mark, 0, 2*len(ents))
	for i, e := range ents {
		marks = append(marks, mark{min(max(e.Start, 0), len(text)), &out[i].Start}, mark{min(max(e.End, 0), len(text)), &out[i].End})
	}
	slices.SortFunc(marks, func(a, b mark) int { return a.byteOff - b.byteOff })
	pos, count := 0, 0
	for _, m := range marks {
		for pos < m.byteOff {
			_, size := utf8.DecodeRuneInString(text[pos:])
			if pos+size > m.byteOff {
				break // the offset is inside this character
			}
			pos += size
			count++
		}
		*m.slot = count
	}
	return out
}
