package batcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Runner executes batches. The Batcher calls Run from up to Config.Workers goroutines at once.
type Runner[In, Out any] interface {
	// Run executes one batch; it returns one Out per In, in order, or an error for the batch.
	Run(ctx context.Context, batch []In) ([]Out, error)
}

// Batcher queues requests for one endpoint and hands them to a Runner in batches. Create it
// with New, start it with Start, stop it with Close.
type Batcher[In, Out any] struct {
	name    string
	cfg     Config
	lim     limits
	runner  Runner[In, Out]
	clk     clock.Clock
	metrics *queueMetrics

	// waiting and running are the depth the admission layer reads on every request; they are
	// atomics so that reading them never contends with the queue lock.
	waiting atomic.Int64
	running atomic.Int64

	mu      sync.Mutex
	q       queue[In, Out] // guarded by mu
	started bool           // guarded by mu
	closing bool           // guarded by mu: no new requests; drain what is queued
	aborted bool           // guarded by mu: queued requests were failed; stop at once

	wake     chan struct{}        // buffer 1: "the queue or the state changed, look again"
	finished chan *batch[In, Out] // buffer Workers: a worker is free again
	stopped  chan struct{}        // closed when the formation loop has returned

	runCancel context.CancelFunc // cancels every running batch; set by Start under mu
}

// New checks cfg and builds a Batcher named name (the metrics label "queue"). It does nothing
// until Start. m may be nil to disable metrics; two live Batchers may not share a name on the
// same Metrics.
func New[In, Out any](name string, cfg Config, runner Runner[In, Out], clk clock.Clock, m *Metrics) (*Batcher[In, Out], error) {
	if name == "" {
		return nil, errors.New("batcher: name must not be empty")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("batcher %q: %w", name, err)
	}
	if runner == nil {
		return nil, fmt.Errorf("batcher %q: runner must not be nil", name)
	}
	if clk == nil {
		return nil, fmt.Errorf("batcher %q: clock must not be nil", name)
	}
	b := &Batcher[In, Out]{
		name:     name,
		cfg:      cfg,
		lim:      newLimits(cfg),
		runner:   runner,
		clk:      clk,
		wake:     make(chan struct{}, 1),
		finished: make(chan *batch[In, Out], cfg.Workers),
		stopped:  make(chan struct{}),
	}
	qm, err := m.forQueue(name, b)
	if err != nil {
		return nil, err
	}
	b.metrics = qm
	return b, nil
}

// Start launches the batch-formation loop, which dispatches batches to at most Workers
// concurrent Run calls. Requests submitted before Start wait in the queue. When ctx ends, the
// Batcher stops as if Close had given up: queued requests fail with ErrClosed and running
// batches see their context cancelled. Calls after the first do nothing.
func (b *Batcher[In, Out]) Start(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started || b.aborted {
		return
	}
	b.started = true
	runCtx, cancel := context.WithCancel(ctx)
	b.runCancel = cancel
	go b.loop(ctx, runCtx)
}

// Submit queues in and waits for its result. cost tells the batcher how much of a batch in
// takes. It fails at once with ErrQueueFull when QueueSize requests are already waiting, and
// with ErrClosed after Close. If ctx ends while the request waits, it leaves the queue at once,
// is never run, and Submit returns ctx.Err(); if ctx ends while its batch runs, Submit returns
// ctx.Err() and the result is dropped.
func (b *Batcher[In, Out]) Submit(ctx context.Context, in In, cost Cost) (Out, error) {
	r, err := b.enqueue(ctx, in, cost)
	if err != nil {
		var zero Out
		return zero, err
	}
	return b.await(ctx, r)
}

// Depth reports how many requests wait in the queue and how many are in running batches. It
// reads two atomics and takes no lock, so it is cheap enough to call on every request; the two
// numbers are read one after the other, not as one snapshot.
func (b *Batcher[In, Out]) Depth() (waiting, running int) {
	return int(b.waiting.Load()), int(b.running.Load())
}

