package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

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

func TestExecuteRetriesAtRetryAfterPlusJitter(t *testing.T) {
	clk := clock.NewFake(epoch)
	first := refusal(2 * time.Second)
	first.RetryToken = "00ab"
	s := &scripted{clk: clk, answers: []Attempt{first, ok200}}
	policy := RetryPolicy{Enabled: true, Jitter: 0.5, MaxRetries: 3, Budget: NewRetryBudget(1)}
	// The same seed drawn the same way gives the jitter Execute will use.
	wantJitter := time.Duration(rand.New(rand.NewPCG(3, 4)).Float64() * 0.5 * float64(2*time.Second))
	if wantJitter <= 0 {
		t.Fatal("test needs a positive jitter draw")
	}
	rec := &Record{}
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		Execute(context.Background(), clk, policy, rand.New(rand.NewPCG(3, 4)), s.do, rec)
		close(done)
	}()
	<-armed
	clk.Advance(2*time.Second + wantJitter - time.Nanosecond)
	if s.count() != 1 || clk.Pending() != 1 {
		t.Fatalf("retried before Retry-After plus jitter (calls %d, pending timers %d)", s.count(), clk.Pending())
	}
	clk.Advance(time.Nanosecond)
	<-done
	if rec.Outcome != outcomeServed || rec.GaveUp != "" || len(rec.Attempts) != 2 || len(rec.Retries) != 1 {
		t.Fatalf("outcome %q gave up %q, %d attempts, %d retries; want served after one retry",
			rec.Outcome, rec.GaveUp, len(rec.Attempts), len(rec.Retries))
	}
	rt := rec.Retries[0]
	want := Retry{Suggested: 2 * time.Second, Jitter: wantJitter, Actual: 2*time.Second + wantJitter,
		Admitted: true, SinceFirstRefusal: 2*time.Second + wantJitter}
	if rt != want {
		t.Errorf("retry %+v, want %+v", rt, want)
	}
	if len(s.tokens) != 2 || s.tokens[0] != "" || s.tokens[1] != "00ab" {
		t.Errorf("tokens sent %q, want none then the refusal's", s.tokens)
	}
}

func TestExecuteTimeToAdmissionSpansSeveralRefusals(t *testing.T) {
	clk := clock.NewFake(epoch)
	s := &scripted{clk: clk, answers: []Attempt{refusal(time.Second), refusal(3 * time.Second), ok200}}
	policy := RetryPolicy{Enabled: true, MaxRetries: 5}
	rec := &Record{}
	done := make(chan struct{})
	armed := clk.TimerCreated()
	go func() {
		Execute(context.Background(), clk, policy, rand.New(rand.NewPCG(1, 1)), s.do, rec)
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
	noHeader := refusal(0)
	noHeader.HasRetryAfter = false
	tooMany := Attempt{Status: http.StatusTooManyRequests, Code: "rate_limited", HasRetryAfter: true}
	cases := []struct {
		name        string
		policy      RetryPolicy
		answers     []Attempt
		wantTries   int
		wantGaveUp  string
		wantOutcome string
	}{
		{"retry off", RetryPolicy{MaxRetries: 3}, []Attempt{refusal(0), ok200}, 1, "", outcomeRefused},
		{"no Retry-After", RetryPolicy{Enabled: true, MaxRetries: 3}, []Attempt{noHeader, ok200}, 1, gaveUpNoRetryAfter, outcomeRefused},
		{"budget empty", RetryPolicy{Enabled: true, MaxRetries: 3, Budget: NewRetryBudget(0)}, []Attempt{refusal(0), ok200}, 1, gaveUpBudget, outcomeRefused},
		{"max retries", RetryPolicy{Enabled: true, MaxRetries: 2}, []Attempt{tooMany}, 3, gaveUpMaxRetries, outcomeRefused},
		{"504 is admitted, not retried", RetryPolicy{Enabled: true, MaxRetries: 3}, []Attempt{refusal(0), {Status: 504, Code: "timeout"}}, 2, "", outcomeFailed},
		{"transport error ends it", RetryPolicy{Enabled: true, MaxRetries: 3}, []Attempt{{Err: errTransport}}, 1, "", outcomeError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			s := &scripted{clk: clk, answers: tc.answers}
			rec := &Record{}
			// Every delay here is zero, so Execute never waits on the clock.
			Execute(context.Background(), clk, tc.policy, rand.New(rand.NewPCG(1, 1)), s.do, rec)
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

func TestExecuteAbandonedWaitRefundsTheBudget(t *testing.T) {
	clk := clock.NewFake(epoch)
	s := &scripted{clk: clk, answers: []Attempt{refusal(10 * time.Second)}}
	budget := NewRetryBudget(1)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &Record{}
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		Execute(ctx, clk, RetryPolicy{Enabled: true, MaxRetries: 3, Budget: budget}, rand.New(rand.NewPCG(1, 1)), s.do, rec)
		close(done)
	}()
	<-armed
	cancel()
	<-done
	if rec.Outcome != outcomeAbandoned || rec.GaveUp != gaveUpRunEnded || len(rec.Retries) != 0 {
		t.Errorf("outcome %q gave up %q with %d retries; want abandoned, run_ended, 0", rec.Outcome, rec.GaveUp, len(rec.Retries))
	}
	// One first attempt at ratio 1 earns one retry; the unsent one must be back.
	if !budget.Allow() {
		t.Error("the unsent retry was not refunded")
	}
}

func TestRetryBudgetIsAShareOfFirstAttempts(t *testing.T) {
	b := NewRetryBudget(0.5)
	if b.Allow() {
		t.Fatal("no first attempts yet: no retry")
	}
	for i := 0; i < 4; i++ {
		b.First()
	}
	for i := 0; i < 2; i++ {
		if !b.Allow() {
			t.Fatalf("4 first attempts at 0.5 allow 2 retries; retry %d was refused", i+1)
		}
	}
	if b.Allow() {
		t.Fatal("a third retry exceeds the budget")
	}
	b.Refund()
	if !b.Allow() {
		t.Fatal("a refunded retry can be spent again")
	}
}
