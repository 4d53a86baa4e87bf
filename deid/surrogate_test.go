package deid

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/sluice-serving/sluice/entities"
)

// genNoteT is a generated note and its gold spans, with what a reader checks afterwards.
type genNoteT struct {
	text  string
	spans []entities.Entity
	// dates are the spans' texts of the dates in order of the text; dob is the date of birth
	// among them and visit the date the age was stated on.
	dob, visit string
	age        int
	name       string // as written: lower case, capitals or title case
	sex        byte   // what the title before the name says: 'F', 'M' or 0 ("Pt")
}

var layouts = []string{"01/02/2006", "1/2/06", "2006-01-02", "January 2, 2006", "02-Jan-2006", "Jan 2, 2006", "2 January 2006"}

// genNote writes a short note: a name in some case, a date of birth in one layout, an age that
// agrees with it at the visit, the visit and two later dates in other layouts, an account
// number after its context word.
func genNote(rng *rand.Rand) genNoteT {
	var b strings.Builder
	var spans []entities.Entity
	add := func(label, s string) {
		spans = append(spans, entities.Entity{Label: label, Start: b.Len(), End: b.Len() + len(s), Score: 0.99})
		b.WriteString(s)
	}
	title := []string{"Pt ", "Mr. ", "Mrs. ", "Ms ", "MR. "}[rng.IntN(5)]
	var first string
	switch title {
	case "Mr. ", "MR. ":
		first = []string{"Alan", "Carlos", "ROBERT"}[rng.IntN(3)]
	case "Pt ":
		first = []string{"jane", "Alan", "MARIA", "linda", "Carlos"}[rng.IntN(5)]
	default:
		first = []string{"jane", "MARIA", "Linda"}[rng.IntN(3)]
	}
	visit := time.Date(2010+rng.IntN(14), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
	age := 18 + rng.IntN(85) // over 89 now and then
	dob := visit.AddDate(-age, -rng.IntN(11), -rng.IntN(27))
	n := genNoteT{age: age}
	b.WriteString(title)
	n.name, n.sex = first, titleSex(title)
	add("first_name", first)
	b.WriteString(", DOB ")
	l := layouts[rng.IntN(len(layouts))]
	for dob.Year() < 1950 && l == "1/2/06" { // a two-digit year reads 00-49 as 20xx
		l = layouts[rng.IntN(len(layouts))]
	}
	n.dob = dob.Format(l)
	add("date_of_birth", n.dob)
	b.WriteString(", ")
	add("age", fmt.Sprint(age))
	b.WriteString(" y/o. Seen ")
	n.visit = visit.Format(layouts[rng.IntN(len(layouts))])
	add("date", n.visit)
	for _, days := range []int{7 + rng.IntN(60), 90 + rng.IntN(300)} {
		b.WriteString(". Next ")
		add("date", visit.AddDate(0, 0, days).Format(layouts[rng.IntN(len(layouts))]))
	}
	b.WriteString(". Billing: ")
	add("account_number", fmt.Sprintf("acct #%03d-%03d-%03d", rng.IntN(1000), rng.IntN(1000), rng.IntN(1000)))
	b.WriteString(".")
	n.text, n.spans = b.String(), spans
	return n
}

// isSexedName says whether name, in any case, is one of the given names of that sex.
func isSexedName(sex byte, name string) bool {
	for _, n := range sexedNames()[sex] {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// shapeOf is a value's form: digits as 9, letters as a or A, the rest as it is.
func shapeOf(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return '9'
		case r >= 'a' && r <= 'z':
			return 'a'
		case r >= 'A' && r <= 'Z':
			return 'A'
		}
		return r
	}, s)
}

