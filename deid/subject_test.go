package deid

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/entities"
)

// subjectRedactor is a Redactor under key whose documents draw from a stream that differs
// from one document to the next, as crypto/rand's does, but is the same on every run.
func subjectRedactor(t *testing.T, key string) *Redactor {
	t.Helper()
	r, err := New(Config{HashKey: []byte(key), Entropy: rand.NewChaCha8([32]byte{1, 2, 3})})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// noteBuilder writes a note span by span.
type noteBuilder struct {
	b     strings.Builder
	spans []entities.Entity
}

func (n *noteBuilder) text(s string) { n.b.WriteString(s) }

func (n *noteBuilder) span(label, s string) {
	n.spans = append(n.spans, entities.Entity{Label: label, Start: n.b.Len(), End: n.b.Len() + len(s), Score: 0.9})
	n.b.WriteString(s)
}

// replacements are what each original of a result became, by "canonical|original".
func replacements(text string, res Result) map[string]string {
	out := map[string]string{}
	for _, red := range res.Redactions {
		out[red.Canonical+"|"+text[red.Start:red.End]] = red.Replacement
	}
	return out
}

// TestASubjectsNotesShareSurrogatesAndShift: two notes of one subject, "Alan" in each with
// other names before it, get one stand-in for Alan and one date shift; without a subject (or
// under another subject) the notes differ; a second Redactor with the same key (another
// replica) agrees, one with another key does not.
func TestASubjectsNotesShareSurrogatesAndShift(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	var one, two noteBuilder
	one.text("Seen with ")
	one.span("first_name", "Margaret")
	one.text(" and ")
	one.span("first_name", "Alan")
	one.text(" on ")
	one.span("date", "2021-03-04")
	one.text(".")
	two.text("Call from ")
	two.span("first_name", "Oliver")
	two.text(", ")
	two.span("first_name", "Priya")
	two.text(" and ")
	two.span("first_name", "Alan")
	two.text(" on ")
	two.span("date", "2021-03-04")
	two.text(".")
	apply := func(r *Redactor, n *noteBuilder, subject string) map[string]string {
		return replacements(n.b.String(), r.Apply(n.b.String(), n.spans, Options{Method: Replace, Subject: subject}))
	}
	const alan, date = "FIRST_NAME|Alan", "DATE|2021-03-04"
	a, b := apply(r, &one, "patient-17"), apply(r, &two, "patient-17")
	if a[alan] == "" || a[alan] != b[alan] || a[date] != b[date] {
		t.Fatalf("one subject, two notes: Alan %q and %q, the date %q and %q", a[alan], b[alan], a[date], b[date])
	}
	if a[date] == "2021-03-04" {
		t.Fatal("the date did not move")
	}
	if c := apply(r, &one, "patient-18"); c[alan] == a[alan] && c[date] == a[date] {
		t.Fatalf("another subject got the same stand-ins: %v", c)
	}
	if x, y := apply(r, &one, ""), apply(r, &two, ""); x[alan] == y[alan] && x[date] == y[date] {
		t.Fatalf("without a subject two documents agree: %v %v", x, y)
	}
	if c := apply(subjectRedactor(t, "0123456789abcdef"), &two, "patient-17"); c[alan] != a[alan] || c[date] != a[date] {
		t.Fatalf("another replica with the same key: %v, want %v", c, a)
	}
	if c := apply(subjectRedactor(t, "fedcba9876543210"), &one, "patient-17"); c[alan] == a[alan] && c[date] == a[date] {
		t.Fatalf("another key gave the same stand-ins: %v", c)
	}
}

// TestTenantsHaveTheirOwnDerivations: a Scoped view keys every derivation to its tenant: one
// tenant's subject, hashes and reversible ids agree on every replica with the key and differ
// from another tenant's; the tenant "" is the Redactor itself.
func TestTenantsHaveTheirOwnDerivations(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	if r.Scoped("") != r {
		t.Fatal("the tenant \"\" is not the Redactor itself")
	}
	var n noteBuilder
	n.text("Seen with ")
	n.span("first_name", "Alan")
	n.text(" on ")
	n.span("date", "2021-03-04")
	n.text(".")
	pol, err := LookupPolicy("hipaa_safe_harbor")
	if err != nil {
		t.Fatal(err)
	}
	pol.ReversibleID = true
	apply := func(r *Redactor, o Options) Result { return r.Apply(n.b.String(), n.spans, o) }
	for name, o := range map[string]Options{
		"subject": {Method: Replace, Subject: "patient-17"},
		"hash":    {Method: Hash},
		"policy":  {Policy: pol},
	} {
		clinic, lab := apply(r.Scoped("clinic"), o), apply(r.Scoped("lab"), o)
		replica := apply(subjectRedactor(t, "0123456789abcdef").Scoped("clinic"), o)
		if fmt.Sprint(replica.Redactions) != fmt.Sprint(clinic.Redactions) {
			t.Fatalf("%s: a replica's view of one tenant: %v, want %v", name, replica.Redactions, clinic.Redactions)
		}
		if fmt.Sprint(lab.Redactions) == fmt.Sprint(clinic.Redactions) {
			t.Fatalf("%s: two tenants agree: %v", name, clinic.Redactions)
		}
	}
	if r.Scoped("clinic").Fingerprint("Alan") == r.Scoped("lab").Fingerprint("Alan") {
		t.Fatal("two tenants' fingerprints of one text agree")
	}
}

// TestASubjectsNamesAgreeHoweverTheyAreFound: under a subject, a whole name agrees with its
// words found apart ("Alan Brooks" with "Alan" and "Brooks"), a title's given name with the
// same name without a title, one word alone with the family name, one case with another.
func TestASubjectsNamesAgreeHoweverTheyAreFound(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	o := Options{Method: Replace, Subject: "mrn:0042"}
	var whole, apart noteBuilder
	whole.text("Mr. ")
	whole.span("name", "Alan Brooks")
	whole.text(" was seen; ")
	whole.span("name", "BROOKS")
	whole.text(" again.")
	apart.span("first_name", "alan")
	apart.text(" ")
	apart.span("last_name", "Brooks")
	apart.text(" came back.")
	w := r.Apply(whole.b.String(), whole.spans, o)
	p := r.Apply(apart.b.String(), apart.spans, o)
	first, last, _ := strings.Cut(w.Redactions[0].Replacement, " ")
	if !strings.EqualFold(first, p.Redactions[0].Replacement) || last != p.Redactions[1].Replacement {
		t.Fatalf("%q against %q and %q", w.Redactions[0].Replacement, p.Redactions[0].Replacement, p.Redactions[1].Replacement)
	}
	if !isSexedName('M', first) {
		t.Fatalf("Mr. Alan's stand-in %q is not a man's given name", first)
	}
	if w.Redactions[1].Replacement != strings.ToUpper(last) { // one word is a family name
		t.Fatalf("BROOKS alone became %q, want %q", w.Redactions[1].Replacement, strings.ToUpper(last))
	}
}

// TestSubjectSurrogatesDoNotDependOnOrder: over generated notes of a few subjects, each a
// shuffled draw from its subject's people, places, dates and numbers mixed with strangers,
// every original gets one stand-in per subject and kind in every note, never itself, and every
// note of a subject moves its dates by the subject's one shift, which is in [-364, 364] and
// not 0.
func TestSubjectSurrogatesDoNotDependOnOrder(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	rng := rand.New(rand.NewPCG(5, 8))
	type item struct{ label, text string }
	pool := []item{
		{"first_name", "Alan"}, {"first_name", "Maria"}, {"first_name", "jordan"}, {"last_name", "Brooks"},
		{"last_name", "O'Neil"}, {"name", "Alan Brooks"}, {"name", "Dr Okafor"}, {"city", "Springfield"},
		{"street_address", "12 Elm Street"}, {"company_name", "Acme Health"}, {"email", "alan@example.org"},
		{"phone_number", "555-201-3344"}, {"medical_record_number", "MRN 88120"}, {"account_number", "4411-2290"},
		{"url", "http://example.org/a"}, {"date", "not a date"},
	}
	seen := map[string]map[string]string{} // subject -> canonical|original -> stand-in
	shift := map[string]int{}
	for n := range 300 {
		subject := fmt.Sprintf("subject-%d", n%5)
		var nb noteBuilder
		var dates []time.Time
		for _, i := range rng.Perm(len(pool))[:3+rng.IntN(8)] {
			nb.text([]string{"Seen ", "; then ", ", with ", ". Also "}[rng.IntN(4)])
			nb.span(pool[i].label, pool[i].text)
			if rng.IntN(3) == 0 {
				d := time.Date(1990+rng.IntN(30), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
				dates = append(dates, d)
				nb.text(" on ")
				nb.span("date", d.Format("2006-01-02"))
			}
		}
		text := nb.b.String()
		res := r.Apply(text, nb.spans, Options{Method: Replace, Subject: subject})
		if seen[subject] == nil {
			seen[subject] = map[string]string{}
		}
		di := 0
		for _, red := range res.Redactions {
			original := text[red.Start:red.End]
			if red.Replacement == original {
				t.Fatalf("note %d: %q stands for itself", n, original)
			}
			if red.Canonical == "DATE" && original != "not a date" {
				got, err := time.Parse("2006-01-02", red.Replacement)
				if err != nil {
					t.Fatalf("note %d: %q became %q", n, original, red.Replacement)
				}
				days := int(got.Sub(dates[di]).Hours() / 24)
				di++
				if want, ok := shift[subject]; ok && days != want {
					t.Fatalf("note %d of %s: dates moved %d days, another note %d", n, subject, days, want)
				}
				if days == 0 || days < -364 || days > 364 {
					t.Fatalf("note %d: shift %d", n, days)
				}
				shift[subject] = days
				continue
			}
			key := red.Canonical + "|" + original
			if prev, ok := seen[subject][key]; ok && prev != red.Replacement {
				t.Fatalf("note %d of %s: %s became %q, earlier %q", n, subject, key, red.Replacement, prev)
			}
			seen[subject][key] = red.Replacement
		}
	}
	if len(shift) != 5 {
		t.Fatalf("shifts seen for %d subjects", len(shift))
	}
	differ := 0
	for key, v := range seen["subject-0"] {
		if seen["subject-1"][key] != v {
			differ++
		}
	}
	if differ < len(seen["subject-0"])/2 {
		t.Fatalf("two subjects share %d of %d stand-ins", len(seen["subject-0"])-differ, len(seen["subject-0"]))
	}
}

// TestSubjectShiftsSpanTheRange: subjects' shifts are never 0, stay in [-364, 364] and fall on
// both sides; a given date_shift_days still wins over the subject's.
func TestSubjectShiftsSpanTheRange(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	neg, pos := 0, 0
	for i := range 2000 {
		d := r.subjectDays(fmt.Sprint("s", i))
		switch {
		case d == 0 || d < -364 || d > 364:
			t.Fatalf("shift %d", d)
		case d < 0:
			neg++
		default:
			pos++
		}
	}
	if neg < 900 || pos < 900 {
		t.Fatalf("%d negative and %d positive shifts of 2000", neg, pos)
	}
	days := 30
	if d := r.Begin(Options{Subject: "s1", ShiftDays: &days}); d.days != 30 {
		t.Fatalf("date_shift_days 30 under a subject: %d", d.days)
	}
}

func TestCheckSubject(t *testing.T) {
	for id, ok := range map[string]bool{
		"patient-17": true, "Ünïcode id": true, strings.Repeat("x", MaxSubjectBytes): true,
		"": false, strings.Repeat("x", MaxSubjectBytes+1): false, "a\nb": false, "a\x00b": false,
		"a\u0085b": false, "\xff": false,
	} {
		if err := CheckSubject(id); (err == nil) != ok {
			t.Errorf("CheckSubject(%q) = %v", id, err)
		} else if err != nil && id != "" && strings.Contains(err.Error(), id) {
			t.Errorf("the error quotes the id: %v", err)
		}
	}
}

// TestApplyAppliesTheLists: an allowed span is kept as written, a deny term is redacted under
// its own label, whatever the method.
func TestApplyAppliesTheLists(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	lists, errs := entities.NewLists([]string{"Mercy"}, []string{"ward 7"})
	if errs != nil {
		t.Fatal(errs)
	}
	text := "Mercy saw Alan on Ward 7."
	spans := []entities.Entity{{Label: "first_name", Start: 0, End: 5, Score: 0.9}, {Label: "first_name", Start: 10, End: 14, Score: 0.9}}
	res := r.Apply(text, spans, Options{Method: Mask, Lists: lists})
	if res.Text != "Mercy saw [first_name] on [deny_list]." || res.Redactions[1].Canonical != "DENY_LIST" {
		t.Fatalf("%q %+v", res.Text, res.Redactions)
	}
}

// TestADenyTermIsRedactedInAnyUnicodeForm: a deny term written composed ("José García", NFC)
// is redacted where the text writes it decomposed, as macOS and PDFs do; it was left in clear
// (an auditor's find).
func TestADenyTermIsRedactedInAnyUnicodeForm(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	lists, errs := entities.NewLists(nil, []string{"Jos\u00e9 Garc\u00eda"})
	if errs != nil {
		t.Fatal(errs)
	}
	text := "Seen today: Jose\u0301 Garci\u0301a, follow up."
	res := r.Apply(text, nil, Options{Method: Mask, Lists: lists})
	if res.Text != "Seen today: [deny_list], follow up." {
		t.Errorf("deny-listed name left in clear: %q", res.Text)
	}
}

// TestASubjectsNameHasOneStandInInAnyUnicodeForm: one patient's name written composed in one
// note and decomposed, or with a soft hyphen, in another gets one stand-in: the subject's seed
// read the name as written, so the forms drew apart.
func TestASubjectsNameHasOneStandInInAnyUnicodeForm(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	var got []string
	for _, name := range []string{"Garc\u00eda", "Garci\u0301a", "GARCI\u0301A", "Gar\u00adc\u00eda"} {
		text := "Seen " + name + " today."
		res := r.Apply(text, []entities.Entity{{Start: 5, End: 5 + len(name), Label: "last_name", Score: 0.9}}, Options{Method: Replace, Subject: "patient-9"})
		got = append(got, strings.ToLower(res.Redactions[0].Replacement))
	}
	if len(slices.Compact(slices.Clone(got))) != 1 {
		t.Fatalf("one name, several stand-ins: %q", got)
	}
}

// BenchmarkReplace: replace over a generated note, drawn per document and derived per
// subject (each surrogate seeds its own draw).
func BenchmarkReplace(b *testing.B) {
	r, err := New(Config{HashKey: []byte("0123456789abcdef")})
	if err != nil {
		b.Fatal(err)
	}
	n := genNote(rand.New(rand.NewPCG(1, 1)))
	for _, subject := range []string{"", "patient-17"} {
		b.Run(map[string]string{"": "document", "patient-17": "subject"}[subject], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Apply(n.text, n.spans, Options{Method: Replace, Subject: subject})
			}
		})
	}
}

