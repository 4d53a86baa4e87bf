package fleetbudget

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the shared budgets' series. The server registers them whether or not Redis is
// configured (without it they stay at 0), so that its families do not depend on a setting. A
// nil *Metrics records nothing.
type Metrics struct {
	degraded prometheus.Gauge
	fallback *prometheus.CounterVec
	errors   *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	leases   prometheus.Gauge
}

// The Redis calls the series name: an admission's, a request's settlement, a lease renewal.
const (
	opTake   = "take"
	opSettle = "settle"
	opRenew  = "renew"
)

// NewMetrics creates the series and registers them with reg (when not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		degraded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_fleet_budget_degraded",
			Help: "1 while Redis, which keeps the budgets the fleet shares, is out of reach and SLUICE_REDIS_FAILURE decides; else 0 (and always 0 without SLUICE_REDIS_URL).",
		}),
		fallback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_fleet_budget_fallback_total",
			Help: "Budgeted requests decided without Redis, by failure mode: local (this replica's share) or closed (refused).",
		}, []string{"mode"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_fleet_budget_redis_errors_total",
			Help: "Redis calls of the shared budgets that failed or timed out, by call: take (an admission), settle (a request's end), renew (concurrency leases).",
		}, []string{"op"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_fleet_budget_redis_seconds",
			Help:    "Time of the shared budgets' Redis calls, by call (take, settle, renew), answered or not.",
			Buckets: []float64{25e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3},
		}, []string{"op"}),
		leases: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_fleet_budget_leases",
			Help: "Concurrency slots this replica holds in Redis and renews now.",
		}),
	}
	for _, mode := range []FailureMode{FailLocal, FailClosed} {
		m.fallback.WithLabelValues(string(mode))
	}
	for _, op := range []string{opTake, opSettle, opRenew} {
		m.errors.WithLabelValues(op)
		m.seconds.WithLabelValues(op)
	}
	if reg != nil {
		reg.MustRegister(m.degraded, m.fallback, m.errors, m.seconds, m.leases)
	}
	return m
}

func (m *Metrics) setDegraded(on bool) {
	if m != nil {
		v := 0.0
		if on {
			v = 1
		}
		m.degraded.Set(v)
	}
}

func (m *Metrics) fellBack(mode FailureMode) {
	if m != nil {
		m.fallback.WithLabelValues(string(mode)).Inc()
	}
}

func (m *Metrics) call(op string, seconds float64, err error) {
	if m != nil {
		m.seconds.WithLabelValues(op).Observe(seconds)
		if err != nil {
			m.errors.WithLabelValues(op).Inc()
		}
	}
}

// failed counts n calls of op that did not land.
func (m *Metrics) failed(op string, n int) {
	if m != nil && n > 0 {
		m.errors.WithLabelValues(op).Add(float64(n))
	}
}

func (m *Metrics) leasesHeld(delta float64) {
	if m != nil {
		m.leases.Add(delta)
	}
}