// TestReplaceGivesSurrogatesAReaderBelieves: over many generated notes, replace keeps every
// date's layout, the dates' order and the days between them; the date of birth still agrees
// with the stated age; an age over 89 becomes "90+"; the context word stays outside the number
// and the number keeps its grouping; a name keeps its case; keep_year keeps every date's year.
func TestReplaceGivesSurrogatesAReaderBelieves(t *testing.T) {
	r, err := New(Config{HashKey: []byte("0123456789abcdef"), Entropy: bytes.NewReader(bytes.Repeat([]byte{9}, 1<<20))})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(52, 53))
	for i := range 300 {
		n := genNote(rng)
		keepYear := i%3 == 0
		res := r.Apply(n.text, n.spans, Options{Method: Replace, KeepYear: keepYear})
		byOriginal := map[string]Redaction{}
		for _, red := range res.Redactions {
			byOriginal[n.text[red.Start:red.End]] = red
		}
		var before, after []time.Time
		for _, sp := range n.spans {
			orig := n.text[sp.Start:sp.End]
			red, ok := byOriginal[orig]
			switch {
			case sp.Label == "account_number":
				red, ok = byOriginal[strings.TrimPrefix(orig, "acct #")]
				if !ok || !strings.Contains(res.Text, "acct #"+red.Replacement) || shapeOf(red.Replacement) != "999-999-999" {
					t.Fatalf("note %d: the account number %+v in %q", i, red, res.Text)
				}
			case !ok:
				t.Fatalf("note %d: %q not redacted: %q", i, orig, res.Text)
			case sp.Label == "age":
				want := orig
				if n.age > 89 {
					want = "90+"
				}
				if red.Replacement != want {
					t.Fatalf("note %d: age %q became %q, want %q", i, orig, red.Replacement, want)
				}
			case sp.Label == "first_name":
				if red.Replacement == orig || inCaseOf(orig, red.Replacement) != red.Replacement {
					t.Fatalf("note %d: name %q became %q", i, orig, red.Replacement)
				}
				if n.sex != 0 && !isSexedName(n.sex, red.Replacement) {
					t.Fatalf("note %d: %q after the title %q became %q", i, orig, n.text[:strings.Index(n.text, orig)], red.Replacement)
				}
			default: // the dates
				ot, ol, ok1 := parseDate(orig, "en")
				rt, rl, ok2 := parseDate(red.Replacement, "en")
				if !ok1 || !ok2 || ol.format(rt) != red.Replacement { // written in the original's layout
					t.Fatalf("note %d: date %q became %q (layouts %+v, %+v)", i, orig, red.Replacement, ol, rl)
				}
				if keepYear && rt.Year() != ot.Year() {
					t.Fatalf("note %d: keep_year, and %q became %q", i, orig, red.Replacement)
				}
				before, after = append(before, ot), append(after, rt)
				if orig == n.dob && n.age <= 89 {
					visit, _, _ := parseDate(byOriginal[n.visit].Replacement, "en")
					if years := ageAt(rt, visit); years != n.age && !keepYear {
						t.Fatalf("note %d: born %q, seen %q at %d: the surrogates say %d", i, red.Replacement,
							byOriginal[n.visit].Replacement, n.age, years)
					}
				}
			}
		}
		if keepYear {
			continue // the year put back moves intervals across New Year
		}
		for j := 1; j < len(before); j++ {
			if after[j].Sub(after[j-1]) != before[j].Sub(before[j-1]) {
				t.Fatalf("note %d: the days between dates %d and %d changed: %q", i, j-1, j, res.Text)
			}
		}
	}
}

// ageAt is the age in whole years on day at of someone born on born.
func ageAt(born, at time.Time) int {
	years := at.Year() - born.Year()
	if at.YearDay() < born.YearDay() && !(at.Month() > born.Month() || at.Month() == born.Month() && at.Day() >= born.Day()) {
		years--
	}
	return years
}

// An age in words is drawn like any other span rather than kept (it may be over 89), and
// with keep_year no document's shift is a whole year (which would give every date back).
func TestAgesInWordsAndWholeYearShifts(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	text := "Aged ninety-two."
	res := r.Apply(text, []entities.Entity{{Label: "age", Start: 5, End: 15}}, Options{Method: Replace})
	if strings.Contains(res.Text, "ninety-two") {
		t.Fatalf("an age in words kept: %q", res.Text)
	}
	for range 2000 {
		if d := r.Begin(Options{Method: Replace, KeepYear: true}); d.days == 0 || d.days%365 == 0 || d.days%366 == 0 {
			t.Fatalf("a shift of %d days", d.days)
		}
	}
}

// TestASurrogateTellsNothingOfItsOriginal: an identifier's surrogate draws each character from
// all of its class, the original's own included. Were the original's character never drawn in
// its place, some tens of documents about one patient (each drawing afresh) would spell it out.
func TestASurrogateTellsNothingOfItsOriginal(t *testing.T) {
	r, err := New(Config{HashKey: []byte("0123456789abcdef"), Entropy: rand.NewChaCha8([32]byte{5})})
	if err != nil {
		t.Fatal(err)
	}
	const text = "MRN 55555 Ab"
	spans := []entities.Entity{{Start: 4, End: 9, Label: "mrn"}, {Start: 10, End: 12, Label: "mrn"}}
	var keptDigit, keptLetter bool
	for range 200 {
		res := r.Apply(text, spans, Options{Method: Replace})
		if len(res.Redactions) != 2 {
			t.Fatalf("%+v", res.Redactions)
		}
		digits, letters := res.Redactions[0].Replacement, res.Redactions[1].Replacement
		if digits == "55555" || letters == "Ab" || shapeOf(digits) != "99999" || shapeOf(letters) != "Aa" {
			t.Fatalf("%q, %q", digits, letters)
		}
		keptDigit = keptDigit || strings.Contains(digits, "5")
		keptLetter = keptLetter || letters[0] == 'A' || letters[1] == 'b'
	}
	if !keptDigit || !keptLetter {
		t.Fatalf("in 200 documents no surrogate kept a character of its original in its place (digit %v, letter %v)", keptDigit, keptLetter)
	}
}

