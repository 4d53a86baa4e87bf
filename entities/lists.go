package entities

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The bounds of a request's lists, and the label of a span a deny term makes.
const (
	MaxListTerms = 1000
	MaxTermBytes = 256
	DenyLabel    = "deny_list"
)

// Lists are one request's allow list (terms never redacted) and deny list (terms always
// redacted), matched as whole words in any case: a term stands in text where the text's
// words and the term's are the same, in the same order, with any run of white space where the
// term has one and the same punctuation where it has some ("o'neil" matches "O'Neil", "Alan"
// matches "Alan's" but not "Alana", "MRN 12" matches "mrn  12" but not "MRN 123"). A nil
// *Lists holds nothing. Matching walks the text's words once, from each into a trie of the
// terms, so its cost grows with the text and the longest term, not the number of terms.
type Lists struct {
	root        *listNode
	longestDeny int // code points
}

// LongestDeny is the longest deny term's length in code points, fully decomposed (NFKD), the
// most any spelling of it takes in text, format characters aside (0 for none): a text read in
// windows must carry that much into the next window for a term the window's end cuts to be
// found whole in the next.
func (l *Lists) LongestDeny() int {
	if l == nil {
		return 0
	}
	return l.longestDeny
}

// listNode is a node of the terms' trie, by their units (see termUnits).
type listNode struct {
	next        map[string]*listNode
	allow, deny bool // a term of that list ends here
	// allowAs are the allow terms ending here as written (asWritten): text their keys match
	// is allowed only when it is one of them.
	allowAs map[string]bool
}

// TermError is what is wrong with one list or one of its terms; it never quotes a term.
type TermError struct {
	Deny bool // the deny list's, else the allow list's
	// Index is the term's place in its list; -1 is the list as a whole.
	Index   int
	Problem string
}

func (e *TermError) Error() string {
	list := "allow list"
	if e.Deny {
		list = "deny list"
	}
	if e.Index < 0 {
		return "the " + list + " " + e.Problem
	}
	return fmt.Sprintf("term %d of the %s %s", e.Index, list, e.Problem)
}

// NewLists checks and indexes the terms: at most MaxListTerms a list, each valid UTF-8 of at
// most MaxTermBytes holding a letter or a digit. Both lists empty give nil. The errors are
// *TermError, every one found.
func NewLists(allow, deny []string) (*Lists, []*TermError) {
	var errs []*TermError
	l := &Lists{root: &listNode{}}
	for _, list := range []struct {
		terms []string
		deny  bool
	}{{allow, false}, {deny, true}} {
		if len(list.terms) > MaxListTerms {
			errs = append(errs, &TermError{Deny: list.deny, Index: -1,
				Problem: fmt.Sprintf("holds %d terms; at most %d are allowed", len(list.terms), MaxListTerms)})
			continue
		}
		for i, t := range list.terms {
			var problem string
			switch {
			case len(t) > MaxTermBytes:
				problem = fmt.Sprintf("is %d bytes; at most %d are allowed", len(t), MaxTermBytes)
			case !utf8.ValidString(t):
				problem = "is not valid UTF-8"
			case !strings.ContainsFunc(t, isWordRune):
				problem = "holds no letter or digit"
			}
			if problem != "" {
				errs = append(errs, &TermError{Deny: list.deny, Index: i, Problem: problem})
				continue
			}
			l.add(t, list.deny)
		}
	}
	if errs != nil || len(l.root.next) == 0 {
		return nil, errs
	}
	return l, nil
}

func (l *Lists) add(term string, deny bool) {
	n := l.root
	for _, u := range termUnits(strings.TrimSpace(term)) {
		if n.next == nil {
			n.next = map[string]*listNode{}
		}
		c := n.next[u.key]
		if c == nil {
			c = &listNode{}
			n.next[u.key] = c
		}
		n = c
	}
	if deny {
		n.deny = true
		// The text may spell the term decomposed, its longest form.
		l.longestDeny = max(l.longestDeny, utf8.RuneCountInString(norm.NFKD.String(strings.TrimSpace(term))))
	} else {
		n.allow = true
		if n.allowAs == nil {
			n.allowAs = map[string]bool{}
		}
		n.allowAs[asWritten(term)] = true
	}
}

