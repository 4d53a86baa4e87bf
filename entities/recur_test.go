package entities

import (
	"slices"
	"strings"
	"testing"
)

func TestRecurrencesFindAFoundNameWhereItComesAgain(t *testing.T) {
	text := "RE:  ABC, seen with abc's wife. Consulting with ABC today; ABCD and Abcess are other words. John Smith and JOHN SMITH."
	at := strings.Index(text, "John Smith")
	found := []Entity{{Label: "last_name", Start: 5, End: 8}, {Label: "person", Start: at, End: at + len("John Smith")}}
	var got []string
	for _, e := range Recurrences(text, found) {
		got = append(got, e.Label+"="+text[e.Start:e.End])
	}
	want := []string{"last_name=abc", "last_name=ABC", "person=JOHN SMITH"}
	if !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	// Where two found spans begin with the same word, the longer is taken.
	text = "Zorblat came. Zorblat Quexley left. Later Zorblat Quexley called."
	second := strings.Index(text, "Zorblat Quexley")
	found = []Entity{{Label: "first_name", Start: 0, End: 7}, {Label: "person", Start: second, End: second + 15}}
	if r := Recurrences(text, found); len(r) != 1 || text[r[0].Start:r[0].End] != "Zorblat Quexley" {
		t.Fatalf("%v", r)
	}
	// A span that cuts a word, or a short one, is not looked for; nothing found, nothing added.
	if r := Recurrences("Smithson and Smith", []Entity{{Label: "last_name", Start: 0, End: 5}, {Label: "age", Start: 13, End: 15}}); r != nil {
		t.Fatalf("%v", r)
	}
}

// TestRecallLooksForWhatEarlierPartsHeld: a text held from one part is found in the parts read
// after it, in any case, even where their own spans are none; looking holds nothing.
func TestRecallLooksForWhatEarlierPartsHeld(t *testing.T) {
	var r Recall
	first := "RE: Zorblat Quexley, seen."
	found := []Entity{{Label: "person", Start: 4, End: 19}}
	if got := r.Recurrences(first, found); got != nil {
		t.Fatalf("the first part: %v", got)
	}
	later := "Called ZORBLAT QUEXLEY; Zorblat alone is not the name."
	if got := r.Recurrences(later, nil); got != nil {
		t.Fatalf("nothing held, yet found %v", got)
	}
	r.Hold(first, found)
	got := r.Recurrences(later, nil)
	if len(got) != 1 || later[got[0].Start:got[0].End] != "ZORBLAT QUEXLEY" || got[0].Label != "person" {
		t.Fatalf("%v", got)
	}
	// A held longer text that a found span cuts does not hide the shorter one that stands.
	part := "Zorblat was here. Zorblat Quexley called."
	got = r.Recurrences(part, []Entity{{Label: "first_name", Start: 0, End: 7}, {Label: "last_name", Start: 26, End: 33}})
	if len(got) != 1 || part[got[0].Start:got[0].End] != "Zorblat" || got[0].Start != 18 {
		t.Fatalf("under a held longer text: %v", got)
	}
	var conv Recall
	conv.Hold("Dr. Abernathy signed.", []Entity{{Label: "last_name", Start: 4, End: 13}})
	if _, added := conv.SafetySweep("Abernathy called.", nil, &SmartMergeConfig{}); len(added) != 1 || added[0].Start != 0 {
		t.Fatalf("a held text in a sweep: %v", added)
	}
}
