package deid

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/settings"
)

const note = "Jane Smith, born 03/14/1961, seen 2024-02-29 by Dr. Smith; call 555-867-5309 or jane@example.org."

// noteSpans are the identifiers of note, as the PII model labels them.
func noteSpans() []entities.Entity {
	find := func(s, label string, nth int) entities.Entity {
		at := -1
		for range nth + 1 {
			at += 1 + strings.Index(note[at+1:], s)
		}
		return entities.Entity{Start: at, End: at + len(s), Label: label, Score: 0.9}
	}
	return []entities.Entity{
		find("Jane", "first_name", 0), find("Smith", "last_name", 0), find("03/14/1961", "date", 0),
		find("2024-02-29", "date", 0), find("Smith", "last_name", 1), find("555-867-5309", "phone_number", 0),
		find("jane@example.org", "email", 0),
	}
}

func newTestRedactor(t *testing.T, key string) *Redactor {
	t.Helper()
	r, err := New(Config{HashKey: []byte(key), Entropy: bytes.NewReader(bytes.Repeat([]byte{7}, 1<<16))})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMaskNumbersEachLabelInTextOrderWithAMapping(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	res := r.Apply(note, noteSpans(), Options{Method: Mask})
	want := "[first_name] [last_name], born [date], seen [date] by Dr. [last_name]; call [phone_number] or [email]."
	if res.Text != want || res.Mapping != nil {
		t.Fatalf("%q %v", res.Text, res.Mapping)
	}
	res = r.Apply(note, noteSpans(), Options{Method: Mask, KeepMapping: true})
	want = "[first_name] [last_name], born [date], seen [date_2] by Dr. [last_name_2]; call [phone_number] or [email]."
	if res.Text != want {
		t.Fatal(res.Text)
	}
	wantMap := map[string]string{"[first_name]": "Jane", "[last_name]": "Smith", "[date]": "03/14/1961",
		"[date_2]": "2024-02-29", "[last_name_2]": "Smith", "[phone_number]": "555-867-5309", "[email]": "jane@example.org"}
	if !maps.Equal(res.Mapping, wantMap) {
		t.Fatal(res.Mapping)
	}
	if restore(res.Text, res.Mapping) != note {
		t.Fatal("the mapping does not restore the note")
	}
}

// restore puts the originals back, longest placeholder first.
func restore(text string, m map[string]string) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	for _, k := range keys {
		text = strings.ReplaceAll(text, k, m[k])
	}
	return text
}

func TestRemove(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	spans := noteSpans()[:2]
	if res := r.Apply(note, spans, Options{Method: Remove}); !strings.HasPrefix(res.Text, " , born") || res.Redactions[0].Replacement != "" {
		t.Fatalf("%q", res.Text)
	}
	res := r.Apply(note, noteSpans(), Options{Method: Remove, KeepMapping: true})
	if !strings.HasPrefix(res.Text, "[first_name_REMOVED] [last_name_REMOVED], born [date_REMOVED]") ||
		!strings.Contains(res.Text, "Dr. [last_name_REMOVED_2]") || restore(res.Text, res.Mapping) != note {
		t.Fatalf("%q %v", res.Text, res.Mapping)
	}
}

func TestHashIsKeyed(t *testing.T) {
	a := newTestRedactor(t, "0123456789abcdef").Apply(note, noteSpans(), Options{Method: Hash})
	b := newTestRedactor(t, "0123456789abcdeX").Apply(note, noteSpans(), Options{Method: Hash})
	shape := regexp.MustCompile(`^[a-z_]+_[0-9a-f]{8}$`)
	for i, red := range a.Redactions {
		if !shape.MatchString(red.Replacement) || !strings.HasPrefix(red.Replacement, red.Label+"_") {
			t.Fatalf("hash %q", red.Replacement)
		}
		if red.Replacement == b.Redactions[i].Replacement {
			t.Fatalf("two keys gave the same hash %q", red.Replacement)
		}
	}
	// The same name hashes the same within a document and across documents of one key.
	if a.Redactions[1].Replacement != a.Redactions[4].Replacement {
		t.Fatal("Smith hashed two ways")
	}
	again := newTestRedactor(t, "0123456789abcdef").Apply(note, noteSpans(), Options{Method: Hash})
	if again.Text != a.Text {
		t.Fatal("one key, two hashes")
	}
	if _, err := New(Config{HashKey: []byte("short")}); !errors.As(err, new(*settings.Problem)) {
		t.Fatalf("a short key: %v", err)
	}
}

