package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/client"
	"github.com/sluice-serving/sluice/clock"
)

// scripted answers attempts from a fixed list, stamping them with the fake clock; after the
// list runs out it repeats the last answer.
type scripted struct {
	clk     *clock.Fake
	mu      sync.Mutex
	answers []Attempt
	calls   int
	tokens  []string // the token each call was sent with
}

func (s *scripted) do(ctx context.Context, token string) Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	s.tokens = append(s.tokens, token)
	a.Start, a.End = s.clk.Now(), s.clk.Now()
	return a
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func refusal(retryAfter time.Duration) Attempt {
	return Attempt{Status: http.StatusServiceUnavailable, Code: "backpressure", Reason: "saturated",
		RetryAfter: retryAfter, HasRetryAfter: true}
}

var ok200 = Attempt{Status: http.StatusOK}

func mustRetryPolicy(enabled bool, maxRetries int, ratio float64) RetryPolicy {
	p, err := NewRetryPolicy(enabled, maxRetries, ratio, clock.Real())
	if err != nil {
		panic(err)
	}
	return p
}

// rulesOn is a policy whose client rules read clk, with a fixed jitter draw of u.
func rulesOn(t *testing.T, clk clock.Clock, maxRetries int, ratio, u float64) RetryPolicy {
	t.Helper()
	rules, err := client.NewRetrier(client.Config{MaxAttempts: maxRetries + 1, Clock: clk, Rand: func() float64 { return u },
		Budget: client.Budget{Ratio: ratio, Window: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return RetryPolicy{Enabled: true, Rules: rules, MaxRetries: maxRetries, BudgetRatio: ratio}
}

func TestExecuteRetriesAtRetryAfter(t *testing.T) {
	clk := clock.NewFake(epoch)
	first := refusal(2 * time.Second)
	first.RetryToken = "00ab"
	s := &scripted{clk: clk, answers: []Attempt{first, ok200}}
	rec := &Record{}
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		Execute(context.Background(), clk, rulesOn(t, clk, 3, 1, 0.5), s.do, rec)
		close(done)
	}()
	<-armed
	clk.Advance(2*time.Second - time.Nanosecond)
	if s.count() != 1 || clk.Pending() != 1 {
		t.Fatalf("retried before Retry-After (calls %d, pending timers %d)", s.count(), clk.Pending())
	}
	clk.Advance(time.Nanosecond)
	<-done
	if rec.Outcome != outcomeServed || rec.GaveUp != "" || len(rec.Attempts) != 2 || len(rec.Retries) != 1 {
		t.Fatalf("outcome %q gave up %q, %d attempts, %d retries; want served after one retry",
			rec.Outcome, rec.GaveUp, len(rec.Attempts), len(rec.Retries))
	}
	want := Retry{Suggested: 2 * time.Second, Actual: 2 * time.Second, Admitted: true, SinceFirstRefusal: 2 * time.Second}
	if rt := rec.Retries[0]; rt != want {
		t.Errorf("retry %+v, want %+v", rt, want)
	}
	if len(s.tokens) != 2 || s.tokens[0] != "" || s.tokens[1] != "00ab" {
		t.Errorf("tokens sent %q, want none then the refusal's", s.tokens)
	}
}

// A refusal without Retry-After is retried after the client's backoff: full jitter under
// 100 ms for the first retry (the draw is 0.5: 50 ms).
func TestExecuteBacksOffWithoutRetryAfter(t *testing.T) {
	clk := clock.NewFake(epoch)
	noHeader := refusal(0)
	noHeader.HasRetryAfter = false
	s := &scripted{clk: clk, answers: []Attempt{noHeader, ok200}}
	rec := &Record{}
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		Execute(context.Background(), clk, rulesOn(t, clk, 3, 1, 0.5), s.do, rec)
		close(done)
	}()
	<-armed
	clk.Advance(50 * time.Millisecond)
	<-done
	if len(rec.Retries) != 1 || rec.Retries[0].Jitter != 50*time.Millisecond || rec.Outcome != outcomeServed {
		t.Errorf("retries %+v, outcome %q", rec.Retries, rec.Outcome)
	}
}

func TestExecuteTimeToAdmissionSpansSeveralRefusals(t *testing.T) {
	clk := clock.NewFake(epoch)
	s := &scripted{clk: clk, answers: []Attempt{refusal(time.Second), refusal(3 * time.Second), ok200}}
	rec := &Record{}
	done := make(chan struct{})
	armed := clk.TimerCreated()
	go func() {
		Execute(context.Background(), clk, rulesOn(t, clk, 5, 10, 0.5), s.do, rec)
		close(done)
	}()
	<-armed
	armed = clk.TimerCreated()
	clk.Advance(time.Second)
	<-armed
	clk.Advance(3 * time.Second)
	<-done
	if len(rec.Retries) != 2 {
		t.Fatalf("%d retries, want 2", len(rec.Retries))
	}
	first, second := rec.Retries[0], rec.Retries[1]
	if first.Admitted || first.Suggested != time.Second || first.SinceFirstRefusal != time.Second {
		t.Errorf("first retry %+v: want refused, suggested 1s, 1s after the first refusal", first)
	}
	if !second.Admitted || second.Suggested != 3*time.Second || second.Actual != 3*time.Second || second.SinceFirstRefusal != 4*time.Second {
		t.Errorf("second retry %+v: want admitted, suggested 3s, waited 3s, 4s after the first refusal", second)
	}
}

func TestExecuteStopsRetrying(t *testing.T) {
	// Waits are the client's backoff with a draw of 0: zero, and a fake timer of zero fires at
	// once, so Execute never waits on the clock here.
	tooMany := Attempt{Status: http.StatusTooManyRequests, Code: "rate_limited"}
	tooLarge := Attempt{Status: http.StatusTooManyRequests, Code: "rate_limited", Reason: "too_large", HasRetryAfter: true, RetryAfter: time.Second}
	cases := []struct {
		name        string
		policy      func(t *testing.T, clk clock.Clock) RetryPolicy
		answers     []Attempt
		wantTries   int
		wantGaveUp  string
		wantOutcome string
	}{
		{"retry off", func(*testing.T, clock.Clock) RetryPolicy { return mustRetryPolicy(false, 3, 1) }, []Attempt{refusal(0), ok200}, 1, "", outcomeRefused},
		{"budget empty", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 3, 0, 0) }, []Attempt{refusal(0), ok200}, 1, gaveUpBudget, outcomeRefused},
		{"max retries", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 2, 10, 0) }, []Attempt{tooMany}, 3, gaveUpMaxRetries, outcomeRefused},
		{"too large", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 2, 1, 0) }, []Attempt{tooLarge}, 1, gaveUpNotRetryable, outcomeRefused},
		{"Retry-After past the client's limit", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 2, 1, 0) }, []Attempt{refusal(time.Hour)}, 1, gaveUpRetryAfter, outcomeRefused},
		{"504 is admitted, not retried", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 3, 1, 0) }, []Attempt{refusal(0), {Status: 504, Code: "timeout"}}, 2, "", outcomeFailed},
		{"transport error ends it", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 3, 1, 0) }, []Attempt{{Err: errTransport}}, 1, "", outcomeError},
		{"refused connection is retried", func(t *testing.T, clk clock.Clock) RetryPolicy { return rulesOn(t, clk, 3, 1, 0) }, []Attempt{{Err: errConnRefused}, ok200}, 2, "", outcomeServed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			s := &scripted{clk: clk, answers: tc.answers}
			rec := &Record{}
			Execute(context.Background(), clk, tc.policy(t, clk), s.do, rec)
			if len(rec.Attempts) != tc.wantTries || rec.GaveUp != tc.wantGaveUp || rec.Outcome != tc.wantOutcome {
				t.Errorf("%d attempts, gave up %q, outcome %q; want %d, %q, %q",
					len(rec.Attempts), rec.GaveUp, rec.Outcome, tc.wantTries, tc.wantGaveUp, tc.wantOutcome)
			}
			if len(rec.Retries) != len(rec.Attempts)-1 {
				t.Errorf("%d retries recorded for %d attempts", len(rec.Retries), len(rec.Attempts))
			}
		})
	}
}

