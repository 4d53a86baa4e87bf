package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/kvcache"
)

type seqState uint8

const (
	seqWaiting seqState = iota // in a waiting list (new, or preempted)
	seqRunning                 // in the running set, holding blocks
)

// sequence is one generation inside the runner. The loop owns every field except those
// marked otherwise.
type sequence struct {
	ctx       context.Context
	req       Request
	promptLen int
	tokens    []int64 // prompt, then generated tokens
	generated int
	table     *kvcache.Table // nil while waiting
	state     seqState       // changes under Runner.mu
	preempted bool           // has run before: max queue wait no longer applies
	enqueued  time.Time
	admitted  time.Time
	lastToken time.Time

	events     chan Event
	pending    Event // a token event the reader had no room for
	hasPending bool
	pausedAt   time.Time
	paused     atomic.Bool // read by the reader, who pokes the runner when it makes room
	wake       func()      // pokes the runner

	// count is generated, readable from any goroutine (the final event's Index).
	count atomic.Int64
	// workLeft is the sequence's share of Runner.work: its prompt until first admitted,
	// and its new tokens still to come.
	workLeft atomic.Int64

	ended atomic.Bool   // set once, by whoever ends the sequence
	done  chan struct{} // closed after final is set
	final Event

	abortedAt atomic.Int64  // UnixNano when its context ended; 0 before
	abortStep atomic.Uint64 // the step count then
	// afterAbort counts tokens generated after abortedAt was set.
	afterAbort int
	stopWatch  func() bool

	prev, next *sequence // waiting list links, guarded by Runner.mu
}

func newSequence(ctx context.Context, req Request, buffer int, now time.Time, wake func()) *sequence {
	tokens := make([]int64, len(req.Prompt), len(req.Prompt)+req.MaxNewTokens)
	copy(tokens, req.Prompt)
	return &sequence{ctx: ctx, req: req, promptLen: len(req.Prompt), tokens: tokens, enqueued: now,
		events: make(chan Event, buffer), done: make(chan struct{}), wake: wake}
}

// read is the reader's side of flow control: a paused sequence may go on now.
func (q *sequence) read() {
	if q.paused.Load() {
		q.wake()
	}
}

// seqList is an intrusive FIFO of waiting sequences.
type seqList struct {
	head, tail *sequence
	n          int
}

func (l *seqList) pushBack(q *sequence) {
	q.prev, q.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = q
	} else {
		l.head = q
	}
	l.tail = q
	l.n++
}

func (l *seqList) pushFront(q *sequence) {
	q.prev, q.next = nil, l.head
	if l.head != nil {
		l.head.prev = q
	} else {
		l.tail = q
	}
	l.head = q
	l.n++
}

func (l *seqList) remove(q *sequence) {
	if q.prev != nil {
		q.prev.next = q.next
	} else {
		l.head = q.next
	}
	if q.next != nil {
		q.next.prev = q.prev
	} else {
		l.tail = q.prev
	}
	q.prev, q.next = nil, nil
	l.n--
}

// classPicker is a smooth weighted round robin over the classes with sequences waiting.
type classPicker struct{ credit [admission.NumPriorities]int }

func (pk *classPicker) choose(ready [admission.NumPriorities]bool, weights [admission.NumPriorities]int) admission.Priority {
	best, total := -1, 0
	for p := range ready {
		if !ready[p] {
			continue
		}
		pk.credit[p] += weights[p]
		total += weights[p]
		if best < 0 || pk.credit[p] > pk.credit[best] {
			best = p
		}
	}
	pk.credit[best] -= total
	return admission.Priority(best)
}

// loop is the step loop: a boundary (drop what ended, admit what fits), then one step, again
// and again; idle, it waits for a submission, a reader or the next deadline.
func (r *Runner) loop(ctx context.Context) {
	defer close(r.stopped)
	var (
		timer   clock.Timer
		timerAt time.Time
		drain   = r.drain // closed by Close; nil once seen
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		r.shutdown()
	}()
	for {
		if ctx.Err() != nil {
			return
		}
		now := r.clk.Now()
		r.boundary(now)
		if r.isClosing() && len(r.running) == 0 {
			return
		}
		if rows := r.runnable(); len(rows) > 0 {
			r.runRows(ctx, rows)
			r.steps.Add(1)
			continue
		}
		at, ok := r.nextDeadline()
		if !ok {
			if timer != nil {
				timer.Stop()
				timer = nil
			}
		} else if timer == nil || !timerAt.Equal(at) {
			if timer != nil {
				timer.Stop()
			}
			timer, timerAt = r.clk.NewTimer(at.Sub(now)), at
		}
		var fired <-chan time.Time
		if timer != nil {
			fired = timer.C()
		}
		select {
		case <-r.wake:
		case <-fired:
			timer = nil
		case <-drain:
			drain = nil
		case <-ctx.Done():
			return
		}
	}
}

