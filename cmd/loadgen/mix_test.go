package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseMixRejectsBadSpecs(t *testing.T) {
	allowed := []string{"analyze", "pii"}
	cases := map[string]string{
		"analyze":             "not name=weight",
		"analyse=1":           "unknown name",
		"analyze=1,analyze=2": "appears twice",
		"analyze=-1":          "number >= 0",
		"analyze=x":           "number >= 0",
		"analyze=NaN":         "number >= 0",
		"analyze=0,pii=0":     "positive weight",
		"":                    "positive weight",
	}
	for spec, want := range cases {
		if _, err := ParseMix("mix", spec, allowed); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMix(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

func TestMixPicksInProportionAndNeverAZeroWeight(t *testing.T) {
	m, err := ParseMix("lengths", " short=3, medium=1 ,long=0", []string{"short", "medium", "long"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.String(); got != "short=0.75,medium=0.25" {
		t.Errorf("String() = %q", got)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	counts := map[string]int{}
	const n = 40000
	for i := 0; i < n; i++ {
		counts[m.Pick(rng)]++
	}
	if counts["long"] != 0 {
		t.Errorf("a zero weight was picked %d times", counts["long"])
	}
	if share := float64(counts["short"]) / n; math.Abs(share-0.75) > 0.01 {
		t.Errorf("short picked %.3f of the time, want 0.75", share)
	}
}
