package entities

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var matcherTexts = []string{
	"",
	"Patient John Smith, DOB 01/15/1970 and 1970-01-15, SSN 123-45-6789 or 123 45 6789.",
	"call(555) 123-4567, 555.123.4567, 5551234567 or tel(212)555-0100; NPI 1234567893",
	"mail jane.doe+x@example.co.uk, see https://www.example.org/a/b?c=d and www.test.io",
	"IBAN GB82 WEST 1234 5698 7654 32, BIC DEUTDEFF500, acct: 12-3456789, account #AB12345",
	"MRN: 12345678, AB1234567, 42 Main Street, 7 Rue Rd, 10.0.0.1, fe80:0:0:0:0:0:0:1, 00:1A:2b:3C:4d:5E",
	"Seen Jan 5, 2020 and 5 January 2020; zip 02139-1234; card 4111-1111-1111-1111",
	"_123-45-6789 é123-45-6789 x(555) 123-4567 ((555)) 123-4567 Ω1970-01-15 北京01/02/2003",
	"accountnumber account 123456 ACCT.ABCDEF ssn 000-00-0000 aa1234567bb",
}

func TestFastMatcherAppliesToDefaults(t *testing.T) {
	for i, p := range DefaultPIIPatterns() {
		if p.fast == nil || p.fast.source != p.Regexp {
			t.Errorf("pattern %d (%s) has no fast matcher", i, p.Label)
		}
	}
}

func TestFastMatcherEqualsRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"1", "2", "0", "9", "-", "/", ".", " ", "\t", "(", ")", ":", "#", "@", "_", "a", "Z", "x", "é", "北", "Jan", "Dec", "St", "MRN", "GB", "acct"}
	texts := slices.Clone(matcherTexts)
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, p := range DefaultPIIPatterns() {
		for _, text := range texts {
			compareMatchers(t, &p, text)
		}
	}
}

// The filters a position passes before the regexp is asked (the fixed first bytes, the byte
// every match holds, the leading run of one class and what must follow it) never pass over a
// match: every language's patterns and shapes made to reach the filters' edges, on texts of
// their own pieces, the runes case folding adds (K, ſ) and truncations of them.
func TestFastMatcherFiltersLoseNoMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	patterns := DefaultPIIPatterns()
	for _, lang := range PIILanguages() {
		ps, _ := LanguagePIIPatterns(lang)
		patterns = append(patterns, ps...)
	}
	for _, expr := range []string{`(?i)\b[a-z]{2,3}\d{2}\b`, `(?i)\b(?:ab|cd|k)[a-z]* \d{1,2}`, `\b(?:x-)?[a-z0-9-]+\.[a-z]{2,}`,
		`(?i)\b(?:\d{1,3}\.){2}\d`, `\b[A-Z][a-z]+(?:weg|ring)\s?\d`, `(?i)\bs[a-z]+@\w`, `\b\d{2,}/\d`} {
		p, err := NewPIIPattern(PIIPattern{Label: "x"}, expr)
		if err != nil || p.fast == nil {
			t.Fatalf("%s: %v, fast %v", expr, err, p.fast != nil)
		}
		patterns = append(patterns, p)
	}
	pieces := []string{"1", "12", "123", "1234", "0", "-", "/", ".", " ", "\n", ",", ":", "@", "_", "(", ")", "a", "ab", "cd", "k", "K", "\u212a",
		"s", "\u017f", "é", "Z", "x-", "www.", "http://", "Jan", "mars", "März", "März ", "Street", "weg", "ring", "MRN", "DE", "GB82", "+49",
		"+33 6", "06", "06.12", "Straße", "rue ", "ore 08.00", "3.", "ex.com", "a.b.c", "fe80:", "Aa:bB:", "Dr. ", "NIF ", "1. März 2024"}
	var texts []string
	for range 2500 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, matcherTexts...)
	for i := range patterns {
		if patterns[i].fast == nil {
			continue
		}
		for _, text := range texts {
			compareMatchers(t, &patterns[i], text)
		}
	}
}

