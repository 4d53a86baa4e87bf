package batcher

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// hangGuard only stops a broken test from hanging the whole run; no test asserts on wall time.
const hangGuard = 10 * time.Second

var epoch = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func baseConfig() Config {
	return Config{MaxBatchSize: 4, MaxWait: 10 * time.Millisecond, MaxPaddedTokens: 4096, QueueSize: 64, Workers: 1}
}

func one(maxLen int) Cost { return Cost{Sequences: 1, MaxLen: maxLen} }

func echo(batch []int) []int {
	out := make([]int, len(batch))
	for i, v := range batch {
		out[i] = v * 10
	}
	return out
}

// echoRunner answers every batch at once with in*10 and records the batch.
type echoRunner struct{ batches chan []int }

func newEchoRunner() *echoRunner { return &echoRunner{batches: make(chan []int, 1000)} }

func (r *echoRunner) Run(_ context.Context, batch []int) ([]int, error) {
	r.batches <- slices.Clone(batch)
	return echo(batch), nil
}

// heldCall is one Run call of a heldRunner, waiting for the test to answer it.
type heldCall struct {
	ctx   context.Context
	batch []int
	reply chan error // nil error: answer with echo
}

// heldRunner hands every call to the test and blocks until the test replies or ctx ends.
type heldRunner struct{ calls chan heldCall }

func newHeldRunner() *heldRunner { return &heldRunner{calls: make(chan heldCall, 1000)} }

func (r *heldRunner) Run(ctx context.Context, batch []int) ([]int, error) {
	c := heldCall{ctx: ctx, batch: slices.Clone(batch), reply: make(chan error, 1)}
	r.calls <- c
	select {
	case err := <-c.reply:
		if err != nil {
			return nil, err
		}
		return echo(batch), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type runFunc func(ctx context.Context, batch []int) ([]int, error)

func (f runFunc) Run(ctx context.Context, batch []int) ([]int, error) { return f(ctx, batch) }

func newTestBatcher(t *testing.T, cfg Config, r Runner[int, int], m *Metrics) (*Batcher[int, int], *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(epoch)
	b, err := New("test", cfg, r, fake, m)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		_ = b.Close(ctx)
	})
	return b, fake
}

type outcome struct {
	out int
	err error
}

// submitAsync enqueues synchronously, so tests control arrival order, then waits for the
// answer on its own goroutine.
func submitAsync(b *Batcher[int, int], ctx context.Context, in int, cost Cost) <-chan outcome {
	return submitAsyncP(b, ctx, admission.Interactive, in, cost)
}

// submitAsyncP is submitAsync in priority class p.
func submitAsyncP(b *Batcher[int, int], ctx context.Context, p admission.Priority, in int, cost Cost) <-chan outcome {
	ch := make(chan outcome, 1)
	r, err := b.enqueue(ctx, p, in, cost, nil)
	if err != nil {
		ch <- outcome{err: err}
		return ch
	}
	go func() {
		out, err := b.await(ctx, r)
		ch <- outcome{out: out, err: err}
	}()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func expectNone[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected %s: %v", what, v)
	default:
	}
}

func wantBatch(t *testing.T, got, want []int) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("batch = %v, want %v", got, want)
	}
}

func wantServed(t *testing.T, o outcome, in int) {
	t.Helper()
	if o.err != nil || o.out != in*10 {
		t.Fatalf("request %d: got (%d, %v), want (%d, nil)", in, o.out, o.err, in*10)
	}
}

// depthOf is what b holds: waiting in every class, and running.
func depthOf(b *Batcher[int, int]) (waiting, running int) {
	l := b.Load()
	return l.Depth() - l.Running, l.Running
}
