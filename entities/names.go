package entities

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameContext is a second look for the names a model misses where people write them: the
// word after a first name the model found, written the same way ("jane doe"); the words after
// a title ("Dr. Smith", "mrs garcia"); a capitalised name after a relation ("Daughter (Linda)",
// "wife Maria"); two words after the patient, then a comma or a full stop ("Pt jane doe,");
// two capitalised words before what a note says a person did ("Carlos Mendez seen today"); a
// name spelled out letter by letter ("Z e b u l o n"). Each rule skips the words notes use
// around names and words shaped like verbs and adjectives. It returns the spans it finds
// that no span of found overlaps, nor each other, in text order, scored low (a rule, not a
// model): those that de-identify or guard a text redact them too.
func NameContext(text string, found []Entity) []Entity {
	words := wordsOf(text)
	var cand []Entity
	add := func(label string, w word) {
		cand = append(cand, Entity{Label: label, Start: w.start, End: w.end, Score: contextScore})
	}
	next := func(i, k int) (word, bool) {
		if i+k >= len(words) {
			return word{}, false
		}
		return words[i+k], true
	}
	for i, w := range words {
		lower := strings.ToLower(w.text)
		switch {
		case titles[lower] && caseOf(w.text) != 'U':
			// "Dr. Smith", "Mr Alan Brooks", "mrs garcia": one or two names follow. Capitals
			// ("MR", "MS", "DR") are abbreviations of other things.
			if n, ok := next(i, 1); ok && (nameLike(n) || initial(n)) && closeTo(text, w, n, ".") {
				add("person", n)
				// A second word only after a given name ("Mr Alan Brooks"; not "Dr. Bar-Lev
				// Operative findings").
				if m, ok := next(i, 2); ok && givenName(n.text) && nameLike(m) && caseOf(m.text) == 'T' && closeTo(text, n, m, "") {
					add("person", m)
				}
			}
		case reportingVerbs[lower] && i >= 2:
			// "Carlos Mendez seen today": two capitalised words just before it.
			a, b := words[i-2], words[i-1]
			if nameLike(a) && nameLike(b) && caseOf(a.text) == 'T' && caseOf(b.text) == 'T' &&
				closeTo(text, a, b, "") && closeTo(text, b, w, "") {
				add("person", a)
				add("person", b)
			}
		case lower == "pt" || lower == "patient":
			// "Pt jane doe, cell ...": two words written alike, then a comma, a full stop or
			// the end.
			a, aok := next(i, 1)
			b, bok := next(i, 2)
			if aok && bok && nameLike(a) && nameLike(b) && caseOf(a.text) == caseOf(b.text) && caseOf(a.text) != 'U' &&
				closeTo(text, w, a, ".:") && closeTo(text, a, b, "") {
				rest := strings.TrimLeft(text[b.end:], " ")
				if rest == "" || rest[0] == ',' || rest[0] == '.' || rest[0] == ';' {
					add("person", a)
					add("person", b)
				}
			}
		case relations[lower]:
			// "Daughter (Linda)", "wife Maria": a capitalised word, straight after or in
			// parentheses (not after a colon: "Mother: Diabetes" is a history).
			if n, ok := next(i, 1); ok && nameLike(n) && caseOf(n.text) == 'T' && closeTo(text, w, n, "(") {
				add("first_name", n)
			}
		case lower == "re" && i+1 < len(words) && between(text, w.end, words[i+1].start) == ":":
			// A letter's "RE:  Jane Doe" or "RE:  XXXX, XXXX": the patient it is about.
			cand = append(cand, namesAfter(text, words, i+1)...)
		case degreeAt(text, w) && i > 0:
			// "John A. Smith, M.D.", "JONES, MD": the name words just before a degree.
			cand = append(cand, namesBefore(text, words, i)...)
		default:
			if found := listedName(text, words, i); len(found) > 0 {
				cand = append(cand, found...)
			} else if e, ok := aloneGivenName(text, words, i); ok {
				cand = append(cand, e)
			}
		}
	}
	// The word after a first name the model found, when nothing but a space is between and it
	// is written as the first name is ("jane doe", "Carlos Mendez"; not "Alice about").
	for _, e := range found {
		if l := strings.ToLower(e.Label); (l != "first_name" && l != "given_name") || e.Start < 0 || e.End > len(text) || e.Start >= e.End {
			continue
		}
		if !givenName(text[e.Start:e.End]) {
			continue // "Trail Making Test", "banana bag": the model's mistake, not a first name
		}
		j, _ := slices.BinarySearchFunc(words, e.End, func(w word, end int) int { return cmp.Compare(w.start, end+1) })
		if j < len(words) {
			// One space, not a form's columns ("Maarten   Preferred name"); a capitalised
			// word only when the lists know it ("Kwabena Expected side effects").
			w := words[j]
			c := caseOf(w.text)
			if text[e.End:w.start] == " " && nameLike(w) && c == caseOf(text[e.Start:e.End]) && (c == 'l' || givenName(w.text) || familyName(w.text)) {
				add("last_name", w)
			}
		}
	}
	for _, m := range spelledOut.FindAllStringIndex(text, -1) {
		cand = append(cand, Entity{Label: "person", Start: m[0], End: m[1], Score: contextScore})
	}
	return apart(cand, found)
}