func TestExecuteAbandonedWait(t *testing.T) {
	clk := clock.NewFake(epoch)
	s := &scripted{clk: clk, answers: []Attempt{refusal(10 * time.Second)}}
	ctx, cancel := context.WithCancel(context.Background())
	rec := &Record{}
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		Execute(ctx, clk, rulesOn(t, clk, 3, 1, 0), s.do, rec)
		close(done)
	}()
	<-armed
	cancel()
	<-done
	if rec.Outcome != outcomeAbandoned || rec.GaveUp != gaveUpRunEnded || len(rec.Retries) != 0 {
		t.Errorf("outcome %q gave up %q with %d retries; want abandoned, run_ended, 0", rec.Outcome, rec.GaveUp, len(rec.Retries))
	}
}

// TestExecuteDoesNotRetryAuditUnavailable: a 503 audit_unavailable comes after the work was
// done, and the client's rules never retry it; the harness left its code out of the outcome
// it asked them about, so it waited out the Retry-After and sent the work again.
func TestExecuteDoesNotRetryAuditUnavailable(t *testing.T) {
	clk := clock.NewFake(epoch)
	audit := Attempt{Status: http.StatusServiceUnavailable, Code: "audit_unavailable", RetryAfter: time.Second, HasRetryAfter: true}
	s := &scripted{clk: clk, answers: []Attempt{audit, ok200}}
	rec := &Record{}
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		Execute(context.Background(), clk, rulesOn(t, clk, 3, 1, 0.5), s.do, rec)
		close(done)
	}()
	select {
	case <-done:
	case <-armed: // it waits to retry
		clk.Advance(time.Second)
		<-done
	}
	if s.count() != 1 || rec.GaveUp != gaveUpNotRetryable {
		t.Errorf("audit_unavailable: %d attempts, gave up %q; want 1 attempt, %q", s.count(), rec.GaveUp, gaveUpNotRetryable)
	}
}
