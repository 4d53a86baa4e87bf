package admission

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/bucket"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// Budget is what one caller may use: requests and estimated tokens, each a token bucket that
// refills at its rate up to its burst, and requests at once. A zero rate leaves that
// dimension unlimited; MaxConcurrent 0 leaves concurrency unlimited.
type Budget struct {
	RequestsPerSecond float64
	// RequestBurst is the requests bucket's size; 0 means one second's worth, at least 1.
	RequestBurst    float64
	TokensPerSecond float64
	// TokenBurst is the tokens bucket's size, and the largest request the caller can ever
	// make; 0 means one second's worth.
	TokenBurst    float64
	MaxConcurrent int
}

// Limited says whether the budget limits anything.
func (b Budget) Limited() bool {
	return b.RequestsPerSecond > 0 || b.TokensPerSecond > 0 || b.MaxConcurrent > 0
}

// Validate reports every field out of range.
func (b Budget) Validate() error {
	var check settings.Check
	for _, f := range []struct {
		name string
		v    float64
	}{{"RequestsPerSecond", b.RequestsPerSecond}, {"RequestBurst", b.RequestBurst},
		{"TokensPerSecond", b.TokensPerSecond}, {"TokenBurst", b.TokenBurst}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			check.Addf(f.name, "must be a finite number at least 0, got %v", f.v)
		}
	}
	if b.MaxConcurrent < 0 {
		check.Addf("MaxConcurrent", "must be at least 0 (0: no limit), got %d", b.MaxConcurrent)
	}
	return check.Err()
}

// RequestLimit and TokenLimit are the budget's two buckets' limits, with the bursts' defaults
// applied (a store shared by a fleet keeps the buckets elsewhere, with the same limits).
func (b Budget) RequestLimit() bucket.Limit { return b.requests() }

// TokenLimit: see RequestLimit.
func (b Budget) TokenLimit() bucket.Limit { return b.tokens() }

func (b Budget) requests() bucket.Limit {
	burst := b.RequestBurst
	if burst <= 0 {
		burst = math.Max(1, b.RequestsPerSecond)
	}
	return bucket.Limit{PerSecond: b.RequestsPerSecond, Burst: burst}
}

func (b Budget) tokens() bucket.Limit {
	burst := b.TokenBurst
	if burst <= 0 {
		burst = math.Max(1, b.TokensPerSecond)
	}
	return bucket.Limit{PerSecond: b.TokensPerSecond, Burst: burst}
}

// The reasons a budget refuses a request, as metrics and answers name them.
const (
	BudgetRequests    = "requests"      // the requests bucket is empty
	BudgetTokens      = "tokens"        // the tokens bucket holds less than the request's estimate
	BudgetTooLarge    = "too_large"     // the estimate exceeds the whole token burst: waiting cannot help
	BudgetConcurrency = "concurrency"   // the caller has MaxConcurrent requests running
	BudgetHeldFull    = "deferral_full" // it could wait, but MaxHeld requests are waiting already
	BudgetUnavailable = "unavailable"   // the store of a fleet's budgets is out of reach and set to refuse then
)

// BudgetState is one dimension of a caller's budget as the x-ratelimit-* headers report it.
type BudgetState struct {
	Limited   bool
	Limit     float64       // the bucket's size
	Remaining float64       // what it holds now (negative: debt from reconciliation)
	Reset     time.Duration // until it is full again
}

// BudgetRefusal is a request the caller's budget does not take: its reason, the wait that
// would let this request in (from its own estimate, against the exhausted dimension, as
// CallerRetryAfter rounds it), and both dimensions' state.
type BudgetRefusal struct {
	Reason     string
	RetryAfter time.Duration
	Requests   BudgetState
	Tokens     BudgetState
}

// RetryAfterSeconds is the Retry-After header's value.
func (r BudgetRefusal) RetryAfterSeconds() int64 { return int64(r.RetryAfter / time.Second) }

