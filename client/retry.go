package client

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// Retrier is the client's retry rules on their own, for a caller that sends its own requests
// (a load harness) and wants the same decisions as the Client: Begin for each request, then
// Next after each attempt that did not succeed. It is safe for concurrent use.
type Retrier struct {
	attempts int
	backoff  Backoff
	budget   *retryBudget
	maxWait  time.Duration
	clk      clock.Clock
	rand     func() float64
}

// NewRetrier validates cfg's retry fields (MaxAttempts, Backoff, Budget, MaxRetryAfter, Clock,
// Rand); the others are not read.
func NewRetrier(cfg Config) (*Retrier, error) {
	var check settings.Check
	r := newRetrier(cfg, &check)
	if err := check.Err(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return r, nil
}

func newRetrier(cfg Config, check *settings.Check) *Retrier {
	if cfg.MaxAttempts < 0 {
		check.Addf("MaxAttempts", "must be at least 0 (0: 4), got %d", cfg.MaxAttempts)
	}
	if cfg.MaxRetryAfter < 0 {
		check.Addf("MaxRetryAfter", "must be at least 0 (0: 30 s), got %v", cfg.MaxRetryAfter)
	}
	if cfg.Backoff == (Backoff{}) {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Budget == (Budget{}) {
		cfg.Budget = DefaultBudget
	}
	cfg.Backoff.validate(check)
	cfg.Budget.validate(check)
	r := &Retrier{attempts: cfg.MaxAttempts, backoff: cfg.Backoff, maxWait: cfg.MaxRetryAfter, clk: cfg.Clock, rand: cfg.Rand}
	if r.attempts == 0 {
		r.attempts = 4
	}
	if r.maxWait == 0 {
		r.maxWait = 30 * time.Second
	}
	if r.clk == nil {
		r.clk = clock.Real()
	}
	if r.rand == nil {
		r.rand = rand.Float64
	}
	if cfg.Budget.Window >= time.Second && cfg.Budget.Window <= maxWindow*time.Second {
		r.budget = newRetryBudget(cfg.Budget)
	}
	return r
}

// Outcome is how an attempt that did not succeed ended, as the rules read it.
type Outcome struct {
	// Status is the answer's, 0 when none came.
	Status int
	// Reason is the error's details.reason ("too_large" is never retried).
	Reason string
	// Code is the error's code ("audit_unavailable", a 503 sent after the work was done, is
	// never retried).
	Code string
	// Deadline is the request's, zero when it has none: a retry that could not be sent
	// before it is not allowed, nor counted against the budget.
	Deadline time.Time
	// ConnRefused says no answer came because the connection was refused: nothing ran.
	ConnRefused bool
	// RetryAfter is the answer's, 0 when it sent none.
	RetryAfter time.Duration
}

// Begin counts a request started, which the retry budget is a share of.
func (r *Retrier) Begin() { r.budget.request(r.clk.Now()) }

// Next decides whether attempt n (from 0) is retried: the wait before the retry, or why not
// ("not_retryable": a timeout, a 500, another 4xx, a cut connection, too_large,
// audit_unavailable; "attempts"; "retry_after": a Retry-After past MaxRetryAfter; "deadline":
// the wait would outlast the request's deadline; "budget"). A retry it allows is counted
// against the budget.
func (r *Retrier) Next(n int, o Outcome) (wait time.Duration, giveUp string) {
	refused := (o.Status == http.StatusTooManyRequests || o.Status == http.StatusServiceUnavailable) &&
		o.Reason != "too_large" && o.Code != "audit_unavailable"
	if !refused && !(o.Status == 0 && o.ConnRefused) {
		return 0, "not_retryable"
	}
	wait = o.RetryAfter
	if wait <= 0 {
		wait = r.backoff.wait(n, r.rand())
	}
	switch {
	case n+1 >= r.attempts:
		return 0, "attempts"
	case o.RetryAfter > r.maxWait:
		return 0, "retry_after"
	case !o.Deadline.IsZero() && r.clk.Now().Add(wait).After(o.Deadline):
		return 0, "deadline"
	case !r.budget.allow(r.clk.Now()):
		return 0, "budget"
	}
	return wait, ""
}

// Backoff is the wait before a retry the server gave no Retry-After for. The n-th retry (n
// from 0) has the ceiling c = min(Max, Initial x Multiplier^n) and waits c x (Floor + (1 -
// Floor) x u) for a uniform u in [0, 1): Floor 0 is full jitter (anywhere up to c), 1 none
// (exactly c, which sends refused clients back in step: for comparisons only).
type Backoff struct {
	Initial    time.Duration
	Multiplier float64
	Max        time.Duration
	Floor      float64
}

// DefaultBackoff starts at 100 ms, doubles, stops growing at 10 s, with full jitter.
var DefaultBackoff = Backoff{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 10 * time.Second}

func (b Backoff) validate(check *settings.Check) {
	if b.Initial <= 0 {
		check.Addf("Backoff.Initial", "must be > 0, got %v", b.Initial)
	}
	if !(b.Multiplier >= 1) || math.IsInf(b.Multiplier, 0) {
		check.Addf("Backoff.Multiplier", "must be a finite number at least 1, got %v", b.Multiplier)
	}
	if b.Max < b.Initial {
		check.Addf("Backoff.Max", "must be at least Initial (%v), got %v", b.Initial, b.Max)
	}
	if !(b.Floor >= 0 && b.Floor <= 1) {
		check.Addf("Backoff.Floor", "must be from 0 (full jitter) to 1 (none), got %v", b.Floor)
	}
}

// wait is the n-th retry's wait for the uniform draw u.
func (b Backoff) wait(n int, u float64) time.Duration {
	return time.Duration(float64(b.ceiling(n)) * (b.Floor + (1-b.Floor)*u))
}

// ceiling is the n-th retry's upper bound.
func (b Backoff) ceiling(n int) time.Duration {
	d := float64(b.Initial) * math.Pow(b.Multiplier, float64(n))
	if d >= float64(b.Max) || math.IsInf(d, 0) {
		return b.Max
	}
	return time.Duration(d)
}

// Budget bounds retries to a share of the requests started in a sliding window.
type Budget struct {
	// Ratio is the retries allowed per request started (0.1: retries add at most 10%).
	Ratio float64
	// Window is how far back requests and retries are counted, in whole seconds.
	Window time.Duration
	// MinPerSecond retries are allowed whatever the ratio, so a client that sends little can
	// still retry.
	MinPerSecond float64
}

// DefaultBudget lets retries add 10% over 10 s, and one retry a second at least.
var DefaultBudget = Budget{Ratio: 0.1, Window: 10 * time.Second, MinPerSecond: 1}

func (b Budget) validate(check *settings.Check) {
	if !(b.Ratio >= 0) || math.IsInf(b.Ratio, 0) {
		check.Addf("Budget.Ratio", "must be a finite number at least 0, got %v", b.Ratio)
	}
	if b.Window < time.Second || b.Window > maxWindow*time.Second || b.Window%time.Second != 0 {
		check.Addf("Budget.Window", "must be whole seconds from 1 s to %d s, got %v", maxWindow, b.Window)
	}
	if !(b.MinPerSecond >= 0) || math.IsInf(b.MinPerSecond, 0) {
		check.Addf("Budget.MinPerSecond", "must be a finite number at least 0, got %v", b.MinPerSecond)
	}
}

const maxWindow = 120

// retryBudget counts requests and retries per second in a ring of fixed size: recording and
// asking allocate nothing.
type retryBudget struct {
	ratio, floor float64
	width        int64 // seconds in the window

	mu      sync.Mutex
	seconds [maxWindow]struct{ at, requests, retries int64 }
}

func newRetryBudget(b Budget) *retryBudget {
	width := int64(b.Window / time.Second)
	return &retryBudget{ratio: b.Ratio, floor: b.MinPerSecond * float64(width), width: width}
}

// slot is second now's counters, cleared if they hold an older second.
func (r *retryBudget) slot(now time.Time) *struct{ at, requests, retries int64 } {
	sec := now.Unix()
	s := &r.seconds[sec%r.width]
	if s.at != sec {
		*s = struct{ at, requests, retries int64 }{at: sec}
	}
	return s
}

// request records a request started.
func (r *retryBudget) request(now time.Time) {
	r.mu.Lock()
	r.slot(now).requests++
	r.mu.Unlock()
}

// allow records and allows a retry if the window's retries stay within the budget.
func (r *retryBudget) allow(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var requests, retries int64
	oldest := now.Unix() - r.width
	for i := range r.width {
		if s := r.seconds[i]; s.at > oldest {
			requests += s.requests
			retries += s.retries
		}
	}
	if float64(retries+1) > r.ratio*float64(requests)+r.floor {
		return false
	}
	r.slot(now).retries++
	return true
}
