package batcher

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// A traced caller's request shows its queue wait and its batch's pass as two children of the
// caller's span, one after the other; an untraced caller's makes none.
func TestTracedRequestsShowQueueAndPass(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	r := runFunc(func(_ context.Context, batch []int) ([]int, error) { return batch, nil })
	cfg := Config{MaxBatchSize: 8, MaxWait: 0, MaxPaddedTokens: 8 * 64, QueueSize: 10, Workers: 1}
	b, err := New[int, int]("traced", cfg, r, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Start(t.Context())

	if _, err := b.Submit(t.Context(), admission.Interactive, 1, Cost{Sequences: 1, MaxLen: 4}); err != nil {
		t.Fatal(err)
	}
	ctx, parent := tp.Tracer("test").Start(t.Context(), "caller")
	if _, err := b.Submit(ctx, admission.Bulk, 2, Cost{Sequences: 1, MaxLen: 4}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	// The spans are made after the answers, before the batch is done: Close waits for that.
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = s
	}
	if n := len(rec.Ended()); n != 3 { // the caller's, and its request's two: none for the untraced one
		t.Fatalf("%d spans: %v", n, byName)
	}
	q, pass := byName["sluice.queue"], byName["sluice.engine_pass"]
	if q == nil || pass == nil {
		t.Fatalf("spans %v", byName)
	}
	for _, s := range []sdktrace.ReadOnlySpan{q, pass} {
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s: parent %v", s.Name(), s.Parent().SpanID())
		}
	}
	if q.EndTime().After(pass.StartTime()) || pass.EndTime().Before(pass.StartTime()) {
		t.Errorf("queue %v-%v, pass %v-%v", q.StartTime(), q.EndTime(), pass.StartTime(), pass.EndTime())
	}
	attrs := map[string]string{}
	for _, kv := range append(q.Attributes(), pass.Attributes()...) {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["sluice.queue"] != "traced" || attrs["sluice.priority"] != admission.Bulk.String() || attrs["sluice.batch_requests"] != "1" {
		t.Errorf("attributes %v", attrs)
	}
}
