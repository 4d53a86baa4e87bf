package batcher

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

func TestConfigValidate(t *testing.T) {
	if err := baseConfig().Validate(); err != nil {
		t.Fatalf("base config: %v", err)
	}
	err := Config{MaxWait: -time.Second}.Validate()
	if err == nil {
		t.Fatal("zero config should not validate")
	}
	for _, field := range []string{"MaxBatchSize", "MaxWait", "MaxPaddedTokens", "QueueSize", "Workers"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	huge := baseConfig()
	huge.MaxBatchSize = maxBatchSizeLimit + 1
	if err := huge.Validate(); err == nil || !strings.Contains(err.Error(), "MaxBatchSize") {
		t.Fatalf("MaxBatchSize over the limit: err = %v", err)
	}
	zeroWait := baseConfig()
	zeroWait.MaxWait = 0
	if err := zeroWait.Validate(); err != nil {
		t.Fatalf("MaxWait 0 (no batch window) should be valid: %v", err)
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	r := newEchoRunner()
	fake := clock.NewFake(epoch)
	if _, err := New[int, int]("", baseConfig(), r, fake, nil); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := New[int, int]("x", Config{}, r, fake, nil); err == nil {
		t.Error("invalid config accepted")
	}
	if _, err := New[int, int]("x", baseConfig(), nil, fake, nil); err == nil {
		t.Error("nil runner accepted")
	}
	if _, err := New[int, int]("x", baseConfig(), r, nil, nil); err == nil {
		t.Error("nil clock accepted")
	}
}

func TestSubmitRejectsInvalidCostAndDoneContext(t *testing.T) {
	b, _ := newTestBatcher(t, baseConfig(), newEchoRunner(), nil)
	b.Start(t.Context())
	for _, c := range []Cost{{0, 5}, {1, 0}, {-1, -1}, {1, maxCostDim + 1}, {maxCostDim + 1, 1}} {
		if _, err := b.Submit(t.Context(), admission.Interactive, 1, c); !errors.Is(err, ErrInvalidCost) {
			t.Errorf("cost %+v: err = %v, want ErrInvalidCost", c, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.Submit(ctx, admission.Interactive, 1, one(8)); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: err = %v, want context.Canceled", err)
	}
	if w, r := depthOf(b); w != 0 || r != 0 {
		t.Fatalf("depth = (%d, %d) after refused submits, want (0, 0)", w, r)
	}
}

func TestDispatchesFullBatchWithoutWaiting(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxWait = time.Hour
	b, fake := newTestBatcher(t, cfg, r, nil)
	var res []<-chan outcome
	for i := 1; i <= 3; i++ {
		res = append(res, submitAsync(b, t.Context(), i, one(8)))
	}
	armed := fake.TimerCreated()
	b.Start(t.Context())
	recv(t, armed, "batch window timer") // the loop has seen three requests and chose to wait for a fourth
	expectNone(t, r.batches, "batch of 3 before the batch is full")
	res = append(res, submitAsync(b, t.Context(), 4, one(8)))
	wantBatch(t, recv(t, r.batches, "full batch"), []int{1, 2, 3, 4})
	for i, ch := range res {
		wantServed(t, recv(t, ch, "result"), i+1)
	}
}

func TestDispatchesOnWindowExpiryAndNotBefore(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig() // MaxWait 10ms, MaxBatchSize 4
	b, fake := newTestBatcher(t, cfg, r, nil)
	a := submitAsync(b, t.Context(), 1, one(8))
	fake.Advance(4 * time.Millisecond) // the window counts from the oldest request's arrival
	c := submitAsync(b, t.Context(), 2, one(8))
	armed := fake.TimerCreated()
	b.Start(t.Context())
	recv(t, armed, "batch window timer")
	fake.Advance(6*time.Millisecond - time.Nanosecond)
	expectNone(t, r.batches, "batch before the window ended")
	if w, _ := depthOf(b); w != 2 {
		t.Fatalf("waiting = %d before the window ended, want 2", w)
	}
	fake.Advance(time.Nanosecond)
	wantBatch(t, recv(t, r.batches, "batch at window end"), []int{1, 2})
	wantServed(t, recv(t, a, "result 1"), 1)
	wantServed(t, recv(t, c, "result 2"), 2)
}

func TestPaddedTokenBudgetClosesBatch(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 100
	cfg.MaxPaddedTokens = 64
	b, fake := newTestBatcher(t, cfg, r, nil)
	for i := 1; i <= 5; i++ {
		submitAsync(b, t.Context(), i, one(16))
	}
	armed := fake.TimerCreated()
	b.Start(t.Context())
	// 4 x 16 = 64 fills the budget: dispatched at once, no window needed.
	wantBatch(t, recv(t, r.batches, "budget-full batch"), []int{1, 2, 3, 4})
	recv(t, armed, "batch window timer") // request 5 alone is not full and waits for its window
	expectNone(t, r.batches, "second batch before the window")
	fake.Advance(cfg.MaxWait)
	wantBatch(t, recv(t, r.batches, "window batch"), []int{5})
}

func TestGroupsByLength(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxPaddedTokens = 4 * 512
	b, fake := newTestBatcher(t, cfg, r, nil)
	// Short (1xx) and long (2xx) texts arrive interleaved.
	for _, c := range []struct{ id, maxLen int }{
		{101, 8}, {201, 500}, {102, 8}, {202, 500}, {103, 6}, {203, 490}, {104, 7}, {204, 510},
	} {
		submitAsync(b, t.Context(), c.id, one(c.maxLen))
	}
	b.Start(t.Context())
	wantBatch(t, recv(t, r.batches, "short batch"), []int{101, 102, 103, 104})
	wantBatch(t, recv(t, r.batches, "long batch"), []int{201, 202, 203, 204})
	// Partial batches at the window's end still do not mix lengths, although the budget
	// would allow it.
	armed := fake.TimerCreated()
	submitAsync(b, t.Context(), 105, one(8))
	submitAsync(b, t.Context(), 205, one(500))
	recv(t, armed, "batch window timer")
	fake.Advance(cfg.MaxWait)
	wantBatch(t, recv(t, r.batches, "short partial batch"), []int{105})
	wantBatch(t, recv(t, r.batches, "long partial batch"), []int{205})
}

func TestOldestIsNeverOvertaken(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxPaddedTokens = 4 * 512
	b, fake := newTestBatcher(t, cfg, r, nil)
	submitAsync(b, t.Context(), 1, one(500))
	for i := 2; i <= 9; i++ { // enough short ones for two full batches
		submitAsync(b, t.Context(), i, one(8))
	}
	armed := fake.TimerCreated()
	b.Start(t.Context())
	recv(t, armed, "batch window timer")
	expectNone(t, r.batches, "batch that skips the oldest request")
	fake.Advance(cfg.MaxWait)
	wantBatch(t, recv(t, r.batches, "oldest's batch"), []int{1})
	wantBatch(t, recv(t, r.batches, "short batch"), []int{2, 3, 4, 5})
	wantBatch(t, recv(t, r.batches, "short batch"), []int{6, 7, 8, 9})
}

func TestOversizeRequestRunsAlone(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxPaddedTokens = 100
	b, fake := newTestBatcher(t, cfg, r, nil)
	big := submitAsync(b, t.Context(), 1, Cost{Sequences: 3, MaxLen: 200})
	submitAsync(b, t.Context(), 2, one(10))
	armed := fake.TimerCreated()
	b.Start(t.Context())
	wantBatch(t, recv(t, r.batches, "oversize batch"), []int{1})
	wantServed(t, recv(t, big, "oversize result"), 1)
	recv(t, armed, "batch window timer")
	fake.Advance(cfg.MaxWait)
	wantBatch(t, recv(t, r.batches, "small batch"), []int{2})
}

func TestQueueFullFailsAtOnce(t *testing.T) {
	cfg := baseConfig()
	cfg.QueueSize = 2
	b, _ := newTestBatcher(t, cfg, newEchoRunner(), nil)
	a := submitAsync(b, t.Context(), 1, one(8))
	c := submitAsync(b, t.Context(), 2, one(8))
	// Not started: nothing leaves the queue, so a third request must be refused synchronously.
	if _, err := b.Submit(t.Context(), admission.Interactive, 3, one(8)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("err = %v, want ErrQueueFull", err)
	}
	if w, r := depthOf(b); w != 2 || r != 0 {
		t.Fatalf("depth = (%d, %d), want (2, 0)", w, r)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, ch := range []<-chan outcome{a, c} {
		if o := recv(t, ch, "closed result"); !errors.Is(o.err, ErrClosed) {
			t.Fatalf("queued request after Close of an unstarted batcher: err = %v, want ErrClosed", o.err)
		}
	}
}

func TestCancelWhileQueuedRemovesAndFreesSlot(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.QueueSize = 1
	cfg.MaxBatchSize = 2
	cfg.MaxWait = time.Hour
	b, _ := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	gone := submitAsync(b, ctx, 1, one(8))
	if _, err := b.Submit(t.Context(), admission.Interactive, 2, one(8)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("second request: err = %v, want ErrQueueFull", err)
	}
	cancel()
	if o := recv(t, gone, "cancelled result"); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled request: err = %v, want context.Canceled", o.err)
	}
	// Submit returned only after the unlink, so the slot is free right now.
	if w, _ := depthOf(b); w != 0 {
		t.Fatalf("waiting = %d after cancel, want 0", w)
	}
	c := submitAsync(b, t.Context(), 3, one(8))
	if o := <-submitAsync(b, t.Context(), 4, one(8)); !errors.Is(o.err, ErrQueueFull) {
		t.Fatalf("queue of 1 should be full again, got %v", o.err)
	}
	batches := closeAndCollect(t, b, r)
	if len(batches) != 1 {
		t.Fatalf("runner saw batches %v, want only [3]", batches)
	}
	wantBatch(t, batches[0], []int{3})
	wantServed(t, recv(t, c, "result 3"), 3)
}

// closeAndCollect drains b with Close and returns every batch the runner saw; the cancelled
// request 1 must not be among them.
func closeAndCollect(t *testing.T, b *Batcher[int, int], r *echoRunner) [][]int {
	t.Helper()
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var all [][]int
	for {
		select {
		case batch := <-r.batches:
			for _, id := range batch {
				if id == 1 {
					t.Fatalf("cancelled request 1 was computed in batch %v", batch)
				}
			}
			all = append(all, batch)
		default:
			return all
		}
	}
}

func TestCancelWhileRunningDropsResult(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 2
	m := NewMetrics(nil)
	b, _ := newTestBatcher(t, cfg, r, m)
	b.Start(t.Context())

	// Two callers share a batch; one leaves. The batch must keep running for the other.
	ctx, cancel := context.WithCancel(t.Context())
	leaving := submitAsync(b, ctx, 1, one(8))
	staying := submitAsync(b, t.Context(), 2, one(8))
	call := recv(t, r.calls, "run call")
	wantBatch(t, call.batch, []int{1, 2})
	cancel()
	if o := recv(t, leaving, "leaving result"); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("leaving caller: err = %v, want context.Canceled", o.err)
	}
	if call.ctx.Err() != nil {
		t.Fatal("batch context cancelled although one caller still waits")
	}
	call.reply <- nil
	wantServed(t, recv(t, staying, "staying result"), 2)

	// When every caller of a running batch leaves, the runner's context ends.
	ctx, cancel = context.WithCancel(t.Context())
	alone := submitAsync(b, ctx, 3, Cost{Sequences: 2, MaxLen: 8})
	call = recv(t, r.calls, "run call")
	cancel()
	if o := recv(t, alone, "cancelled result"); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled running caller: err = %v, want context.Canceled", o.err)
	}
	recv(t, call.ctx.Done(), "batch context cancellation")
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if w, running := depthOf(b); w != 0 || running != 0 {
		t.Fatalf("depth = (%d, %d) after drain, want (0, 0)", w, running)
	}
	if got := counterValue(t, m.requests.WithLabelValues("test", outcomeCancelledRunning)); got != 2 {
		t.Fatalf("cancelled_running = %v, want 2", got)
	}
}

func TestRunErrorGoesToEveryRequest(t *testing.T) {
	errBoom := errors.New("engine failed")
	r := runFunc(func(context.Context, []int) ([]int, error) { return nil, errBoom })
	cfg := baseConfig()
	cfg.MaxBatchSize = 3
	b, _ := newTestBatcher(t, cfg, r, nil)
	var res []<-chan outcome
	for i := 1; i <= 3; i++ {
		res = append(res, submitAsync(b, t.Context(), i, one(8)))
	}
	b.Start(t.Context())
	for i, ch := range res {
		if o := recv(t, ch, "result"); !errors.Is(o.err, errBoom) {
			t.Fatalf("request %d: err = %v, want the batch error", i+1, o.err)
		}
	}
}

func TestRunnerPanicBecomesBatchError(t *testing.T) {
	const canary = "CANARY-patient-Jane-Roe-MRN-0042"
	var calls atomic.Int32
	r := runFunc(func(_ context.Context, batch []int) ([]int, error) {
		if calls.Add(1) == 1 {
			panic(fmt.Sprintf("tokenizer choked on %q", canary))
		}
		return echo(batch), nil
	})
	cfg := baseConfig()
	cfg.MaxBatchSize = 2
	b, _ := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	a := submitAsync(b, t.Context(), 1, one(8))
	c := submitAsync(b, t.Context(), 2, one(8))
	for _, ch := range []<-chan outcome{a, c} {
		o := recv(t, ch, "result")
		if !errors.Is(o.err, ErrRunnerPanic) {
			t.Fatalf("err = %v, want ErrRunnerPanic", o.err)
		}
		if strings.Contains(o.err.Error(), canary) || strings.Contains(o.err.Error(), "Jane") {
			t.Fatalf("panic error leaks the panic value: %q", o.err)
		}
	}
	// The batcher survives and serves the next batch.
	d := submitAsync(b, t.Context(), 3, one(8))
	submitAsync(b, t.Context(), 4, one(8))
	wantServed(t, recv(t, d, "result after panic"), 3)
}

func TestWrongResultCountIsAnError(t *testing.T) {
	r := runFunc(func(context.Context, []int) ([]int, error) { return []int{7}, nil })
	cfg := baseConfig()
	cfg.MaxBatchSize = 2
	b, _ := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	a := submitAsync(b, t.Context(), 1, one(8))
	c := submitAsync(b, t.Context(), 2, one(8))
	for _, ch := range []<-chan outcome{a, c} {
		if o := recv(t, ch, "result"); o.err == nil || !strings.Contains(o.err.Error(), "1 results for 2 requests") {
			t.Fatalf("err = %v, want a result-count error", o.err)
		}
	}
}

func TestCloseDrainsWithoutWaitingForTheWindow(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 2
	cfg.MaxWait = time.Hour // the fake clock never moves: only draining can dispatch the last one
	m := NewMetrics(nil)
	b, _ := newTestBatcher(t, cfg, r, m)
	var res []<-chan outcome
	for i := 1; i <= 5; i++ {
		res = append(res, submitAsync(b, t.Context(), i, one(8)))
	}
	b.Start(t.Context())
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, ch := range res {
		wantServed(t, recv(t, ch, "drained result"), i+1)
	}
	wantBatch(t, <-r.batches, []int{1, 2})
	wantBatch(t, <-r.batches, []int{3, 4})
	wantBatch(t, <-r.batches, []int{5})
	if got := counterValue(t, m.batches.WithLabelValues("test", "drain")); got != 1 {
		t.Fatalf("drain batches = %v, want 1", got)
	}
	if _, err := b.Submit(t.Context(), admission.Interactive, 6, one(8)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: err = %v, want ErrClosed", err)
	}
	if w, running := depthOf(b); w != 0 || running != 0 {
		t.Fatalf("depth = (%d, %d) after drain, want (0, 0)", w, running)
	}
}

// TestSeriesKeepsADrainOpenForItsParts: work accepted before Close that goes in over several
// parts is drained whole: the series' later parts are served during the drain while new work is
// refused, and Close returns once the series is done.
func TestSeriesKeepsADrainOpenForItsParts(t *testing.T) {
	cfg := baseConfig()
	cfg.MaxWait = time.Hour // the fake clock never moves: only draining dispatches
	b, _ := newTestBatcher(t, cfg, newEchoRunner(), nil)
	b.Start(t.Context())
	series, err := b.Series()
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close(t.Context()) }()
	for { // until Close has begun: a new series is refused
		s, err := b.Series()
		if errors.Is(err, ErrClosed) {
			break
		}
		s.Done()
		runtime.Gosched()
	}
	if _, err := b.Submit(t.Context(), admission.Interactive, 1, one(8)); !errors.Is(err, ErrClosed) {
		t.Fatalf("new work while draining: err = %v, want ErrClosed", err)
	}
	for part := 2; part <= 3; part++ {
		if out, err := series.Submit(t.Context(), admission.Interactive, part, one(8)); err != nil || out != part*10 {
			t.Fatalf("part %d while draining: %d, %v", part, out, err)
		}
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a series was open", err)
	default:
	}
	series.Done()
	if err := recv(t, closed, "Close after the series was done"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := series.Submit(t.Context(), admission.Interactive, 4, one(8)); !errors.Is(err, ErrClosed) {
		t.Fatalf("part after Done: err = %v, want ErrClosed", err)
	}
}

// TestSeriesPartsSkipTheWindowAndDoNotExpire: a series' parts dispatch without waiting for the
// batch window, and its later parts neither count against QueueSize nor expire, while a plain
// request beside them does expire.
func TestSeriesPartsSkipTheWindowAndDoNotExpire(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize, cfg.MaxWait, cfg.MaxQueueWait, cfg.QueueSize = 1, time.Hour, time.Second, 2
	b, fake := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	series, err := b.Series()
	if err != nil {
		t.Fatal(err)
	}
	defer series.Done()
	first := make(chan outcome, 1)
	go func() {
		out, err := series.Submit(t.Context(), admission.Interactive, 1, one(8))
		first <- outcome{out, err}
	}()
	held := recv(t, r.calls, "the first part dispatched with the window an hour long") // the clock has not moved
	plain := submitAsync(b, t.Context(), 2, one(8))
	later := make(chan outcome, 1)
	for b.Load().Waiting[admission.Interactive] != 1 {
		runtime.Gosched() // the plain request is queued behind the running part
	}
	go func() {
		out, err := series.Submit(t.Context(), admission.Interactive, 3, one(8))
		later <- outcome{out, err}
	}()
	for b.Load().Waiting[admission.Interactive] != 2 {
		runtime.Gosched()
	}
	// The class is at QueueSize, but a later part still gets in, and outlives MaxQueueWait.
	if _, err := b.Submit(t.Context(), admission.Interactive, 4, one(8)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("plain request at QueueSize: %v, want ErrQueueFull", err)
	}
	fake.Advance(2 * time.Second)
	if o := recv(t, plain, "the plain request"); !errors.Is(o.err, ErrExpired) {
		t.Fatalf("plain request after MaxQueueWait: %v, want ErrExpired", o.err)
	}
	held.reply <- nil
	if o := recv(t, first, "first part"); o.err != nil || o.out != 10 {
		t.Fatalf("first part: %+v", o)
	}
	recv(t, r.calls, "the later part dispatched").reply <- nil
	if o := recv(t, later, "later part"); o.err != nil || o.out != 30 {
		t.Fatalf("later part after MaxQueueWait: %+v, want served", o)
	}
}

// TestSeriesPartsFromManyGoroutines: parts submitted at once from several goroutines are
// counted as one series: only the first counts against QueueSize, so none is refused.
func TestSeriesPartsFromManyGoroutines(t *testing.T) {
	const parts = 8
	cfg := baseConfig()
	cfg.MaxBatchSize, cfg.QueueSize = 1, 1
	b, _ := newTestBatcher(t, cfg, newEchoRunner(), nil)
	series, err := b.Series()
	if err != nil {
		t.Fatal(err)
	}
	defer series.Done()
	results := make(chan outcome, parts)
	for part := range parts {
		go func() {
			out, err := series.Submit(t.Context(), admission.Interactive, part, one(8))
			results <- outcome{out, err}
		}()
	}
	for b.Load().Waiting[admission.Interactive] != parts {
		runtime.Gosched() // not started: every part stays queued
	}
	b.Start(t.Context())
	for range parts {
		if o := recv(t, results, "a part"); o.err != nil {
			t.Fatalf("part: %v", o.err)
		}
	}
}

func TestCloseGivesUpWhenContextEnds(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 1
	b, _ := newTestBatcher(t, cfg, r, nil)
	running := submitAsync(b, t.Context(), 1, one(8))
	queued := submitAsync(b, t.Context(), 2, one(8))
	b.Start(t.Context())
	call := recv(t, r.calls, "run call")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: err = %v, want context.Canceled", err)
	}
	if o := recv(t, queued, "queued result"); !errors.Is(o.err, ErrClosed) {
		t.Fatalf("queued request: err = %v, want ErrClosed", o.err)
	}
	recv(t, call.ctx.Done(), "running batch cancellation")
	if o := recv(t, running, "running result"); !errors.Is(o.err, ErrClosed) {
		t.Fatalf("running request: err = %v, want ErrClosed (the run was stopped by Close)", o.err)
	}
}

func TestStartContextEndStopsTheBatcher(t *testing.T) {
	cfg := baseConfig()
	cfg.MaxWait = time.Hour
	b, _ := newTestBatcher(t, cfg, newEchoRunner(), nil)
	ctx, cancel := context.WithCancel(t.Context())
	b.Start(ctx)
	queued := submitAsync(b, t.Context(), 1, one(8))
	cancel()
	if o := recv(t, queued, "queued result"); !errors.Is(o.err, ErrClosed) {
		t.Fatalf("queued request: err = %v, want ErrClosed", o.err)
	}
	if _, err := b.Submit(t.Context(), admission.Interactive, 2, one(8)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after stop: err = %v, want ErrClosed", err)
	}
	b.Start(t.Context()) // a second Start must not revive a stopped batcher
	if _, err := b.Submit(t.Context(), admission.Interactive, 3, one(8)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after a second Start: err = %v, want ErrClosed", err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close after stop: %v", err)
	}
}

