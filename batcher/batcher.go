package batcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-serving/sluice/admission"
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
	weights [admission.NumPriorities]int

	// The counters below are what Load reports to the admission layer on every request;
	// they are atomics so that reading them never contends with the queue lock.
	waitingBy [admission.NumPriorities]atomic.Int64 // per class
	running   atomic.Int64                          // requests in running batches
	// Sequences (windows) waiting and running, and completed since New: the work the
	// admission layer measures, so that a request of many windows weighs what it costs.
	seqWaiting, seqRunning atomic.Int64
	seqDone                atomic.Uint64
	busy                   atomic.Int64  // workers running a batch
	completed              atomic.Uint64 // requests whose batch finished running

	// mu guards the fields below; the methods whose names end in Locked run with it held.
	mu      sync.Mutex
	qs      [admission.NumPriorities]queue[In, Out] // guarded by mu; one queue per priority class
	started bool                                    // guarded by mu
	closing bool                                    // guarded by mu: no new requests; drain what is queued
	aborted bool                                    // guarded by mu: queued requests were failed; stop at once
	series  int                                     // guarded by mu: open Series, which a drain waits for
	// lastInteractive is when the last interactive request arrived: bulk batches yield
	// (Config.BulkYieldSize) for BulkYieldWindow after it.
	lastInteractive time.Time // guarded by mu

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
		return nil, err // settings.Problems, which name the package and field
	}
	if runner == nil {
		return nil, fmt.Errorf("batcher: queue %q: runner must not be nil", name)
	}
	if clk == nil {
		return nil, fmt.Errorf("batcher: queue %q: clock must not be nil", name)
	}
	b := &Batcher[In, Out]{
		name:     name,
		cfg:      cfg,
		lim:      newLimits(cfg),
		runner:   runner,
		clk:      clk,
		weights:  admission.WithDefaults(cfg.Weights),
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

// Submit queues in in class p and waits for its result. cost tells the batcher how much of a
// batch in takes. It fails at once with ErrQueueFull when class p already holds QueueSize
// waiting requests, and with ErrClosed after Close. A request still waiting for dispatch after
// MaxQueueWait fails with ErrExpired and is never run. If ctx ends while the request waits, it
// leaves the queue at once, is never run, and the call returns ctx.Err(); if ctx ends while
// its batch runs, the call returns ctx.Err() and the result is dropped.
func (b *Batcher[In, Out]) Submit(ctx context.Context, p admission.Priority, in In, cost Cost) (Out, error) {
	return b.submit(ctx, p, in, cost, nil)
}

func (b *Batcher[In, Out]) submit(ctx context.Context, p admission.Priority, in In, cost Cost, s *Series[In, Out]) (Out, error) {
	r, err := b.enqueue(ctx, p, in, cost, s)
	if err != nil {
		var zero Out
		return zero, err
	}
	return b.await(ctx, r)
}

// Load reads the Batcher's live counters for the admission layer (admission.Queue). The
// counters are atomics read one after the other, not one snapshot; it takes no lock and does
// not allocate.
func (b *Batcher[In, Out]) Load() admission.Load {
	l := admission.Load{
		Running:     int(b.running.Load()),
		BusyWorkers: int(b.busy.Load()),
		Completed:   b.completed.Load(),
		Work:        b.seqWaiting.Load() + b.seqRunning.Load(),
		WorkDone:    b.seqDone.Load(),
	}
	for p := range l.Waiting {
		l.Waiting[p] = int(b.waitingBy[p].Load())
	}
	return l
}

// Limits are the Batcher's bounds and dispatch weights, defaults applied (admission.Queue). Its
// work is measured in sequences.
func (b *Batcher[In, Out]) Limits() admission.Limits {
	lim := admission.Limits{
		QueueSize:    b.cfg.QueueSize,
		MaxQueueWait: b.cfg.MaxQueueWait,
		Workers:      b.cfg.Workers,
		Weights:      b.weights,
		WorkUnits:    true,
	}
	lim.ClassWorkers[admission.Bulk] = b.cfg.MaxBulkWorkers
	return lim
}

// Close stops accepting requests and drains: queued requests are dispatched without waiting
// for the batch window, and Close returns nil once every one of them and every running batch
// has been answered. If ctx ends first, Close gives up: requests still queued fail with
// ErrClosed, running batches see their context cancelled (a runner that stops on it answers
// its members with ErrClosed too), and Close returns ctx.Err() without waiting for them. Close
// on a Batcher that was never started fails its queued requests with ErrClosed and returns nil.
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

// A Series submits the parts of one piece of work that goes in over several turns, such as a
// long text's windows a chunk at a time. Opened before Close, it keeps a draining Batcher
// accepting its parts, so the drain covers work already under way, until Done or until Close
// gives up. Its parts may be submitted from several goroutines at once.
type Series[In, Out any] struct {
	b     *Batcher[In, Out]
	done  bool // guarded by b.mu
	parts int  // guarded by b.mu: submitted so far
}

// Series opens a Series, or fails with ErrClosed once Close has begun.
func (b *Batcher[In, Out]) Series() (*Series[In, Out], error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return nil, ErrClosed
	}
	b.series++
	return &Series[In, Out]{b: b}, nil
}