// Apply is ents with the lists applied, a new slice sorted by start (ents is not changed):
// a span whose words all stand in allowed terms is dropped, whatever found it; every deny term
// that no allowed text holds becomes a span labelled DenyLabel (score 1), of the longest term
// where terms overlap, unless one span holds it whole already; a span it partly covers keeps
// only its words outside it, so that the denied words are redacted as themselves. A span that
// holds an allowed term and more (a name with an allowed word in it) is kept whole: the
// lists never leave part of a span unredacted.
func (l *Lists) Apply(text string, ents []Entity) []Entity { return l.apply(text, ents, false) }

// Redacting is Apply for a de-identification, whose policy may keep a span's kind (a city, an
// organisation): a deny term that a span holds whole stays a span of its own inside it, so that
// the two overlap and the de-identification, which redacts the text of overlapping spans as one,
// never keeps the term with its holder.
func (l *Lists) Redacting(text string, ents []Entity) []Entity { return l.apply(text, ents, true) }

func (l *Lists) apply(text string, ents []Entity, keepHeld bool) []Entity {
	if l == nil {
		return ents
	}
	allowed, denied := l.find(text)
	out := dropAllowed(text, ents, allowed)
	var deny []interval // apart, in order
	for _, d := range longestApart(denied) {
		if !within(d, allowed) {
			deny = append(deny, d)
		}
	}
	if len(deny) == 0 {
		return out
	}
	// A deny term that a span holds whole is redacted already, as what the span says it is.
	covered := make([]bool, len(deny))
	for _, e := range out {
		for i := firstFrom(deny, e.Start); i < len(deny) && deny[i].Start < e.End; i++ {
			covered[i] = covered[i] || deny[i].End <= e.End
		}
	}
	kept := out[:0]
	for _, e := range out {
		if e, ok := outside(text, e, deny, covered); ok && !allAllowed(text, e, allowed) {
			kept = append(kept, e) // the piece left may be allowed words alone
		}
	}
	for i, d := range deny {
		if !covered[i] || keepHeld {
			kept = append(kept, Entity{Label: DenyLabel, Start: d.Start, End: d.End, Score: 1})
		}
	}
	slices.SortStableFunc(kept, byStart)
	return kept
}

// firstFrom is the index of the first of the sorted stretches that starts at or after at.
func firstFrom(stretches []interval, at int) int {
	i, _ := slices.BinarySearchFunc(stretches, at, func(a interval, t int) int { return cmp.Compare(a.Start, t) })
	return i
}

// outside is e without the deny terms not covered that it overlaps (none lies inside it,
// since it would cover that one): the words left of the one over its start and right of the
// one over its end; ok is false when no word is left.
func outside(text string, e Entity, deny []interval, covered []bool) (Entity, bool) {
	if k := firstFrom(deny, e.Start+1) - 1; k >= 0 && !covered[k] && deny[k].End > e.Start {
		if deny[k].End >= e.End {
			return e, false
		}
		e.Start = deny[k].End
	}
	if m := firstFrom(deny, e.End) - 1; m >= 0 && !covered[m] && deny[m].Start > e.Start && deny[m].End > e.End {
		e.End = deny[m].Start
	}
	if e.Start >= e.End || !strings.ContainsFunc(text[e.Start:e.End], isWordRune) {
		return e, false
	}
	w := wordsSpan(text, e)
	e.Start, e.End = w.Start, w.End
	return e, true
}