func compareMatchers(t *testing.T, p *PIIPattern, text string) {
	t.Helper()
	want := p.Regexp.FindAllStringIndex(text, -1)
	got := p.matches(text, true)
	if len(want) != len(got) {
		t.Fatalf("%s: fast %v, regexp %v", p.Label, got, want)
	}
	for i := range want {
		if !slices.Equal(want[i], got[i]) {
			t.Fatalf("%s: fast %v, regexp %v", p.Label, got, want)
		}
	}
}

func TestFastMatcherDeclines(t *testing.T) {
	for _, expr := range []string{
		`\d+`,         // no leading \b
		`\b(?:a|)`,    // can match empty
		`\b(?:x?)\bY`, // an assertion before the first character
		`\b^a`,
	} {
		if m := newFastMatcher(regexp.MustCompile(expr)); m != nil {
			t.Errorf("%s: fast path taken", expr)
		}
	}
	// A hand-built pattern, or one whose Regexp was swapped, falls back to the scan.
	p := DefaultPIIPatterns()[0]
	p.Regexp = regexp.MustCompile(`\bzz\b`)
	if got := p.findAll("aa zz", true); len(got) != 1 || got[0][0] != 3 {
		t.Errorf("swapped regexp: %v", got)
	}
	custom, err := NewPIIPattern(PIIPattern{Label: "x"}, `(?i)\bab\d\b`)
	if err != nil || custom.fast == nil {
		t.Fatalf("NewPIIPattern: %v %v", custom.fast, err)
	}
	if _, err := NewPIIPattern(PIIPattern{}, `(`); err == nil {
		t.Error("bad expression accepted")
	}
}

// TestFastMatcherBoundsItsAttempts: a text made of one pattern's near misses, where each
// anchored attempt would read to the text's end (the square of its length in all), is
// answered by the plain scan, with the same matches; the candidates of real notes stay within
// the budget.
func TestFastMatcherBoundsItsAttempts(t *testing.T) {
	near := map[string]string{
		"url":   strings.Repeat("a.", 40000) + "a",
		"email": strings.Repeat("a.", 20000) + "a@" + strings.Repeat("b.", 20000) + "b",
	}
	checked := 0
	for _, p := range DefaultPIIPatterns() {
		text, ok := near[p.Label]
		if !ok || p.fast == nil {
			continue
		}
		checked++
		got, fellBack := p.fast.findAllWithin(text, attemptBudget(len(text)))
		if want := p.Regexp.FindAllStringIndex(text, -1); !fellBack || !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: fell back %v, %d matches, want %d", p.Label, fellBack, len(got), len(want))
		}
	}
	if checked < 2 {
		t.Fatalf("%d of the url and email patterns checked", checked)
	}
	// Notes dense with every pattern's shapes, from a kilobyte to 100 kB, never fall back, in
	// any language's patterns.
	patterns := DefaultPIIPatterns()
	for _, lang := range PIILanguages() {
		ps, _ := LanguagePIIPatterns(lang)
		patterns = append(patterns, ps...)
	}
	for _, p := range patterns {
		if p.fast == nil {
			continue
		}
		for _, times := range []int{10, 1000} {
			note := strings.Repeat(strings.Join(matcherTexts, " ")+" ", times)
			if _, fellBack := p.fast.findAllWithin(note, attemptBudget(len(note))); fellBack {
				t.Errorf("%s: a note of %d bytes fell back", p.Label, len(note))
			}
		}
	}
}

// BenchmarkPatternsOverRealText is every default pattern over 100 kB of the development set's
// passages; ...OverNearMisses over 100 kB of a URL's near misses ("a.a.a."), which the
// attempts' budget hands to the plain scan.
func BenchmarkPatternsOverRealText(b *testing.B) {
	f, err := os.Open("testdata/realtext/dev.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var all strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			b.Fatal(err)
		}
		all.WriteString(p.Text + "\n\n")
	}
	benchPatterns(b, strings.Repeat(all.String(), 100_000/all.Len()+1)[:100_000])
}

func BenchmarkPatternsOverNearMisses(b *testing.B) {
	benchPatterns(b, strings.Repeat("a.", 50_000))
}

func benchPatterns(b *testing.B, text string) {
	ps := DefaultPIIPatterns()
	b.SetBytes(int64(len(text)))
	for range b.N {
		for _, p := range ps {
			p.matches(text, true)
		}
	}
}
