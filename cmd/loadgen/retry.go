package main

import (
	"context"
	"time"

	"github.com/sluice-serving/sluice/client"
	"github.com/sluice-serving/sluice/clock"
)

// RetryPolicy says whether refused attempts are retried. The decisions are the Go client's
// (client.Retrier: which answers, how long to wait, the attempts and the retry budget), so the
// harness retries as the code Sluice's users import does; the budget, attempts and budget
// ratio are kept for the report.
type RetryPolicy struct {
	Enabled     bool
	Rules       *client.Retrier
	MaxRetries  int
	BudgetRatio float64
}

// NewRetryPolicy builds the client's rules for at most maxRetries retries a request, within a
// budget of ratio retries per request over a 10 s window.
func NewRetryPolicy(enabled bool, maxRetries int, ratio float64, clk clock.Clock) (RetryPolicy, error) {
	rules, err := client.NewRetrier(client.Config{MaxAttempts: maxRetries + 1, Clock: clk,
		Budget: client.Budget{Ratio: ratio, Window: 10 * time.Second}})
	return RetryPolicy{Enabled: enabled, Rules: rules, MaxRetries: maxRetries, BudgetRatio: ratio}, err
}

// gaveUpOf names the client's reasons for not retrying in the report's words.
var gaveUpOf = map[string]string{"attempts": gaveUpMaxRetries, "budget": gaveUpBudget,
	"retry_after": gaveUpRetryAfter, "not_retryable": gaveUpNotRetryable}

// AttemptFunc sends one attempt of a request; token is the retry token of the refusal it
// retries ("" for a first attempt or when the refusal carried none).
type AttemptFunc func(ctx context.Context, token string) Attempt

// Execute runs one logical request into rec: the first attempt and, while the policy's rules
// allow, a retry of each refusal (or refused connection) after the wait they give: the
// refusal's Retry-After, or the client's backoff with full jitter without one. It sets
// rec.Attempts, rec.Retries, rec.Outcome and rec.GaveUp.
func Execute(ctx context.Context, clk clock.Clock, p RetryPolicy, do AttemptFunc, rec *Record) {
	if p.Enabled {
		p.Rules.Begin()
	}
	a := do(ctx, "")
	rec.Attempts = append(rec.Attempts, a)
	var firstRefusal time.Time
	for p.Enabled && (a.Refused() || a.Err == errConnRefused) {
		if firstRefusal.IsZero() {
			firstRefusal = a.End
		}
		o := client.Outcome{Status: a.Status, Code: a.Code, Reason: a.Reason, ConnRefused: a.Err == errConnRefused}
		if a.HasRetryAfter {
			o.RetryAfter = a.RetryAfter
		}
		wait, giveUp := p.Rules.Next(len(rec.Retries), o)
		if giveUp != "" {
			rec.GaveUp = gaveUpOf[giveUp]
			break
		}
		if !sleep(ctx, clk, wait) {
			rec.GaveUp, rec.Outcome = gaveUpRunEnded, outcomeAbandoned
			return
		}
		next := do(ctx, a.RetryToken)
		rec.Retries = append(rec.Retries, Retry{
			Suggested:         o.RetryAfter,
			Jitter:            wait - o.RetryAfter,
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
