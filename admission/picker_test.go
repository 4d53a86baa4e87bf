package admission

import (
	"slices"
	"testing"
)

func TestPickerSharesTurnsByWeight(t *testing.T) {
	both := [NumPriorities]bool{true, true}
	pk := Picker{Weights: [NumPriorities]int{4, 1}}
	var got []Priority
	for range 10 {
		got = append(got, pk.Next(both))
	}
	I, B := Interactive, Bulk
	if want := []Priority{I, I, B, I, I, I, I, B, I, I}; !slices.Equal(got, want) {
		t.Fatalf("4:1 order = %v, want %v", got, want)
	}
	pk = Picker{Weights: [NumPriorities]int{1, 1}}
	got = got[:0]
	for range 4 {
		got = append(got, pk.Next(both))
	}
	if want := []Priority{I, B, I, B}; !slices.Equal(got, want) {
		t.Fatalf("1:1 order = %v, want %v", got, want)
	}
	// Turns where one class alone is ready must not build up a debt or a credit that later
	// skews the share.
	pk = Picker{Weights: [NumPriorities]int{4, 1}}
	for range 7 {
		if p := pk.Next([NumPriorities]bool{true, false}); p != Interactive {
			t.Fatalf("only Interactive ready, picked %v", p)
		}
	}
	if pk.credit != ([NumPriorities]int{}) {
		t.Fatalf("credit after uncontested turns = %v, want zero", pk.credit)
	}
}
