package resilience

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// Config is OpenMed's resilience settings, with its defaults.
type Config struct {
	Enabled           bool          `env:"RESILIENCE" envDefault:"true"`
	MaxAttempts       int           `env:"RETRY_MAX_ATTEMPTS" envDefault:"3"`
	BackoffInitial    time.Duration `env:"RETRY_BACKOFF_INITIAL_MS" envDefault:"50" unit:"ms"`
	BackoffMultiplier float64       `env:"RETRY_BACKOFF_MULTIPLIER" envDefault:"2"`
	BackoffMax        time.Duration `env:"RETRY_BACKOFF_MAX_MS" envDefault:"1000" unit:"ms"`
	BackoffJitter     time.Duration `env:"RETRY_BACKOFF_JITTER_MS" envDefault:"10" unit:"ms"`
	FailureThreshold  int           `env:"CIRCUIT_BREAKER_FAILURE_THRESHOLD" envDefault:"3"`
	RecoveryTimeout   time.Duration `env:"CIRCUIT_BREAKER_RECOVERY_TIMEOUT_S" envDefault:"30" unit:"s"`
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	check := settings.For("resilience")
	if c.MaxAttempts < 1 || c.MaxAttempts > 10 {
		check.Addf("MaxAttempts", "must be between 1 and 10, got %d", c.MaxAttempts)
	}
	if c.BackoffInitial < 0 || c.BackoffInitial > time.Minute {
		check.Addf("BackoffInitial", "must be between 0 and a minute, got %s", c.BackoffInitial)
	}
	if c.BackoffMultiplier < 1 || c.BackoffMultiplier > 10 || math.IsNaN(c.BackoffMultiplier) {
		check.Addf("BackoffMultiplier", "must be between 1 and 10, got %g", c.BackoffMultiplier)
	}
	if c.BackoffMax < c.BackoffInitial || c.BackoffMax > time.Minute {
		check.Addf("BackoffMax", "must be between BackoffInitial (%s) and a minute, got %s", c.BackoffInitial, c.BackoffMax)
	}
	if c.BackoffJitter < 0 || c.BackoffJitter > time.Minute {
		check.Addf("BackoffJitter", "must be between 0 and a minute, got %s", c.BackoffJitter)
	}
	if c.FailureThreshold < 1 || c.FailureThreshold > 1000 {
		check.Addf("FailureThreshold", "must be between 1 and 1000, got %d", c.FailureThreshold)
	}
	if c.RecoveryTimeout < time.Second || c.RecoveryTimeout > time.Hour {
		check.Addf("RecoveryTimeout", "must be between a second and an hour, got %s", c.RecoveryTimeout)
	}
	return check.Err()
}

// OpenError is a call refused because its model's breaker is open: retry after RetryAfter.
type OpenError struct{ RetryAfter time.Duration }

func (e *OpenError) Error() string { return "resilience: the model's circuit breaker is open" }

// The breaker's states, as OpenMed names them.
const (
	Closed   = "closed"
	Open     = "open"
	HalfOpen = "half_open"
)

// States are the breaker states in a fixed order.
var States = [...]string{Closed, Open, HalfOpen}

// Guard retries and breaks the calls of every model. Safe for concurrent use.
type Guard struct {
	cfg       Config
	clk       clock.Clock
	jitter    func() float64 // in [0, 1)
	retryable func(error) bool
	met       *Metrics

	mu       sync.Mutex
	breakers map[string]*breaker
}

type breaker struct {
	state    string
	failures int
	openedAt time.Time
	probing  bool   // a half-open probe is out
	gen      uint64 // changes each time the breaker opens or closes
}

// New checks cfg and builds the guard. retryable says whether an error is the model's (to
// retry and to count against its breaker); jitter returns values in [0, 1).
func New(cfg Config, clk clock.Clock, jitter func() float64, retryable func(error) bool, met *Metrics) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if clk == nil || jitter == nil || retryable == nil {
		return nil, errors.New("resilience: a guard needs a clock, a jitter source and a retryable test")
	}
	g := &Guard{cfg: cfg, clk: clk, jitter: jitter, retryable: retryable, met: met, breakers: map[string]*breaker{}}
	met.watch(g)
	return g, nil
}

// Do runs call for model: refused at once with an *OpenError while the model's breaker is
// open, retried while it fails with the model's errors (up to MaxAttempts calls), and counted
// against the breaker when it ends with one. A success counts for the model; any other error
// (a refusal for load, the caller leaving) says nothing of it. A call that panics counts as
// failed, and the panic goes on.
func (g *Guard) Do(ctx context.Context, model string, call func(context.Context) error) error {
	if !g.cfg.Enabled {
		return call(ctx)
	}
	turn, err := g.before(model)
	if err != nil {
		g.met.refused()
		return err
	}
	o := failed
	defer func() { g.after(model, turn, o) }() // also when call panics: a probe is never lost
	for attempt := range g.cfg.MaxAttempts {
		if err = call(ctx); err == nil || !g.retryable(err) || ctx.Err() != nil || attempt == g.cfg.MaxAttempts-1 {
			break
		}
		g.met.retried()
		t := g.clk.NewTimer(g.delay(attempt))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
		}
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case err == nil:
		o = answered
	case ctx.Err() != nil || !g.retryable(err):
		o = unknown
	}
	return err
}