// TestASubjectsNameIgnoresTitles: under a subject a title does not choose the stand-in, so
// "Mr. Zorblat" (a name neither list holds) gets the same stand-in as "Zorblat" alone, in two
// notes or in one stream after a plain "Zorblat".
func TestASubjectsNameIgnoresTitles(t *testing.T) {
	r := subjectRedactor(t, "0123456789abcdef")
	at := func(text string) []entities.Entity {
		i := strings.Index(text, "Zorblat")
		return []entities.Entity{{Label: "first_name", Start: i, End: i + len("Zorblat"), Score: 0.9}}
	}
	titled, plain := "Then Mr. Zorblat left.", "Zorblat came. "
	alone := r.Begin(Options{Subject: "p1", Method: Replace})
	titledAlone, _ := alone.Redact(titled, 0, at(titled))
	stream := r.Begin(Options{Subject: "p1", Method: Replace})
	plainFirst, _ := stream.Redact(plain, 0, at(plain))
	titledAfter, _ := stream.Redact(titled, len(plain), at(titled))
	if titledAlone != titledAfter || strings.Fields(plainFirst)[0] != strings.Fields(titledAfter)[2] {
		t.Fatalf("%q alone, %q then %q", titledAlone, plainFirst, titledAfter)
	}
}

// TestASubjectsMixedCaseNameIsNeverItsOwnStandIn: a name written in mixed case ("LaToya",
// "DeShawn", "Mcclure") and spelled in another case by the names lists ("Latoya", "Deshawn",
// "McClure") is not its own stand-in under a subject. The draw was checked against the
// original case-sensitively, and a subject's draws skip the document's folded check, so these
// subjects got their real names back, in every note (an auditor's find).
func TestASubjectsMixedCaseNameIsNeverItsOwnStandIn(t *testing.T) {
	r := newTestRedactor(t, "0123456789abcdef")
	for _, c := range []struct{ orig, label, subject string }{
		{"LaToya", "first_name", "patient-1495"},
		{"DeShawn", "first_name", "patient-2214"},
		{"Mcclure", "last_name", "patient-756"},
		{"LaToya Mcclure", "name", "patient-1495"}, // a whole name, word by word
		{"DeShawn Mcclure", "name", "patient-756"},
	} {
		text := "Seen " + c.orig + " today."
		res := r.Apply(text, []entities.Entity{{Start: 5, End: 5 + len(c.orig), Label: c.label, Score: 0.9}}, Options{Method: Replace, Subject: c.subject})
		got := strings.Fields(strings.ToLower(res.Redactions[0].Replacement))
		for _, w := range strings.Fields(strings.ToLower(c.orig)) {
			if slices.Contains(got, w) {
				t.Errorf("subject %s: %q replaced by %q: %q", c.subject, c.orig, res.Redactions[0].Replacement, res.Text)
			}
		}
	}
}
