package entities

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameContext is a second look for the names a model misses where people write them: the
// word after a first name the model found ("jane doe", lower case), the words after a title
// ("Dr. Smith", "mr brooks"), a name after a relation ("Daughter (Linda)", "wife Maria"), and
// a name spelled out letter by letter ("Z e b u l o n"). It returns the spans it finds that
// no span of found overlaps, scored low (a rule, not a model): those that de-identify or
// guard a text redact them too.
func NameContext(text string, found []Entity) []Entity {
	words := wordsOf(text)
	var out []Entity
	taken := func(start, end int) bool {
		for _, e := range found {
			if e.Start < end && start < e.End {
				return true
			}
		}
		for _, e := range out {
			if e.Start < end && start < e.End {
				return true
			}
		}
		return false
	}
	add := func(label string, w word) {
		if !taken(w.start, w.end) {
			out = append(out, Entity{Label: label, Start: w.start, End: w.end, Score: contextScore})
		}
	}
	for i, w := range words {
		lower := strings.ToLower(w.text)
		next := func(k int) (word, bool) {
			if i+k >= len(words) {
				return word{}, false
			}
			return words[i+k], true
		}
		switch {
		case titles[lower]:
			// "Dr. Smith", "Mr Alan Brooks", "mrs garcia": one or two names follow.
			if n, ok := next(1); ok && nameLike(n) && closeTo(text, w, n, ".") {
				add("person", n)
				if m, ok := next(2); ok && nameLike(m) && isUpper(m.text) && closeTo(text, n, m, "") {
					add("person", m)
				}
			}
		case reportingVerbs[lower] && i >= 2:
			// "Carlos Mendez seen today", "Maria Lopez presents with": two capitalised words
			// that are not a note's own words, just before what a note says people do.
			a, b := words[i-2], words[i-1]
			if nameLike(a) && nameLike(b) && caseOf(a.text) == 'T' && caseOf(b.text) == 'T' &&
				closeTo(text, a, b, "") && closeTo(text, b, w, "") && !notNames[strings.ToLower(a.text)] {
				add("person", a)
				add("person", b)
			}
		case lower == "pt" || lower == "patient":
			// "Pt jane doe, cell ...": two words written alike after the patient, then a
			// comma, a full stop or the end.
			a, aok := next(1)
			b, bok := next(2)
			if aok && bok && nameLike(a) && nameLike(b) && caseOf(a.text) == caseOf(b.text) && caseOf(a.text) != 'U' &&
				closeTo(text, w, a, ".:") && closeTo(text, a, b, "") {
				rest := strings.TrimLeft(text[b.end:], " ")
				if rest == "" || rest[0] == ',' || rest[0] == '.' || rest[0] == ';' {
					add("person", a)
					add("person", b)
				}
			}
		case relations[lower]:
			// "Daughter (Linda)", "wife Maria", "son: Tom": a capitalised word, or any word in
			// the parentheses that follow.
			if n, ok := next(1); ok && nameLike(n) && (isUpper(n.text) || between(text, w.end, n.start) == "(") &&
				closeTo(text, w, n, "(:") {
				add("first_name", n)
			}
		}
	}
	// The word after a first name the model found, when nothing but a space is between and it
	// is written as the first name is ("jane doe", "Carlos Mendez", "MARIA LOPEZ"; not "Alice
	// about").
	for _, e := range found {
		if l := strings.ToLower(e.Label); l != "first_name" && l != "given_name" {
			continue
		}
		for _, w := range words {
			if w.start > e.End {
				if between(text, e.End, w.start) == " " && nameLike(w) && caseOf(w.text) == caseOf(text[e.Start:e.End]) {
					add("last_name", w)
				}
				break
			}
		}
	}
	for _, m := range spelledOut.FindAllStringIndex(text, -1) {
		w := word{text: text[m[0]:m[1]], start: m[0], end: m[1]}
		if !taken(w.start, w.end) {
			out = append(out, Entity{Label: "person", Start: w.start, End: w.end, Score: contextScore})
		}
	}
	return out
}

// contextScore is the score of a span a context rule found.
const contextScore = 0.5

// spelledOut is a name written letter by letter: four or more single letters, each a space
// apart, a run of such words two spaces apart ("Z e b u l o n  Q u a r t e r f i e l d").
var spelledOut = regexp.MustCompile(`\b[A-Za-z](?: {1,2}[A-Za-z]){3,}\b`)