// What a call says of its model.
type outcome int

const (
	answered outcome = iota
	failed
	unknown
)

// turn is a call's place in its breaker's history: the generation it started in (a new one
// begins each time the breaker opens or closes) and whether it is the half-open probe. Only
// the probe decides a half-open breaker, and a call from an older generation decides nothing.
type turn struct {
	gen   uint64
	probe bool
}

// delay is the wait before the attempt after attempt (0-based): the initial backoff grown by
// the multiplier, capped, plus jitter.
func (g *Guard) delay(attempt int) time.Duration {
	d := float64(g.cfg.BackoffInitial) * math.Pow(g.cfg.BackoffMultiplier, float64(attempt))
	d = math.Min(d, float64(g.cfg.BackoffMax))
	return time.Duration(d) + time.Duration(g.jitter()*float64(g.cfg.BackoffJitter))
}

func (g *Guard) before(model string) (turn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.breakers[model]
	if b == nil {
		b = &breaker{state: Closed}
		g.breakers[model] = b
	}
	now := g.clk.Now()
	if b.state == Open {
		left := b.openedAt.Add(g.cfg.RecoveryTimeout).Sub(now)
		if left > 0 {
			return turn{}, &OpenError{RetryAfter: left}
		}
		b.state, b.probing = HalfOpen, false
	}
	if b.state == HalfOpen {
		if b.probing {
			return turn{}, &OpenError{RetryAfter: time.Second} // the probe's answer decides
		}
		b.probing = true
		return turn{gen: b.gen, probe: true}, nil
	}
	return turn{gen: b.gen}, nil
}

func (g *Guard) after(model string, t turn, o outcome) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.breakers[model]
	if t.gen != b.gen {
		return // it started before the breaker last changed: the breaker has moved on
	}
	if t.probe {
		b.probing = false
		switch o {
		case answered:
			b.state, b.failures = Closed, 0
			b.gen++
		case failed:
			g.open(b)
		}
		return
	}
	if b.state != Closed {
		return
	}
	switch o {
	case answered:
		b.failures = 0
	case failed:
		if b.failures++; b.failures >= g.cfg.FailureThreshold {
			g.open(b)
		}
	}
}

func (g *Guard) open(b *breaker) {
	b.state, b.openedAt, b.probing = Open, g.clk.Now(), false
	b.gen++
	g.met.opened()
}

// Counts is how many models' breakers are in each state now (an open one whose timeout has
// passed counts as half open).
func (g *Guard) Counts() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{Closed: 0, Open: 0, HalfOpen: 0}
	now := g.clk.Now()
	for _, b := range g.breakers {
		s := b.state
		if s == Open && !now.Before(b.openedAt.Add(g.cfg.RecoveryTimeout)) {
			s = HalfOpen
		}
		out[s]++
	}
	return out
}

// Metrics are the guards' series. A nil *Metrics records nothing.
type Metrics struct {
	reg      prometheus.Registerer
	retries  prometheus.Counter
	refusals prometheus.Counter
	opens    prometheus.Counter
}

// NewMetrics creates the counters and registers them with reg (when not nil); the breakers'
// gauge is registered by the guard that New builds with them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{reg: reg,
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_model_retries_total",
			Help: "Model calls tried again after failing in the model."}),
		refusals: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_circuit_breaker_refusals_total",
			Help: "Model calls refused at once because their model's circuit breaker was open."}),
		opens: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_circuit_breaker_opened_total",
			Help: "Times a model's circuit breaker opened."}),
	}
	if reg != nil {
		reg.MustRegister(m.retries, m.refusals, m.opens)
	}
	return m
}

func (m *Metrics) watch(g *Guard) {
	if m == nil || m.reg == nil {
		return
	}
	desc := prometheus.NewDesc("sluice_circuit_breakers", "Models' circuit breakers by state: closed, open, half_open.", []string{"state"}, nil)
	m.reg.MustRegister(collectorFunc{desc, func(ch chan<- prometheus.Metric) {
		counts := g.Counts()
		for _, s := range States {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(counts[s]), s)
		}
	}})
}

func (m *Metrics) retried() {
	if m != nil {
		m.retries.Inc()
	}
}

func (m *Metrics) refused() {
	if m != nil {
		m.refusals.Inc()
	}
}

func (m *Metrics) opened() {
	if m != nil {
		m.opens.Inc()
	}
}

type collectorFunc struct {
	desc    *prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
