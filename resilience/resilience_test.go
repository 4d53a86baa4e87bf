package resilience

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluice-serving/sluice/clock"
)

var (
	epoch    = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	errModel = errors.New("the model failed")
	errLoad  = errors.New("refused for load")
)

func testGuard(t *testing.T, attempts int) (*Guard, *clock.Fake, *Metrics) {
	t.Helper()
	fake := clock.NewFake(epoch)
	met := NewMetrics(prometheus.NewRegistry())
	g, err := New(Config{Enabled: true, MaxAttempts: attempts, BackoffInitial: 50 * time.Millisecond, BackoffMultiplier: 2,
		BackoffMax: 80 * time.Millisecond, BackoffJitter: 10 * time.Millisecond, FailureThreshold: 3, RecoveryTimeout: 30 * time.Second},
		fake, func() float64 { return 0.5 }, func(err error) bool { return errors.Is(err, errModel) }, met)
	if err != nil {
		t.Fatal(err)
	}
	return g, fake, met
}

// failing is a call that fails with errModel n times, then succeeds; calls counts its calls.
func failing(n int, calls *int) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= n {
			return errModel
		}
		return nil
	}
}

func TestRetryBacksOffThenAnswers(t *testing.T) {
	g, fake, met := testGuard(t, 3)
	calls := 0
	done := make(chan error, 1)
	armed := fake.TimerCreated()
	go func() { done <- g.Do(context.Background(), "m", failing(2, &calls)) }()
	for _, wait := range []time.Duration{55 * time.Millisecond, 85 * time.Millisecond} { // 50 and 100 capped at 80, +5 of jitter
		<-armed
		armed = fake.TimerCreated()
		fake.Advance(wait - time.Nanosecond)
		select {
		case <-done:
			t.Fatalf("answered before the backoff of %s", wait)
		default:
		}
		fake.Advance(time.Nanosecond)
	}
	if err := <-done; err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	if got := testutil.ToFloat64(met.retries); got != 2 {
		t.Fatalf("retries %v", got)
	}
	// A refusal for load is not retried, and does not count against the breaker.
	calls = 0
	for range 5 {
		if err := g.Do(context.Background(), "m", func(context.Context) error { calls++; return errLoad }); !errors.Is(err, errLoad) {
			t.Fatal(err)
		}
	}
	if calls != 5 || g.Counts()[Closed] != 1 {
		t.Fatalf("calls %d, breakers %v", calls, g.Counts())
	}
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	g, fake, met := testGuard(t, 1)
	ctx := context.Background()
	calls := 0
	for range 3 {
		if err := g.Do(ctx, "m", failing(100, &calls)); !errors.Is(err, errModel) {
			t.Fatal(err)
		}
	}
	var open *OpenError
	if err := g.Do(ctx, "m", failing(100, &calls)); !errors.As(err, &open) || open.RetryAfter != 30*time.Second || calls != 3 {
		t.Fatalf("after 3 failures: %v, %d calls", err, calls)
	}
	if err := g.Do(ctx, "other", func(context.Context) error { return nil }); err != nil {
		t.Fatalf("another model's breaker: %v", err)
	}
	fake.Advance(20 * time.Second)
	if err := g.Do(ctx, "m", nil); !errors.As(err, &open) || open.RetryAfter != 10*time.Second {
		t.Fatalf("10 s before recovery: %v", err)
	}
	fake.Advance(10 * time.Second)
	if c := g.Counts(); c[HalfOpen] != 1 || c[Closed] != 1 {
		t.Fatalf("counts %v", c)
	}
	// Half open: one probe goes; a call beside it is refused; the probe's failure opens again.
	release := make(chan struct{})
	probe := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		probe <- g.Do(ctx, "m", func(context.Context) error { close(started); <-release; return errModel })
	}()
	<-started
	if err := g.Do(ctx, "m", nil); !errors.As(err, &open) {
		t.Fatalf("beside the probe: %v", err)
	}
	close(release)
	if err := <-probe; !errors.Is(err, errModel) {
		t.Fatal(err)
	}
	if err := g.Do(ctx, "m", nil); !errors.As(err, &open) || open.RetryAfter != 30*time.Second {
		t.Fatalf("after a failed probe: %v", err)
	}
	fake.Advance(30 * time.Second)
	if err := g.Do(ctx, "m", func(context.Context) error { return nil }); err != nil {
		t.Fatalf("the probe that succeeds: %v", err)
	}
	if c := g.Counts(); c[Closed] != 2 {
		t.Fatalf("counts after recovery %v", c)
	}
	if o, r := testutil.ToFloat64(met.opens), testutil.ToFloat64(met.refusals); o != 2 || r != 4 {
		t.Fatalf("opened %v, refused %v", o, r)
	}
}

func TestConfigReportsEveryProblem(t *testing.T) {
	err := Config{MaxAttempts: 0, BackoffInitial: -1, BackoffMultiplier: 0.5, BackoffMax: -2, BackoffJitter: -1,
		FailureThreshold: 0, RecoveryTimeout: 0}.Validate()
	for _, f := range []string{"MaxAttempts", "BackoffInitial", "BackoffMultiplier", "BackoffMax", "BackoffJitter", "FailureThreshold", "RecoveryTimeout"} {
		if err == nil || !containsField(err.Error(), f) {
			t.Errorf("%s not reported: %v", f, err)
		}
	}
}

func containsField(s, f string) bool {
	for i := 0; i+len(f) <= len(s); i++ {
		if s[i:i+len(f)] == f {
			return true
		}
	}
	return false
}

// TestOnlyTheProbeDecides: a call that began before the breaker opened decides nothing when it
// ends; a probe that panics counts as failed (the breaker is not left waiting for it); a probe
// refused for load says nothing, and the next call probes.
func TestOnlyTheProbeDecides(t *testing.T) {
	g, fake, _ := testGuard(t, 1)
	ctx := context.Background()
	release := make(chan struct{})
	straggler := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		straggler <- g.Do(ctx, "m", func(context.Context) error { close(started); <-release; return nil })
	}()
	<-started
	calls := 0
	for range 3 {
		g.Do(ctx, "m", failing(100, &calls))
	}
	close(release)
	<-straggler
	var open *OpenError
	if err := g.Do(ctx, "m", nil); !errors.As(err, &open) {
		t.Fatalf("a straggler's success closed the open breaker: %v", err)
	}
	fake.Advance(30 * time.Second)
	func() {
		defer func() { _ = recover() }()
		_ = g.Do(ctx, "m", func(context.Context) error { panic("a bug in the probe") })
	}()
	if err := g.Do(ctx, "m", nil); !errors.As(err, &open) || open.RetryAfter != 30*time.Second {
		t.Fatalf("after a probe that panicked: %v", err)
	}
	fake.Advance(30 * time.Second)
	if err := g.Do(ctx, "m", func(context.Context) error { return errLoad }); !errors.Is(err, errLoad) {
		t.Fatal(err)
	}
	if err := g.Do(ctx, "m", func(context.Context) error { return nil }); err != nil {
		t.Fatalf("the probe after one refused for load: %v", err)
	}
	if c := g.Counts(); c[Closed] != 1 {
		t.Fatalf("counts %v", c)
	}
}