// Submit is Batcher.Submit for one part of the series, with three differences that follow from
// the work having been admitted already: parts do not wait for the batch window (each is a
// large share of a batch, and the window is for gathering small requests), and the parts after
// the first neither count against QueueSize nor expire after MaxQueueWait, so a long piece of
// work is not dropped half done.
func (s *Series[In, Out]) Submit(ctx context.Context, p admission.Priority, in In, cost Cost) (Out, error) {
	return s.b.submit(ctx, p, in, cost, s)
}

// Done closes the series; a drain waiting for it may end, and later parts are plain requests.
// Calling it again does nothing.
func (s *Series[In, Out]) Done() {
	s.b.mu.Lock()
	if s.done {
		s.b.mu.Unlock()
		return
	}
	s.done = true
	s.b.series--
	s.b.mu.Unlock()
	s.b.poke()
}

func (b *Batcher[In, Out]) enqueue(ctx context.Context, p admission.Priority, in In, cost Cost, s *Series[In, Out]) (*request[In, Out], error) {
	if !p.Valid() {
		return nil, fmt.Errorf("batcher: queue %q: invalid priority %d", b.name, p)
	}
	if err := cost.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request[In, Out]{in: in, cost: cost, prio: p, done: make(chan result[Out], 1)}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		r.traced = sp
	}
	b.mu.Lock()
	inSeries := s != nil && !s.done
	later := inSeries && s.parts > 0
	r.series, r.lasting = inSeries, later
	if b.aborted || b.closing && !inSeries {
		b.mu.Unlock()
		b.metrics.outcome(outcomeClosed)
		return nil, ErrClosed
	}
	if !later && b.qs[p].len() >= b.cfg.QueueSize {
		b.mu.Unlock()
		b.metrics.outcome(outcomeQueueFull)
		return nil, ErrQueueFull
	}
	r.enqueued = b.clk.Now()
	if p == admission.Interactive {
		b.lastInteractive = r.enqueued
	}
	b.qs[p].push(r)
	b.waitingBy[p].Add(1)
	b.seqWaiting.Add(int64(cost.Sequences))
	if inSeries {
		s.parts++
	}
	b.mu.Unlock()
	b.poke()
	return r, nil
}

// unqueueLocked takes a waiting request out of its class's queue and marks it answered
// without running.
func (b *Batcher[In, Out]) unqueueLocked(r *request[In, Out]) {
	b.qs[r.prio].remove(r)
	b.waitingBy[r.prio].Add(-1)
	b.seqWaiting.Add(-int64(r.cost.Sequences))
	r.state = stateDone
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
		b.unqueueLocked(r)
		b.mu.Unlock()
		// The oldest request may have changed, and a draining loop may now be done.
		b.poke()
		b.metrics.outcome(outcomeCancelledQueued)
		var zero Out
		return zero, fmt.Errorf("%w: %w", ErrLeftQueued, ctx.Err())
	case stateRunning:
		bt := r.batch
		b.mu.Unlock()
		if r.claimed.CompareAndSwap(false, true) {
			bt.leave()
			b.metrics.outcome(outcomeCancelledRunning)
			var zero Out
			return zero, fmt.Errorf("%w: %w", ErrLeftRunning, ctx.Err())
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
	for p := range b.qs {
		for r := b.qs[p].oldest(); r != nil; r = b.qs[p].oldest() {
			b.unqueueLocked(r)
			r.done <- result[Out]{err: ErrClosed}
			b.metrics.outcome(outcomeClosed)
		}
	}
	cancel := b.runCancel
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	b.poke()
}

func (b *Batcher[In, Out]) wasAborted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.aborted
}

