package entities

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSemanticUnitsAreTheOneAtATimeUnits: the units found with the held spans searched are the
// units of the loop that read every unit for every match, on random texts of dates, numbers
// and words that the default patterns overlap on.
func TestSemanticUnitsAreTheOneAtATimeUnits(t *testing.T) {
	pieces := []string{"1/1/11 ", "03/04/2021 ", "555-123-4567 ", "MRN 12345678 ", "a@b.org ", "word ", "123 ", "Dr. Smith ", "\n"}
	patterns := DefaultPIIPatterns()
	rng := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		if got, want := FindSemanticUnits(text, patterns, 30), oneAtATimeUnits(text, patterns, 30); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
}

// oneAtATimeUnits is FindSemanticUnits as it was first written: every match checked against
// every unit kept so far (each scored as FindSemanticUnits scores it).
func oneAtATimeUnits(text string, patterns []PIIPattern, contextWindow int) []SemanticUnit {
	order := make([]int, len(patterns))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return patterns[b].Priority - patterns[a].Priority })
	var units []SemanticUnit
	for _, pi := range order {
		p := &patterns[pi]
		if p.Regexp == nil {
			continue
		}
	matches:
		for _, m := range p.findAll(text, utf8.ValidString(text)) {
			for _, u := range units {
				if m[0] < u.End && m[1] > u.Start {
					continue matches
				}
			}
			units = append(units, p.unitAt(text, m[0], m[1], contextWindow))
		}
	}
	slices.SortStableFunc(units, func(a, b SemanticUnit) int { return a.Start - b.Start })
	return units
}

// BenchmarkPatternsOverManyDates: 100,000 characters of dates, each a match: the units found
// and merged with as many entities.
func BenchmarkPatternsOverManyDates(b *testing.B) {
	text := strings.Repeat("1/1/11 ", 100_000/7)
	var ents []Entity
	for i := 0; i+6 <= len(text); i += 7 {
		ents = append(ents, Entity{Label: "date", Start: i, End: i + 6, Score: 0.9})
	}
	cfg := SmartMergeConfig{Patterns: DefaultPIIPatterns(), ContextWindow: 30, UnitMinScore: 0.5}
	for b.Loop() {
		SmartMerge(text, ents, cfg)
	}
}
