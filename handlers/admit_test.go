package handlers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// fakeLoad is an admission.Queue whose state the test sets.
type fakeLoad struct {
	mu   sync.Mutex
	load admission.Load
	lim  admission.Limits
}

func newFakeLoad(queueSize int) *fakeLoad {
	return &fakeLoad{lim: admission.Limits{Workers: 1, QueueSize: queueSize, MaxQueueWait: time.Second,
		Weights: [admission.NumPriorities]int{4, 1}}}
}

func (f *fakeLoad) Load() admission.Load {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.load
}

func (f *fakeLoad) Limits() admission.Limits { return f.lim }

func (f *fakeLoad) setWaiting(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.load.Waiting[admission.Interactive] = n
}

func gatedFixture(t *testing.T) (*fixture, *fakeLoad) {
	t.Helper()
	src := newFakeLoad(100)
	gate, err := admission.NewGate("analyze", admission.Config{HighWatermark: 10, LowWatermark: 5,
		Policy: admission.PolicyStatic, StaticRetryAfter: 3 * time.Second}, src,
		clock.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *fixtureOptions) { o.analyze.Gate = gate })
	return f, src
}

func TestShedBeforeParsingWithRetryAfter(t *testing.T) {
	f, src := gatedFixture(t)
	src.setWaiting(10)
	// Not even valid JSON: a refusal must come before the body is looked at.
	r := f.do(t, "POST", "/analyze", `{"text": "`+canary)
	if r.status != 503 || r.header.Get("Retry-After") != "3" {
		t.Fatalf("status %d Retry-After %q: %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
	e := errorOf(t, r)
	d := e["details"].(map[string]any)
	if e["code"] != "backpressure" || d["reason"] != "high_watermark" || d["queue"] != "analyze" || d["low_watermark"] != 5.0 {
		t.Fatalf("refusal body = %s", r.raw)
	}
	if strings.Contains(r.raw, canary) || f.analyze.callCount() != 0 {
		t.Fatalf("refusal did work or leaked text: %s", r.raw)
	}
	// Hysteresis: still shedding just under the high watermark, admitting at the low one.
	src.setWaiting(9)
	if r = f.do(t, "POST", "/analyze", `{"text":"x"}`); r.status != 503 {
		t.Fatalf("at high-1 while shedding: status %d", r.status)
	}
	src.setWaiting(5)
	if r = f.do(t, "POST", "/analyze", `{"text":"x"}`); r.status != 200 {
		t.Fatalf("at the low watermark: status %d: %s", r.status, r.raw)
	}
}

// TestRetryTokenOverHTTP: a refusal books a reservation and sends its token; the retry that
// echoes it at the Retry-After is served although the endpoint is still shedding, and the same
// token is not honoured twice.
func TestRetryTokenOverHTTP(t *testing.T) {
	src := newFakeLoad(100)
	clk := clock.NewFake(time.Unix(0, 0))
	gate, err := admission.NewGate("analyze", admission.Config{HighWatermark: 10, LowWatermark: 5,
		Policy: admission.PolicyStatic, StaticRetryAfter: 2 * time.Second, RetryReserve: 0.5}, src, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *fixtureOptions) { o.analyze.Gate = gate })
	// Measure a completion rate (reservations are a share of it): 10 a second for 4 s.
	for range 4 {
		f.do(t, "POST", "/analyze", `{"text":"x"}`)
		clk.Advance(time.Second)
		src.mu.Lock()
		src.load.Completed += 10
		src.load.Running = 1
		src.mu.Unlock()
	}
	src.setWaiting(10)
	r := f.do(t, "POST", "/analyze", `{"text":"x"}`)
	tok := r.header.Get(admission.RetryTokenHeader)
	if r.status != 503 || r.header.Get("Retry-After") != "2" || len(tok) != admission.TokenLen {
		t.Fatalf("refusal: status %d Retry-After %q token %q", r.status, r.header.Get("Retry-After"), tok)
	}
	clk.Advance(2 * time.Second)
	if r = f.do(t, "POST", "/analyze", `{"text":"x"}`); r.status != 503 {
		t.Fatalf("fresh request while shedding: status %d", r.status)
	}
	if r = f.do(t, "POST", "/analyze", `{"text":"x"}`, admission.RetryTokenHeader, tok); r.status != 200 {
		t.Fatalf("retry with its token: status %d: %s", r.status, r.raw)
	}
	if r = f.do(t, "POST", "/analyze", `{"text":"x"}`, admission.RetryTokenHeader, tok); r.status != 503 {
		t.Fatalf("token replayed: status %d", r.status)
	}
	if r = f.do(t, "POST", "/analyze", `{"text":"x"}`, admission.RetryTokenHeader, canary); r.status != 503 || strings.Contains(r.raw, canary) {
		t.Fatalf("garbage token: status %d: %s", r.status, r.raw)
	}
}

func TestPriorityHeader(t *testing.T) {
	f, _ := gatedFixture(t)
	if r := f.do(t, "POST", "/analyze", `{"text":"x"}`, "x-openmed-priority", "background"); r.status != 200 {
		t.Fatalf("bulk alias refused: %d %s", r.status, r.raw)
	}
	r := f.do(t, "POST", "/analyze", `{"text":"x"}`, "x-openmed-priority", "urgent-"+canary)
	if r.status != 400 || errorOf(t, r)["code"] != "bad_request" || strings.Contains(r.raw, canary) {
		t.Fatalf("bad priority: %d %s", r.status, r.raw)
	}
}

func TestExpiredAndAbortedOutcomes(t *testing.T) {
	f, _ := gatedFixture(t)
	f.analyze.set(func(e *fakeExtractor) { e.err = fmt.Errorf("batcher: %w", admission.ErrExpired) })
	r := f.do(t, "POST", "/analyze", `{"text":"x"}`)
	if r.status != 503 || errorOf(t, r)["details"].(map[string]any)["reason"] != "max_wait" {
		t.Fatalf("expired: %d %s", r.status, r.raw)
	}
	f.analyze.set(func(e *fakeExtractor) { e.err = fmt.Errorf("batcher: caller left: %w", context.Canceled) })
	f.do(t, "POST", "/analyze", `{"text":"x"}`)
	m := f.do(t, "GET", "/metrics", "")
	for _, want := range []string{
		`sluice_http_requests_total{outcome="expired",route="/analyze",status="503"} 1`,
		`sluice_http_requests_aborted_total{reason="cancelled",route="/analyze"} 1`,
		`sluice_http_requests_total{outcome="aborted",route="/analyze",status="499"} 1`,
	} {
		if !strings.Contains(m.raw, want) {
			t.Fatalf("metrics lack %q", want)
		}
	}
}

// newTestGate is a gate with a high watermark the tests reach only on purpose and a static
// Retry-After, over a fake queue state.
func newTestGate(t testing.TB, queue string, src *fakeLoad, retry time.Duration) *admission.Gate {
	t.Helper()
	gate, err := admission.NewGate(queue, admission.Config{HighWatermark: 100, Policy: admission.PolicyStatic,
		StaticRetryAfter: retry}, src, clock.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return gate
}

func TestAdmissionOutcomesNameWhyAdmissionAnswered(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&apiError{Status: statusClientClosed}, "client_closed"},
		{&apiError{Status: 400}, "bad_request"},
		{&apiError{Status: 429}, "refused_by_budget"},
		{errRefused, "refused_by_budget"},
	} {
		if got := admissionOutcome(c.err, "refused_by_budget"); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}