// listedName is the name that starts at words[i] by the name lists: a listed given name,
// then a listed name written alike ("Maria Gonzalez"), or a middle initial and any word
// written alike ("ROBERT J. SMITH"); or a listed family name, a comma, and a listed given name written alike ("Smith,
// John"); or an initial and a listed family name ("J. Smith"). Lower-case words are left to the
// rules that have context: too many are plain words.
func listedName(text string, words []word, i int) []Entity {
	w := words[i]
	c := caseOf(w.text)
	if (c != 'T' && c != 'U') || i+1 >= len(words) {
		return nil
	}
	if subjectOfAge(text, words, i) {
		// "Chris is a very nice 38-year-old", "ABCD is a 47-year-old": who the note is about.
		return []Entity{person("person", w)}
	}
	alike := func(n word) bool { return nameLike(n) && (caseOf(n.text) == c || c == 'U' && caseOf(n.text) == 'U') }
	listed := func(n word) bool { return givenName(n.text) || familyName(n.text) }
	n := words[i+1]
	switch {
	case initial(w) && closeTo(text, w, n, ".") && between(text, w.end, n.start) == "." && caseOf(n.text) == 'T' && familyName(n.text) && !givenName(n.text):
		return []Entity{person("first_name", w), person("last_name", n)}
	case !nameLike(w):
		return nil
	case givenName(w.text):
		if initial(n) && i+2 < len(words) && closeTo(text, w, n, "") && closeTo(text, n, words[i+2], ".") {
			if m := words[i+2]; alike(m) {
				return []Entity{person("first_name", w), person("first_name", n), person("last_name", m)}
			}
		}
		if alike(n) && listed(n) && closeTo(text, w, n, "") {
			return []Entity{person("first_name", w), person("last_name", n)}
		}
	case familyName(w.text) && between(text, w.end, n.start) == ",":
		if alike(n) && givenName(n.text) {
			return []Entity{person("last_name", w), person("first_name", n)}
		}
	}
	return nil
}

// aloneGivenName is a listed given name written alone in the middle of a sentence, maybe with
// a possessive ("discussed with Misty", "Gregory's mother", "all of Carlos' identifiers"): the
// word before it is lower case or a comma, and the word after it is not capitalised (a place
// or a service would go on: "Santa Barbara", "Virginia Mason").
func aloneGivenName(text string, words []word, i int) (Entity, bool) {
	w := words[i]
	name := strings.TrimSuffix(w.text, "'s")
	if i == 0 || caseOf(name) != 'T' || calendarWords[strings.ToLower(name)] || !givenName(name) {
		return Entity{}, false
	}
	prev := words[i-1]
	possessive := len(name) < len(w.text) || strings.HasPrefix(text[w.end:], "'")
	// Before it: a lower-case word, a comma, or a capitalised verb opening the sentence
	// ("Instructed Ben"); not an article or a preposition of places, unless the name is
	// possessive ("all of Carlos' identifiers").
	g := between(text, prev.end, w.start)
	lowerBefore := g == " " && (caseOf(prev.text) == 'l' || caseOf(prev.text) == 'T' && strings.HasSuffix(prev.text, "ed"))
	if !(lowerBefore || g == ",") || notBeforeName[prev.text] && !(possessive && prev.text != "the") {
		return Entity{}, false
	}
	if i+1 < len(words) && closeTo(text, w, words[i+1], "") {
		if n := words[i+1]; caseOf(n.text) != 'l' || eponymNouns[n.text] {
			return Entity{}, false
		}
	}
	return Entity{Label: "first_name", Start: w.start, End: w.start + len(name), Score: contextScore}, true
}