func (r *Runner) isClosing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closing
}

// boundary is everything that changes the running set, done between steps: sequences that
// ended or whose context ended leave (their blocks back in the pool now), timeouts and
// paused readers are dealt with, and waiting sequences that fit are admitted.
func (r *Runner) boundary(now time.Time) {
	for i := 0; i < len(r.running); {
		q := r.running[i]
		if !q.ended.Load() {
			r.check(q, now)
		}
		if q.ended.Load() {
			r.retire(q, now)
			continue // retire removed running[i]
		}
		i++
	}
	r.mu.Lock()
	closing := r.closing
	gone := r.scratch.gone[:0]
	for p := range r.waiting {
		for q := r.waiting[p].head; q != nil; q = q.next {
			if closing || q.ctx.Err() != nil || r.timedOut(q, now) || r.expired(q, now) {
				gone = append(gone, q)
			}
		}
	}
	r.scratch.gone = gone
	r.mu.Unlock()
	for _, q := range gone {
		switch {
		case closing:
			r.finish(q, errorEvent(fmt.Errorf("runner %q: %w", r.name, admission.ErrClosed)), "shutdown")
		case q.ctx.Err() != nil:
			r.abort(q, q.ctx.Err())
		case r.timedOut(q, now):
			r.finish(q, errorEvent(ErrFirstTokenTimeout), "timeout")
		default:
			r.finish(q, errorEvent(fmt.Errorf("runner %q: %w", r.name, admission.ErrExpired)), "max_wait")
		}
	}
	clear(gone)
	if !closing {
		r.admit(now)
	}
}

// check ends a running sequence whose context ended or whose first token is late, and moves
// a paused one on when its reader made room, or ends it when its reader stayed away.
func (r *Runner) check(q *sequence, now time.Time) {
	switch {
	case q.ctx.Err() != nil:
		r.abort(q, q.ctx.Err())
		return
	case r.timedOut(q, now):
		r.finish(q, errorEvent(ErrFirstTokenTimeout), "timeout")
		return
	}
	if !q.hasPending {
		return
	}
	select {
	case q.events <- q.pending:
		q.hasPending = false
		q.paused.Store(false)
	default:
		if !now.Before(q.pausedAt.Add(r.cfg.StallTimeout)) {
			r.finish(q, errorEvent(ErrClientStalled), "client_stall")
		}
	}
}

// expired reports a sequence that has waited MaxQueueWait for its first admission.
func (r *Runner) expired(q *sequence, now time.Time) bool {
	return !q.preempted && r.cfg.MaxQueueWait > 0 && !now.Before(q.enqueued.Add(r.cfg.MaxQueueWait))
}

func (r *Runner) timedOut(q *sequence, now time.Time) bool {
	return q.generated == 0 && q.req.FirstTokenTimeout > 0 && !now.Before(q.enqueued.Add(q.req.FirstTokenTimeout))
}

// seen records when q's departure was first noticed, by its context's callback or by the
// loop, whichever comes first: what abort latency is measured from.
func (r *Runner) seen(q *sequence) {
	if q.abortedAt.CompareAndSwap(0, r.clk.Now().UnixNano()) {
		q.abortStep.Store(r.steps.Load())
	}
}

// abort ends a sequence whose context ended: the client left (Canceled) or its deadline passed.
func (r *Runner) abort(q *sequence, err error) {
	r.seen(q)
	reason := "client_disconnect"
	if errors.Is(err, context.DeadlineExceeded) {
		reason = "timeout"
	}
	r.finish(q, errorEvent(err), reason)
}

func errorEvent(err error) Event { return Event{Done: true, Finish: FinishError, Err: err} }

