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
	return (*Recall)(nil).Recurrences(text, found)
}

// Recall is Recurrences over a document read in parts (a stream's windows, a conversation's
// messages): the span texts it holds, found in other parts, are looked for in each part too,
// so a name found in the first window is not left where the fifth repeats it. What to hold is
// the reader's to say (Hold): a stream holds only the spans it has made final, not those of a
// window's tail, which the next window may take back. It holds those texts, in memory, for as
// long as it is kept: one a request. The zero Recall, and a nil one, hold nothing. Not safe
// for concurrent use.
type Recall struct {
	byFirst map[string][]spelt // by first word, lower case; longest first
	seen    map[string]bool    // the texts held, lower case
}

// spelt is a found span's text and label.
type spelt struct{ text, label string }

// Recurrences are Recurrences(text, found) with the texts r holds looked for too; r is not
// changed.
func (r *Recall) Recurrences(text string, found []Entity) []Entity {
	var own Recall
	own.Hold(text, found)
	if len(own.byFirst) == 0 && (r == nil || len(r.byFirst) == 0) {
		return nil
	}
	tk := newTaken(found)
	var cand, here []Entity
	for _, w := range wordsOf(text) {
		lower := strings.ToLower(w.text)
		base, possessive := strings.CutSuffix(lower, "'s") // "abc's wife"
		// What stands here, of this part's texts and those held: the longest that no span
		// found overlaps ("Zorblat Quexley" held, "Zorblat" found, the next "Zorblat" where
		// "Quexley" was found after it is still a Zorblat).
		here = here[:0]
		for _, from := range []*Recall{&own, r} {
			if from == nil {
				continue
			}
			cands := from.byFirst[lower]
			if possessive {
				cands = append(slices.Clip(cands), from.byFirst[base]...)
			}
			for _, sp := range cands {
				end := w.start + len(sp.text)
				if end > len(text) || !strings.EqualFold(text[w.start:end], sp.text) || !wordEdge(text, end, false) || tk.overlaps(w.start, end) {
					continue
				}
				here = append(here, Entity{Label: sp.label, Start: w.start, End: end, Score: contextScore})
			}
		}
		if len(here) > 0 {
			best := here[0] // the longest; of equals, the first (this part's before those held)
			for _, c := range here[1:] {
				if c.End > best.End {
					best = c
				}
			}
			cand = append(cand, best)
		}
	}
	return apart(cand, found)
}

// Hold keeps the texts of found that are whole words of text, three bytes or more, each once
// (with the label it was first found with), to be looked for in the parts read after; a
// reader that has every part's spans first (a conversation) holds them all before it sweeps.
func (r *Recall) Hold(text string, found []Entity) {
	for _, e := range found {
		if e.Start < 0 || e.End > len(text) || e.End-e.Start < 3 {
			continue
		}
		s := text[e.Start:e.End]
		first := strings.ToLower(firstWord(s))
		if first == "" || !wordEdge(text, e.Start-1, true) || !wordEdge(text, e.End, false) {
			continue // a span that cuts a word is not a word to look for
		}
		key := strings.ToLower(s)
		if r.seen[key] {
			continue
		}
		if r.seen == nil {
			r.seen, r.byFirst = map[string]bool{}, map[string][]spelt{}
		}
		r.seen[key] = true
		// The longest first: "Zorblat Quexley" found, "Zorblat" found too, a third "Zorblat
		// Quexley" is taken whole.
		group := r.byFirst[first]
		// After the texts as long or longer: of equals, the first held stays first.
		at, _ := slices.BinarySearchFunc(group, len(s), func(sp spelt, n int) int {
			if len(sp.text) >= n {
				return -1
			}
			return 1
		})
		r.byFirst[first] = slices.Insert(group, at, spelt{text: strings.Clone(s), label: e.Label})
	}
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
