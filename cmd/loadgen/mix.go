package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Mix is a weighted choice among named options, parsed from "a=0.5,b=0.5". Weights need not
// sum to one; they are normalised.
type Mix struct {
	names []string
	cum   []float64 // cumulative normalised weights; the last is 1
}

// ParseMix parses spec and checks every name against allowed, so that a typo fails at start-up
// instead of silently sending nothing of one kind.
func ParseMix(flagName, spec string, allowed []string) (Mix, error) {
	known := map[string]bool{}
	for _, a := range allowed {
		known[a] = true
	}
	var m Mix
	seen := map[string]bool{}
	var total float64
	var weights []float64
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, raw, ok := strings.Cut(part, "=")
		if !ok {
			return Mix{}, fmt.Errorf("-%s: item %q is not name=weight", flagName, part)
		}
		name = strings.TrimSpace(name)
		if !known[name] {
			return Mix{}, fmt.Errorf("-%s: unknown name %q (want one of %s)", flagName, name, strings.Join(allowed, ", "))
		}
		if seen[name] {
			return Mix{}, fmt.Errorf("-%s: %q appears twice", flagName, name)
		}
		seen[name] = true
		w, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || !(w >= 0) || math.IsInf(w, 0) {
			return Mix{}, fmt.Errorf("-%s: weight of %q must be a finite number >= 0", flagName, name)
		}
		if w == 0 {
			continue
		}
		m.names = append(m.names, name)
		weights = append(weights, w)
		total += w
	}
	if total <= 0 {
		return Mix{}, fmt.Errorf("-%s: needs at least one positive weight", flagName)
	}
	acc := 0.0
	for _, w := range weights {
		acc += w / total
		m.cum = append(m.cum, acc)
	}
	m.cum[len(m.cum)-1] = 1
	return m, nil
}

// Pick draws one name: option i owns the interval [cum[i-1], cum[i]).
func (m Mix) Pick(rng *rand.Rand) string {
	u := rng.Float64()
	i := sort.Search(len(m.cum), func(i int) bool { return m.cum[i] > u })
	return m.names[min(i, len(m.names)-1)]
}

// Names lists the options with a positive weight, in the order given.
func (m Mix) Names() []string { return append([]string(nil), m.names...) }

// String renders the normalised mix, for the report.
func (m Mix) String() string {
	var b strings.Builder
	prev := 0.0
	for i, n := range m.names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%.3g", n, m.cum[i]-prev)
		prev = m.cum[i]
	}
	return b.String()
}