// loop is the batch-formation loop. It is the only goroutine that forms batches, and it forms
// one only when a worker is free to run it, so that requests nobody can serve yet stay in the
// queue where the admission layer can see them.
func (b *Batcher[In, Out]) loop(ctx, runCtx context.Context) {
	defer close(b.stopped)
	defer b.metrics.detach()
	free := b.cfg.Workers
	var (
		timer    clock.Timer
		timerAt  time.Time
		pick     = admission.Picker{Weights: b.weights}
		bufs     [admission.NumPriorities][]*request[In, Out]
		bulkBusy int // workers running a bulk batch, bounded by MaxBulkWorkers
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
		for free > 0 {
			d, reason, ok := b.nextLocked(now, &pick, &bufs, b.bulkAllowed(bulkBusy))
			if !ok {
				break
			}
			bt := b.takeLocked(runCtx, d, reason, now)
			free--
			if bt.prio == admission.Bulk {
				bulkBusy++
			}
			go b.run(bt)
		}
		// Dispatch goes first so that a request a free worker can take right now is served
		// rather than expired; whatever still waits at its limit expires now.
		b.expireLocked(now)
		deadline, armTimer := b.nextDeadlineLocked(free > 0, b.bulkAllowed(bulkBusy))
		drained := b.closing && b.queuedLocked() == 0 && free == b.cfg.Workers && b.series == 0
		b.mu.Unlock()
		for p := range bufs {
			clear(bufs[p][:cap(bufs[p])]) // do not keep finished requests reachable from the reused buffers
		}

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
		case bt := <-b.finished:
			free++
			if bt.prio == admission.Bulk {
				bulkBusy--
			}
		case <-timerC:
			timer = nil
		case <-ctx.Done():
			b.abort()
			return
		}
	}
}

// queuedLocked is how many requests wait in all classes.
func (b *Batcher[In, Out]) queuedLocked() int {
	n := 0
	for p := range b.qs {
		n += b.qs[p].len()
	}
	return n
}

// bulkAllowed reports whether a worker may take a bulk batch while bulkBusy workers already
// run one: MaxBulkWorkers keeps that many workers out of bulk's reach, for interactive work.
func (b *Batcher[In, Out]) bulkAllowed(bulkBusy int) bool {
	return b.cfg.MaxBulkWorkers == 0 || bulkBusy < b.cfg.MaxBulkWorkers
}

// nextLocked drafts a batch for every class that has requests and returns the one to dispatch
// now: among the classes whose draft is ready, the weighted round robin picks which leads. A
// batch holds one class only, so an interactive request never runs in a batch swollen by bulk
// companions. admission.Bulk is left out when bulkOK is false.
func (b *Batcher[In, Out]) nextLocked(now time.Time, pick *admission.Picker, bufs *[admission.NumPriorities][]*request[In, Out], bulkOK bool) (draft[In, Out], dispatchReason, bool) {
	var (
		drafts  [admission.NumPriorities]draft[In, Out]
		reasons [admission.NumPriorities]dispatchReason
		ready   [admission.NumPriorities]bool
		some    bool
	)
	for p := range b.qs {
		if b.qs[p].len() == 0 || (admission.Priority(p) == admission.Bulk && !bulkOK) {
			continue
		}
		lim := b.lim
		if admission.Priority(p) == admission.Bulk && b.interactiveAboutLocked(now) {
			lim = lim.yielding(b.cfg.BulkYieldSize)
		}
		drafts[p] = b.qs[p].draft(lim, bufs[p])
		bufs[p] = drafts[p].members[:0]
		reasons[p], ready[p] = b.readyLocked(drafts[p], now)
		some = some || ready[p]
	}
	if !some {
		return draft[In, Out]{}, 0, false
	}
	p := pick.Next(ready)
	return drafts[p], reasons[p], true
}

// interactiveAboutLocked says whether an interactive request arrived within BulkYieldWindow.
func (b *Batcher[In, Out]) interactiveAboutLocked(now time.Time) bool {
	return !b.lastInteractive.IsZero() && now.Sub(b.lastInteractive) < b.cfg.BulkYieldWindow
}

// expireLocked fails every request that has waited MaxQueueWait with ErrExpired. Each class's
// queue is in arrival order, so only its head needs checking.
func (b *Batcher[In, Out]) expireLocked(now time.Time) {
	if b.cfg.MaxQueueWait <= 0 {
		return
	}
	for p := range b.qs {
		for r := b.qs[p].oldestExpiring(); r != nil && !now.Before(r.enqueued.Add(b.cfg.MaxQueueWait)); r = b.qs[p].oldestExpiring() {
			b.unqueueLocked(r)
			r.done <- result[Out]{err: ErrExpired}
			b.metrics.outcome(outcomeExpired)
		}
	}
}