// TestOneOriginalInTwoCasesHasOneSurrogate: within a document a name written "ALAN BROOKS",
// "Alan Brooks" and "alan brooks" is one person, and its stand-in is one name in the case of
// each, with or without a subject; so for an identifier.
func TestOneOriginalInTwoCasesHasOneSurrogate(t *testing.T) {
	r, err := New(Config{HashKey: []byte("0123456789abcdef"), Entropy: rand.NewChaCha8([32]byte{6})})
	if err != nil {
		t.Fatal(err)
	}
	const text = "ALAN BROOKS met Alan Brooks and alan brooks; MRN AB12 is ab12"
	spans := []entities.Entity{{Start: 0, End: 11, Label: "person"}, {Start: 16, End: 27, Label: "person"},
		{Start: 32, End: 43, Label: "person"}, {Start: 49, End: 53, Label: "mrn"}, {Start: 57, End: 61, Label: "mrn"}}
	for i := range 20 {
		opts := Options{Method: Replace}
		if i%2 == 1 {
			opts.Subject = "mrn-1" // derived from the subject: the same holds
		}
		res := r.Apply(text, spans, opts)
		var got []string
		for _, red := range res.Redactions {
			got = append(got, red.Replacement)
		}
		if len(got) != 5 || !strings.EqualFold(got[0], got[1]) || !strings.EqualFold(got[0], got[2]) || !strings.EqualFold(got[3], got[4]) ||
			got[0] != strings.ToUpper(got[0]) || got[1] == strings.ToUpper(got[1]) || got[2] != strings.ToLower(got[2]) ||
			got[3] != strings.ToUpper(got[3]) || got[4] != strings.ToLower(got[4]) {
			t.Fatalf("subject %q: %q", opts.Subject, got)
		}
	}
}

// TestATitleIsReadAfterAnyCharacter: a title after a character of several bytes (a bullet, a
// dash, a no-break space) or before one says its bearer's sex, as after a space (the byte
// after the character's first was read as the word's start).
func TestATitleIsReadAfterAnyCharacter(t *testing.T) {
	for before, want := range map[string]byte{"seen by\u00a0Mr. ": 'M', "\u2022Mrs. ": 'F', "\u2014Mr ": 'M', "Mr.\u00a0": 'M',
		"Ms\t": 'F', "seen by Dr. ": 0, "\u2022": 0, "": 0} {
		if got := titleSex(before); got != want {
			t.Errorf("%q: %q, want %q", before, got, want)
		}
	}
}

// TestAStandInIsNoOtherOriginalOfTheNote: a stand-in is drawn again where it comes out another
// original of the document, so that no real name of the note stands in another's place; a
// quarter of the given names a title draws from, each in the note once, leave none of them as
// another's stand-in.
func TestAStandInIsNoOtherOriginalOfTheNote(t *testing.T) {
	names := sexedNames()['F']
	var b strings.Builder
	var spans []entities.Entity
	originals := map[string]bool{}
	for i := 0; i < len(names); i += 4 {
		b.WriteString("Mrs. ")
		spans = append(spans, entities.Entity{Label: "first_name", Start: b.Len(), End: b.Len() + len(names[i]), Score: 0.99})
		b.WriteString(names[i] + " was seen. ")
		originals[strings.ToLower(names[i])] = true
	}
	res := newTestRedactor(t, "0123456789abcdef").Apply(b.String(), spans, Options{Method: Replace})
	for _, red := range res.Redactions {
		if originals[strings.ToLower(red.Replacement)] {
			t.Fatalf("a stand-in is another original of the note: %q (of %d)", red.Replacement, len(spans))
		}
	}
	// Across the kinds of name: a family name drawn for a last_name is none of the words of the
	// note's persons (a third of the family names the draws choose from).
	fake := gofakeit.New(1)
	seen := map[string]bool{}
	b.Reset()
	spans = spans[:0]
	for len(seen) < 150 {
		if last := fake.LastName(); !seen[strings.ToLower(last)] {
			seen[strings.ToLower(last)] = true
			b.WriteString("Dr. ")
			spans = append(spans, entities.Entity{Label: "person", Start: b.Len(), End: b.Len() + len("Pat "+last), Score: 0.99})
			b.WriteString("Pat " + last + " called. ")
		}
	}
	for i := range 30 {
		b.WriteString("Seen by ")
		name := "Qzx" + strings.Repeat("q", i)
		spans = append(spans, entities.Entity{Label: "last_name", Start: b.Len(), End: b.Len() + len(name), Score: 0.99})
		b.WriteString(name + ". ")
	}
	res = newTestRedactor(t, "0123456789abcdef").Apply(b.String(), spans, Options{Method: Replace})
	for _, red := range res.Redactions {
		if red.Label == "last_name" && seen[strings.ToLower(red.Replacement)] {
			t.Fatalf("a family name's stand-in is a person's of the note: %q", red.Replacement)
		}
	}
}
