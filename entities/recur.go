package entities

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Recurrences are the other places a found span's text stands in text as whole words, in any
// case, that no span covers: a name the model found once ("RE:  ABC") and missed where it
// came again ("consulting with ABC"). Each takes the label of the span it repeats, scored as a
// rule. Texts shorter than three bytes are not looked for (an age "4" is not every 4). It
// reads text once, word by word, whatever the number of spans.
func Recurrences(text string, found []Entity) []Entity {
	byFirst := map[string][]Entity{} // the spans by their first word, lower case, one a text
	seen := map[string]bool{}
	for _, e := range found {
		if e.Start < 0 || e.End > len(text) || e.End-e.Start < 3 {
			continue
		}
		s := text[e.Start:e.End]
		first := strings.ToLower(firstWord(s))
		if first == "" || !wordEdge(text, e.Start-1, true) || !wordEdge(text, e.End, false) {
			continue // a span that cuts a word is not a word to look for
		}
		if key := strings.ToLower(s); !seen[key] {
			seen[key] = true
			byFirst[first] = append(byFirst[first], e)
		}
	}
	if len(byFirst) == 0 {
		return nil
	}
	// The longest first: "Zorblat Quexley" found, "Zorblat" found too, a third "Zorblat
	// Quexley" is taken whole.
	for _, group := range byFirst {
		slices.SortStableFunc(group, func(a, b Entity) int { return (b.End - b.Start) - (a.End - a.Start) })
	}
	var cand []Entity
	for _, w := range wordsOf(text) {
		lower := strings.ToLower(w.text)
		cands := byFirst[lower]
		if base, ok := strings.CutSuffix(lower, "'s"); ok { // "abc's wife"
			cands = append(slices.Clip(cands), byFirst[base]...)
		}
		for _, e := range cands {
			n := e.End - e.Start
			end := w.start + n
			if end > len(text) || !strings.EqualFold(text[w.start:end], text[e.Start:e.End]) || !wordEdge(text, end, false) {
				continue
			}
			cand = append(cand, Entity{Label: e.Label, Start: w.start, End: end, Score: contextScore})
			break
		}
	}
	return apart(cand, found)
}

// firstWord is s's first run of letters and marks (with inner apostrophes and hyphens), as
// wordsOf reads words.
func firstWord(s string) string {
	if ws := wordsOf(s); len(ws) > 0 && ws[0].start == 0 {
		return ws[0].text
	}
	return ""
}

// wordEdge says whether a word may end (or, with before, begin) at offset i of text: no
// letter, mark or digit on the other side.
func wordEdge(text string, i int, before bool) bool {
	var r rune
	switch {
	case before && i < 0, !before && i >= len(text):
		return true
	case before:
		r, _ = utf8.DecodeLastRuneInString(text[:i+1])
	default:
		r, _ = utf8.DecodeRuneInString(text[i:])
	}
	return !(unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r))
}