// nextDeadlineLocked is when the loop must look again without being woken: the end of the
// batch window of a class's oldest request (only while a worker is free to take that class's
// batch and Close is not already dispatching everything), or the first max-queue-wait expiry.
func (b *Batcher[In, Out]) nextDeadlineLocked(workerFree, bulkOK bool) (time.Time, bool) {
	var (
		deadline time.Time
		armed    bool
	)
	consider := func(t time.Time) {
		if !armed || t.Before(deadline) {
			deadline, armed = t, true
		}
	}
	for p := range b.qs {
		o := b.qs[p].oldest()
		if o == nil {
			continue
		}
		if workerFree && !b.closing && (admission.Priority(p) != admission.Bulk || bulkOK) {
			consider(b.windowEnd(o))
		}
		if e := b.qs[p].oldestExpiring(); e != nil && b.cfg.MaxQueueWait > 0 {
			consider(e.enqueued.Add(b.cfg.MaxQueueWait))
		}
	}
	return deadline, armed
}

// readyLocked decides whether a draft goes now: when it is full, when Close is draining, or
// when its oldest member (its class's oldest) has waited the whole window.
func (b *Batcher[In, Out]) readyLocked(d draft[In, Out], now time.Time) (dispatchReason, bool) {
	switch {
	case d.full:
		return reasonFull, true
	case b.closing:
		return reasonDrain, true
	case !now.Before(b.windowEnd(d.members[0])):
		return reasonWindow, true
	}
	return 0, false
}

// windowEnd is when r's batch window ends: MaxWait after it arrived, or at once for a part of
// a Series.
func (b *Batcher[In, Out]) windowEnd(r *request[In, Out]) time.Time {
	if r.series {
		return r.enqueued
	}
	return r.enqueued.Add(b.cfg.MaxWait)
}

// takeLocked removes the draft's members from the queue and makes them a running batch.
func (b *Batcher[In, Out]) takeLocked(runCtx context.Context, d draft[In, Out], reason dispatchReason, now time.Time) *batch[In, Out] {
	bt := &batch[In, Out]{
		prio:    d.members[0].prio,
		members: slices.Clone(d.members),
		seqs:    d.seqs,
		padded:  d.seqs * d.maxLen,
		reason:  reason,
	}
	bt.ctx, bt.cancel = context.WithCancel(runCtx)
	bt.live.Store(int32(len(bt.members)))
	// running goes up before waiting goes down, so a concurrent Load may count a request
	// twice for an instant but never misses it.
	b.running.Add(int64(len(bt.members)))
	b.seqRunning.Add(int64(bt.seqs))
	b.busy.Add(1)
	for _, r := range bt.members {
		b.qs[r.prio].remove(r)
		b.waitingBy[r.prio].Add(-1)
		b.seqWaiting.Add(-int64(r.cost.Sequences))
		r.state = stateRunning
		r.batch = bt
		bt.real += r.cost.Sequences * r.cost.MaxLen
		b.metrics.waited(r.prio, now.Sub(r.enqueued))
	}
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
	end := b.clk.Now()
	b.metrics.ran(end.Sub(start))
	stopped := bt.ctx.Err() != nil // before cancel, which sets it for every batch
	bt.cancel()
	// Depth drops before the answers go out, so a caller that has its answer never sees
	// itself still counted as running.
	b.completed.Add(uint64(len(bt.members)))
	b.seqDone.Add(uint64(bt.seqs))
	b.running.Add(-int64(len(bt.members)))
	b.seqRunning.Add(-int64(bt.seqs))
	b.busy.Add(-1)
	outcome := outcomeServed
	if err != nil {
		outcome = outcomeFailed
		if stopped && b.wasAborted() {
			// Close gave up waiting and stopped the run: its members were shut out, not failed.
			err, outcome = fmt.Errorf("%w: queue %q stopped the batch at the end of the drain", ErrClosed, b.name), outcomeClosed
		}
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
	b.trace(bt, start, end, err) // after the answers: no caller waits for its spans
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
		return nil, fmt.Errorf("batcher: queue %q: the runner returned %d results for %d requests", b.name, len(outs), len(ins))
	}
	return outs, err
}
