package scheduler

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// prepare runs f, q's Prepare (its request's, or its last choice's), on a goroutine of its
// own; q takes no step until it returns. Its pause charges the processor time of the piece of
// work before it to the pacer and waits for the pacer's leave, and stops the work once q has
// ended. A panic in it ends q alone, as one in Choose does: the loop sees it in runnable.
// Called on the loop's goroutine.
func (s *Scheduler) prepare(q *sequence, f func(pause func() bool)) {
	q.preparing.Store(true)
	s.preparers.Add(1)
	s.pace.begin()
	go func() {
		defer s.preparers.Done()
		piece := s.pace.meter() // the piece under way
		var over atomic.Bool    // f has returned: a pause kept past it must not meter
		defer func() {
			over.Store(true)
			if p := recover(); p != nil {
				t := fmt.Sprintf("%T", p)
				q.prepPanic.Store(&t)
			}
			s.pace.done(piece())
			q.preparedAt.Store(s.clk.Now().UnixNano())
			q.preparing.Store(false)
			s.poke()
		}()
		if q.ended.Load() {
			return
		}
		f(func() bool {
			if over.Load() || q.ended.Load() {
				return false
			}
			s.pace.wait(piece())
			piece = s.pace.meter()
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
// piece at a time) take the time a stream takes while the loop has rows to run: each step's
// end adds to a credit the time since the last, times the works under way over them and the
// step's rows together (one work beside 16 streams: a seventeenth), which each piece spends by
// the processor time it took. A piece that finds no credit left waits until a step's end
// brings some or a piece before it passes on what it left; the pieces of several works take
// turns, the longest waiting first. An idle loop lets every piece go at once. Where the steps wait on a device (a GPU's 20 ms beside 16 streams), that is
// about a millisecond a step, a mask over a large vocabulary in a step or two; where they
// share the work's core, the streams lose what one more stream would cost them.
type pacer struct {
	clk     clock.Clock
	meter   meter
	mu      sync.Mutex
	busy    bool
	working int           // works begun and not done
	credit  time.Duration // what work may still take; below zero, what it took ahead
	since   time.Time     // the last step's end, or when the loop last became busy
	waiting []chan struct{}
}

// wait charges ran, the time of the caller's piece since its last wait, and returns once the
// caller may run another: at once while credit is left and no other piece waits, or while
// the loop is idle.
func (p *pacer) wait(ran time.Duration) {
	p.mu.Lock()
	p.credit -= ran
	if !p.busy || p.credit > 0 && len(p.waiting) == 0 {
		p.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	p.waiting = append(p.waiting, ch)
	if p.credit > 0 {
		p.next() // another waited longer: it goes first
	}
	p.mu.Unlock()
	<-ch
}

// begin counts a work begun.
func (p *pacer) begin() {
	p.mu.Lock()
	p.working++
	p.mu.Unlock()
}

// done charges the last piece of a work that has ended, and passes what credit is left on.
func (p *pacer) done(ran time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.working--
	p.credit -= ran
	if p.credit > 0 {
		p.next()
	}
}

// next lets the longest waiting piece go. Called with mu held.
func (p *pacer) next() {
	if len(p.waiting) > 0 {
		close(p.waiting[0])
		p.waiting[0] = nil
		p.waiting = p.waiting[1:]
	}
}

// stepped counts a step of rows rows that ran (under the pacer's lock, so that a piece that
// read the count before its wait sees a later one after it) and adds the works' share of the
// time since the last to the credit, which holds no more than one step's: work that did not
// wait for it does not save it up.
func (p *pacer) stepped(steps *atomic.Uint64, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	steps.Add(1)
	now := p.clk.Now()
	share := time.Duration(0)
	if p.working > 0 {
		share = now.Sub(p.since) * time.Duration(p.working) / time.Duration(rows+p.working)
	}
	p.since = now
	p.credit = min(p.credit+share, share)
	if p.credit > 0 {
		p.next()
	}
}

// setBusy records whether the loop has rows to run; idle, it lets every waiting piece go,
// and once busy again the credit starts from none.
func (p *pacer) setBusy(busy bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if busy && !p.busy {
		p.credit, p.since = 0, p.clk.Now()
	}
	p.busy = busy
	if !busy {
		for _, ch := range p.waiting {
			close(ch)
		}
		clear(p.waiting)
		p.waiting = p.waiting[:0]
	}
}

// A meter measures a piece of work done on the calling goroutine: calling it starts the
// piece, and the function it returns, called on the same goroutine, ends it and says what
// processor time it took.
type meter func() (end func() time.Duration)
