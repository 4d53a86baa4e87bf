package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/entities"
)

const note = "Maria Gonzalez (DOB 03/14/1962) called; Maria Gonzalez will call back at (415) 555-0132."

func noteSpans() []entities.Entity {
	find := func(s string, from int) (int, int) {
		i := strings.Index(note[from:], s) + from
		return i, i + len(s)
	}
	a, b := find("Maria Gonzalez", 0)
	c, d := find("03/14/1962", 0)
	e, f := find("Maria Gonzalez", b)
	g, h := find("(415) 555-0132", 0)
	return []entities.Entity{{Start: a, End: b, Label: "person"}, {Start: c, End: d, Label: "date_of_birth"}, {Start: e, End: f, Label: "person"}, {Start: g, End: h, Label: "phone_number"}}
}

func TestRedactOneMapPerRequest(t *testing.T) {
	m := NewMap()
	out := m.Redact(note, noteSpans())
	want := "[PERSON_1] (DOB [DATE_OF_BIRTH_1]) called; [PERSON_1] will call back at [PHONE_1]."
	if out != want {
		t.Fatalf("redacted %q\nwant     %q", out, want)
	}
	if m.Contains(out) || !m.Contains(note) {
		t.Error("Contains: the redacted text holds no original, the note does")
	}
	// A second message of the same request: the same name is the same placeholder.
	second := "Is Maria Gonzalez allergic?"
	i := strings.Index(second, "Maria")
	if got := m.Redact(second, []entities.Entity{{Start: i, End: i + len("Maria Gonzalez"), Label: "name"}}); got != "Is [PERSON_1] allergic?" {
		t.Errorf("second message %q", got)
	}
	restored, invented := m.Restore(out)
	if restored != note || invented != 0 {
		t.Errorf("restored %q (%d invented)", restored, invented)
	}
	m.Wipe()
	if m.Len() != 0 {
		t.Error("Wipe left placeholders")
	}
	if got, _ := m.Restore("[PERSON_1]"); got != Masked {
		t.Errorf("after Wipe a placeholder restored to %q", got)
	}
}

func TestRedactMergesOverlapsAndSkipsBadSpans(t *testing.T) {
	m := NewMap()
	text := "John Smith Jr was seen."
	out := m.Redact(text, []entities.Entity{{Start: 0, End: 4, Label: "first_name"}, {Start: 0, End: 10, Label: "person"}, {Start: 5, End: 13, Label: "last_name"}, {Start: 30, End: 40, Label: "date"}, {Start: 8, End: 4, Label: "date"}})
	if out != "[PERSON_1] was seen." {
		t.Errorf("%q", out)
	}
	if restored, _ := m.Restore(out); restored != text {
		t.Errorf("restored %q", restored)
	}
	// A span past the end still covers what is there.
	if out := NewMap().Redact("Call Maria", []entities.Entity{{Start: 5, End: 50, Label: "person"}, {Start: 5, End: 8, Label: "first_name"}}); out != "Call [PERSON_1]" {
		t.Errorf("%q", out)
	}
	// Contains looks outside placeholders, in any case, for originals of three bytes or more.
	c := NewMap()
	c.Redact("age 4, Maria", []entities.Entity{{Start: 4, End: 5, Label: "age"}, {Start: 7, End: 12, Label: "first_name"}})
	if c.Contains("[AGE_1] takes 4 tablets, [FIRST_NAME_1]") || !c.Contains("and MARIA again") {
		t.Error("Contains")
	}
}

// The split-placeholder case: the model's output cut at every byte boundary into two pieces,
// and into one-byte pieces, restores to the same text, and no emitted prefix ever holds part of
// a placeholder.
func TestRestorerHoldsBackSplitPlaceholders(t *testing.T) {
	m := NewMap()
	m.Redact(note, noteSpans())
	output := "Call [PERSON_1] at [PHONE_1] [sic] about [DATE_OF_BIRTH_1]; ref [1], [PERSON_9], [PERSON_1"
	want := "Call Maria Gonzalez at (415) 555-0132 [sic] about 03/14/1962; ref [1], " + Masked + ", " + Masked
	for cut := 0; cut <= len(output); cut++ {
		r := m.Restorer()
		first := r.Write(output[:cut])
		for _, p := range []string{"[PERSON_1]", "[PHONE_1]", "[DATE_OF_BIRTH_1]", "[PERSON_9]"} {
			for k := 1; k < len(p); k++ {
				if strings.HasSuffix(first, p[:k]) {
					t.Fatalf("cut %d emitted half of %s: %q", cut, p, first)
				}
			}
		}
		if got := first + r.Write(output[cut:]) + r.Flush(); got != want {
			t.Fatalf("cut %d: %q", cut, got)
		}
		if r.Invented() != 1 {
			t.Fatalf("cut %d: %d invented, want 1", cut, r.Invented())
		}
	}
	r := m.Restorer()
	var b strings.Builder
	for i := range len(output) {
		piece := r.Write(output[i : i+1])
		for _, p := range []string{"[PERSON", "[PHONE", "[DATE_OF"} {
			if strings.Contains(piece, p) {
				t.Fatalf("byte %d emitted %q", i, piece)
			}
		}
		b.WriteString(piece)
	}
	if got := b.String() + r.Flush(); got != want {
		t.Errorf("byte by byte: %q", got)
	}
}