// subjectOfAge says whether words[i] opens a sentence that says who the patient is: one
// capitalised word (not a note's own word, a pronoun or a relation), then "is a" or "was a"
// and, within a few words, an age or a sex.
func subjectOfAge(text string, words []word, i int) bool {
	w := words[i]
	if c := caseOf(w.text); c != 'T' && c != 'U' || notNames[strings.ToLower(w.text)] || relations[strings.ToLower(w.text)] {
		return false
	}
	if i > 0 {
		if g := strings.ReplaceAll(between(text, words[i-1].end, w.start), " ", ""); g != "." && g != ":" && g != "," && g != ".," && g != ":," {
			return false
		}
	}
	// The sentence's next hundred bytes hold what the pattern looks for, if it is there.
	return ageSubject.MatchString(text[w.end:min(len(text), w.end+100)])
}

// notBeforeName are the words before a capitalised word that make it a thing or a place:
// "the Alice clamp", "in Iowa", "of America".
var notBeforeName = setOf("the", "a", "an", "in", "of", "from", "at", "near", "into", "on")

// eponymNouns follow a person's name when it names a thing: "Kelly clamps", "Wilson frame",
// "Gilbert's syndrome", "Ted hose".
var eponymNouns = setOf("clamp", "clamps", "frame", "stirrups", "syndrome", "disease", "sign", "test", "hose",
	"catheter", "retractor", "retractors", "forceps", "scissors", "tube", "needle", "procedure", "maneuver",
	"position", "reflex", "score", "scale", "bag", "drain", "stitch", "suture", "incision", "operation",
	"fracture", "palsy", "esophagus", "ulcer", "classification", "criteria", "line", "dilator", "elevator",
	"rongeur", "curette", "speculum", "table", "bed", "stockings", "solution", "medium")

// calendarWords are given names that, alone, are far more often a month or a day.
var calendarWords = setOf("january", "february", "april", "june", "july", "august", "september", "october",
	"november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

var ageSubject = regexp.MustCompile(`^ (?:is|was) an? (?:[A-Za-z-]+ ){0,4}(?:\d+[- ](?:year|month|week|day)s?[- ]old|\d+ ?y/?o\b|(?:fe)?male\b|woman\b|man\b|gentleman\b|lady\b|boy\b|girl\b|infant\b)`)

// namesAfter is the name that begins at words[i]: up to three capitalised words or initials,
// a space or one comma apart ("Jane Doe", "XXXX, XXXX").
func namesAfter(text string, words []word, i int) []Entity {
	var out []Entity
	for k := i; k < len(words) && len(out) < 3; k++ {
		w := words[k]
		c := caseOf(w.text)
		if (c != 'T' && c != 'U') || !(initial(w) || nameLike(w)) {
			break
		}
		// A comma without a space after it is the end of a line that lost its break
		// ("RE:  ABC,MEDICAL RECORD#").
		if k > i {
			if gap := text[words[k-1].end:w.start]; gap != " " && gap != ", " && gap != ". " {
				break
			}
		}
		out = append(out, person("person", w))
	}
	return out
}

// namesBefore is the name written just before the degree at words[d]: up to three capitalised
// words or initials, the last a family name, the others given names; nothing when the word
// before the degree is not a name's.
func namesBefore(text string, words []word, d int) []Entity {
	if strings.ContainsRune("RNC", rune(words[d].text[0])) && between(text, words[d-1].end, words[d].start) != "," {
		return nil // "Charge RN", "Triage RN note": a nurse's role; a nurse's name is signed "Lars Berg, RN"
	}
	var names []word
	for k := d - 1; k >= 0 && len(names) < 3; k-- {
		w := words[k]
		gap := ","
		if len(names) > 0 {
			gap = "."
		}
		right := words[d]
		if len(names) > 0 {
			right = names[len(names)-1]
		}
		c := caseOf(w.text)
		if !closeTo(text, w, right, gap) || (c != 'T' && c != 'U') || !(initial(w) || nameLike(w)) || titles[strings.ToLower(w.text)] {
			break
		}
		names = append(names, w)
	}
	if len(names) == 0 || initial(names[0]) {
		return nil
	}
	out := []Entity{person("last_name", names[0])}
	for _, w := range names[1:] {
		out = append(out, person("first_name", w))
	}
	return out
}

// degreeAt says whether a clinician's degree starts at w ("MD", "M.D.", "RN", "D.O.", "PhD").
func degreeAt(text string, w word) bool {
	if !strings.ContainsRune("MDRNPFC", rune(w.text[0])) {
		return false // every degree starts with one of these: most words stop here
	}
	return degree.MatchString(text[w.start:min(len(text), w.start+8)])
}

var degree = regexp.MustCompile(`^(?:M\.D\.|MD|D\.O\.|R\.N\.|RN|N\.P\.|NP|PA-C|Ph\.D\.|PhD|DPM|DDS|FACS|MBBS|CRNA)(?:[^A-Za-z]|$)`)

// initial is a single capital letter.
func initial(w word) bool { return len(w.text) == 1 && w.text[0] >= 'A' && w.text[0] <= 'Z' }

func person(label string, w word) Entity {
	return Entity{Label: label, Start: w.start, End: w.end, Score: contextScore}
}

// apart is cand in text order without the spans that overlap one of found or an earlier one
// kept: sorted once, then walked.
func apart(cand, found []Entity) []Entity {
	if len(cand) == 0 {
		return nil
	}
	slices.SortStableFunc(cand, byStartEnd)
	tk := newTaken(found)
	var out []Entity
	for _, c := range cand {
		if tk.overlaps(c.Start, c.End) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].End > c.Start {
			continue
		}
		out = append(out, c)
	}
	return out
}

