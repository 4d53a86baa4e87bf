package batcher

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
)

// Outcomes of a Submit call, the fixed label set of sluice_batcher_requests_total.
const (
	outcomeServed           = "served"            // Run answered it
	outcomeFailed           = "failed"            // Run returned an error or panicked
	outcomeQueueFull        = "queue_full"        // refused at once: QueueSize reached
	outcomeExpired          = "expired"           // waited MaxQueueWait; never computed
	outcomeClosed           = "closed"            // refused or abandoned because of Close / Start's ctx
	outcomeCancelledQueued  = "cancelled_queued"  // caller left while waiting; never computed
	outcomeCancelledRunning = "cancelled_running" // caller left while its batch ran; result dropped
)

type dispatchReason uint8

const (
	reasonFull   dispatchReason = iota // sequence or padded-token limit reached
	reasonWindow                       // the oldest request waited MaxWait
	reasonDrain                        // Close is draining the queue
)

func (r dispatchReason) String() string {
	switch r {
	case reasonFull:
		return "full"
	case reasonWindow:
		return "window"
	default:
		return "drain"
	}
}

// Metrics holds the Prometheus series of every Batcher that shares it; the label "queue" is the
// Batcher's name. Create one per registry with NewMetrics and pass it to each New. A nil
// *Metrics disables metrics. Refusals (queue full, max wait) are counted once, by the
// admission layer's sluice_admission_shed_total; here they are outcomes of Submit.
type Metrics struct {
	batchSequences *prometheus.HistogramVec
	batchRequests  *prometheus.HistogramVec
	paddedTokens   *prometheus.HistogramVec
	fillRatio      *prometheus.HistogramVec
	queueWait      *prometheus.HistogramVec
	runSeconds     *prometheus.HistogramVec
	requests       *prometheus.CounterVec
	batches        *prometheus.CounterVec
	depth          *depthCollector
}

// NewMetrics creates the batcher series and registers them with reg (when reg is not nil). It
// panics if reg already holds them, like prometheus.MustRegister: that is a wiring bug.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	q := []string{"queue"}
	m := &Metrics{
		batchSequences: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_batcher_batch_sequences",
			Help:    "Sequences per dispatched batch.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}, q),
		batchRequests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_batcher_batch_requests",
			Help:    "Requests per dispatched batch.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}, q),
		paddedTokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_batcher_batch_padded_tokens",
			Help:    "Padded tokens per dispatched batch: sequences x longest sequence.",
			Buckets: prometheus.ExponentialBuckets(16, 2, 14),
		}, q),
		fillRatio: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_batcher_batch_fill_ratio",
			Help:    "Upper bound on the share of a batch's padded tokens that are not padding (each request counted at its longest sequence).",
			Buckets: prometheus.LinearBuckets(0.1, 0.1, 10),
		}, q),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_batcher_queue_wait_seconds",
			Help:    "Time a dispatched request waited in its priority class's queue.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"queue", "priority"}),
		runSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_batcher_batch_run_seconds",
			Help:    "Time the runner took for one batch.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, q),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_batcher_requests_total",
			Help: "Submit calls by outcome: served, failed, queue_full, expired, closed, cancelled_queued, cancelled_running.",
		}, []string{"queue", "outcome"}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_batcher_batches_total",
			Help: "Dispatched batches by what triggered them: full, window, drain.",
		}, []string{"queue", "reason"}),
		depth: newDepthCollector(),
	}
	if reg != nil {
		reg.MustRegister(m.batchSequences, m.batchRequests, m.paddedTokens, m.fillRatio,
			m.queueWait, m.runSeconds, m.requests, m.batches, m.depth)
	}
	return m
}

// queueMetrics is one Batcher's view of Metrics, with every label resolved once at New so the
// hot path does no label lookups. A nil *queueMetrics does nothing.
type queueMetrics struct {
	name           string
	parent         *Metrics
	batchSequences prometheus.Observer
	batchRequests  prometheus.Observer
	paddedTokens   prometheus.Observer
	fillRatio      prometheus.Observer
	runSeconds     prometheus.Observer
	outcomes       map[string]prometheus.Counter
	reasons        [3]prometheus.Counter
	queueWait      [admission.NumPriorities]prometheus.Observer
}

