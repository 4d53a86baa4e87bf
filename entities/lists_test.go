package entities

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func mustLists(t *testing.T, allow, deny []string) *Lists {
	t.Helper()
	l, errs := NewLists(allow, deny)
	if errs != nil {
		t.Fatalf("NewLists: %v", errs)
	}
	return l
}

// spansOf writes spans as "label=text", in order.
func spansOf(text string, ents []Entity) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Label+"="+text[e.Start:e.End])
	}
	return out
}

// spanOf is the entity over the nth occurrence of s in text.
func spanOf(text, s, label string, nth int) Entity {
	at := -1
	for range nth + 1 {
		at += 1 + strings.Index(text[at+1:], s)
	}
	return Entity{Label: label, Start: at, End: at + len(s), Score: 0.8}
}

// TestDenyTermsAreWholeWordsInAnyCase: a deny term stands where the text's words are the
// term's, in any case, with any white space between them, punctuation as the term has it
// (a typographic apostrophe for a plain one); never inside a longer word or number.
func TestDenyTermsAreWholeWordsInAnyCase(t *testing.T) {
	l := mustLists(t, nil, []string{"alan", "Ward Phoenix", "MRN 12", "O'Neil", "Dr."})
	text := "Alan, ALAN's chart; Alana and xalan no. alan-smith. ward \n PHOENIX, WardPhoenix, Ward-Phoenix. " +
		"mrn  12, MRN 123, MRN 12a. O’Neil, dr. Lee, Dr.X"
	got := spansOf(text, l.Apply(text, nil))
	want := []string{"deny_list=Alan", "deny_list=ALAN", "deny_list=alan", "deny_list=ward \n PHOENIX",
		"deny_list=mrn  12", "deny_list=O’Neil", "deny_list=dr.", "deny_list=Dr."}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestTermsMatchHoweverTheTextWritesThem: a term matches the same words written in another
// Unicode form: decomposed (macOS and PDFs write "José" as "Jose" and a combining accent), in
// compatibility characters (a PDF's "ﬁ" ligature, full-width letters), or with an invisible
// format character inside a word (a soft hyphen where a line was broken, a zero-width joiner),
// and a term written so matches the text's plain form; the span covers the text as written.
// Terms and text were compared as written, so a deny-listed name in NFD stayed in clear (an
// auditor's find); the allow list reads them the same way.
func TestTermsMatchHoweverTheTextWritesThem(t *testing.T) {
	l := mustLists(t, []string{"Saint Ren\u00e9e"}, []string{"Jos\u00e9 Garc\u00eda", "Griffin", "Zoe\u0308"})
	text := "Jose\u0301 Garci\u0301a; GARCI\u0301A Jose\u0301; Gar\u00adc\u00eda; Jos\u200d\u00e9 \u00adGarc\u00eda\u00ad; " +
		"Gri\ufb03n; \uff27\uff52\uff49\uff46\uff46\uff49\uff4e; Zo\u00eb; Zoe; Saint Rene\u0301e"
	ents := []Entity{spanOf(text, "Saint Rene\u0301e", "name", 0)}
	got := spansOf(text, l.Apply(text, ents))
	want := []string{"deny_list=Jose\u0301 Garci\u0301a", "deny_list=Jos\u200d\u00e9 \u00adGarc\u00eda\u00ad",
		"deny_list=Gri\ufb03n", "deny_list=\uff27\uff52\uff49\uff46\uff46\uff49\uff4e", "deny_list=Zo\u00eb"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if n := l.LongestDeny(); n != 13 { // "José García" decomposed: the most code points it takes in text
		t.Fatalf("LongestDeny %d", n)
	}
}

// TestAnAllowedTermStandsOnlyForTextThatReadsAsIt: an allow term takes spans out of the
// redaction, so it stands for text that is it in NFC, not in NFKC, where "MRN 1²" is "MRN 12"
// and a superscript or a circled digit would unredact an identifier that reads otherwise; a
// deny term still matches them (it can only redact more).
func TestAnAllowedTermStandsOnlyForTextThatReadsAsIt(t *testing.T) {
	l := mustLists(t, []string{"MRN 12", "Saint Ren\u00e9e"}, []string{"Bed 7"})
	text := "Patient MRN 1\u00b2 seen; MRN  12 kept; Saint Rene\u0301e; Bed \u2466."
	ents := []Entity{spanOf(text, "MRN 1\u00b2", "id", 0), spanOf(text, "MRN  12", "id", 0), spanOf(text, "Saint Rene\u0301e", "name", 0)}
	got := spansOf(text, l.Apply(text, ents))
	want := []string{"id=MRN 1\u00b2", "deny_list=Bed \u2466"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestAZeroWidthSpacePartsWords: the zero-width space parts words, as Thai, Khmer and web text
// use it; taken for an invisible character inside a word, it made "Ann\u200bLee" one word, and
// the deny term "Ann" was left in clear beside it.
func TestAZeroWidthSpacePartsWords(t *testing.T) {
	l := mustLists(t, nil, []string{"Ann", "Ann Lee"})
	for text, want := range map[string][]string{
		"Seen Ann\u200bLee today.": {"deny_list=Ann\u200bLee"},
		"Seen Ann\u200b today.":    {"deny_list=Ann"},
	} {
		if got := spansOf(text, l.Apply(text, nil)); !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
}

// TestAllowedSpansAreDroppedWhateverFoundThem: a span whose words lie in allowed text goes
// (its comma or space at an edge does not count); a span with more than the allowed words
// stays whole, and so does the same word elsewhere.
func TestAllowedSpansAreDroppedWhateverFoundThem(t *testing.T) {
	l := mustLists(t, []string{"Mercy Trial", "trial center"}, nil)
	text := "Enrolled in the Mercy Trial, Mercy Trial Center; Dr. Mercy Trial Smith saw Mercy."
	ents := []Entity{
		spanOf(text, "Mercy", "last_name", 0),
		spanOf(text, "Mercy Trial,", "organization", 0),
		spanOf(text, "Mercy Trial Center", "organization", 0), // two allowed terms that overlap
		spanOf(text, "Dr. Mercy Trial Smith", "name", 0),
		spanOf(text, "Mercy", "first_name", 4),
	}
	before := slices.Clone(ents)
	got := spansOf(text, l.Apply(text, ents))
	want := []string{"name=Dr. Mercy Trial Smith", "first_name=Mercy"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if !slices.Equal(ents, before) {
		t.Fatal("Apply changed its input")
	}
	if got := spansOf(text, l.DropAllowed(text, ents)); !slices.Equal(got, want) {
		t.Fatalf("DropAllowed: %q", got)
	}
}

// TestDenyTermsAndFoundSpansOverlap: a found span that holds a deny term whole keeps it (and its
// label); one inside a deny term gives way to it; one partly over it keeps its words outside
// it; of overlapping deny terms the longest wins; an allowed term is never denied.
func TestDenyTermsAndFoundSpansOverlap(t *testing.T) {
	l := mustLists(t, []string{"Phoenix Trial", "Smith"}, []string{"Ward Phoenix", "Ward", "Jones Ward", "Smith", "Lee"})
	text := "At Ward Phoenix Hospital; Dr. Ward Phoenix Jones; Ward Phoenix; the Phoenix Trial; Jones Ward Phoenix; Smith; Lee"
	ents := []Entity{
		spanOf(text, "Phoenix Hospital", "organization", 0),
		spanOf(text, "Dr. Ward Phoenix Jones", "name", 0),
		spanOf(text, "Phoenix", "city", 2),
		spanOf(text, "Phoenix Trial", "organization", 0),
	}
	got := spansOf(text, l.Apply(text, ents))
	want := []string{"deny_list=Ward Phoenix", "organization=Hospital", "name=Dr. Ward Phoenix Jones", "deny_list=Ward Phoenix",
		"deny_list=Jones Ward", "deny_list=Lee"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestListBounds(t *testing.T) {
	secret := "Zebra Canary"
	long := strings.Repeat("a", MaxTermBytes+1)
	_, errs := NewLists([]string{secret, "  ", long, "\xff" + secret}, make([]string, MaxListTerms+1))
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
		if strings.Contains(e.Error(), "Zebra") || strings.Contains(e.Error(), "aaa") {
			t.Fatalf("an error quotes a term: %v", e)
		}
	}
	want := []string{"term 1 of the allow list holds no letter or digit", "term 2 of the allow list is 257 bytes; at most 256 are allowed",
		"term 3 of the allow list is not valid UTF-8", "the deny list holds 1001 terms; at most 1000 are allowed"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if l, errs := NewLists(nil, []string{}); l != nil || errs != nil {
		t.Fatal("empty lists are not nil")
	}
	ents := []Entity{{Label: "x", Start: 0, End: 1}}
	if got := (*Lists)(nil).Apply("a", ents); &got[0] != &ents[0] {
		t.Fatal("nil lists copied the spans")
	}
	full := make([]string, MaxListTerms)
	for i := range full {
		full[i] = strings.Repeat("é", MaxTermBytes/2)
	}
	if _, errs := NewLists(full, full); errs != nil {
		t.Fatalf("the bounds themselves: %v", errs)
	}
}

// refMatches are the places term stands in text, found by brute force over every stretch:
// the stretch, its white-space runs made one space, folds to the term's fold; it starts and
// ends on no space; and a word character at its edge has none beside it outside.
func refMatches(text, term string) [][2]int {
	norm := func(s string) string { return foldKey(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")) }
	want := norm(term)
	word := func(i int, before bool) bool { // the character before (or at) i is a word character
		if before {
			r, _ := utf8.DecodeLastRuneInString(text[:i])
			return i > 0 && isWordRune(r)
		}
		r, _ := utf8.DecodeRuneInString(text[i:])
		return i < len(text) && isWordRune(r)
	}
	var out [][2]int
	first, _ := utf8.DecodeRuneInString(want)
	for i := range len(text) {
		if r, _ := utf8.DecodeRuneInString(text[i:]); foldKey(string(r)) != string(first) {
			continue
		}
		for j := i + 1; j <= min(len(text), i+4*len(term)); j++ { // white space runs at most 4 bytes a byte of the term
			s := text[i:j]
			if !utf8.ValidString(s) || norm(s) != want || strings.TrimSpace(s) != s {
				continue
			}
			if (word(i+1, true) && word(i, true)) || (word(j, true) && word(j, false)) {
				continue
			}
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

// TestListsAgainstBruteForce: over generated texts, spans and lists, every deny term's
// occurrence (found by brute force) outside allowed text is redacted whole, no span kept lies
// within an allowed occurrence, every span kept is a found span or a piece of one or a deny
// span, and deny spans do not overlap.
func TestListsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	words := []string{"Alan", "alan", "Brooks", "ward", "Ward", "12", "MRN", "O'Neil", "o’neil", "x", "Alana", "é", "É"}
	seps := []string{" ", "  ", ", ", "-", "\n", "'s ", ". "}
	for n := range 3000 {
		var b strings.Builder
		for k := range 4 + rng.IntN(10) {
			if k > 0 {
				b.WriteString(seps[rng.IntN(len(seps))])
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		text := b.String()
		term := func() string {
			t := words[rng.IntN(len(words))]
			if rng.IntN(2) == 0 {
				t += []string{" ", "-", " "}[rng.IntN(3)] + words[rng.IntN(len(words))]
			}
			return t
		}
		var allow, deny []string
		for range rng.IntN(3) {
			allow = append(allow, term())
		}
		for range 1 + rng.IntN(3) {
			deny = append(deny, term())
		}
		var ents []Entity
		for range rng.IntN(6) {
			i, j := rng.IntN(len(text)), rng.IntN(len(text))
			if i > j {
				i, j = j, i
			}
			if i < j && utf8.RuneStart(text[i]) && (j == len(text) || utf8.RuneStart(text[j])) {
				ents = append(ents, Entity{Label: "found", Start: i, End: j})
			}
		}
		l := mustLists(t, allow, deny)
		out := l.Apply(text, ents)
		var allowed [][2]int
		for _, a := range allow {
			allowed = append(allowed, refMatches(text, a)...)
		}
		inAllowed := func(s, e int) bool { // within the union of allowed occurrences
			for i := s; i < e; i++ {
				r, _ := utf8.DecodeRuneInString(text[i:])
				if !isWordRune(r) {
					continue
				}
				if !slices.ContainsFunc(allowed, func(a [2]int) bool { return a[0] <= i && i < a[1] }) {
					return false
				}
			}
			return true
		}
		covered := func(i int) bool {
			return slices.ContainsFunc(out, func(e Entity) bool { return e.Start <= i && i < e.End })
		}
		for _, d := range deny {
			for _, m := range refMatches(text, d) {
				if inAllowed(m[0], m[1]) {
					continue
				}
				for i := m[0]; i < m[1]; i++ {
					if !covered(i) {
						t.Fatalf("case %d: %q allow %q deny %q spans %v: %q at %v is not redacted: %q", n, text, allow, deny, ents, d, m, spansOf(text, out))
					}
				}
			}
		}
		var lastDeny int
		for _, e := range out {
			w := wordsSpan(text, e)
			if strings.ContainsFunc(text[e.Start:e.End], isWordRune) && inAllowed(w.Start, w.End) && e.Label == "found" {
				// dropped only when one allowed occurrence (or overlapping ones) holds it
				t.Fatalf("case %d: %q allow %q deny %q spans %v: %q kept", n, text, allow, deny, ents, text[e.Start:e.End])
			}
			switch e.Label {
			case DenyLabel:
				if e.Start < lastDeny {
					t.Fatalf("case %d: deny spans overlap: %q", n, spansOf(text, out))
				}
				lastDeny = e.End
			default:
				if !slices.ContainsFunc(ents, func(f Entity) bool { return f.Start <= e.Start && e.End <= f.End }) {
					t.Fatalf("case %d: %v is no piece of a found span", n, e)
				}
			}
		}
	}
}

// FuzzLists: any valid text, any terms and spans: NewLists answers lists or errors, and Apply never
// panics, keeps every span within the text on character boundaries, and its deny spans stand
// apart from each other and from every other span.
func FuzzLists(f *testing.F) {
	f.Add("Alan met Bob Grey on Ward 7; alan's O’Neil", "alan\nward 7", "bob grey\nO'Neil\nward", []byte{0, 5, 9, 20})
	f.Add("\xff\xfe a\u0301 ÉCOLE école ǅ ǆ", "école", "a\u0301\n\xff", []byte{1, 2, 3, 4})
	f.Add("", "", "", []byte{})
	f.Fuzz(func(t *testing.T, text, allow, deny string, cuts []byte) {
		text = strings.ToValidUTF8(text, "\uFFFD") // as every request's text is
		l, errs := NewLists(strings.Split(allow, "\n"), strings.Split(deny, "\n"))
		if errs != nil {
			return
		}
		var ents []Entity
		for i := 0; i+1 < len(cuts); i += 2 {
			s, e := int(cuts[i])%(len(text)+1), int(cuts[i+1])%(len(text)+1)
			if s < e {
				ents = append(ents, Entity{Label: "found", Start: s, End: e})
			}
		}
		out := l.Apply(text, ents)
		var denied []Entity
		for _, e := range out {
			if e.Start < 0 || e.End > len(text) || e.Start >= e.End {
				t.Fatalf("span %v outside a text of %d bytes", e, len(text))
			}
			if e.Label == DenyLabel {
				if !utf8.RuneStart(text[e.Start]) || (e.End < len(text) && !utf8.RuneStart(text[e.End])) {
					t.Fatalf("deny span %v cuts a character", e)
				}
				denied = append(denied, e)
			}
		}
		for i, d := range denied {
			for _, e := range out {
				if e != d && e.Start < d.End && d.Start < e.End && !(i > 0 && e == denied[i-1]) {
					t.Fatalf("deny span %v overlaps %v", d, e)
				}
			}
		}
	})
}

// TestNestedTermsStayLinear: terms each holding the one before ("a", "a a", ...) over a text
// of that word repeated find one stretch per place a term begins, not one per term there.
func TestNestedTermsStayLinear(t *testing.T) {
	var terms []string
	for n := 1; n <= 100; n++ {
		terms = append(terms, strings.TrimSpace(strings.Repeat("a ", n)))
	}
	l, err := NewLists(terms, terms)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a ", 5000)
	allowed, denied := l.find(text)
	if len(denied) > 5000 || len(allowed) != 1 {
		t.Fatalf("%d deny stretches, %d allowed, for 5000 words", len(denied), len(allowed))
	}
}
