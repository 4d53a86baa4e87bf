package scheduler

import (
	"context"
	"runtime"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// loop is the step loop: a boundary (drop what ended, admit what fits), then one step, again
// and again; idle, it waits for a submission, a reader or the next deadline.
func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.stopped)
	var (
		timer   clock.Timer
		timerAt time.Time
		drain   = s.drain // closed by Close; nil once seen
		busy    bool      // what the pacer was last told
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		// Stopped by its context, the loop serves nothing more: a later Submit must be refused
		// rather than queued for no one, and this is set before shutdown's endAll looks, so
		// no submission slips in between.
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.shutdown()
		// Every sequence has ended, so a Prepare still running stops at its next pause.
		s.pace.setBusy(false)
		s.preparers.Wait()
	}()
	for {
		if ctx.Err() != nil {
			return
		}
		now := s.clk.Now()
		s.boundary(now)
		if s.isClosing() && len(s.running) == 0 && s.waitingN() == 0 {
			return // what still waits, closing, was preempted: it may sit out on a Prepare
		}
		if rows := s.runnable(); len(rows) > 0 {
			if !busy {
				s.pace.setBusy(true)
				busy = true
			}
			s.runRows(ctx, rows)
			s.pace.stepped(&s.steps, len(rows))
			// The readers that this step's tokens woke run before the next step: with fewer
			// processors than busy goroutines (a server pinned to one core), a loop that
			// never blocks would otherwise hold its processor until the runtime preempts it,
			// thousands of steps later on a small model, pausing every stream on a full
			// buffer and keeping the handlers from starting new requests.
			runtime.Gosched()
			s.m.busy(s.clk.Now().Sub(now))
			continue
		}
		at, ok := s.nextDeadline()
		if !ok {
			if timer != nil {
				timer.Stop()
				timer = nil
			}
		} else if timer == nil || !timerAt.Equal(at) {
			if timer != nil {
				timer.Stop()
			}
			timer, timerAt = s.clk.NewTimer(at.Sub(now)), at
		}
		var fired <-chan time.Time
		if timer != nil {
			fired = timer.C()
		}
		if busy {
			s.pace.setBusy(false)
			busy = false
		}
		select {
		case <-s.wake:
		case <-fired:
			timer = nil
		case <-drain:
			drain = nil
		case <-ctx.Done():
			return
		}
	}
}

// waitingN counts the sequences waiting for admission, every class.
func (s *Scheduler) waitingN() int64 {
	var n int64
	for p := range s.waitingBy {
		n += s.waitingBy[p].Load()
	}
	return n
}

func (s *Scheduler) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// nextDeadline is when an idle loop must look again: the earliest max-wait or first-token
// expiry of a waiting sequence, or the stall limit of a paused one.
func (s *Scheduler) nextDeadline() (time.Time, bool) {
	var at time.Time
	ok := false
	consider := func(t time.Time) {
		if !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	s.mu.Lock()
	for p := range s.waiting {
		for q := s.waiting[p].head; q != nil; q = q.next {
			if s.cfg.MaxQueueWait > 0 && !q.preempted {
				consider(q.enqueued.Add(s.cfg.MaxQueueWait))
			}
			if q.req.FirstTokenTimeout > 0 && q.generated == 0 {
				consider(q.enqueued.Add(q.req.FirstTokenTimeout))
			}
			if at, ok := s.stallsAt(q); ok {
				consider(at)
			}
		}
	}
	s.mu.Unlock()
	for _, q := range s.running {
		if q.hasPending {
			consider(q.pausedAt.Add(s.cfg.StallTimeout))
		}
		if q.req.FirstTokenTimeout > 0 && q.generated == 0 {
			consider(q.enqueued.Add(q.req.FirstTokenTimeout))
		}
	}
	return at, ok
}

// shutdown runs when the loop returns: every sequence still live ends (ErrShutdown for those
// that started, admission.ErrClosed for those that never did) and every block goes back.
func (s *Scheduler) shutdown() {
	for _, q := range s.running {
		s.finish(q, errorEvent(ErrShutdown), "shutdown")
		if q.table != nil {
			s.pool.Release(q.table)
			q.table = nil
		}
		s.runningN.Add(-1)
	}
	s.running = nil
	s.endAll()
}