func (m *Metrics) forQueue(name string, src depthSource) (*queueMetrics, error) {
	if m == nil {
		return nil, nil
	}
	if err := m.depth.attach(name, src); err != nil {
		return nil, err
	}
	qm := &queueMetrics{
		name:           name,
		parent:         m,
		batchSequences: m.batchSequences.WithLabelValues(name),
		batchRequests:  m.batchRequests.WithLabelValues(name),
		paddedTokens:   m.paddedTokens.WithLabelValues(name),
		fillRatio:      m.fillRatio.WithLabelValues(name),
		runSeconds:     m.runSeconds.WithLabelValues(name),
		outcomes:       map[string]prometheus.Counter{},
	}
	for _, p := range admission.Priorities {
		qm.queueWait[p] = m.queueWait.WithLabelValues(name, p.String())
	}
	for _, o := range []string{outcomeServed, outcomeFailed, outcomeQueueFull, outcomeExpired, outcomeClosed,
		outcomeCancelledQueued, outcomeCancelledRunning} {
		qm.outcomes[o] = m.requests.WithLabelValues(name, o)
	}
	for _, r := range []dispatchReason{reasonFull, reasonWindow, reasonDrain} {
		qm.reasons[r] = m.batches.WithLabelValues(name, r.String())
	}
	return qm, nil
}

func (qm *queueMetrics) detach() {
	if qm != nil {
		qm.parent.depth.detach(qm.name)
	}
}

func (qm *queueMetrics) outcome(o string) {
	if qm != nil {
		qm.outcomes[o].Inc()
	}
}

func (qm *queueMetrics) dispatched(seqs, requests, padded, real int, reason dispatchReason) {
	if qm == nil {
		return
	}
	qm.batchSequences.Observe(float64(seqs))
	qm.batchRequests.Observe(float64(requests))
	qm.paddedTokens.Observe(float64(padded))
	if padded > 0 {
		qm.fillRatio.Observe(float64(real) / float64(padded))
	}
	qm.reasons[reason].Inc()
}

func (qm *queueMetrics) waited(p admission.Priority, d time.Duration) {
	if qm != nil {
		qm.queueWait[p].Observe(d.Seconds())
	}
}

func (qm *queueMetrics) ran(d time.Duration) {
	if qm != nil {
		qm.runSeconds.Observe(d.Seconds())
	}
}

// depthSource is what the depth collector reads at scrape time: Batcher.Load.
type depthSource interface{ Load() admission.Load }

// depthCollector reads each attached Batcher's atomic counters when Prometheus scrapes, so the
// gauges cost the request path nothing and can never go stale. The admission layer exports
// the sum it sheds on (sluice_admission_queue_depth); these are its parts.
type depthCollector struct {
	waitingDesc *prometheus.Desc
	runningDesc *prometheus.Desc
	mu          sync.Mutex
	sources     map[string]depthSource
}

func newDepthCollector() *depthCollector {
	return &depthCollector{
		waitingDesc: prometheus.NewDesc("sluice_batcher_queue_depth",
			"Requests waiting for dispatch in a priority class's queue.", []string{"queue", "priority"}, nil),
		runningDesc: prometheus.NewDesc("sluice_batcher_running_requests",
			"Requests in batches that are running.", []string{"queue"}, nil),
		sources: map[string]depthSource{},
	}
}

func (c *depthCollector) attach(name string, src depthSource) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sources[name]; ok {
		return fmt.Errorf("batcher: name %q is already in use by another batcher on these metrics", name)
	}
	c.sources[name] = src
	return nil
}

func (c *depthCollector) detach(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sources, name)
}

// Describe implements prometheus.Collector.
func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waitingDesc
	ch <- c.runningDesc
}

// Collect implements prometheus.Collector.
func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, src := range c.sources {
		l := src.Load()
		for _, p := range admission.Priorities {
			ch <- prometheus.MustNewConstMetric(c.waitingDesc, prometheus.GaugeValue, float64(l.Waiting[p]), name, p.String())
		}
		ch <- prometheus.MustNewConstMetric(c.runningDesc, prometheus.GaugeValue, float64(l.Running), name)
	}
}
