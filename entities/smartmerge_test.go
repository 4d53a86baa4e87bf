package entities

import (
	"math"
	"slices"
	"testing"
)

func TestSmartMergeOpenMedExample(t *testing.T) {
	// OpenMed's own example: a date split into "01" [date] and "/15/1970" [date_of_birth].
	text := "DOB: 01/15/1970"
	ents := []Entity{
		{Label: "date", Start: 5, End: 7, Score: .7},
		{Label: "date_of_birth", Start: 7, End: 15, Score: .9},
	}
	out := SmartMerge(text, ents, DefaultSmartMerge())
	// Tie on counts, date_of_birth has the higher mean; it is more specific than the
	// pattern's "date" and so kept. Unit score .6 + .3 ("dob" nearby).
	sameEntities(t, text, out, []got{{"date_of_birth", "01/15/1970", .6*.8 + .4*.9}})
}

func TestSmartMergeCases(t *testing.T) {
	e := func(label string, start, end int, score float64) Entity {
		return Entity{Label: label, Start: start, End: end, Score: score}
	}
	tests := []struct {
		name string
		text string
		in   []Entity
		cfg  func(*SmartMergeConfig)
		want []got
	}{
		{
			name: "pattern-only SSN with context",
			text: "SSN: 123-45-6789",
			want: []got{{"ssn", "123-45-6789", .85}},
		},
		{
			name: "pattern-only SSN without context: under the unit floor",
			text: "ref 123-45-6789",
			want: nil,
		},
		{
			name: "pattern-only SSN without context, OpenMed's floor of 0",
			text: "ref 123-45-6789",
			cfg:  func(c *SmartMergeConfig) { c.UnitMinScore = 0 },
			want: []got{{"ssn", "123-45-6789", .3}},
		},
		{
			name: "a unit under the floor joins the model's pieces but keeps the model's label",
			text: "ref 123-45-6789",
			in:   []Entity{e("id_num", 4, 7, .8), e("id_num", 7, 15, .6)},
			want: []got{{"id_num", "123-45-6789", .6*.7 + .4*.3}},
		},
		{
			name: "a weak unit inside a model entity does not cut it",
			text: "lives in Boston MA 02115 now",
			in:   []Entity{e("address", 9, 24, .9)},
			want: []got{{"address", "Boston MA 02115", .6*.9 + .4*.4}},
		},
		{
			// Each weak unit widened to the whole model entity, so the entity came out once
			// per unit: account_number "48213 90412" twice.
			name: "weak units inside one model entity give it once",
			text: "Policy number 48213 90412 on file.",
			in:   []Entity{e("account_number", 14, 25, .9)},
			want: []got{{"account_number", "48213 90412", .6*.9 + .4*.4}},
		},
		{
			// A chain: the second unit shares the first entity and reaches a second one; all
			// three pieces are one entity, not two that overlap.
			name: "weak units chained through model entities give one entity",
			text: "ref 48213 90412 77120 end",
			in:   []Entity{e("account_number", 4, 15, .9), e("account_number", 10, 21, .7)},
			want: []got{{"account_number", "48213 90412 77120", .6*.9 + .4*.4}}, // the first unit's, the best
		},
		{
			name: "capitals shaped like a BIC are not one without context",
			text: "PT ADMITTED WITH SYNDROME",
			want: nil,
		},
		{
			name: "a BIC beside its context word is",
			text: "SWIFT code DEUTDEFF",
			want: []got{{"bic", "DEUTDEFF", .9}},
		},
		{
			name: "invalid SSN: score cut to 30%, blend 0.9/0.1",
			text: "SSN: 666-45-6789",
			in:   []Entity{e("ssn", 5, 8, .9), e("ssn", 8, 16, .7)},
			want: []got{{"ssn", "666-45-6789", .9*.8 + .1*(.85*.3)}},
		},
		{
			name: "pattern-only matches can be switched off",
			text: "SSN: 123-45-6789",
			cfg:  func(c *SmartMergeConfig) { c.AllowPatternOnly = false },
			want: nil,
		},
		{
			name: "dominant label by count; unrelated model label loses to the pattern",
			text: "call 555-123-4567 now",
			in:   []Entity{e("name", 5, 8, .9), e("name", 8, 12, .5), e("zip", 12, 17, .95)},
			want: []got{{"phone_number", "555-123-4567", .6*((.9+.5+.95)/3) + .4*.85}},
		},
		{
			name: "model label of the same kind is kept",
			text: "call 555-123-4567 now",
			in:   []Entity{e("PHONE", 5, 17, .8)},
			want: []got{{"PHONE", "555-123-4567", .6*.8 + .4*.85}},
		},
		{
			name: "label expansion off keeps the model label",
			text: "call 555-123-4567 now",
			in:   []Entity{e("name", 5, 17, .8)},
			cfg:  func(c *SmartMergeConfig) { c.AllowLabelExpansion = false },
			want: []got{{"name", "555-123-4567", .6*.8 + .4*.85}},
		},
		{
			name: "without PreferModelLabels any same-kind model label keeps the dominant one",
			text: "call 555-123-4567 now",
			in:   []Entity{e("name", 5, 9, .8), e("name", 9, 13, .8), e("fax", 13, 17, .8)},
			cfg:  func(c *SmartMergeConfig) { c.PreferModelLabels = false },
			want: []got{{"name", "555-123-4567", .6*.8 + .4*.85}},
		},
		{
			name: "entities outside every unit are kept and all sorted by start",
			text: "Jane Roe, jane@example.org",
			in:   []Entity{e("email", 10, 14, .6), e("first_name", 0, 4, .9)},
			want: []got{{"first_name", "Jane", .9}, {"email", "jane@example.org", .6*.6 + .4*.9}},
		},
		{
			name: "higher priority claims overlapping text first",
			text: "born 1970-01-15",
			want: []got{{"date", "1970-01-15", .9}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultSmartMerge()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			out := SmartMerge(tc.text, tc.in, cfg)
			sameEntities(t, tc.text, out, tc.want)
		})
	}
}