// TestScan: a placeholder is complete, partial while it may still become one, or not one; an
// answer that ends "see [NOTE" is not held, so not masked as a cut placeholder would be.
func TestScan(t *testing.T) {
	for text, want := range map[string]scanState{
		"[PERSON_1]": complete, "[DATE_OF_BIRTH_12]": complete, "[PERSON_1": partial, "[": partial,
		"[1]": notPlaceholder, "[sic]": notPlaceholder, "[PERSON]": notPlaceholder, "[PERSON_]": notPlaceholder,
		"[_1]": notPlaceholder, "[PERSON 1]": notPlaceholder, "[STEP_2]": notPlaceholder, "[ICD_10]": notPlaceholder, "[" + strings.Repeat("A", 80): notPlaceholder,
		// Cut off where no kind begins so: the answer's own text, not a placeholder to hold.
		"[NOTE": notPlaceholder, "[PERSONS": notPlaceholder, "[PERSON_1A": notPlaceholder, "[DATE_OF_BI": partial, "[PERSON_12": partial,
	} {
		if _, got := scan(text); got != want {
			t.Errorf("scan(%q) = %d, want %d", text, got, want)
		}
	}
	r := NewMap().Restorer()
	if got := r.Write("see [NOTE") + r.Flush(); got != "see [NOTE" {
		t.Errorf("an answer's own bracket at its end: %q", got)
	}
}

// TestJSONRestoresStayJSON: restored into JSON, an original with quotes, backslashes, a line
// break and non-ASCII is escaped, whole and cut across pieces, and the document parses to
// the original.
func TestJSONRestoresStayJSON(t *testing.T) {
	m := NewMap()
	original := "O\"Brien \\ Ann\nÉlise <x>"
	out := m.Redact(original, []entities.Entity{{Label: "PERSON", Start: 0, End: len(original)}})
	doc := `{"patient":"` + out + `"}`
	r := m.restorer(true)
	var got strings.Builder
	for i := 0; i < len(doc); i += 3 {
		got.WriteString(r.Write(doc[i:min(i+3, len(doc))]))
	}
	got.WriteString(r.Flush())
	var back struct{ Patient string }
	if err := json.Unmarshal([]byte(got.String()), &back); err != nil || back.Patient != original {
		t.Fatalf("%q: %v, %q", got.String(), err, back.Patient)
	}
}

// TestPlaceholdersTheTextAlreadyHeld: a placeholder the request's own text already holds (an
// earlier answer's, pasted back) is never made again for an original, and comes back as it
// was when the model repeats it; a request of several texts reserves every text's first.
func TestPlaceholdersTheTextAlreadyHeld(t *testing.T) {
	m := NewMap()
	text := "[PERSON_1] wrote to Alan Brooks about [PERSON_7]"
	out := m.Redact(text, []entities.Entity{{Start: 20, End: 31, Label: "person"}})
	if out != "[PERSON_1] wrote to [PERSON_2] about [PERSON_7]" {
		t.Fatalf("redacted %q", out)
	}
	back, invented := m.Restore("[PERSON_1] and [PERSON_7] met [PERSON_2]; [PERSON_3]")
	if back != "[PERSON_1] and [PERSON_7] met Alan Brooks; "+Masked || invented != 1 {
		t.Fatalf("restored %q, %d invented", back, invented)
	}
	m = NewMap()
	first, second := "Alan Brooks called.", "Reply to [PERSON_1]."
	m.Reserve(first, second)
	if out := m.Redact(first, []entities.Entity{{Start: 0, End: 11, Label: "person"}}); out != "[PERSON_2] called." {
		t.Fatalf("the first of two texts: %q", out)
	}
	if back, _ := m.Restore("[PERSON_1], [PERSON_2]"); back != "[PERSON_1], Alan Brooks" {
		t.Fatalf("restored %q", back)
	}
	m.Wipe()
	if out := m.Redact("Alan Brooks", []entities.Entity{{Start: 0, End: 11, Label: "person"}}); out != "[PERSON_1]" {
		t.Fatalf("after Wipe: %q", out)
	}
}