// DropAllowed is ents without the spans whose words all stand in allowed terms, a new slice in
// ents' order: Apply's allowing alone, for a look at text whose denied terms are gone already.
func (l *Lists) DropAllowed(text string, ents []Entity) []Entity {
	if l == nil {
		return ents
	}
	allowed, _ := l.find(text)
	return dropAllowed(text, ents, allowed)
}

// interval is a stretch of text, [Start, End) in bytes.
type interval struct{ Start, End int }

// find is where the terms stand in text: the allowed stretches merged where they overlap or
// touch, in order, and the longest deny term's occurrence at each place one begins.
func (l *Lists) find(text string) (allowed, denied []interval) {
	us := termUnits(text)
	for i, u := range us {
		if u.key == " " {
			continue
		}
		// Only the longest term of each kind from here: a shorter one lies inside it, and
		// "a", "a a", ... over "a a a ..." would otherwise make intervals by the million.
		n := l.root
		allowEnd, denyEnd := -1, -1
		for j := i; j < len(us); j++ {
			if n = n.next[us[j].key]; n == nil {
				break
			}
			if n.allow && n.allowAs[asWritten(text[u.start:us[j].end])] {
				allowEnd = us[j].end
			}
			if n.deny {
				denyEnd = us[j].end
			}
		}
		if allowEnd >= 0 {
			allowed = append(allowed, interval{u.start, allowEnd})
		}
		if denyEnd >= 0 {
			denied = append(denied, interval{u.start, denyEnd})
		}
	}
	slices.SortFunc(allowed, func(a, b interval) int { return cmp.Compare(a.Start, b.Start) })
	var merged []interval
	for _, a := range allowed {
		if k := len(merged) - 1; k >= 0 && a.Start <= merged[k].End {
			merged[k].End = max(merged[k].End, a.End)
			continue
		}
		merged = append(merged, a)
	}
	return merged, denied
}

// dropAllowed is ents less the spans whose every word character lies in allowed text.
func dropAllowed(text string, ents []Entity, allowed []interval) []Entity {
	out := make([]Entity, 0, len(ents))
	for _, e := range ents {
		if len(allowed) == 0 || !allAllowed(text, e, allowed) {
			out = append(out, e)
		}
	}
	return out
}

// allAllowed says whether every letter, mark and digit of e lies in one of the sorted,
// disjoint allowed stretches (a span of punctuation alone is not allowed).
func allAllowed(text string, e Entity, allowed []interval) bool {
	w := wordsSpan(text, e)
	if w.Start >= w.End || !strings.ContainsFunc(text[w.Start:w.End], isWordRune) {
		return false
	}
	for at := w.Start; at < w.End; {
		r, size := utf8.DecodeRuneInString(text[at:])
		if !isWordRune(r) {
			at += size
			continue
		}
		i := firstFrom(allowed, at+1) - 1
		if i < 0 || allowed[i].End <= at {
			return false
		}
		at = allowed[i].End
	}
	return true
}

// wordsSpan is e's stretch from its first letter or digit to its last (e's own when it has
// none), so that a span with a comma or a space at its edge is judged by its words.
func wordsSpan(text string, e Entity) interval {
	if e.Start < 0 || e.End > len(text) || e.Start >= e.End {
		return interval{e.Start, e.End}
	}
	s := text[e.Start:e.End]
	i := strings.IndexFunc(s, isWordRune)
	if i < 0 {
		return interval{e.Start, e.End}
	}
	j := strings.LastIndexFunc(s, isWordRune)
	_, size := utf8.DecodeRuneInString(s[j:])
	return interval{e.Start + i, e.Start + j + size}
}

// within says whether x lies inside one of the sorted, disjoint stretches.
func within(v interval, stretches []interval) bool {
	i := firstFrom(stretches, v.Start+1)
	return i > 0 && stretches[i-1].End >= v.End
}

// longestApart is the occurrences that do not overlap, leftmost first and, of those starting
// together, the longest.
func longestApart(occ []interval) []interval {
	slices.SortFunc(occ, func(a, b interval) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End)) })
	var out []interval
	for _, o := range occ {
		if n := len(out); n > 0 && o.Start < out[n-1].End {
			continue
		}
		out = append(out, o)
	}
	return out
}