type word struct {
	text       string
	start, end int
}

// wordsOf is text's runs of letters, apostrophes and hyphens within them.
func wordsOf(text string) []word {
	var out []word
	start := -1
	for i, r := range text {
		inWord := unicode.IsLetter(r) || (start >= 0 && (r == '\'' || r == '-'))
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			out = append(out, word{text: strings.TrimRight(text[start:i], "'-"), start: start, end: start + len(strings.TrimRight(text[start:i], "'-"))})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, word{text: strings.TrimRight(text[start:], "'-"), start: start, end: start + len(strings.TrimRight(text[start:], "'-"))})
	}
	return out
}

// nameLike is a word that could be a name: two letters or more, not a word a note uses
// around names ("presents", "and", "was").
func nameLike(w word) bool {
	return utf8.RuneCountInString(w.text) >= 2 && !notNames[strings.ToLower(w.text)]
}

// caseOf is how a word is written: 'l' all lower case, 'U' all capitals, 'T' capitalised.
func caseOf(s string) byte {
	switch {
	case s == strings.ToLower(s):
		return 'l'
	case s == strings.ToUpper(s):
		return 'U'
	case isUpper(s):
		return 'T'
	}
	return '?'
}

func isUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// between is the text between two offsets, spaces trimmed, or " " when it is only spaces.
func between(text string, from, to int) string {
	if from > to {
		return "?"
	}
	gap := text[from:to]
	if t := strings.TrimSpace(gap); t != "" {
		return t
	}
	if gap == "" {
		return ""
	}
	return " "
}

// closeTo says whether only spaces, and at most one of punct, stand between two words.
func closeTo(text string, a, b word, punct string) bool {
	g := between(text, a.end, b.start)
	return g == " " || len(g) == 1 && strings.Contains(punct, g)
}

// reportingVerbs are what a note says a person does, after their name.
var reportingVerbs = setOf("seen", "presents", "presented", "reports", "reported", "denies", "denied", "states",
	"stated", "complains", "endorses", "admits", "arrived", "returns", "returned")

var titles = setOf("mr", "mrs", "ms", "miss", "dr", "prof") // not "Mx": TNM staging writes "Nx Mx"

var relations = setOf("daughter", "son", "wife", "husband", "mother", "mom", "father", "dad", "sister", "brother",
	"spouse", "partner", "niece", "nephew", "aunt", "uncle", "grandson", "granddaughter", "grandmother",
	"grandfather", "friend", "caregiver", "guardian", "neighbor", "neighbour", "per", "attn", "cc")

// notNames are words that follow names and titles in notes without being names.
var notNames = setOf("and", "or", "the", "a", "an", "is", "was", "are", "were", "has", "had", "have", "with", "without",
	"to", "at", "in", "on", "of", "for", "by", "from", "as", "who", "which", "that", "this", "his", "her", "their",
	"he", "she", "they", "pt", "patient", "presents", "presented", "reports", "reported", "denies", "denied",
	"states", "stated", "seen", "says", "said", "called", "notes", "noted", "feels", "felt", "complains",
	"today", "yesterday", "tomorrow", "here", "there", "also", "not", "no", "yes", "will", "would", "can",
	"could", "should", "may", "might", "must", "did", "does", "do", "been", "being", "be", "came", "comes",
	"arrived", "arrives", "visited", "visits", "present", "at", "bedside", "phone", "cell", "home", "office",
	"clinic", "hospital", "md", "rn", "np", "pa", "do", "phd", "jr", "sr", "ii", "iii", "iv", "yo", "y", "o",
	// capitalised in headings and complaints: a note's own words before "reported", "seen"
	"chest", "pain", "cough", "fever", "history", "exam", "care", "family", "social", "review", "blood", "heart",
	"lung", "skin", "head", "neck", "back", "abdominal", "abdomen", "shortness", "breath", "nausea", "headache",
	"symptoms", "findings", "results", "labs", "vitals", "plan", "assessment", "complaint", "chief", "new", "no",
	"lives", "alone", "doing", "well", "stable", "improving", "unchanged", "tolerating", "afebrile", "ambulating",
	"resting", "comfortably", "awake", "alert", "oriented", "sleeping", "male", "female", "man", "woman")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