func TestFindSemanticUnits(t *testing.T) {
	text := "MRN: 12345678, NPI 1234567893, card 4111 1111 1111 1111, ip 10.0.0.1, 42 Main Street"
	units := FindSemanticUnits(text, DefaultPIIPatterns(), 100)
	var labels []string
	for _, u := range units {
		labels = append(labels, u.Label+"="+text[u.Start:u.End])
	}
	want := []string{
		"medical_record_number=12345678", // the number, not its keyword
		"npi=1234567893",
		"credit_debit_card=4111 1111 1111 1111",
		"ipv4=10.0.0.1",
		"street_address=42 Main Street",
	}
	if len(labels) != len(want) {
		t.Fatalf("units %q, want %q", labels, want)
	}
	for i := range want {
		if labels[i] != want[i] {
			t.Errorf("unit %d = %q, want %q", i, labels[i], want[i])
		}
	}
	// The NPI (priority 6) beats the 10-digit phone pattern (priority 5); its context
	// ("NPI") lifts .15 to .8, and it validates.
	if u := units[1]; math.Abs(u.Score-.8) > 1e-9 || !u.Validated {
		t.Errorf("npi unit %+v", u)
	}
}

func TestValidators(t *testing.T) {
	tests := []struct {
		name string
		f    func(string) bool
		in   string
		want bool
	}{
		{"ssn ok", ValidSSN, "123-45-6789", true},
		{"ssn 000", ValidSSN, "000-45-6789", false},
		{"ssn 666", ValidSSN, "666-45-6789", false},
		{"ssn 9xx", ValidSSN, "912-45-6789", false},
		{"ssn group 00", ValidSSN, "123-00-6789", false},
		{"ssn serial 0000", ValidSSN, "123-45-0000", false},
		{"ssn short", ValidSSN, "123-45-678", false},
		{"phone ok", ValidUSPhone, "(555) 123-4567", true},
		{"phone with 1", ValidUSPhone, "1 555 123 4567", true},
		{"phone area 1", ValidUSPhone, "155-123-4567", false},
		{"phone exchange 0", ValidUSPhone, "555-023-4567", false},
		{"phone exchange 1 allowed", ValidUSPhone, "555-123-4567", true},
		{"luhn ok", ValidLuhn, "4111 1111 1111 1111", true},
		{"luhn bad", ValidLuhn, "4111 1111 1111 1112", false},
		{"luhn short", ValidLuhn, "79927398713", false},
		{"npi ok", ValidNPI, "1234567893", true},
		{"npi bad", ValidNPI, "1234567890", false},
		{"iban ok", ValidIBAN, "GB82 WEST 1234 5698 7654 32", true},
		{"iban lower", ValidIBAN, "gb82west12345698765432", true},
		{"iban checksum", ValidIBAN, "GB82 WEST 1234 5698 7654 33", false},
		{"iban length", ValidIBAN, "GB82 WEST 1234 5698 7654 3", false},
		{"bic ok", ValidBIC, "DEUTDEFF", true},
		{"bic branch", ValidBIC, "DEUTDEFF500", true},
		{"bic country", ValidBIC, "DEUTZZFF", false},
		{"bic shape", ValidBIC, "DEU1DEFF", false},
		{"short date day", ValidShortDate, "9/28", true},
		{"short date padded day", ValidShortDate, "09/05", true},
		{"short date year", ValidShortDate, "3/80", true},
		{"short date month 13", ValidShortDate, "13/20", false},
		{"short date out of ten", ValidShortDate, "7/10", false},
		{"short date vision", ValidShortDate, "20/20", false},
		{"short date day 00", ValidShortDate, "4/00", false},
		{"url scheme", ValidURL, "http://x.y", true},
		{"url www", ValidURL, "www.hospital.xyz", true},
		{"url known tld", ValidURL, "cdc.gov/flu", true},
		{"url missing space", ValidURL, "pt.he", false},
		{"url abbreviation", ValidURL, "ectopy.bp", false},
	}
	for _, tc := range tests {
		if got := tc.f(tc.in); got != tc.want {
			t.Errorf("%s: %q -> %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestDefaultPIIPatternsAreCopies(t *testing.T) {
	a := DefaultPIIPatterns()
	a[0].Label = "changed"
	a[0].ContextWords[0] = "changed"
	b := DefaultPIIPatterns()
	if b[0].Label == "changed" || b[0].ContextWords[0] == "changed" {
		t.Fatal("DefaultPIIPatterns shares mutable state")
	}
}

func TestNormalizeAndSpecific(t *testing.T) {
	for in, want := range map[string]string{
		"date_of_birth": "date", "Phone_Number": "phone", "fax": "phone", "street_address": "address",
		"social_security_number": "ssn", "bsn": "national_id", "zip": "postcode", "mrn": "medical_record",
		"account": "account", "credit_card": "payment_card", "first_name": "first_name",
	} {
		if got := normalizePIILabel(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"date_of_birth", "date", true}, {"date", "date_of_birth", false}, {"first_name", "name", true},
		{"ssn", "id", true}, {"nir", "national_id", true}, {"date", "date", false}, {"name", "phone", false},
	} {
		if got := moreSpecific(c.a, c.b); got != c.want {
			t.Errorf("moreSpecific(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestPatternsOnClinicalWriting: the pattern-only entities the default configuration reports
// for the way clinical notes are written: identifiers found (short dates, an MRN without its
// keyword, addresses with a scheme or a known domain, a BIC or postcode beside its context),
// and the shapes that are not identifiers left alone (capitalised headings, missing spaces
// after full stops, vitals, pager numbers, strengths, grades and scales).
func TestPatternsOnClinicalWriting(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // label=text
	}{
		{"Pt seen 9/28, f/u 10/12 in clinic.", []string{"date=9/28", "date=10/12"}},
		{"hx of MI 3/80, CABG 09/05", []string{"date=3/80", "date=09/05"}},
		{"DOB 01/15/1970", []string{"date=01/15/1970"}},
		{"MRN: 12345678", []string{"medical_record_number=12345678"}},
		{"see https://www.cdc.gov/flu and www.example.org", []string{"url=https://www.cdc.gov/flu", "url=www.example.org"}},
		{"handout from mayoclinic.org", []string{"url=mayoclinic.org"}},
		{"wire to SWIFT code DEUTDEFF500", []string{"bic=DEUTDEFF500"}},
		{"lives at zip code 02115", []string{"postcode=02115"}},
		{"PATIENT ADMITTED ON DOPAMINE FOR SEPTIC SHOCK SYNDROME", nil},
		{"pt.he denies pain. ectopy.bp stable.neuro intact", nil},
		{"pager 12345, call back 54321", nil},
		{"BS 95, HR 102, BP 120/80, sat 98%, GCS 15", nil},
		{"strength 5/5 bilaterally, 2/6 SEM, pain 7/10, 1/2 tab, 20/20 vision, 24/7 care", nil},
		{"seen by Dr.Jones q.day", nil},
	} {
		out := SmartMerge(tc.text, nil, DefaultSmartMerge())
		var got []string
		for _, e := range out {
			got = append(got, e.Label+"="+tc.text[e.Start:e.End])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestImplausible(t *testing.T) {
	for _, tc := range []struct {
		label, text string
		want        bool
	}{
		{"email", "_______", true}, {"email", "jo@example.org", false},
		{"ssn", "XXXX", true}, {"ssn", "123-45-6789", false},
		{"phone_number", "(xxx) xxx-xxxx", true}, {"fax_number", "555 0132", false},
		{"postcode", "ABC", true}, {"medical_record_number", "0000000", false},
		{"url", "website", true}, {"url", "example.org", false},
		{"date", "1990", true}, {"date", "20/200", true}, {"date", "20/20", true}, {"date", "13/45/2001", true},
		{"date", "9/28", false}, {"date", "3/80", false}, {"date", "31/12/2001", false}, {"date", "08/21/2007", false},
		{"date", "June 25, 2008", false}, {"date", "14-1/2", false},
		{"date", "2023/01/15", false}, {"date", "25/12", false}, {"date_of_birth", "1930", false},
		{"email", "jo at example dot org", false},
		{"first_name", "1990", false}, {"DATE", "2000", true},
	} {
		if got := Implausible(tc.label, tc.text); got != tc.want {
			t.Errorf("Implausible(%q, %q) = %v, want %v", tc.label, tc.text, got, tc.want)
		}
	}
}