func byStartEnd(a, b Entity) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
}

// taken are spans found already, asked which overlap a stretch: by start, with the furthest
// end so far, so that a stretch's overlapping spans are found from the first whose prefix
// reaches past its start, not by reading them all.
type taken struct {
	of    []Entity // as given (not changed)
	order []int    // indexes into of, by start then end
	reach []int    // reach[k] is the furthest end among of[order[:k+1]]
}

func newTaken(found []Entity) taken {
	t := taken{of: found, order: make([]int, len(found)), reach: make([]int, len(found))}
	for i := range t.order {
		t.order[i] = i
	}
	slices.SortFunc(t.order, func(a, b int) int { return byStartEnd(found[a], found[b]) })
	for k, i := range t.order {
		t.reach[k] = found[i].End
		if k > 0 {
			t.reach[k] = max(t.reach[k], t.reach[k-1])
		}
	}
	return t
}

// overlapping appends to dst the indexes of the spans that overlap [start, end), in their
// given order.
func (t taken) overlapping(start, end int, dst []int) []int {
	from := len(dst)
	k, _ := slices.BinarySearchFunc(t.reach, start+1, cmp.Compare)
	for ; k < len(t.order) && t.of[t.order[k]].Start < end; k++ {
		if i := t.order[k]; t.of[i].End > start {
			dst = append(dst, i)
		}
	}
	slices.Sort(dst[from:])
	return dst
}

func (t taken) overlaps(start, end int) bool {
	k, _ := slices.BinarySearchFunc(t.order, end, func(i, end int) int { return cmp.Compare(t.of[i].Start, end) })
	return k > 0 && t.reach[k-1] > start
}

// contextScore is the score of a span a context rule found.
const contextScore = 0.5

// spelledOut is a name written letter by letter: a capital, then three or more small letters,
// each a space apart, and more such words two spaces apart ("Z e b u l o n  Q u a r t e r
// f i e l d"). Capitals alone ("A B C D E criteria") are a list.
var spelledOut = regexp.MustCompile(`\b[A-Z](?: [a-z]){3,}(?:  [A-Z](?: [a-z]){2,})*\b`)

type word struct {
	text       string
	start, end int
}

// wordsOf is text's runs of letters and marks, with apostrophes and hyphens inside them.
func wordsOf(text string) []word {
	var out []word
	start := -1
	flush := func(end int) {
		w := strings.TrimRight(text[start:end], "'-")
		out = append(out, word{text: w, start: start, end: start + len(w)})
	}
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsMark(r) || (start >= 0 && (r == '\'' || r == '-'))
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			flush(i)
			start = -1
		}
	}
	if start >= 0 {
		flush(len(text))
	}
	return out
}

