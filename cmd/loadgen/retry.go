package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// RetryBudget caps retries at a share of first attempts across the whole run, the way a
// well-behaved client library does, so that retrying cannot multiply the load on a server that
// is already refusing it.
type RetryBudget struct {
	ratio float64

	mu      sync.Mutex
	firsts  int64
	retries int64
}

// NewRetryBudget allows at most ratio retries per first attempt (0.2: one retry per five).
func NewRetryBudget(ratio float64) *RetryBudget { return &RetryBudget{ratio: ratio} }

// First counts a first attempt, which earns the budget ratio retries.
func (b *RetryBudget) First() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.firsts++
}

// Allow spends one retry if the budget has room for it.
func (b *RetryBudget) Allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if float64(b.retries+1) > b.ratio*float64(b.firsts) {
		return false
	}
	b.retries++
	return true
}

// Refund returns a retry that was allowed but never sent.
func (b *RetryBudget) Refund() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retries--
}

// RetryPolicy says whether and how refused attempts are retried.
type RetryPolicy struct {
	Enabled bool
	// Jitter adds a uniform random delay of up to this share of Retry-After. It is only ever
	// added, never subtracted: the harness measures what happens to clients that honour the
	// server's suggestion, so it must not retry earlier than told.
	Jitter     float64
	MaxRetries int
	Budget     *RetryBudget
}

// AttemptFunc sends one attempt of a request; token is the retry token of the refusal it
// retries ("" for a first attempt or when the refusal carried none).
type AttemptFunc func(ctx context.Context, token string) Attempt

// Execute runs one logical request into rec: the first attempt and, while the policy allows,
// a retry of each refusal at its Retry-After plus jitter. It sets rec.Attempts, rec.Retries,
// rec.Outcome and rec.GaveUp. rng draws the jitter and must belong to the caller alone.
func Execute(ctx context.Context, clk clock.Clock, p RetryPolicy, rng *rand.Rand, do AttemptFunc, rec *Record) {
	if p.Budget != nil {
		p.Budget.First()
	}
	a := do(ctx, "")
	rec.Attempts = append(rec.Attempts, a)
	var firstRefusal time.Time
	for a.Refused() && p.Enabled {
		if firstRefusal.IsZero() {
			firstRefusal = a.End
		}
		switch {
		case !a.HasRetryAfter:
			rec.GaveUp = gaveUpNoRetryAfter
		case len(rec.Retries) >= p.MaxRetries:
			rec.GaveUp = gaveUpMaxRetries
		case p.Budget != nil && !p.Budget.Allow():
			rec.GaveUp = gaveUpBudget
		}
		if rec.GaveUp != "" {
			break
		}
		jitter := time.Duration(rng.Float64() * p.Jitter * float64(a.RetryAfter))
		if !sleep(ctx, clk, a.RetryAfter+jitter) {
			if p.Budget != nil {
				p.Budget.Refund()
			}
			rec.GaveUp, rec.Outcome = gaveUpRunEnded, outcomeAbandoned
			return
		}
		next := do(ctx, a.RetryToken)
		rec.Retries = append(rec.Retries, Retry{
			Suggested:         a.RetryAfter,
			Jitter:            jitter,
			Actual:            next.Start.Sub(a.End),
			Admitted:          next.Admitted(),
			SinceFirstRefusal: next.Start.Sub(firstRefusal),
		})
		rec.Attempts = append(rec.Attempts, next)
		a = next
	}
	rec.Outcome = outcomeOf(a)
}

func outcomeOf(a Attempt) string {
	switch {
	case a.Err == errCanceled:
		return outcomeAbandoned
	case a.Status == 0:
		return outcomeError
	case a.Status == 200:
		return outcomeServed
	case a.Refused():
		return outcomeRefused
	default:
		return outcomeFailed
	}
}

// sleep waits d on clk; it reports false if ctx ended first.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := clk.NewTimer(d)
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}
