package coalesce

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Callers with one key while its call runs share it: one run, every caller the same answer.
func TestIdenticalCallsShareOneRun(t *testing.T) {
	var g Group[int]
	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	fn := func(ctx context.Context) (int, error) {
		if runs.Add(1) == 1 {
			close(started)
		}
		<-release
		return 42, nil
	}
	var wg sync.WaitGroup
	results := make(chan int, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		v, _, _ := g.Do(t.Context(), "k", fn)
		results <- v
	}()
	<-started
	for range 7 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, _ := g.Do(t.Context(), "k", fn)
			results <- v
		}()
	}
	for g.Waiters() != 8 { // every caller is in before the call ends
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	close(results)
	for v := range results {
		if v != 42 {
			t.Fatalf("a caller got %d", v)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d runs for one key", n)
	}
	if v, shared, err := g.Do(t.Context(), "k", func(context.Context) (int, error) { return 7, nil }); v != 7 || shared || err != nil {
		t.Fatalf("a call after the first ended: %d %v %v", v, shared, err)
	}
}

// A caller that leaves does not cancel the others' call; when the last one leaves, the call's
// context ends.
func TestLeavingCallersLeaveAlone(t *testing.T) {
	var g Group[string]
	started, stopped := make(chan struct{}), make(chan struct{})
	release := make(chan struct{})
	fn := func(ctx context.Context) (string, error) {
		close(started)
		select {
		case <-release:
			return "answer", nil
		case <-ctx.Done():
			close(stopped)
			return "", ctx.Err()
		}
	}
	first, cancelFirst := context.WithCancel(t.Context())
	firstDone := make(chan error, 1)
	go func() { _, _, err := g.Do(first, "k", fn); firstDone <- err }()
	<-started
	second := make(chan string, 1)
	go func() {
		v, _, _ := g.Do(t.Context(), "k", fn)
		second <- v
	}()
	for waiting := 0; waiting != 2; {
		g.mu.Lock()
		waiting = g.calls["k"].waiters
		g.mu.Unlock()
	}
	cancelFirst()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller who left: %v", err)
	}
	close(release)
	if v := <-second; v != "answer" {
		t.Fatalf("the caller who stayed got %q", v)
	}
	// Alone, and leaving: the work stops.
	started, release = make(chan struct{}), make(chan struct{})
	alone, cancelAlone := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _, _, _ = g.Do(alone, "k2", fn); close(done) }()
	<-started
	cancelAlone()
	<-done
	<-stopped
}

// The call runs under the deadline of the caller that started it, so that work which cannot
// finish in time can tell, as it could alone.
func TestTheCallKeepsItsCallersDeadline(t *testing.T) {
	var g Group[time.Time]
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	got, _, err := g.Do(ctx, "k", func(ctx context.Context) (time.Time, error) {
		d, _ := ctx.Deadline()
		return d, nil
	})
	if err != nil || !got.Equal(deadline) {
		t.Fatalf("the call's deadline: %v, %v; want %v", got, err, deadline)
	}
}

// A caller that joined a call which ran out of its first caller's time, while this caller's
// own goes on (none here), runs its own rather than take the other's deadline; one with an
// earlier deadline than the call's does not.
func TestAJoinerOutlivesTheFirstCallersDeadline(t *testing.T) {
	var g Group[string]
	release := make(chan struct{})
	fn := func(ctx context.Context) (string, error) {
		if _, ok := ctx.Deadline(); ok {
			<-release
			return "", context.DeadlineExceeded // its caller's time ran out
		}
		return "answer", nil
	}
	first, cancel := context.WithDeadline(t.Context(), time.Now().Add(time.Hour))
	defer cancel()
	firstErr := make(chan error, 1)
	go func() { _, _, err := g.Do(first, "k", fn); firstErr <- err }()
	joined := make(chan string, 1)
	go func() {
		for g.Waiters() != 1 {
			runtime.Gosched()
		}
		v, _, _ := g.Do(t.Context(), "k", fn)
		joined <- v
	}()
	for g.Waiters() != 2 {
		runtime.Gosched()
	}
	close(release)
	if err := <-firstErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the first caller: %v", err)
	}
	if v := <-joined; v != "answer" {
		t.Fatalf("the caller who joined got %q", v)
	}
}

// TestACallThatPanicsPanicsInEachCaller: a panic in the shared call, which runs on a goroutine
// of its own, reaches every caller as a panic on its own goroutine (where a handler recovers
// it), not the process's end; the key is free after it.
func TestACallThatPanicsPanicsInEachCaller(t *testing.T) {
	var g Group[int]
	release := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	fn := func(context.Context) (int, error) {
		once.Do(func() { close(started) })
		<-release
		panic("the model's decoding")
	}
	caught := make(chan any, 2)
	call := func() {
		defer func() { caught <- recover() }()
		_, _, _ = g.Do(t.Context(), "k", fn)
	}
	go call()
	<-started
	go call()
	for g.Waiters() != 2 {
		runtime.Gosched()
	}
	close(release)
	for range 2 {
		if r := <-caught; r != "the model's decoding" {
			t.Fatalf("a caller recovered %v", r)
		}
	}
	if v, shared, err := g.Do(t.Context(), "k", func(context.Context) (int, error) { return 7, nil }); v != 7 || shared || err != nil {
		t.Fatalf("a call after the panic: %d %v %v", v, shared, err)
	}
}

// TestAPanicNoCallerHearsIsTold: a call that panics after every caller left has no caller to
// panic in; Unheard is told, where the panic was dropped.
func TestAPanicNoCallerHearsIsTold(t *testing.T) {
	told := make(chan any, 1)
	g := Group[int]{Unheard: func(p any) { told <- p }}
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go func() {
		<-started
		cancel()
	}()
	_, _, err := g.Do(ctx, "k", func(context.Context) (int, error) {
		close(started)
		<-release
		panic("a bug")
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that left: %v", err)
	}
	close(release)
	if p := <-told; p != "a bug" {
		t.Fatalf("told %v", p)
	}
}
