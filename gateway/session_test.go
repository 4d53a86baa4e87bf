package gateway

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/entities"
)

func newSession(t *testing.T, p Policy) *Session {
	t.Helper()
	residual := func(text string) bool { return strings.Contains(text, "555-0132") }
	return Begin("local", p, residual)
}

// TestACategoryOfTheClientsOwnIsNotRecorded: a disallowed category Sluice does not know (a
// client's word, which may be anything) reaches neither the record nor the external model by
// name; it still matches a model's label of that name.
func TestACategoryOfTheClientsOwnIsNotRecorded(t *testing.T) {
	p := Policy{Name: "custom", MinConfidence: 0.5, Disallowed: []string{"zorblat_quexley", "ssn", "date_of_birth", "jane_doe"}}
	want := []string{"custom", "date_of_birth", "ssn"}
	if got := p.Record()["disallowed_entity_categories"]; !slices.Equal(got.([]string), want) {
		t.Errorf("told the external model %v; want %v", got, want)
	}
	if got := p.audited().Disallowed; !slices.Equal(got, want) {
		t.Errorf("recorded %v; want %v", got, want)
	}
	s := newSession(t, p)
	if ref := s.Screen([]entities.Entity{{Label: "zorblat_quexley", End: 5, Score: 0.99}}); ref == nil || ref.Reason != DisallowedCategory {
		t.Errorf("a model's own label disallowed by name: %v", ref)
	}
}

// The policy judges every span before anything is redacted: one under the threshold (at or
// over the floor) or of a disallowed category refuses the request, and the refusal has ended
// the record.
func TestSessionScreensByThePolicy(t *testing.T) {
	p := Policy{Name: "strict", MinConfidence: 0.85, Floor: 0.3, Disallowed: []string{"date_of_birth"}}
	for _, c := range []struct {
		spans []entities.Entity
		want  Reason
	}{
		{[]entities.Entity{{Label: "first_name", Start: 0, End: 5, Score: 0.9}}, ""},
		{[]entities.Entity{{Label: "first_name", Start: 0, End: 5, Score: 0.2}}, ""}, // under the floor: redacted, not judged
		{[]entities.Entity{{Label: "first_name", Start: 0, End: 5, Score: 0.5}}, BelowThreshold},
		{[]entities.Entity{{Label: "date_of_birth", Start: 0, End: 5, Score: 0.99}}, DisallowedCategory},
	} {
		s := newSession(t, p)
		ref := s.Screen(c.spans)
		switch {
		case c.want == "" && ref != nil:
			t.Errorf("%+v: refused %v", c.spans, ref)
		case c.want != "" && (ref == nil || ref.Reason != c.want || ref.Status != Blocked):
			t.Errorf("%+v: %v, want %s", c.spans, ref, c.want)
		case c.want != "" && (!s.Ended() || s.Record().Reason != string(c.want) || s.Record().Status != string(Blocked)):
			t.Errorf("%+v: record %+v", c.spans, s.Record())
		case c.want == "" && s.Ended():
			t.Errorf("%+v: ended", c.spans)
		}
	}
}

// Redact, the tripwire, Restore and Forward: the originals go back, the record holds only
// hashes and counts, and the map is wiped.
func TestSessionForwardsAndRecordsHashesOnly(t *testing.T) {
	s := newSession(t, Policy{Name: "chat"})
	text := "Call Maria at home."
	spans := []entities.Entity{{Label: "first_name", Start: 5, End: 10, Score: 0.9}}
	if ref := s.Screen(spans); ref != nil {
		t.Fatal(ref)
	}
	out := s.Redact(text, spans)
	if out != "Call [FIRST_NAME_1] at home." {
		t.Fatalf("outbound %q", out)
	}
	if ref := s.Send(out, out); ref != nil {
		t.Fatal(ref)
	}
	restored, ref := s.Restore("Ask [FIRST_NAME_1] to call back.")
	if ref != nil || restored[0] != "Ask Maria to call back." {
		t.Fatalf("%v %q", ref, restored)
	}
	rec := s.Forward()
	if rec.Status != string(Forwarded) || rec.Entities["FIRST_NAME"] != 1 || len(rec.PlaceholderHashes) != 1 ||
		rec.OutboundHash != audit.Hash(out) || rec.PlaceholderHashes[0] != audit.Hash("[FIRST_NAME_1]") || rec.Policy.Name != "chat" {
		t.Fatalf("record %+v", rec)
	}
	if data, _ := json.Marshal(rec); strings.Contains(string(data), "Maria") || strings.Contains(string(data), "call back") {
		t.Fatalf("a text reached the record: %s", data)
	}
	if s.m.Len() != 0 {
		t.Fatal("the map still holds originals after the request ended")
	}
	if again := s.End(TransportError, CompletionFailed); again.Status != string(Forwarded) {
		t.Fatal("a second end changed the record")
	}
}