func TestWorkersBoundConcurrentBatches(t *testing.T) {
	var inFlight, peak atomic.Int32
	r := newHeldRunner()
	counted := runFunc(func(ctx context.Context, batch []int) ([]int, error) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		defer inFlight.Add(-1)
		return r.Run(ctx, batch)
	})
	cfg := baseConfig()
	cfg.MaxBatchSize = 1 // every request is a full batch and wants a worker at once
	cfg.Workers = 2
	b, _ := newTestBatcher(t, cfg, counted, nil)
	var res []<-chan outcome
	for i := 1; i <= 6; i++ {
		res = append(res, submitAsync(b, t.Context(), i, one(8)))
	}
	b.Start(t.Context())
	first := recv(t, r.calls, "first call")
	second := recv(t, r.calls, "second call")
	// Both workers busy: the loop must not have formed more batches; the rest still wait.
	if w, running := depthOf(b); w != 4 || running != 2 {
		t.Fatalf("depth = (%d, %d) with both workers busy, want (4, 2)", w, running)
	}
	expectNone(t, r.calls, "third concurrent call")
	first.reply <- nil
	second.reply <- nil
	for range 4 {
		recv(t, r.calls, "next call").reply <- nil
	}
	for i, ch := range res {
		wantServed(t, recv(t, ch, "result"), i+1)
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrent Run calls = %d, want 2", p)
	}
}

func TestResultsReachTheRightCaller(t *testing.T) {
	// Real clock with no batch window: no timing is asserted, only who gets what.
	r := runFunc(func(_ context.Context, batch []int) ([]int, error) {
		out := make([]int, len(batch))
		for i := len(batch) - 1; i >= 0; i-- { // work in any order, answer in order
			out[i] = batch[i] * 10
		}
		return out, nil
	})
	cfg := Config{MaxBatchSize: 8, MaxWait: 0, MaxPaddedTokens: 8 * 64, QueueSize: 1000, Workers: 3}
	b, err := New[int, int]("right-caller", cfg, r, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Start(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 500)
	for i := range 500 {
		wg.Go(func() {
			out, err := b.Submit(t.Context(), admission.Interactive, i, Cost{Sequences: 1 + i%3, MaxLen: 1 + i%64})
			if err != nil || out != i*10 {
				errs <- fmt.Errorf("request %d got (%d, %v)", i, out, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