// finish ends q with its last event, once, from any goroutine. Its blocks go back when the
// loop retires it; a waiting sequence leaves its list here.
func (r *Runner) finish(q *sequence, final Event, reason string) {
	if !q.ended.CompareAndSwap(false, true) {
		return
	}
	if final.Err != nil {
		final.Index = int(q.count.Load())
	}
	q.final = final
	close(q.done)
	q.stopWatch()
	r.work.Add(-q.workLeft.Swap(0))
	r.mu.Lock()
	delete(r.live, q)
	if q.state == seqWaiting && (q.prev != nil || r.waiting[q.req.Priority].head == q) {
		r.waiting[q.req.Priority].remove(q)
		r.waitingBy[q.req.Priority].Add(-1)
	}
	r.mu.Unlock()
	r.m.ended(final, reason)
	r.poke()
}

// retire takes an ended sequence out of the running set and gives its blocks back.
func (r *Runner) retire(q *sequence, now time.Time) {
	if q.table != nil {
		r.pool.Release(q.table)
		q.table = nil
	}
	if at := q.abortedAt.Load(); at != 0 {
		r.m.abortLatency(now.Sub(time.Unix(0, at)), r.steps.Load()-q.abortStep.Load())
	}
	if i := slices.Index(r.running, q); i >= 0 {
		r.running = slices.Delete(r.running, i, i+1)
		r.runningN.Add(-1)
		r.completed.Add(1)
	}
}

// admit moves waiting sequences into the running set while there is room and their tokens
// fit in the pool, choosing classes by weight and each class in arrival order.
func (r *Runner) admit(now time.Time) {
	for len(r.running) < r.cfg.MaxRunning {
		r.mu.Lock()
		var ready [admission.NumPriorities]bool
		any := false
		for p := range r.waiting {
			ready[p] = r.waiting[p].n > 0
			any = any || ready[p]
		}
		if !any {
			r.mu.Unlock()
			return
		}
		p := r.pick.choose(ready, r.weights)
		q := r.waiting[p].head
		r.mu.Unlock()

		t := r.pool.NewTable()
		cached := r.pool.Match(t, q.tokens)
		if !r.pool.Reserve(t, len(q.tokens)-cached) {
			r.pool.Release(t)
			if len(r.running) == 0 {
				// Nothing will free blocks: this sequence can never fit.
				r.finish(q, errorEvent(ErrTooLong), "too_long")
				continue
			}
			return // wait for blocks; arrival order within the class holds
		}
		r.mu.Lock()
		if q.ended.Load() {
			r.mu.Unlock()
			r.pool.Release(t)
			continue
		}
		r.waiting[p].remove(q)
		r.waitingBy[p].Add(-1)
		q.state = seqRunning
		r.mu.Unlock()
		q.table = t
		if !q.preempted {
			r.progress(q, q.promptLen)
		}
		q.admitted = now
		r.running = append(r.running, q)
		r.runningN.Add(1)
		r.m.admitted(cached, len(q.tokens)-cached)
	}
}

// runnable is the running sequences that can take a step: not paused on their reader.
func (r *Runner) runnable() []*sequence {
	rows := r.scratch.rows[:0]
	for _, q := range r.running {
		if !q.hasPending && !q.ended.Load() {
			rows = append(rows, q)
		}
	}
	r.scratch.rows = rows
	return rows
}

