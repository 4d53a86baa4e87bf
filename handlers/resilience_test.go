package handlers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/resilience"
)

// flaky fails its first fails calls in the model (or in decoding, when decoding), then
// answers as its fakeExtractor does.
type flaky struct {
	*fakeExtractor
	fails    int
	decoding bool
}

func (f *flaky) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	f.mu.Lock()
	failing := f.fails > 0
	if failing {
		f.fails--
		f.calls++
	}
	f.mu.Unlock()
	if failing && f.decoding {
		return nil, extract.Stats{}, fmt.Errorf("%w: entities: token 0 has offsets outside the text", extract.ErrDecoding)
	}
	if failing {
		return nil, extract.Stats{}, errors.New("onnxruntime: the run failed")
	}
	return f.fakeExtractor.Extract(ctx, p, text, opts)
}

// guardedFixture serves model as the PII model behind a breaker that opens after two failed
// calls for 30 s and tries each call up to attempts times.
func guardedFixture(t *testing.T, model *flaky, attempts int) (*fixture, *resilience.Guard) {
	var g *resilience.Guard
	f := newFixture(t, func(o *fixtureOptions) {
		var err error
		g, err = resilience.New(resilience.Config{Enabled: true, MaxAttempts: attempts, BackoffMultiplier: 1, FailureThreshold: 2,
			RecoveryTimeout: 30 * time.Second}, o.Clock, func() float64 { return 0 }, ModelFailure, resilience.NewMetrics(prometheus.NewRegistry()))
		if err != nil {
			t.Fatal(err)
		}
		model.fakeExtractor = &fakeExtractor{name: "pii", maxLen: 128}
		o.pii.Models = map[string]Extractor{"pii": Guarded(model, g)}
	})
	return f, g
}

// TestModelFailuresAreRetriedThenBroken: over HTTP, a model call that fails in the model is
// tried again (MaxAttempts); calls that fail every try open the model's breaker after
// FailureThreshold, and the route then answers 503 circuit_breaker_open with a Retry-After
// without calling the model, until the recovery timeout lets a probe through.
func TestModelFailuresAreRetriedThenBroken(t *testing.T) {
	model := &flaky{fails: 1}
	f, g := guardedFixture(t, model, 2)
	if r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 200 || model.calls != 2 {
		t.Fatalf("one failure, then the retry: %d after %d calls (%s)", r.status, model.calls, r.raw)
	}
	model.mu.Lock()
	model.fails = 4 // two requests, each failing both tries
	model.mu.Unlock()
	for range 2 {
		if r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 500 {
			t.Fatalf("failing in the model: %d %s", r.status, r.raw)
		}
	}
	calls := model.calls
	r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`)
	e := errorOf(t, r)
	ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 503 || e["code"] != CodeCircuitOpen || ra < 1 || model.calls != calls {
		t.Fatalf("breaker open: %d %s, Retry-After %q, calls %d then %d", r.status, r.raw, r.header.Get("Retry-After"), calls, model.calls)
	}
	f.clock.Advance(30 * time.Second)
	if r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 200 {
		t.Fatalf("the probe after the recovery timeout: %d %s", r.status, r.raw)
	}
	if c := g.Counts(); c[resilience.Closed] != 1 {
		t.Fatalf("breakers %v", c)
	}
}

// TestDecodingFailuresAreNotTheModels: a text that Sluice's decoding fails on is a 500 tried
// once; however many such requests come, the model's breaker stays closed for the others.
func TestDecodingFailuresAreNotTheModels(t *testing.T) {
	model := &flaky{fails: 10, decoding: true}
	f, g := guardedFixture(t, model, 3)
	for i := range 5 {
		if r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 500 || model.calls != i+1 {
			t.Fatalf("request %d that decoding fails: %d after %d calls (%s)", i, r.status, model.calls, r.raw)
		}
	}
	model.mu.Lock()
	model.fails = 0
	model.mu.Unlock()
	if r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 200 {
		t.Fatalf("another text after them: %d %s", r.status, r.raw)
	}
	if c := g.Counts(); c[resilience.Closed] != 1 {
		t.Fatalf("breakers %v", c)
	}
}