// A request whose redacted text went out records its placeholders however it ends (the model
// failing, its client leaving): only Forward recorded them, so such a record had an
// outbound_hash and no placeholder_count. One the tripwire kept in records none.
func TestSessionRecordsWhatWentOutHoweverItEnds(t *testing.T) {
	for _, end := range []struct {
		status Status
		reason Reason
	}{{TransportError, CompletionFailed}, {Aborted, ClientClosed}, {Aborted, ClientStalled}} {
		s := newSession(t, Policy{Name: "chat"})
		out := s.Redact("Call Maria.", []entities.Entity{{Label: "first_name", Start: 5, End: 10, Score: 0.9}})
		if ref := s.Send(out, out); ref != nil {
			t.Fatal(ref)
		}
		if rec := s.End(end.status, end.reason); rec.Placeholders != 1 || !slices.Equal(rec.PlaceholderHashes, []string{audit.Hash("[FIRST_NAME_1]")}) ||
			!slices.Equal(s.PlaceholderHashes(), rec.PlaceholderHashes) {
			t.Errorf("%s %s: %d placeholders, hashes %v", end.status, end.reason, rec.Placeholders, rec.PlaceholderHashes)
		}
	}
	s := newSession(t, Policy{Name: "chat"})
	out := s.Redact("Call Maria.", []entities.Entity{{Label: "first_name", Start: 5, End: 10, Score: 0.9}})
	if ref := s.Send(out+" maria", out, "maria"); ref == nil {
		t.Fatal("the tripwire let an original out")
	}
	if rec := s.Record(); rec.Placeholders != 0 || len(rec.PlaceholderHashes) != 0 {
		t.Errorf("a text kept in: %d placeholders", rec.Placeholders)
	}
}

// The tripwire refuses an outbound text in which the sweep still finds an identifier, or in
// which an original redacted elsewhere appears.
func TestSessionTripwire(t *testing.T) {
	s := newSession(t, Policy{Name: "chat"})
	first := s.Redact("I am Maria Lopez", []entities.Entity{{Label: "person", Start: 5, End: 16}})
	if ref := s.Send(first+" / maria lopez again", first, "maria lopez again"); ref == nil || ref.Reason != Tripwire {
		t.Fatalf("an original outside its placeholder: %v", ref)
	}
	s2 := newSession(t, Policy{Name: "chat"})
	if ref := s2.Send("call 555-0132", "call 555-0132"); ref == nil || ref.Reason != Tripwire {
		t.Fatalf("the sweep's find: %v", ref)
	}
}

// One rule for invented placeholders: a whole answer holding one is rejected; a streamed one
// has it masked, and the record counts it, whichever face it came through.
func TestSessionInventedPlaceholders(t *testing.T) {
	s := newSession(t, Policy{Name: "chat"})
	s.Redact("Maria", []entities.Entity{{Label: "first_name", Start: 0, End: 5}})
	if _, ref := s.Restore("Hi [FIRST_NAME_1]", "and [FIRST_NAME_2]"); ref == nil || ref.Status != Rejected || ref.Reason != UnknownPlaceholder {
		t.Fatalf("whole: %v", ref)
	}
	if r := s.Record(); r.Invented != 1 || r.ReturnedHash != audit.Hash("Hi [FIRST_NAME_1]and [FIRST_NAME_2]") || !s.Ended() {
		t.Fatalf("whole record %+v", r)
	}
	s = newSession(t, Policy{Name: "chat"})
	s.Redact("Maria", []entities.Entity{{Label: "first_name", Start: 0, End: 5}})
	var got strings.Builder
	for i, piece := range []string{"Hi [FIRST_", "NAME_1] and [FIRST_NAME_9", "]!"} {
		got.WriteString(s.Piece(0, piece, i == 2, false))
	}
	rec := s.Forward()
	if got.String() != "Hi Maria and "+Masked+"!" || rec.Invented != 1 || rec.Status != string(Forwarded) ||
		rec.ReturnedHash != audit.Hash("Hi [FIRST_NAME_1] and [FIRST_NAME_9]!") {
		t.Fatalf("streamed %q, record %+v", got.String(), rec)
	}
}

// A request of more placeholders than a record holds hashes of has a record of bounded size:
// the first audit.MaxPlaceholderHashes hashes in the placeholders' sorted order, and the count;
// the caller's answer has every hash. The record held one hash a placeholder, so that 25,000
// names made a record of 1.7 MB, which the audit stream could never store.
func TestARecordHoldsABoundedListOfPlaceholders(t *testing.T) {
	s := newSession(t, Policy{Name: "strict"})
	const names = 25_000
	var text strings.Builder
	var spans []entities.Entity
	for i := range names {
		start := text.Len()
		text.WriteString("n" + strconv.Itoa(i) + " ")
		spans = append(spans, entities.Entity{Label: "first_name", Start: start, End: text.Len() - 1, Score: 0.9})
	}
	if ref := s.Screen(spans); ref != nil {
		t.Fatal(ref)
	}
	out := s.Redact(text.String(), spans)
	if ref := s.Send(out, out); ref != nil {
		t.Fatal(ref)
	}
	want := slices.Sorted(func(yield func(string) bool) {
		for i := range names {
			if !yield("[FIRST_NAME_" + strconv.Itoa(i+1) + "]") {
				return
			}
		}
	})
	rec := s.Forward()
	if data, _ := audit.Encode(rec); len(data) > 64<<10 || rec.Placeholders != names ||
		!slices.Equal(rec.PlaceholderHashes, hashes(want[:audit.MaxPlaceholderHashes])) {
		t.Errorf("a record of %d bytes: %d placeholders, %d hashes", len(data), rec.Placeholders, len(rec.PlaceholderHashes))
	}
	if !slices.Equal(s.PlaceholderHashes(), hashes(want)) {
		t.Errorf("the answer's hashes: %d, want %d", len(s.PlaceholderHashes()), names)
	}
}

func hashes(texts []string) []string {
	out := make([]string, len(texts))
	for i, p := range texts {
		out[i] = audit.Hash(p)
	}
	return out
}
