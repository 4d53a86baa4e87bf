package audit

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the audit log's series. A nil *Metrics records nothing.
type Metrics struct {
	appends *prometheus.CounterVec
	latency prometheus.Histogram
	resyncs prometheus.Counter
}

// NewMetrics creates the series and registers them with reg (when not nil); it panics if reg
// holds them already, a wiring bug.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		appends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_audit_appends_total",
			Help: "Audit records appended, by result: stored (acknowledged by the stream) or failed (the request was answered 503).",
		}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_audit_append_seconds",
			Help:    "From a record's append to its acknowledgement by the stream (what it adds to its request).",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
		}),
		resyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_audit_resyncs_total",
			Help: "Times a replica read its chain's head back from the stream after a failed append.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.appends, m.latency, m.resyncs)
	}
	return m
}

func (m *Metrics) appended(err error, took time.Duration) {
	if m == nil {
		return
	}
	if err != nil {
		m.appends.WithLabelValues("failed").Inc()
		return
	}
	m.appends.WithLabelValues("stored").Inc()
	m.latency.Observe(took.Seconds())
}

func (m *Metrics) resynced() {
	if m != nil {
		m.resyncs.Inc()
	}
}