// termUnit is a piece of text as terms are matched: a run of letters, marks and digits, a run of
// white space (key " "), or one other character; key is its folded form (foldKey). A format
// character (isFormatChar) belongs to the run it stands in or, between runs, to the unit after
// it, so that a soft hyphen or a zero-width joiner inside a word leaves the word one unit.
type termUnit struct {
	key        string
	start, end int
}

// termUnits cuts s into termUnits.
func termUnits(s string) []termUnit {
	var out []termUnit
	for i := 0; i < len(s); {
		start := i
		r, size := utf8.DecodeRuneInString(s[i:])
		for isFormatChar(r) && i+size < len(s) {
			i += size
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		j := i + size
		switch {
		case isFormatChar(r): // format characters alone at the end: no unit
		case isWordRune(r):
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) && !isFormatChar(r2) {
					break
				}
				j += n
			}
			out = append(out, termUnit{foldKey(s[start:j]), start, j})
		case isSpace(r):
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !isSpace(r2) && !isFormatChar(r2) {
					break
				}
				j += n
			}
			out = append(out, termUnit{" ", start, j})
		default:
			out = append(out, termUnit{foldKey(s[start:j]), start, j})
		}
		i = j
	}
	return out
}

// foldKey is s in NormalForm with each character in one case, so that any two spellings
// strings.EqualFold equates (nearly: the upper case's lower case) have one key, however
// Unicode writes them; a typographic apostrophe is "'". Text already so is returned as it is,
// without a copy.
func foldKey(s string) string { return strings.Map(foldRune, NormalForm(s)) }

// foldRune is r in the one case terms are compared in, a typographic apostrophe "'".
func foldRune(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	case r == '\u2019' || r == '\u2018':
		return '\''
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// NormalForm is s as a reader reads it, the form in which terms, and de-identification's
// originals, are compared: in NFKC, without format characters (isFormatChar). NFKC rather than
// NFC, since a name a PDF writes with a ligature ("Griﬃn"), or an input method in full-width
// letters, is the same name to whoever reads it, and a deny term that missed it would leave it
// in clear. s is returned as it is, without a copy, when it is so already, as ASCII always is.
func NormalForm(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii || !strings.ContainsFunc(s, isFormatChar) && norm.NFKC.QuickSpanString(s) == len(s) {
		return s
	}
	return norm.NFKC.String(strings.Map(func(r rune) rune {
		if isFormatChar(r) {
			return -1
		}
		return r
	}, s))
}

// isFormatChar says whether r is an invisible character that a word can hold without a reader
// seeing it: a format character (a soft hyphen where a line was broken, a zero-width joiner,
// a direction mark, a byte-order mark), a variation selector or the combining grapheme joiner.
// The zero-width space is not: it parts words (isSpace).
func isFormatChar(r rune) bool {
	return r >= 0xAD && r != zeroWidthSpace && (unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || r == 0x34F)
}

// isSpace says whether r parts words as white space does: the zero-width space too, which
// Thai, Khmer and web text put between words ("Ann\u200bLee" is two).
func isSpace(r rune) bool { return unicode.IsSpace(r) || r == zeroWidthSpace }

const zeroWidthSpace = '\u200b'

// asWritten is s as an allow term must stand in text besides its key: cased as foldKey cases
// it (foldRune), white space runs one space and format characters passed over, but in NFC rather than
// NFKC. An allowed term takes spans out of the redaction, so it stands only for text that reads
// as it does: NFKC's "MRN 1²" is "MRN 12".
func asWritten(s string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFC.String(strings.TrimFunc(s, isSpace)) {
		switch {
		case isFormatChar(r):
			continue
		case isSpace(r):
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(foldRune(r))
	}
	return b.String()
}
