package kvcache

import "github.com/prometheus/client_golang/prometheus"

// Collector reports the pool to Prometheus when it is scraped: its blocks by state and its
// prefix-cache counters, the sluice_kvcache_* families of docs/METRICS.md's table, each labelled
// queue=name (the generation model the pool serves). Register it once per pool.
func (p *Pool) Collector(name string) prometheus.Collector {
	labels := prometheus.Labels{"queue": name}
	return &collector{pool: p,
		utilization: prometheus.NewDesc("sluice_kvcache_utilization",
			"Share of the KV cache's blocks held by sequences, 0 to 1 (cached-only blocks are free to take): what the inference gateway's endpoint picker reads.", nil, labels),
		blocks: prometheus.NewDesc("sluice_kvcache_blocks",
			"KV cache blocks by state: free, used (held by a sequence), cached (only the prefix cache keeps them).", []string{"state"}, labels),
		lookups: prometheus.NewDesc("sluice_kvcache_prefix_lookups_total",
			"Full prompt blocks looked up in the prefix cache.", nil, labels),
		hits: prometheus.NewDesc("sluice_kvcache_prefix_hits_total",
			"Full prompt blocks found in the prefix cache (their keys and values not recomputed).", nil, labels),
		evictions: prometheus.NewDesc("sluice_kvcache_evictions_total",
			"Cached blocks taken back for other tokens.", nil, labels),
		cows: prometheus.NewDesc("sluice_kvcache_copies_on_write_total",
			"Shared blocks copied before a write.", nil, labels),
	}
}

type collector struct {
	pool                                                *Pool
	utilization, blocks, lookups, hits, evictions, cows *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.utilization, c.blocks, c.lookups, c.hits, c.evictions, c.cows} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. It reads the pool's atomic counters only, so a
// scrape never waits on the step loop.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Stats()
	for _, s := range []struct {
		state string
		n     int
	}{{"free", st.Free}, {"used", st.Used}, {"cached", st.Cached}} {
		ch <- prometheus.MustNewConstMetric(c.blocks, prometheus.GaugeValue, float64(s.n), s.state)
	}
	if total := st.Free + st.Used + st.Cached; total > 0 {
		ch <- prometheus.MustNewConstMetric(c.utilization, prometheus.GaugeValue, float64(st.Used)/float64(total))
	}
	ch <- prometheus.MustNewConstMetric(c.lookups, prometheus.CounterValue, float64(st.Lookups))
	ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(st.Hits))
	ch <- prometheus.MustNewConstMetric(c.evictions, prometheus.CounterValue, float64(st.Evictions))
	ch <- prometheus.MustNewConstMetric(c.cows, prometheus.CounterValue, float64(st.CopiesOnWrite))
}