// BudgetsConfig configures deferred admission, which is off by default: a request the budget
// could take within MaxWait is held that long instead of refused, at most MaxHeld at once.
// The tags are where the server's environment sets each field (SLUICE_ and the env tag); the
// server switches deferred admission on with its own SLUICE_DEFERRED_ADMISSION.
type BudgetsConfig struct {
	MaxWait time.Duration `env:"DEFERRED_MAX_WAIT_MS" envDefault:"2000" unit:"ms"`
	// MaxHeld bounds the requests held at once, and apart from them the requests waiting for
	// a concurrency slot (each asks the store every slotPoll); 0 means 1,000.
	MaxHeld int `env:"DEFERRED_MAX_HELD" envDefault:"1000"`
	// ConcurrencyWait is how long a request whose caller has MaxConcurrent requests running
	// waits for one of them to end before it is refused (OpenMed's concurrency wait); 0
	// refuses at once. It holds whether deferred admission is on or not.
	ConcurrencyWait time.Duration `env:"RATE_LIMIT_CONCURRENCY_WAIT_MS" envDefault:"0" unit:"ms"`
}

// slotPoll is how often a request waiting for a concurrency slot asks again: the slots are
// leases in the store (Redis for a fleet), which tells nobody when one ends.
const slotPoll = 10 * time.Millisecond

// Validate reports every field out of range.
func (c BudgetsConfig) Validate() error {
	var check settings.Check
	if c.MaxWait < 0 {
		check.Addf("MaxWait", "must be at least 0 (0: no deferred admission), got %v", c.MaxWait)
	}
	if c.MaxHeld < 0 {
		check.Addf("MaxHeld", "must be at least 0 (0: 1000), got %d", c.MaxHeld)
	}
	if c.ConcurrencyWait < 0 {
		check.Addf("ConcurrencyWait", "must be at least 0 (0: refuse at once), got %v", c.ConcurrencyWait)
	}
	return check.Err()
}

// Budgets admits requests against their callers' budgets, kept by a BudgetStore: it decides
// what a refusal says and how long it asks to wait, holds the requests deferred admission
// lets wait, and counts both. It is safe for concurrent use.
type Budgets struct {
	cfg     BudgetsConfig
	store   BudgetStore
	clk     clock.Clock
	metrics *BudgetMetrics
	held    atomic.Int64
	// slotWaiters are the requests waiting for a concurrency slot: bounded, since each asks
	// the store (Redis, for a fleet) a hundred times a second.
	slotWaiters atomic.Int64
}

// ErrBudgetWait is returned by Admit when the request's context ends before its budget
// answered: while deferred admission held it, or while a shared store was asked.
var ErrBudgetWait = errors.New("admission: request left while its budget was checked or held")

// NewBudgets validates cfg. store keeps the budgets' state (nil: a LocalStore on clk);
// metrics may be nil.
func NewBudgets(cfg BudgetsConfig, store BudgetStore, clk clock.Clock, metrics *BudgetMetrics) (*Budgets, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxHeld == 0 {
		cfg.MaxHeld = 1000
	}
	if store == nil {
		store = NewLocalStore(clk)
	}
	return &Budgets{cfg: cfg, store: store, clk: clk, metrics: metrics}, nil
}

// Charge is an admitted request's hold on its caller's budget: Done or Refund gives back its
// running place and settles the buckets, once.
type Charge struct {
	lease    BudgetLease
	estimate float64
	request  bool // the requests bucket was charged
	tokens   bool // the tokens bucket was charged the estimate
	done     *atomic.Bool
}

// Charged says whether the charge holds anything to settle (a caller without a budget's is
// empty).
func (ch Charge) Charged() bool { return ch.lease != nil }

// Done settles the charge with the tokens the request really used (actual < 0: the estimate
// stands) and frees its running place. Calling it, or Refund, again does nothing.
func (ch Charge) Done(actual float64) {
	ch.settle(actual, false)
}

// Refund gives the whole charge back, the request and its tokens: for a request the server
// refused or failed, which the caller should not pay for.
func (ch Charge) Refund() {
	ch.settle(0, true)
}

func (ch Charge) settle(actual float64, refund bool) {
	if ch.lease == nil || !ch.done.CompareAndSwap(false, true) {
		return
	}
	var back float64
	if actual >= 0 && ch.tokens {
		back = ch.estimate - actual
	}
	ch.lease.Settle(back, refund && ch.request)
}