// Close stops accepting requests and drains: queued requests are dispatched without waiting
// for the batch window, and Close returns nil once every one of them and every running batch
// has been answered. If ctx ends first, Close gives up: requests still queued fail with
// ErrClosed, running batches see their context cancelled, and Close returns ctx.Err() without
// waiting for them. Close on a Batcher that was never started fails its queued requests with
// ErrClosed and returns nil.
func (b *Batcher[In, Out]) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closing = true
	started := b.started
	b.mu.Unlock()
	if !started {
		b.abort()
		b.metrics.detach()
		return nil
	}
	b.poke()
	select {
	case <-b.stopped:
		return nil
	default:
	}
	select {
	case <-b.stopped:
		return nil
	case <-ctx.Done():
		b.abort()
		return ctx.Err()
	}
}

func (b *Batcher[In, Out]) enqueue(ctx context.Context, in In, cost Cost) (*request[In, Out], error) {
	if err := cost.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request[In, Out]{in: in, cost: cost, done: make(chan result[Out], 1)}
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		b.metrics.outcome(outcomeClosed)
		return nil, ErrClosed
	}
	if b.q.len() >= b.cfg.QueueSize {
		b.mu.Unlock()
		b.metrics.outcome(outcomeQueueFull)
		return nil, ErrQueueFull
	}
	r.enqueued = b.clk.Now()
	b.q.push(r)
	b.waiting.Add(1)
	b.mu.Unlock()
	b.poke()
	return r, nil
}

func (b *Batcher[In, Out]) await(ctx context.Context, r *request[In, Out]) (Out, error) {
	select {
	case res := <-r.done:
		return res.out, res.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	switch r.state {
	case stateQueued:
		b.q.remove(r)
		b.waiting.Add(-1)
		r.state = stateDone
		b.mu.Unlock()
		// The oldest request may have changed, and a draining loop may now be done.
		b.poke()
		b.metrics.outcome(outcomeCancelledQueued)
		var zero Out
		return zero, ctx.Err()
	case stateRunning:
		bt := r.batch
		b.mu.Unlock()
		if r.claimed.CompareAndSwap(false, true) {
			bt.leave()
			b.metrics.outcome(outcomeCancelledRunning)
			var zero Out
			return zero, ctx.Err()
		}
		// The worker answered first; its result is in r.done or about to be, and a real
		// answer beats an error.
		res := <-r.done
		return res.out, res.err
	default:
		b.mu.Unlock()
		res := <-r.done
		return res.out, res.err
	}
}

// poke wakes the formation loop without ever blocking: one pending wake-up is enough, since
// the loop re-reads the whole state each time.
func (b *Batcher[In, Out]) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// abort fails every queued request with ErrClosed and cancels running batches.
func (b *Batcher[In, Out]) abort() {
	b.mu.Lock()
	b.closing = true
	b.aborted = true
	for r := b.q.oldest(); r != nil; r = b.q.oldest() {
		b.q.remove(r)
		b.waiting.Add(-1)
		r.state = stateDone
		r.done <- result[Out]{err: ErrClosed}
		b.metrics.outcome(outcomeClosed)
	}
	cancel := b.runCancel
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	b.poke()
}

// loop is the batch-formation loop. It is the only goroutine that forms batches, and it forms
// one only when a worker is free to run it, so that requests nobody can serve yet stay in the
// queue where the admission layer can see them.
func (b *Batcher[In, Out]) loop(ctx, runCtx context.Context) {
	defer close(b.stopped)
	defer b.metrics.detach()
	free := b.cfg.Workers
	var (
		timer   clock.Timer
		timerAt time.Time
		buf     []*request[In, Out]
	)
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
			timer = nil
		}
	}
	defer stopTimer()
	for {
		b.mu.Lock()
		if b.aborted {
			b.mu.Unlock()
			return
		}
		now := b.clk.Now()
		for free > 0 && b.q.len() > 0 {
			d := b.q.draft(b.lim, buf)
			buf = d.members[:0]
			reason, ready := b.ready(d, now)
			if !ready {
				break
			}
			bt := b.take(runCtx, d, reason, now)
			free--
			go b.run(bt)
		}
		var deadline time.Time
		armTimer := free > 0 && b.q.len() > 0 && !b.closing
		if armTimer {
			deadline = b.q.oldest().enqueued.Add(b.cfg.MaxWait)
		}
		drained := b.closing && b.q.len() == 0 && free == b.cfg.Workers
		b.mu.Unlock()
		clear(buf[:cap(buf)]) // do not keep finished requests reachable from the reused buffer

		if drained {
			b.runCancel()
			return
		}
		if !armTimer {
			stopTimer()
		} else if timer == nil || !timerAt.Equal(deadline) {
			stopTimer()
			timer, timerAt = b.clk.NewTimer(deadline.Sub(now)), deadline
		}
		var timerC <-chan time.Time
		if timer != nil {
			timerC = timer.C()
		}
		select {
		case <-b.wake:
		case <-b.finished:
			free++
		case <-timerC:
			timer = nil
		case <-ctx.Done():
			b.abort()
			return
		}
	}
}

