package batcher

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// The Batcher is an admission.Queue: these tests run a real Gate over a real Batcher.

// TestGateOverRealBatcher runs the Gate against a real batcher on a fake clock: watermark
// shedding, a max-wait expiry mapped to a refusal, and recovery once the depth drains.
func TestGateOverRealBatcher(t *testing.T) {
	fake := clock.NewFake(epoch)
	calls := make(chan chan struct{}, 100)
	runner := runFunc(func(_ context.Context, batch []int) ([]int, error) {
		release := make(chan struct{})
		calls <- release
		<-release
		return batch, nil
	})
	b, err := New[int, int]("analyze", Config{MaxBatchSize: 1, MaxPaddedTokens: 64,
		QueueSize: 8, Workers: 1, MaxQueueWait: time.Second}, runner, fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Start(t.Context())
	defer func() { _ = b.Close(t.Context()) }()
	g, err := admission.NewGate("analyze", admission.Config{HighWatermark: 3, LowWatermark: 1}, b, fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 10)
	submit := func(i int) {
		if _, ok := g.Admit(admission.Interactive); !ok {
			t.Fatalf("request %d refused at depth %d", i, b.Load().Depth())
		}
		go func() {
			_, err := b.Submit(t.Context(), admission.Interactive, i, Cost{Sequences: 1, MaxLen: 8})
			results <- err
		}()
	}
	submit(1)
	first := <-calls // 1 runs and holds the worker
	armed := fake.TimerCreated()
	submit(2)
	<-armed // 2 waits, its expiry timer is armed
	submit(3)
	waitFor(t, func() bool { return b.Load().Depth() == 3 })
	r, ok := g.Admit(admission.Interactive)
	if ok || r.Reason != admission.ReasonHighWatermark || r.Depth != 3 || r.Queue != "analyze" {
		t.Fatalf("at the high watermark: ok=%v %+v", ok, r)
	}
	fake.Advance(time.Second) // 2 and 3 expire
	for range 2 {
		err := <-results
		r, ok := g.Refuse(admission.Interactive, err)
		if !ok || r.Reason != admission.ReasonMaxWait || r.MaxWait != time.Second {
			t.Fatalf("expired request: err %v, refusal ok=%v %+v", err, ok, r)
		}
	}
	if _, ok := g.Admit(admission.Interactive); !ok { // depth 1 = low watermark: shedding stops
		t.Fatal("still shedding at the low watermark")
	}
	close(first)
	if err := <-results; err != nil {
		t.Fatalf("request 1: %v", err)
	}
}

// waitFor polls a condition that another goroutine makes true; it is not a clock wait.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		runtime.Gosched()
	}
}

// TestCancelledRequestLeavesDepthAtOnce: a queued request whose client has gone (its context
// cancelled, as the disconnect watcher does) leaves the batcher's queue before Submit returns,
// so the Gate sees the lower depth on the very next Admit and the request is never computed.
func TestCancelledRequestLeavesDepthAtOnce(t *testing.T) {
	fake := clock.NewFake(epoch)
	release := make(chan struct{})
	ran := make(chan []int, 10)
	runner := runFunc(func(_ context.Context, batch []int) ([]int, error) {
		ran <- append([]int(nil), batch...)
		<-release
		return batch, nil
	})
	b, err := New[int, int]("pii_extract", Config{MaxBatchSize: 1, MaxPaddedTokens: 64,
		QueueSize: 1, Workers: 1}, runner, fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Start(t.Context())
	defer func() { _ = b.Close(t.Context()) }()
	g, err := admission.NewGate("pii_extract", admission.Config{HighWatermark: 10, LowWatermark: 1}, b, fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := b.Submit(t.Context(), admission.Interactive, 1, Cost{Sequences: 1, MaxLen: 8})
		first <- err
	}()
	if got := <-ran; len(got) != 1 || got[0] != 1 {
		t.Fatalf("first batch %v", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	gone := make(chan error, 1)
	go func() {
		_, err := b.Submit(ctx, admission.Bulk, 2, Cost{Sequences: 1, MaxLen: 8})
		gone <- err
	}()
	waitFor(t, func() bool { return b.Load().Waiting[admission.Bulk] == 1 })
	if r, ok := g.Admit(admission.Bulk); ok || r.Reason != admission.ReasonSaturated {
		t.Fatalf("bulk class of one is full: ok=%v %+v", ok, r)
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	if l := b.Load(); l.Waiting[admission.Bulk] != 0 || l.Depth() != 1 {
		t.Fatalf("load after cancel = %+v, want the slot free", l)
	}
	if _, ok := g.Admit(admission.Bulk); !ok {
		t.Fatal("bulk still refused after the only waiting request left")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		t.Fatalf("cancelled request was computed: batch %v", got)
	default:
	}
}