// nameLike is a word that could be a name: two letters or more, not a word notes use around
// names, and not shaped like a verb or an adjective ("feeling", "declined", "comfortable").
func nameLike(w word) bool {
	l := strings.ToLower(w.text)
	if utf8.RuneCountInString(l) < 2 || notNames[l] {
		return false
	}
	if caseOf(w.text) == 'T' {
		return true // a capitalised word's ending says little: Harding, Reed, Constable
	}
	for _, suffix := range verbish {
		if strings.HasSuffix(l, suffix) && len(l) > len(suffix)+2 {
			return false
		}
	}
	return true
}

// verbish are the endings of the words after "pt" or a lower-case first name that are not
// names: verbs and adjectives, and the nouns clinical notes make of them.
var verbish = []string{"ing", "ed", "ly", "tion", "sion", "able", "ible", "ment", "ness", "ive", "ous", "ful", "less",
	"ure", "ance", "ence", "ity", "ant", "ent", "ies", "ates", "ears", "eeds", "ows"}

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

// closeTo says whether only spaces, and at most one of punct, stand between two words on one
// line.
func closeTo(text string, a, b word, punct string) bool {
	if a.end <= b.start && strings.ContainsAny(text[a.end:b.start], "\n\r") {
		return false
	}
	g := between(text, a.end, b.start)
	return g == " " || len(g) == 1 && strings.Contains(punct, g)
}

// titles come before a name. Not "Mx": TNM staging writes "Nx Mx"; not "miss", a verb.
var titles = setOf("mr", "mrs", "ms", "dr", "prof")

// reportingVerbs are what a note says a person does, after their name.
var reportingVerbs = setOf("seen", "presents", "presented", "reports", "reported", "denies", "denied", "states",
	"stated", "complains", "endorses", "admits")

var relations = setOf("daughter", "son", "wife", "husband", "mother", "mom", "father", "dad", "sister", "brother",
	"spouse", "partner", "niece", "nephew", "aunt", "uncle", "grandson", "granddaughter", "grandmother",
	"grandfather", "friend", "caregiver", "guardian", "neighbor", "neighbour")

// notNames are words that follow names, titles and relations in notes without being names.
var notNames = setOf("and", "or", "the", "a", "an", "is", "was", "are", "were", "has", "had", "have", "with", "without",
	"to", "at", "in", "on", "of", "for", "by", "from", "as", "who", "which", "that", "this", "his", "her", "their",
	"he", "she", "they", "pt", "patient", "presents", "presented", "reports", "reported", "denies", "denied",
	"states", "stated", "seen", "says", "said", "called", "notes", "noted", "feels", "felt", "complains",
	"today", "yesterday", "tomorrow", "here", "there", "also", "not", "no", "yes", "will", "would", "can",
	"could", "should", "may", "might", "must", "did", "does", "do", "been", "being", "be", "came", "comes",
	"arrived", "arrives", "visited", "visits", "present", "bedside", "phone", "cell", "home", "office",
	"clinic", "hospital", "md", "rn", "np", "pa", "phd", "jr", "sr", "ii", "iii", "iv", "yo", "y", "o",
	"lives", "alone", "doing", "well", "stable", "improving", "unchanged", "tolerating", "afebrile", "ambulating",
	"resting", "comfortably", "awake", "alert", "oriented", "sleeping", "male", "female", "man", "woman",
	"better", "worse", "needs", "wants", "appears", "looks", "remains", "continues", "refused", "agrees", "age",
	"deceased", "unknown", "appointment", "visit", "note", "orders", "order", "dr", "mr", "mrs", "ms",
	// capitalised in headings, services and complaints: a note's own words before "seen", "reported"
	"chest", "pain", "cough", "fever", "history", "exam", "care", "family", "social", "review", "blood", "heart",
	"lung", "skin", "head", "neck", "back", "abdominal", "abdomen", "shortness", "breath", "nausea", "headache",
	"symptoms", "findings", "results", "labs", "lab", "vitals", "plan", "assessment", "complaint", "chief", "new",
	"urine", "culture", "physical", "therapy", "occupational", "speech", "case", "management", "nursing",
	"cardiology", "neurology", "radiology", "surgery", "oncology", "psychiatry", "pharmacy", "dietary", "wound",
	"team", "service", "consult", "pcp", "er", "ed", "icu", "or",
	// a form's and a letter's own words, and roles before a degree
	"dear", "dob", "mrn", "sex", "fax", "zip", "nhs", "ssn", "acct", "id", "best", "regards", "sincerely",
	"thanks", "thx", "pls", "please", "unit", "charge", "triage", "staff", "preferred", "expected", "operative")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
