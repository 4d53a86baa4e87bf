package admission

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics holds the admission series of every Gate that shares it; the label "queue" is the
// Gate's queue name. Create one per registry with NewMetrics and pass it to each NewGate. A
// nil *Metrics disables metrics.
type Metrics struct {
	shed       *prometheus.CounterVec
	retryAfter *prometheus.HistogramVec
	bookings   *prometheus.CounterVec
	tokens     *prometheus.CounterVec
	gauges     *gateCollector
}

// NewMetrics creates the admission series and registers them with reg (when reg is not nil).
// It panics if reg already holds them, like prometheus.MustRegister: that is a wiring bug.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_admission_shed_total",
			Help: "Refused requests by priority class and reason: saturated (class queue full), high_watermark, max_wait, memory (KV blocks at their watermark).",
		}, []string{"queue", "priority", "reason"}),
		retryAfter: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_admission_retry_after_seconds",
			Help:    "Retry-After suggested with a refusal, by reason and by the policy rung that produced it (drain_rate or static). Refusals without a header are not observed.",
			Buckets: []float64{1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 45, 60},
		}, []string{"queue", "reason", "policy"}),
		bookings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_admission_retry_bookings_total",
			Help: "Refusals that tried to book a retry reservation: booked, or full (the second the Retry-After names and the four after it were full).",
		}, []string{"queue", "outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_admission_retry_tokens_total",
			Help: "Retry tokens presented, by outcome: honoured, invalid, early, expired, used.",
		}, []string{"queue", "outcome"}),
		gauges: newGateCollector(),
	}
	if reg != nil {
		reg.MustRegister(m.shed, m.retryAfter, m.bookings, m.tokens, m.gauges)
	}
	return m
}

// gateMetrics is one Gate's view of Metrics with every label resolved once, so a refusal does
// no label lookup and no allocation. A nil *gateMetrics does nothing.
type gateMetrics struct {
	parent   *Metrics
	shed     [NumPriorities][len(reasons)]prometheus.Counter
	retry    [len(reasons)][2]prometheus.Observer // [reason][0: drain_rate, 1: static]
	bookings [2]prometheus.Counter                // [0: booked, 1: full]
	tokens   [len(tokenStates) + 1]prometheus.Counter
}

func (m *Metrics) forGate(g *Gate) (*gateMetrics, error) {
	if m == nil {
		return nil, nil
	}
	if err := m.gauges.attach(g); err != nil {
		return nil, err
	}
	gm := &gateMetrics{parent: m}
	for i, r := range reasons {
		for _, p := range Priorities {
			gm.shed[p][i] = m.shed.WithLabelValues(g.queue, p.String(), string(r))
		}
		gm.retry[i][0] = m.retryAfter.WithLabelValues(g.queue, string(r), SourceDrainRate)
		gm.retry[i][1] = m.retryAfter.WithLabelValues(g.queue, string(r), SourceStatic)
	}
	gm.bookings[0] = m.bookings.WithLabelValues(g.queue, "booked")
	gm.bookings[1] = m.bookings.WithLabelValues(g.queue, "full")
	for _, st := range tokenStates {
		gm.tokens[st] = m.tokens.WithLabelValues(g.queue, st.String())
	}
	return gm, nil
}

func (gm *gateMetrics) booked(ok bool) {
	if gm == nil {
		return
	}
	if ok {
		gm.bookings[0].Inc()
	} else {
		gm.bookings[1].Inc()
	}
}

func (gm *gateMetrics) token(st TokenState) {
	if gm == nil || st == TokenNone {
		return
	}
	gm.tokens[st].Inc()
}

func (gm *gateMetrics) refused(p Priority, r Reason, retryAfter time.Duration, source string) {
	if gm == nil {
		return
	}
	i := r.index()
	gm.shed[p][i].Inc()
	switch source {
	case SourceDrainRate:
		gm.retry[i][0].Observe(retryAfter.Seconds())
	case SourceStatic:
		gm.retry[i][1].Observe(retryAfter.Seconds())
	}
}

// gateCollector reads each Gate's state when Prometheus scrapes, so the gauges cost the
// request path nothing and can never go stale.
type gateCollector struct {
	depthDesc    *prometheus.Desc
	sheddingDesc *prometheus.Desc
	mu           sync.Mutex
	gates        map[string]*Gate
}

func newGateCollector() *gateCollector {
	q := []string{"queue"}
	return &gateCollector{
		depthDesc: prometheus.NewDesc("sluice_admission_queue_depth",
			"Outstanding admitted work: requests waiting for dispatch plus requests running.", q, nil),
		sheddingDesc: prometheus.NewDesc("sluice_admission_shedding",
			"1 while the endpoint refuses at the door (between the high and the low watermark), else 0.", q, nil),
		gates: map[string]*Gate{},
	}
}

func (c *gateCollector) attach(g *Gate) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.gates[g.queue]; ok {
		return fmt.Errorf("admission: queue %q already has a gate on these metrics", g.queue)
	}
	c.gates[g.queue] = g
	return nil
}

func (c *gateCollector) detach(g *Gate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gates[g.queue] == g {
		delete(c.gates, g.queue)
	}
}

// Describe implements prometheus.Collector.
func (c *gateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depthDesc
	ch <- c.sheddingDesc
}

// Collect implements prometheus.Collector.
func (c *gateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, g := range c.gates {
		l := g.src.Load()
		shedding := 0.0
		if g.shedsAt(l) {
			shedding = 1
		}
		ch <- prometheus.MustNewConstMetric(c.depthDesc, prometheus.GaugeValue, float64(l.Depth()), name)
		ch <- prometheus.MustNewConstMetric(c.sheddingDesc, prometheus.GaugeValue, shedding, name)
	}
}