// Admit charges one request with an estimated cost of tokens to the caller key (a tenant, or
// a peer for callers without one) under budget. It returns the charge to settle when the
// request ends; or the refusal; or, when the request's ctx ended before its budget answered,
// ErrBudgetWait. tenant labels the metrics ("" for callers without one).
func (b *Budgets) Admit(ctx context.Context, key, tenant string, budget Budget, tokens float64) (Charge, *BudgetRefusal, error) {
	return b.admit(ctx, key, tenant, budget, tokens, true)
}

// Try is Admit for work that has no caller to answer and comes back by itself when refused (a
// job's document): it is never held by deferred admission, and its refusals are not counted
// as refusals of requests.
func (b *Budgets) Try(ctx context.Context, key, tenant string, budget Budget, tokens float64) (Charge, *BudgetRefusal, error) {
	return b.admit(ctx, key, tenant, budget, tokens, false)
}

func (b *Budgets) admit(ctx context.Context, key, tenant string, budget Budget, tokens float64, request bool) (Charge, *BudgetRefusal, error) {
	if !budget.Limited() {
		return Charge{}, nil, nil
	}
	// deadline is the end of deferred admission's hold (held); slotEnd the end of the wait for
	// a concurrency place, from the first refusal for concurrency. Each bounds its own wait.
	var deadline, slotEnd time.Time
	held, slotWaiting := false, false
	defer func() {
		if slotWaiting {
			b.slotWaiters.Add(-1)
		}
	}()
	for {
		take, err := b.store.Take(ctx, key, budget, tokens)
		if err != nil && ctx.Err() == nil {
			take = BudgetTake{Applied: budget, Unavailable: time.Second} // a store that broke its word: never unlimited
		} else if err != nil {
			if held {
				b.held.Add(-1)
				b.metrics.deferred(tenant, "cancelled")
			}
			return Charge{}, nil, ErrBudgetWait
		}
		if take.Lease != nil {
			if held {
				b.held.Add(-1)
				b.metrics.deferred(tenant, "admitted")
			}
			return Charge{lease: take.Lease, estimate: tokens, request: take.Applied.RequestsPerSecond > 0,
				tokens: take.Applied.TokensPerSecond > 0, done: new(atomic.Bool)}, nil, nil
		}
		now := b.clk.Now()
		ref, wait := refusal(take, tokens)
		deferrable := request && b.cfg.MaxWait > 0 && ref.Reason != BudgetTooLarge && ref.Reason != BudgetConcurrency &&
			ref.Reason != BudgetUnavailable
		if !held && deferrable && wait <= b.cfg.MaxWait {
			if b.held.Add(1) > int64(b.cfg.MaxHeld) {
				b.held.Add(-1)
				ref.Reason = BudgetHeldFull
			} else {
				deadline, held = now.Add(b.cfg.MaxWait), true
				b.metrics.holding(1)
			}
		}
		end := deadline
		if ref.Reason == BudgetConcurrency && request && b.cfg.ConcurrencyWait > 0 && !slotWaiting {
			// Every place to wait taken: refused at once, as without a wait.
			if slotWaiting = b.slotWaiters.Add(1) <= int64(b.cfg.MaxHeld); !slotWaiting {
				b.slotWaiters.Add(-1)
			}
		}
		if ref.Reason == BudgetConcurrency && slotWaiting {
			if slotEnd.IsZero() {
				slotEnd = now.Add(b.cfg.ConcurrencyWait)
			}
			if slotEnd.After(end) {
				end = slotEnd // a held request keeps its hold's end when that is later
			}
			wait = min(slotPoll, end.Sub(now))
		}
		if end.IsZero() || wait <= 0 && ref.Reason == BudgetConcurrency || now.Add(wait).After(end) {
			if held {
				b.held.Add(-1)
				b.metrics.deferred(tenant, "refused")
			}
			if request {
				b.metrics.refused(tenant, ref.Reason)
			}
			return Charge{}, ref, nil
		}
		t := b.clk.NewTimer(max(wait, time.Millisecond))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			if held {
				b.held.Add(-1)
				b.metrics.deferred(tenant, "cancelled")
			}
			return Charge{}, nil, ErrBudgetWait
		}
	}
}