func TestReplaceKeepsShapesAndIsConsistent(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	res := r.Apply(note, noteSpans(), Options{Method: Replace, KeepMapping: true})
	got := map[string]string{}
	for _, red := range res.Redactions {
		original := note[red.Start:red.End]
		if red.Replacement == original || red.Replacement == "" {
			t.Fatalf("%s: %q replaced by %q", red.Label, original, red.Replacement)
		}
		if prev, ok := got[original]; ok && prev != red.Replacement {
			t.Fatalf("%q replaced by %q and %q", original, prev, red.Replacement)
		}
		got[original] = red.Replacement
	}
	if !regexp.MustCompile(`^\d\d\d-\d\d\d-\d\d\d\d$`).MatchString(got["555-867-5309"]) {
		t.Fatalf("phone %q", got["555-867-5309"])
	}
	for i, c := range got["555-867-5309"] {
		if c != '-' && byte(c) == "555-867-5309"[i] {
			t.Fatalf("phone %q keeps digit %d", got["555-867-5309"], i)
		}
	}
	if !regexp.MustCompile(`^\d\d/\d\d/\d{4}$`).MatchString(got["03/14/1961"]) ||
		!regexp.MustCompile(`^\d{4}-\d\d-\d\d$`).MatchString(got["2024-02-29"]) {
		t.Fatalf("dates %q %q", got["03/14/1961"], got["2024-02-29"])
	}
	if !strings.Contains(got["jane@example.org"], "@") || strings.Contains(got["jane@example.org"], "example.org") {
		t.Fatalf("e-mail %q", got["jane@example.org"])
	}
	if restore(res.Text, res.Mapping) != note {
		t.Fatalf("mapping %v does not restore %q", res.Mapping, res.Text)
	}
}

func TestShiftDatesMovesEveryDateByOneOffset(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	days := 1
	res := r.Apply(note, noteSpans(), Options{Method: ShiftDates, ShiftDays: &days, KeepMapping: true})
	want := "[first_name] [last_name], born 03/15/1961, seen 2024-03-01 by Dr. [last_name_2]; call [phone_number] or [email]."
	if res.Text != want || restore(res.Text, res.Mapping) != note {
		t.Fatalf("%q %v", res.Text, res.Mapping)
	}
	// A drawn offset is never 0 and within a year; both dates move by the same one.
	for range 20 {
		res = newTestRedactor(t, "0123456789abcdef").Apply(note, noteSpans(), Options{Method: ShiftDates})
		a, _, _ := parseDate(res.Redactions[2].Replacement, "en")
		b, _, _ := parseDate(res.Redactions[3].Replacement, "en")
		da := int(a.Sub(mustDate(t, "03/14/1961")).Hours() / 24)
		db := int(b.Sub(mustDate(t, "2024-02-29")).Hours() / 24)
		if da != db || da == 0 || da < -365 || da > 365 {
			t.Fatalf("offsets %d and %d", da, db)
		}
	}
	// A date that cannot be read is masked, and the mapping keeps every original.
	text := "admitted 31/31/2020, discharged the 2nd"
	at := strings.Index(text, "the 2nd")
	spans := []entities.Entity{{Start: 9, End: 19, Label: "date"}, {Start: at, End: at + 7, Label: "date"}}
	res = r.Apply(text, spans, Options{Method: ShiftDates, KeepMapping: true})
	if res.Text != "admitted [DATE_SHIFTED], discharged [DATE_SHIFTED]" ||
		!maps.Equal(res.Mapping, map[string]string{"[DATE_SHIFTED]": "31/31/2020", "[DATE_SHIFTED]#2": "the 2nd"}) {
		t.Fatalf("%q %v", res.Text, res.Mapping)
	}
}

func mustDate(t *testing.T, s string) time.Time {
	t.Helper()
	d, _, ok := parseDate(s, "en")
	if !ok {
		t.Fatal(s)
	}
	return d
}

