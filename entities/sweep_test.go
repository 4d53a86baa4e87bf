package entities

import (
	"slices"
	"strings"
	"testing"
)

// TestSafetySweepAddsOnlyWhatIdentifiesItselfAndOverlapsNothing: an e-mail the model missed
// is added; a phone number the model found (even as a piece) is not added again; an SSN
// whose validator refuses it, and a bare postcode without its context, are not added.
func TestSafetySweepAddsOnlyWhatIdentifiesItselfAndOverlapsNothing(t *testing.T) {
	text := "Call 415-555-0132 or write to maria.g@example.com; SSN 000-12-3456; lot 90210."
	at := strings.Index(text, "555")
	found := []Entity{{Label: "phone_number", Start: at, End: at + 8, Score: 0.9}}
	cfg := DefaultSmartMerge()
	all, added := SafetySweep(text, found, &cfg)
	var labels []string
	for _, e := range added {
		labels = append(labels, e.Label+"="+text[e.Start:e.End])
	}
	if !slices.Equal(labels, []string{"email=maria.g@example.com"}) {
		t.Fatalf("added %v", labels)
	}
	if len(all) != 2 || all[0] != found[0] || all[1] != added[0] {
		t.Fatalf("all %v", all)
	}
	if all, added := SafetySweep(text, found, nil); added != nil || len(all) != 1 {
		t.Fatal("a nil config added spans")
	}
}