// Held is how many requests deferred admission holds now.
func (b *Budgets) Held() int { return int(b.held.Load()) }

// refusal is why a store's take did not admit a request of tokens, from what the buckets held
// against the budget the store applied, and the wait that would let this request in.
func refusal(take BudgetTake, tokens float64) (*BudgetRefusal, time.Duration) {
	reqs, toks := take.Applied.requests(), take.Applied.tokens()
	reqLimited, tokLimited := reqs.PerSecond > 0, toks.PerSecond > 0
	var reason string
	var wait time.Duration
	switch {
	case take.Unavailable > 0:
		reason, wait = BudgetUnavailable, take.Unavailable
	case tokLimited && tokens > toks.Burst:
		// Never fits: the hint is what the request costs at the refill rate.
		reason, wait = BudgetTooLarge, CallerRetryAfter.Max
		if s := tokens / toks.PerSecond; s < CallerRetryAfter.Max.Seconds() { // converted only once in range
			wait = time.Duration(math.Ceil(s * float64(time.Second)))
		}
	case take.Concurrency:
		reason, wait = BudgetConcurrency, time.Second
	default:
		var wr, wt time.Duration
		if reqLimited {
			wr = reqs.Wait(take.Requests, 1)
		}
		if tokLimited {
			wt = toks.Wait(take.Tokens, tokens)
		}
		reason, wait = BudgetRequests, wr
		if wt > wr {
			reason, wait = BudgetTokens, wt
		}
	}
	wait = min(wait, CallerRetryAfter.Max) // a deadline past it would overflow
	ref := &BudgetRefusal{Reason: reason, RetryAfter: CallerRetryAfter.Wait(wait)}
	if take.Unavailable > 0 {
		return ref, wait // what the buckets hold is not known
	}
	if reqLimited {
		ref.Requests = BudgetState{Limited: true, Limit: reqs.Burst, Remaining: take.Requests, Reset: reqs.Refill(take.Requests)}
	}
	if tokLimited {
		ref.Tokens = BudgetState{Limited: true, Limit: toks.Burst, Remaining: take.Tokens, Reset: toks.Refill(take.Tokens)}
	}
	return ref, wait
}

// BudgetMetrics are the budgets' series. A nil *BudgetMetrics records nothing.
type BudgetMetrics struct {
	refusals *prometheus.CounterVec
	deferral *prometheus.CounterVec
	held     prometheus.Gauge
}

// NewBudgetMetrics creates the budget series and registers them with reg (when not nil).
func NewBudgetMetrics(reg prometheus.Registerer) *BudgetMetrics {
	m := &BudgetMetrics{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_budget_refusals_total",
			Help: "Requests refused (429 rate_limited) by their caller's budget, by tenant (anonymous: callers without one) and reason: requests, tokens, too_large, concurrency, deferral_full, unavailable.",
		}, []string{"tenant", "reason"}),
		deferral: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_budget_deferred_total",
			Help: "Requests deferred admission held, by tenant and how the hold ended: admitted, refused (the wait ran past max_wait), cancelled (the client left).",
		}, []string{"tenant", "outcome"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_budget_held_requests",
			Help: "Requests deferred admission holds now (they hold no queue place).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.refusals, m.deferral, m.held)
	}
	return m
}

func tenantLabel(tenant string) string {
	if tenant == "" {
		return "anonymous"
	}
	return tenant
}

func (m *BudgetMetrics) refused(tenant, reason string) {
	if m != nil {
		m.refusals.WithLabelValues(tenantLabel(tenant), reason).Inc()
	}
}

func (m *BudgetMetrics) deferred(tenant, outcome string) {
	if m != nil {
		m.deferral.WithLabelValues(tenantLabel(tenant), outcome).Inc()
		m.held.Dec()
	}
}

func (m *BudgetMetrics) holding(n float64) {
	if m != nil {
		m.held.Add(n)
	}
}