// TestAChainOfOverlapsBecomesOneSpan: spans that overlap only their neighbours form one
// cluster, replaced as one span over all of its text, named by the longest; no character any
// of them found is left in clear.
func TestAChainOfOverlapsBecomesOneSpan(t *testing.T) {
	text := strings.Repeat("abcdefghij", 3)
	got := resolve(text, []entities.Entity{{Start: 0, End: 3, Label: "a"}, {Start: 2, End: 5, Label: "b"}, {Start: 4, End: 10, Label: "c"},
		{Start: 9, End: 12, Label: "d"}, {Start: 11, End: 14, Label: "e"}, {Start: 20, End: 22, Label: "f"}}, nil)
	want := []entities.Entity{{Start: 0, End: 14, Label: "c"}, {Start: 20, End: 22, Label: "f"}}
	if !slices.Equal(got, want) {
		t.Fatal(got)
	}
	// A span that cuts a character in two is dropped.
	if got := resolve("né", []entities.Entity{{Start: 0, End: 2}, {Start: 2, End: 3}}, nil); len(got) != 0 {
		t.Fatal(got)
	}
	// A name widened to its word's end overlaps the next one (ExtendToWordEnd): neither part
	// stays.
	r := newTestRedactor(t, "0123456789abcdef")
	res := r.Apply("Alan Brooks-Smith", []entities.Entity{{Start: 0, End: 11, Label: "person"}, {Start: 5, End: 17, Label: "last_name"}}, Options{})
	if res.Text != "[last_name]" {
		t.Fatalf("%q", res.Text)
	}
}

// TestMappingOfManyCollidingReplacements: thousands of originals behind one replacement are
// keyed in text order, each once.
func TestMappingOfManyCollidingReplacements(t *testing.T) {
	var b strings.Builder
	var spans []entities.Entity
	for i := range 5000 {
		at := b.Len()
		fmt.Fprintf(&b, "x%d ", i%2500)
		spans = append(spans, entities.Entity{Start: at, End: b.Len() - 1, Label: "date"})
	}
	res := newTestRedactor(t, "0123456789abcdef").Apply(b.String(), spans, Options{Method: ShiftDates, KeepMapping: true})
	if len(res.Mapping) != 2500 || res.Mapping[DateShifted] != "x0" || res.Mapping[DateShifted+"#2500"] != "x2499" {
		t.Fatalf("%d keys", len(res.Mapping))
	}
}

func TestOverlapsAreResolved(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	spans := []entities.Entity{{Start: 0, End: 10, Label: "first_name", Score: 0.5}, {Start: 0, End: 4, Label: "first_name", Score: 0.99},
		{Start: 5, End: 10, Label: "last_name", Score: 0.99}, {Start: 50, End: 400, Label: "bogus"}, {Start: 3, End: 3, Label: "empty"}}
	res := r.Apply(note, spans, Options{})
	if res.Text != "[first_name], born"+note[len("Jane Smith, born"):] || len(res.Redactions) != 1 {
		t.Fatalf("%q", res.Text)
	}
}