// nextDeadline is when an idle loop must look again: the earliest max-wait or first-token
// expiry of a waiting sequence, or the stall limit of a paused one.
func (r *Runner) nextDeadline() (time.Time, bool) {
	var at time.Time
	ok := false
	consider := func(t time.Time) {
		if !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	r.mu.Lock()
	for p := range r.waiting {
		for q := r.waiting[p].head; q != nil; q = q.next {
			if r.cfg.MaxQueueWait > 0 && !q.preempted {
				consider(q.enqueued.Add(r.cfg.MaxQueueWait))
			}
			if q.req.FirstTokenTimeout > 0 && q.generated == 0 {
				consider(q.enqueued.Add(q.req.FirstTokenTimeout))
			}
		}
	}
	r.mu.Unlock()
	for _, q := range r.running {
		if q.hasPending {
			consider(q.pausedAt.Add(r.cfg.StallTimeout))
		}
		if q.req.FirstTokenTimeout > 0 && q.generated == 0 {
			consider(q.enqueued.Add(q.req.FirstTokenTimeout))
		}
	}
	return at, ok
}

// runRows runs one iteration's steps: prefill for the rows with several new tokens (newly
// admitted or resumed), batched within MaxStepTokens, then one decode step for the rest.
func (r *Runner) runRows(ctx context.Context, rows []*sequence) {
	decode := r.scratch.decode[:0]
	prefill := r.scratch.prefill[:0]
	for _, q := range rows {
		if len(q.tokens)-q.table.Len() > 1 {
			prefill = append(prefill, q)
		} else {
			decode = append(decode, q)
		}
	}
	r.scratch.decode, r.scratch.prefill = decode, prefill
	slices.SortFunc(prefill, func(a, b *sequence) int {
		return (len(a.tokens) - a.table.Len()) - (len(b.tokens) - b.table.Len())
	})
	for start := 0; start < len(prefill); {
		end, past, seq := start, 0, 0
		for end < len(prefill) {
			q := prefill[end]
			p, s := max(past, q.table.Len()), max(seq, len(q.tokens)-q.table.Len())
			if end > start && (end-start+1)*(p+s) > r.cfg.MaxStepTokens {
				break
			}
			past, seq = p, s
			end++
		}
		r.runGroup(ctx, prefill[start:end])
		start = end
	}
	if len(decode) > 0 {
		r.runGroup(ctx, decode)
	}
}

// runGroup makes room for every row's new tokens (preempting when the pool is short), runs
// one step over them, writes their keys and values back, and hands each row's logits to its
// Chooser.
func (r *Runner) runGroup(ctx context.Context, rows []*sequence) {
	for _, q := range rows {
		if q.state == seqRunning && !q.ended.Load() {
			r.reserve(q)
		}
	}
	// Reserving may have preempted rows that reserved before: keep those still running.
	kept := r.scratch.group[:0]
	for _, q := range rows {
		if q.state == seqRunning && !q.ended.Load() {
			kept = append(kept, q)
		}
	}
	r.scratch.group = kept
	if len(kept) == 0 {
		return
	}
	shape := r.dec.Shape()
	copyStart := r.clk.Now()
	st := r.scratch.build(kept, r.pool, shape, r.cfg.PadID)
	start := r.clk.Now()
	copied := start.Sub(copyStart)
	r.stepStarted.Store(start.UnixNano())
	if r.hook != nil {
		r.hook()
	}
	err := r.dec.RunStep(ctx, st, r.opts)
	r.scratch.remember(kept, st, err == nil)
	r.stepStarted.Store(0)
	end := r.clk.Now()
	if r.stalled.Load() {
		_ = r.opts.UnsetTerminate()
		r.stalled.Store(false)
	}
	r.m.step(end.Sub(start), len(kept), st.Seq > 1)
	if err != nil {
		if ctx.Err() != nil {
			return // the loop is stopping: shutdown ends these with ErrShutdown
		}
		cause := fmt.Errorf("%w: %w", ErrEngine, err)
		for _, q := range kept {
			r.finish(q, errorEvent(cause), "engine_error")
		}
		return
	}
	// Write every row's new keys and values back into its blocks, then choose its tokens:
	// choosing may end a sequence, which frees its blocks.
	writeBack := r.clk.Now()
	for i, q := range kept {
		if q.ended.Load() {
			continue // the watchdog ended it during the step; the boundary retires it
		}
		k := len(q.tokens) - q.table.Len()
		from := st.Past + st.Seq - k
		for l := range shape.Layers {
			r.pool.Scatter(q.table, i, from, k, l, kvcache.Key, kvcache.Tensor{Data: st.Present[l][0], Batch: st.Batch, Positions: st.Past + st.Seq})
			r.pool.Scatter(q.table, i, from, k, l, kvcache.Value, kvcache.Tensor{Data: st.Present[l][1], Batch: st.Batch, Positions: st.Past + st.Seq})
		}
		r.pool.Append(q.table, q.tokens[q.table.Len():])
	}
	r.m.kvCopy(copied + r.clk.Now().Sub(writeBack))
	for i, q := range kept {
		if q.ended.Load() {
			continue
		}
		at := (i*st.Seq + st.Seq - 1) * shape.Vocab
		r.emit(q, q.req.Chooser.Choose(st.Logits[at:at+shape.Vocab]), end)
	}
}

// reserve makes room for q's new tokens, preempting the lowest-priority, most recently admitted
// sequences while the pool is short; q itself may be the one preempted. A sequence alone that
// still does not fit can never run: it ends with ErrTooLong.
func (r *Runner) reserve(q *sequence) {
	need := len(q.tokens) - q.table.Len()
	for !r.pool.Reserve(q.table, need) {
		victim := r.victim()
		if victim == q && len(r.running) == 1 {
			r.finish(q, errorEvent(ErrTooLong), "too_long")
			r.retire(q, r.clk.Now())
			return
		}
		r.preempt(victim)
		if victim == q {
			return
		}
	}
}

// victim is the running sequence to preempt: the lowest class, and in it the latest admitted.
func (r *Runner) victim() *sequence {
	var v *sequence
	for _, q := range r.running {
		if q.ended.Load() || q.table == nil {
			continue
		}
		if v == nil || q.req.Priority > v.req.Priority ||
			(q.req.Priority == v.req.Priority && q.admitted.After(v.admitted)) {
			v = q
		}
	}
	return v
}

// preempt gives q's blocks back and puts it at the front of its class's waiting list, to be
// recomputed (prompt and generated tokens) when it is admitted again.
func (r *Runner) preempt(q *sequence) {
	r.pool.Release(q.table)
	q.table = nil
	q.preempted = true
	if i := slices.Index(r.running, q); i >= 0 {
		r.running = slices.Delete(r.running, i, i+1)
		r.runningN.Add(-1)
	}
	r.mu.Lock()
	q.state = seqWaiting
	r.waiting[q.req.Priority].pushFront(q)
	r.waitingBy[q.req.Priority].Add(1)
	r.mu.Unlock()
	r.m.preempted()
}

// progress moves n of q's tokens from the work to do to the work done. A sequence that has
// ended gave its work back already.
func (r *Runner) progress(q *sequence, n int) {
	for {
		left := q.workLeft.Load()
		if left <= 0 {
			return
		}
		take := min(int64(n), left)
		if q.workLeft.CompareAndSwap(left, left-take) {
			r.work.Add(-take)
			r.workDone.Add(uint64(take))
			return
		}
	}
}

// emit records a generated token and hands its event to the reader, or, when that is the
// last one, ends the stream with it and frees the blocks at once.
func (r *Runner) emit(q *sequence, c Choice, now time.Time) {
	q.tokens = append(q.tokens, c.ID)
	q.generated++
	q.count.Store(int64(q.generated))
	r.progress(q, 1)
	r.tokens.Add(1)
	if q.generated == 1 {
		r.m.firstToken(now.Sub(q.enqueued))
	} else {
		r.m.interToken(now.Sub(q.lastToken))
	}
	q.lastToken = now
	if q.abortedAt.Load() != 0 {
		q.afterAbort++
		r.m.afterDisconnect()
	}
	ev := Event{Choice: c, Index: q.generated}
	switch {
	case c.Stop:
		ev.Done, ev.Finish = true, FinishStop
	case q.generated >= q.req.MaxNewTokens || len(q.tokens) >= r.cfg.MaxPositions:
		ev.Done, ev.Finish = true, FinishLength
	}
	if ev.Done {
		r.finish(q, ev, "")
		r.retire(q, now)
		return
	}
	select {
	case q.events <- ev:
	default:
		q.pending, q.hasPending = ev, true
		q.pausedAt = now
		q.paused.Store(true)
	}
}

// shutdown runs when the loop returns: every sequence still live ends (ErrShutdown for the
// running, admission.ErrClosed for those that never started) and every block goes back.
func (r *Runner) shutdown() {
	for _, q := range r.running {
		r.finish(q, errorEvent(fmt.Errorf("runner %q: %w", r.name, ErrShutdown)), "shutdown")
		if q.table != nil {
			r.pool.Release(q.table)
			q.table = nil
		}
		r.runningN.Add(-1)
	}
	r.running = nil
	r.endAll(fmt.Errorf("runner %q: %w", r.name, admission.ErrClosed), "shutdown")
}

// watchdog ends every stream when a step has run for StallTimeout (the decoder hangs): it
// stops the step through ONNX Runtime's terminate flag and marks the runner unhealthy until a
// step finishes again.
func (r *Runner) watchdog(ctx context.Context) {
	period := max(r.cfg.StallTimeout/4, time.Millisecond)
	for {
		t := r.clk.NewTimer(period)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.stopped:
			t.Stop()
			return
		case <-t.C():
		}
		started := r.stepStarted.Load()
		if started == 0 || r.stalled.Load() || r.clk.Now().Sub(time.Unix(0, started)) < r.cfg.StallTimeout {
			continue
		}
		r.stalled.Store(true)
		r.m.stalled()
		_ = r.opts.Terminate()
		r.endAll(fmt.Errorf("runner %q: %w", r.name, ErrEngineStalled), "stall")
	}
}
