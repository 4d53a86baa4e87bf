package scheduler

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// prepare runs f, q's Prepare (its request's, or its last choice's), on a goroutine of its
// own; q takes no step until it returns. Its pause takes one piece of work a step while the
// loop has rows to run (pacer), and stops the work once q has ended. A panic in it ends q
// alone, as one in Choose does: the loop sees it in runnable. Called on the loop's goroutine.
func (s *Scheduler) prepare(q *sequence, f func(pause func() bool)) {
	q.preparing.Store(true)
	s.preparers.Add(1)
	go func() {
		defer s.preparers.Done()
		defer func() {
			if p := recover(); p != nil {
				t := fmt.Sprintf("%T", p)
				q.prepPanic.Store(&t)
			}
			q.preparedAt.Store(s.clk.Now().UnixNano())
			q.preparing.Store(false)
			s.poke()
		}()
		if q.ended.Load() {
			return
		}
		f(func() bool {
			if q.ended.Load() {
				return false
			}
			s.pace.wait()
			return !q.ended.Load()
		})
	}()
}

// prepareFirst starts q's request's Prepare, once, as soon as the loop sees q wait. Called
// on the loop's goroutine.
func (s *Scheduler) prepareFirst(q *sequence) {
	if q.req.Prepare != nil && !q.prepStarted {
		q.prepStarted = true
		s.prepare(q, q.req.Prepare)
	}
}

// readyToAdmit reports whether waiting q may be admitted: not sitting out on a Prepare, which
// would hold a slot and blocks without a step (nor on its request's, which the boundary
// starts once it has checked q), nor ended by one that panicked. Called on the loop's
// goroutine.
func (s *Scheduler) readyToAdmit(q *sequence) bool {
	return (q.req.Prepare == nil || q.prepStarted) && !q.preparing.Load() && q.prepPanic.Load() == nil
}

// prepPanicked is the last event of a sequence whose Prepare panicked.
func prepPanicked(q *sequence) Event {
	return errorEvent(fmt.Errorf("%w: preparing its next choice panicked (%s)", ErrStepFailed, *q.prepPanic.Load()))
}

// pacer lets work off the loop that competes with it for a core (a constraint's mask, made a
// piece at a time) take one piece a step while the loop has rows to run: each step's end
// lets the longest waiting piece go, so the pieces of several such works take turns. An idle
// loop lets every piece go at once.
type pacer struct {
	mu      sync.Mutex
	busy    bool
	waiting []chan struct{}
}

// wait returns once the loop has ended a step after the call, or at once while it is idle.
func (p *pacer) wait() {
	p.mu.Lock()
	if !p.busy {
		p.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	p.waiting = append(p.waiting, ch)
	p.mu.Unlock()
	<-ch
}

// stepped counts a step that ran (under the pacer's lock, so that a piece that read the
// count before its wait sees a later one after it) and lets the longest waiting piece go.
func (p *pacer) stepped(steps *atomic.Uint64) {
	p.mu.Lock()
	steps.Add(1)
	if len(p.waiting) > 0 {
		close(p.waiting[0])
		p.waiting[0] = nil
		p.waiting = p.waiting[1:]
	}
	p.mu.Unlock()
}

// setBusy records whether the loop has rows to run; idle, it lets every waiting piece go.
func (p *pacer) setBusy(busy bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = busy
	if !busy {
		for _, ch := range p.waiting {
			close(ch)
		}
		clear(p.waiting)
		p.waiting = p.waiting[:0]
	}
}
