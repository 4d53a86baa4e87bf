package jobs

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the jobs' series, this process's share of the fleet's work. A nil *Metrics
// records nothing.
type Metrics struct {
	jobs      *prometheus.CounterVec
	documents *prometheus.CounterVec
	batch     prometheus.Histogram
}

// NewMetrics creates the series and registers them with reg (when not nil); it panics if reg
// holds them already, a wiring bug.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_jobs_total",
			Help: "Jobs accepted (created) and finished by this process, by status: created, done, failed, cancelled.",
		}, []string{"status"}),
		documents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_jobs_documents_total",
			Help: "Job documents this process worked on, by outcome: processed, failed (counted as the job's failure), " +
				"retried (given back to the queue after a failure, or at shutdown), deferred (given back to wait for load, the tenant's budget, " +
				"or a replica with the key its job is sealed under), skipped (nothing to do: counted already, or its job cancelled, finished or gone).",
		}, []string{"outcome"}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_jobs_batch_documents",
			Help:    "Documents a worker took from the queue at once.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 1024},
		}),
	}
	// Every series from the start, at 0, so that a rate has a first sample.
	for _, s := range []string{"created", string(Done), string(Failed), string(Cancelled)} {
		m.jobs.WithLabelValues(s)
	}
	for _, o := range []string{"processed", "failed", "retried", "deferred", "skipped"} {
		m.documents.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.jobs, m.documents, m.batch)
	}
	return m
}

func (m *Metrics) job(status string) {
	if m != nil {
		m.jobs.WithLabelValues(status).Inc()
	}
}

func (m *Metrics) docs(outcome string, n int) {
	if m != nil && n > 0 {
		m.documents.WithLabelValues(outcome).Add(float64(n))
	}
}

func (m *Metrics) took(n int) {
	if m != nil {
		m.batch.Observe(float64(n))
	}
}
