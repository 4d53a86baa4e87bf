package kvcache

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCollectorReportsBlocksAndPrefixHits: two pools on one registry, each under its own
// queue label; the series follow the pool's state at every scrape.
func TestCollectorReportsBlocksAndPrefixHits(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := newTestPool(t, 8), newTestPool(t, 4)
	reg.MustRegister(a.Collector("a"), b.Collector("b"))
	prompt := make([]int64, 2*testConfig(8).BlockTokens+1) // two full blocks and one token
	for i := range prompt {
		prompt[i] = int64(i + 1)
	}
	first := a.NewTable(0)
	if !a.Reserve(first, len(prompt)) {
		t.Fatal("no room for the prompt")
	}
	write(a, newContents(a), &seq{t: first}, prompt)
	a.Release(first)
	second := a.NewTable(0)
	if a.Match(second, prompt) == 0 {
		t.Fatal("the released prompt's blocks were not found in the prefix cache")
	}
	got := scrape(t, reg)
	for series, want := range map[string]float64{
		"sluice_kvcache_blocks/a/used": 2, "sluice_kvcache_blocks/a/free": 6, "sluice_kvcache_blocks/a/cached": 0,
		"sluice_kvcache_blocks/b/free": 4, "sluice_kvcache_prefix_hits_total/a/": 2, "sluice_kvcache_prefix_lookups_total/a/": 2,
		"sluice_kvcache_evictions_total/b/": 0, "sluice_kvcache_copies_on_write_total/a/": 0,
		"sluice_kvcache_utilization/a/": 0.25, "sluice_kvcache_utilization/b/": 0,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	a.Release(second)
	if got := scrape(t, reg); got["sluice_kvcache_blocks/a/cached"] != 2 || got["sluice_kvcache_blocks/a/used"] != 0 ||
		got["sluice_kvcache_utilization/a/"] != 0 { // cached blocks are free to take
		t.Errorf("after release: cached %v, used %v; want 2 and 0", got["sluice_kvcache_blocks/a/cached"], got["sluice_kvcache_blocks/a/used"])
	}
}

// scrape gathers every series as "family/queue/state" -> value.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var queue, state string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "queue":
					queue = l.GetValue()
				case "state":
					state = l.GetValue()
				}
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[f.GetName()+"/"+queue+"/"+state] = v
		}
	}
	return out
}
