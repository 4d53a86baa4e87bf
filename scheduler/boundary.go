package scheduler

import (
	"context"
	"errors"
	"slices"
	"time"
)

// boundary is everything that changes the running set, done between steps: sequences that
// ended or whose context ended leave (their blocks back in the pool now), timeouts and
// paused readers are dealt with, and waiting sequences that fit are admitted.
func (s *Scheduler) boundary(now time.Time) {
	for i := 0; i < len(s.running); {
		q := s.running[i]
		if !q.ended.Load() {
			s.check(q, now)
		}
		if q.ended.Load() {
			s.retire(q, now)
			continue // retire removed running[i]
		}
		i++
	}
	s.mu.Lock()
	closing := s.closing
	gone := s.scratch.gone[:0]
	for p := range s.waiting {
		for q := s.waiting[p].head; q != nil; q = q.next {
			// Closing refuses what never started; a preempted sequence has started (and may
			// have streamed tokens): it is resumed and may finish within the grace.
			if (closing && !q.preempted) || q.ctx.Err() != nil || q.prepPanic.Load() != nil ||
				s.timedOut(q, now) || s.expired(q, now) || s.starved(q, now) {
				gone = append(gone, q)
				continue
			}
			s.prepareFirst(q) // as it waits
		}
	}
	s.scratch.gone = gone
	s.mu.Unlock()
	for _, q := range gone {
		switch {
		case closing && !q.preempted:
			s.finish(q, errorEvent(ErrClosed), "shutdown")
		case q.ctx.Err() != nil:
			s.abort(q, q.ctx.Err())
		case q.prepPanic.Load() != nil:
			s.finish(q, prepPanicked(q), "engine_error")
		case s.timedOut(q, now):
			s.finish(q, errorEvent(ErrFirstTokenTimeout), "timeout")
		case s.starved(q, now):
			s.finish(q, errorEvent(ErrStarved), "starved")
		default:
			s.finish(q, errorEvent(ErrExpired), "max_wait")
		}
	}
	clear(gone)
	s.admit(now) // while closing, only preempted sequences wait
}

// check ends a running sequence whose context ended or whose first token is late, and moves
// a paused one on when its reader made room, or ends it when its reader stayed away.
func (s *Scheduler) check(q *sequence, now time.Time) {
	switch {
	case q.ctx.Err() != nil:
		s.abort(q, q.ctx.Err())
		return
	case s.timedOut(q, now):
		s.finish(q, errorEvent(ErrFirstTokenTimeout), "timeout")
		return
	case !q.hasPending && s.starved(q, now): // a paused one waits on its reader, not on steps
		s.finish(q, errorEvent(ErrStarved), "starved")
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
		if !now.Before(q.pausedAt.Add(s.cfg.StallTimeout)) {
			s.finish(q, errorEvent(ErrClientStalled), "client_stall")
		}
	}
}

// starved reports a sequence that streamed tokens and has had none for TokenStallTimeout.
// Time spent on its own Prepare is its own request's doing, not starving: the stall counts
// from the later of its last token and its Prepare's return.
func (s *Scheduler) starved(q *sequence, now time.Time) bool {
	at, ok := s.stallsAt(q)
	return ok && !now.Before(at)
}

// stallsAt is when q will have starved if no token comes, and false when it cannot starve
// (no stall limit, no token yet, or sitting out the steps on its own Prepare).
func (s *Scheduler) stallsAt(q *sequence) (time.Time, bool) {
	if s.cfg.TokenStallTimeout <= 0 || q.generated == 0 || q.preparing.Load() {
		return time.Time{}, false
	}
	from := q.lastToken
	if at := q.preparedAt.Load(); at > from.UnixNano() {
		from = time.Unix(0, at)
	}
	return from.Add(s.cfg.TokenStallTimeout), true
}

// expired reports a sequence that has waited MaxQueueWait for its first admission.
func (s *Scheduler) expired(q *sequence, now time.Time) bool {
	return !q.preempted && s.cfg.MaxQueueWait > 0 && !now.Before(q.enqueued.Add(s.cfg.MaxQueueWait))
}

func (s *Scheduler) timedOut(q *sequence, now time.Time) bool {
	return q.generated == 0 && q.req.FirstTokenTimeout > 0 && !now.Before(q.enqueued.Add(q.req.FirstTokenTimeout))
}

// seen records when q's departure was first noticed, by its context's callback or by the
// loop, whichever comes first: what abort latency is measured from.
func (s *Scheduler) seen(q *sequence) {
	if q.abortedAt.CompareAndSwap(0, s.clk.Now().UnixNano()) {
		q.abortStep.Store(s.steps.Load())
	}
}

// abort ends a sequence whose context ended: the client left (Canceled), stopped reading (a
// cause of ErrClientStalled) or its deadline passed.
func (s *Scheduler) abort(q *sequence, err error) {
	s.seen(q)
	reason := "client_disconnect"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		reason = "timeout"
	case errors.Is(context.Cause(q.ctx), ErrClientStalled):
		reason = "client_stall" // its reader's socket took nothing for the stall limit
	}
	s.finish(q, errorEvent(err), reason)
}

func errorEvent(err error) Event { return Event{Done: true, Finish: FinishError, Err: err} }

// finish ends q with its last event, once, from any goroutine. Its blocks go back when the
// loop retires it; a waiting sequence leaves its list here.
func (s *Scheduler) finish(q *sequence, final Event, reason string) {
	if !q.ended.CompareAndSwap(false, true) {
		return
	}
	if final.Err != nil {
		final.Index = int(q.count.Load())
	}
	q.final = final
	close(q.done)
	q.stopWatch()
	s.work.Add(-q.workLeft.Swap(0))
	s.mu.Lock()
	delete(s.live, q)
	if q.state == seqWaiting && s.waiting[q.req.Priority].holds(q) {
		s.waiting[q.req.Priority].remove(q)
		s.waitingBy[q.req.Priority].Add(-1)
	}
	s.mu.Unlock()
	s.m.ended(final, reason)
	s.poke()
}

// retire takes an ended sequence out of the running set and gives its blocks back.
func (s *Scheduler) retire(q *sequence, now time.Time) {
	if q.table != nil {
		s.pool.Release(q.table)
		q.table = nil
	}
	if at := q.abortedAt.Load(); at != 0 {
		s.m.abortLatency(now.Sub(time.Unix(0, at)), s.steps.Load()-q.abortStep.Load())
	}
	if i := slices.Index(s.running, q); i >= 0 {
		s.running = slices.Delete(s.running, i, i+1)
		s.runningN.Add(-1)
		s.completed.Add(1)
	}
}