// ready decides whether a draft goes now: when it is full, when Close is draining, or when its
// oldest member (the queue's oldest) has waited the whole window. Called with b.mu held.
func (b *Batcher[In, Out]) ready(d draft[In, Out], now time.Time) (dispatchReason, bool) {
	switch {
	case d.full:
		return reasonFull, true
	case b.closing:
		return reasonDrain, true
	case !now.Before(d.members[0].enqueued.Add(b.cfg.MaxWait)):
		return reasonWindow, true
	}
	return 0, false
}

// take removes the draft's members from the queue and makes them a running batch. Called with
// b.mu held.
func (b *Batcher[In, Out]) take(runCtx context.Context, d draft[In, Out], reason dispatchReason, now time.Time) *batch[In, Out] {
	bt := &batch[In, Out]{
		members: slices.Clone(d.members),
		seqs:    d.seqs,
		padded:  d.seqs * d.maxLen,
		reason:  reason,
	}
	bt.ctx, bt.cancel = context.WithCancel(runCtx)
	bt.live.Store(int32(len(bt.members)))
	// running goes up before waiting goes down, so a concurrent Depth may count a request
	// twice for an instant but never misses it.
	b.running.Add(int64(len(bt.members)))
	for _, r := range bt.members {
		b.q.remove(r)
		r.state = stateRunning
		r.batch = bt
		bt.real += r.cost.Sequences * r.cost.MaxLen
		b.metrics.waited(now.Sub(r.enqueued))
	}
	b.waiting.Add(-int64(len(bt.members)))
	b.metrics.dispatched(bt.seqs, len(bt.members), bt.padded, bt.real, reason)
	return bt
}

// run executes one batch on its own goroutine and answers every member.
func (b *Batcher[In, Out]) run(bt *batch[In, Out]) {
	ins := make([]In, len(bt.members))
	for i, r := range bt.members {
		ins[i] = r.in
	}
	start := b.clk.Now()
	outs, err := b.call(bt.ctx, ins)
	b.metrics.ran(b.clk.Now().Sub(start))
	bt.cancel()
	// Depth drops before the answers go out, so a caller that has its answer never sees
	// itself still counted as running.
	b.running.Add(-int64(len(bt.members)))
	outcome := outcomeServed
	if err != nil {
		outcome = outcomeFailed
	}
	for i, r := range bt.members {
		// Whoever claims the request first counts its outcome, so each is counted once and
		// every count is in before Close returns.
		if r.claimed.CompareAndSwap(false, true) {
			b.metrics.outcome(outcome)
		}
		if err != nil {
			r.done <- result[Out]{err: err}
		} else {
			r.done <- result[Out]{out: outs[i]}
		}
	}
	b.finished <- bt
}

// call runs the runner, turning a panic or a wrong result count into an error for the batch.
// Neither message carries the panic value or any input: both may hold request content.
func (b *Batcher[In, Out]) call(ctx context.Context, ins []In) (outs []Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			outs = nil
			err = fmt.Errorf("%w (batcher %q, batch of %d requests)", ErrRunnerPanic, b.name, len(ins))
		}
	}()
	outs, err = b.runner.Run(ctx, ins)
	if err == nil && len(outs) != len(ins) {
		return nil, fmt.Errorf("batcher %q: runner returned %d results for %d requests", b.name, len(outs), len(ins))
	}
	return outs, err
}