func TestPolicies(t *testing.T) {
	for _, name := range []string{"HIPAA-Safe-Harbor", " gdpr ", "uk-ico", "kenya_dpa", "clinical_preserve"} {
		if _, err := LookupPolicy(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	if _, err := LookupPolicy("strict"); !errors.Is(err, ErrUnknownPolicy) {
		t.Fatal(err)
	}
	if _, err := LookupPolicy("  "); !errors.Is(err, ErrBlankPolicy) {
		t.Fatal(err)
	}
	if n := len(PolicyNames()); n != 26 {
		t.Fatalf("%d names, want 20 profiles and 6 aliases", n)
	}
	r := newTestRedactor(t, "0123456789abcdef")
	// research_limited_dataset keeps quasi identifiers (dates) and masks direct ones.
	p, _ := LookupPolicy("research_limited_dataset")
	res := r.Apply(note, noteSpans(), Options{Method: Replace, Policy: p})
	if res.Text != "[first_name] [last_name], born 03/14/1961, seen 2024-02-29 by Dr. [last_name]; call [phone_number] or [email]." ||
		len(res.Redactions) != 5 || res.Redactions[0].PolicyAction != ActMask || res.Mapping != nil {
		t.Fatalf("%q", res.Text)
	}
	// gdpr replaces, keeps the mapping and gives reversible ids.
	p, _ = LookupPolicy("gdpr")
	res = r.Apply(note, noteSpans(), Options{Policy: p})
	if res.Mapping == nil || restore(res.Text, res.Mapping) != note {
		t.Fatalf("%q %v", res.Text, res.Mapping)
	}
	for _, red := range res.Redactions {
		if red.Method != Replace || !regexp.MustCompile(`^rev_[0-9a-f]{24}$`).MatchString(red.ReversibleID) {
			t.Fatalf("%+v", red)
		}
	}
	// canada_pipeda masks national ids and replaces the rest; hipaa_expert_review_assist's
	// redact is a mask.
	p, _ = LookupPolicy("pipeda")
	res = r.Apply("SSN 123-45-6789", []entities.Entity{{Start: 4, End: 15, Label: "ssn"}}, Options{Policy: p})
	if res.Text != "SSN [ssn]" {
		t.Fatal(res.Text)
	}
	p, _ = LookupPolicy("hipaa_expert_review_assist")
	res = r.Apply(note, noteSpans()[:1], Options{Method: Hash, Policy: p})
	if res.Redactions[0].Method != Mask || res.Redactions[0].PolicyAction != ActRedact {
		t.Fatalf("%+v", res.Redactions[0])
	}
}

// TestAPolicyKeepsNoIdentifierWithTheSpanThatHoldsIt: under a policy that keeps cities and
// organisations, a deny term inside an organisation's span and a name overlapping a city's are
// redacted, the text the spans share with them too (each was kept in clear with its holder);
// without the deny term, the organisation is kept.
func TestAPolicyKeepsNoIdentifierWithTheSpanThatHoldsIt(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	p, _ := LookupPolicy("research_limited_dataset")
	text := "Admitted to Quarry Vale Infirmary in Lowbridge."
	at := func(s string) (int, int) { i := strings.Index(text, s); return i, i + len(s) }
	var spans []entities.Entity
	for _, s := range [][2]string{{"Quarry Vale Infirmary", "organization"}, {"Lowbridge", "city"}} {
		start, end := at(s[0])
		spans = append(spans, entities.Entity{Start: start, End: end, Label: s[1], Score: 0.9})
	}
	if res := r.Apply(text, spans, Options{Policy: p}); res.Text != text {
		t.Fatalf("no deny list: %q", res.Text)
	}
	lists, errs := entities.NewLists(nil, []string{"Quarry"})
	if errs != nil {
		t.Fatal(errs)
	}
	if res := r.Apply(text, spans, Options{Policy: p, Lists: lists}); res.Text != "Admitted to [deny_list] in Lowbridge." {
		t.Errorf("a deny term inside a kept organisation: %q", res.Text)
	}
	text = "Seen at LowbridgeJonas clinic."
	spans = []entities.Entity{{Start: 8, End: 22, Label: "city", Score: 0.9}, {Start: 17, End: 22, Label: "first_name", Score: 0.99}}
	if res := r.Apply(text, spans, Options{Policy: p}); res.Text != "Seen at [first_name] clinic." {
		t.Errorf("a name overlapping a kept city: %q", res.Text)
	}
}

// TestDocumentInPartsEqualsTheWhole: a note de-identified in three parts, as a stream does,
// gives the text, redactions and mapping of the whole at once, for every method: one date
// offset, one surrogate per original and one numbering across the parts.
func TestDocumentInPartsEqualsTheWhole(t *testing.T) {
	cuts := []int{strings.Index(note, ", seen"), strings.Index(note, "; call")}
	for _, m := range Methods {
		o := Options{Method: m, KeepMapping: true}
		whole := newTestRedactor(t, "0123456789abcdef").Apply(note, noteSpans(), o)
		d := newTestRedactor(t, "0123456789abcdef").Begin(o)
		var text strings.Builder
		var reds []Redaction
		from := 0
		for _, to := range append(cuts, len(note)) {
			var spans []entities.Entity
			for _, sp := range noteSpans() {
				if sp.Start >= from && sp.End <= to {
					spans = append(spans, entities.Entity{Start: sp.Start - from, End: sp.End - from, Label: sp.Label, Score: sp.Score})
				}
			}
			out, r := d.Redact(note[from:to], from, spans)
			text.WriteString(out)
			reds = append(reds, r...)
			from = to
		}
		if text.String() != whole.Text || !slices.Equal(reds, whole.Redactions) || !maps.Equal(d.Mapping(), whole.Mapping) {
			t.Fatalf("%s: in parts %q, whole %q", m, text.String(), whole.Text)
		}
	}
}

// TestATitleEndingThePartBeforeIsRead: a part that begins with a name is read with the title
// that ended the part before ("Mr. " | "Alice"), as the whole text is.
func TestATitleEndingThePartBeforeIsRead(t *testing.T) {
	text := "Seen today: Mr. Alice came in."
	at := strings.Index(text, "Alice")
	span := entities.Entity{Start: at, End: at + 5, Label: "first_name", Score: 0.9}
	o := Options{Method: Replace}
	whole := newTestRedactor(t, "0123456789abcdef").Apply(text, []entities.Entity{span}, o)
	d := newTestRedactor(t, "0123456789abcdef").Begin(o)
	first, _ := d.Redact(text[:at], 0, nil)
	second, _ := d.Redact(text[at:], at, []entities.Entity{{Start: 0, End: 5, Label: span.Label, Score: span.Score}})
	if first+second != whole.Text {
		t.Fatalf("in parts %q, whole %q", first+second, whole.Text)
	}
}

// TestAMovedDateNeverReadsAsItWas: a shift that would write a date as it was (a whole year
// with keep_year, a date written without its year) leaves no original date behind, by
// shift_dates or replace.
func TestAMovedDateNeverReadsAsItWas(t *testing.T) {
	for _, c := range []struct {
		date     string
		days     int
		keepYear bool
	}{{"2023-01-05", 365, true}, {"03/15/2023", 366, true}, {"March 4", 365, false}, {"4 Mar", 730, false}, {"2023-01-05", 730, true},
		{"2023-1-5", 365, true}, {"01/5/2023", 365, true}, {"5 jan 2023", 365, true}, {"march 4", 365, false}} {
		text := "admitted on " + c.date + " for review"
		spans := []entities.Entity{{Start: 12, End: 12 + len(c.date), Label: "date", Score: 0.9}}
		for _, m := range []Method{ShiftDates, Replace} {
			days := c.days
			res := newTestRedactor(t, "0123456789abcdef").Apply(text, spans, Options{Method: m, ShiftDays: &days, KeepYear: c.keepYear})
			if moved := strings.TrimSuffix(strings.TrimPrefix(res.Text, "admitted on "), " for review"); sameDate(t, moved, c.date) {
				t.Errorf("%s by %d days (keep_year %v), %s: %q", c.date, c.days, c.keepYear, m, res.Text)
			}
		}
	}
}

// TestAShiftOfNoDaysLeavesDatesAsTheyAre: 0 is the caller's asking shift_dates for the dates
// as they are, in their layout; replace still stands another date in.
func TestAShiftOfNoDaysLeavesDatesAsTheyAre(t *testing.T) {
	days := 0
	text := "admitted on 2023-01-05 for review"
	res := newTestRedactor(t, "0123456789abcdef").Apply(text, []entities.Entity{{Start: 12, End: 22, Label: "date", Score: 0.9}},
		Options{Method: ShiftDates, ShiftDays: &days})
	if res.Text != text {
		t.Fatalf("%q", res.Text)
	}
	// replace draws a stand-in instead: 0 days moves nothing.
	res = newTestRedactor(t, "0123456789abcdef").Apply(text, []entities.Entity{{Start: 12, End: 22, Label: "date", Score: 0.9}},
		Options{Method: Replace, ShiftDays: &days})
	if strings.Contains(res.Text, "2023-01-05") {
		t.Fatalf("replace, 0 days: %q", res.Text)
	}
}

// sameDate reports whether a and b are one date, however each is spelt.
func sameDate(t *testing.T, a, b string) bool {
	t.Helper()
	x, _, okA := parseDate(a, "en")
	y, _, okB := parseDate(b, "en")
	return okA && okB && x.Equal(y)
}
