package handlers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/audit"
)

// End states of a request: every request that reaches a handler ends in exactly one, and
// sluice_http_requests_total counts it (docs/ARCHITECTURE.md, "How a request ends").
const (
	OutcomeServed   = "served"
	OutcomeRefused  = "refused"
	OutcomeExpired  = "expired"
	OutcomeAborted  = "aborted"
	OutcomeFailed   = "failed"
	OutcomeTimedOut = "timed_out"
)

// Metrics are the HTTP-level Prometheus series. Label values come from fixed sets (route
// patterns, "unmatched" for a 404, "unrouted" for a body refused before routing; status
// codes; outcomes), never from request content.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	aborted  *prometheus.CounterVec
	inflight prometheus.Gauge
	tenants  *prometheus.CounterVec
	gateway  *prometheus.CounterVec
	invented prometheus.Counter
}

// NewMetrics registers the HTTP metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_http_requests_total",
			Help: "HTTP requests by route, status code and end state.",
		}, []string{"route", "status", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sluice_http_request_duration_seconds",
			Help: "Time from request parsed to response written, by route and status code.",
			// OpenMed's bounds (metricscompat reads them off this histogram) and two finer.
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"route", "status"}),
	}
	m.aborted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_http_requests_aborted_total",
		Help: "Requests abandoned before their answer, by route and reason: client_closed or client_reset (the client left: the disconnect watcher saw it, or a stream's write failed), client_stalled (a stream's reader stopped reading), cancelled (the request's context ended otherwise). Where the work was when it stopped is the batcher's outcome (cancelled_queued, cancelled_running).",
	}, []string{"route", "reason"})
	m.inflight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sluice_http_inflight_requests",
		Help: "Requests being served: from the request parsed to its response written (a stream's last byte).",
	})
	m.tenants = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_tenant_requests_total",
		Help: "Authenticated requests by tenant (from the key file or the token, never the key), route and end state.",
	}, []string{"tenant", "route", "outcome"})
	m.gateway = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_gateway_requests_total",
		Help: "Privacy gateway requests by the audit's status (forwarded, blocked, rejected, transport_error, error, aborted) and reason code.",
	}, []string{"status", "reason"})
	m.invented = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sluice_gateway_invented_placeholders_total",
		Help: "Placeholders in a model's answer that its request did not send: masked on the chat face, refusing the answer on /privacy-gateway/complete.",
	})
	reg.MustRegister(m.requests, m.duration, m.aborted, m.inflight, m.tenants, m.gateway, m.invented)
	return m
}

// audited counts a gateway request by its audit record.
func (m *Metrics) audited(r audit.Record) {
	if m == nil {
		return
	}
	m.gateway.WithLabelValues(r.Status, r.Reason).Inc()
	m.invented.Add(float64(r.Invented))
}

// started and finished count a request in and out of sluice_http_inflight_requests.
func (m *Metrics) started() {
	if m != nil {
		m.inflight.Inc()
	}
}

func (m *Metrics) finished() {
	if m != nil {
		m.inflight.Dec()
	}
}

// abortReasons is the fixed label set of sluice_http_requests_aborted_total.
var abortReasons = [...]string{"client_closed", "client_reset", "client_stalled", "cancelled"}

// attach creates a route's abort series at zero, so that a dashboard sees them before the
// first abort. A nil *Metrics does nothing.
func (m *Metrics) attach(route string) {
	if m == nil {
		return
	}
	for _, reason := range abortReasons {
		m.aborted.WithLabelValues(route, reason)
	}
}
