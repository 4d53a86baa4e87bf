package connwatch

import "github.com/prometheus/client_golang/prometheus"

// Collector exports the watcher's Stats when Prometheus scrapes:
// sluice_connwatch_watched_connections (requests whose connection is watched now) and
// sluice_connwatch_unwatchable_total (Watch calls that could not watch, so that a deployment
// sees when disconnect detection is off). Departures are counted where they end requests
// (sluice_http_requests_aborted_total).
func (w *Watcher) Collector() prometheus.Collector { return &collector{w: w} }

var (
	watchedDesc = prometheus.NewDesc("sluice_connwatch_watched_connections",
		"Requests whose client connection the disconnect watcher is watching now.", nil, nil)
	unwatchableDesc = prometheus.NewDesc("sluice_connwatch_unwatchable_total",
		"Watch calls that could not watch their connection (no socket, a dup or epoll error, or no epoll on this platform); those requests are not cancelled when their client leaves.", nil, nil)
)

type collector struct{ w *Watcher }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- watchedDesc
	ch <- unwatchableDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.w.Stats()
	ch <- prometheus.MustNewConstMetric(watchedDesc, prometheus.GaugeValue, float64(st.Watching))
	ch <- prometheus.MustNewConstMetric(unwatchableDesc, prometheus.CounterValue, float64(st.Unwatchable))
}
