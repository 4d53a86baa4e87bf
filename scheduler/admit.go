package scheduler

import (
	"slices"
	"time"

	"github.com/sluice-serving/sluice/admission"
)

// admit moves waiting sequences into the running set while there is room and their tokens
// fit in the pool, choosing classes by weight and each class in arrival order. A class that
// finds the running set full, or the pool short, takes the place of a running sequence of a
// lower class (preempted for priority, at most PreemptLimit times each).
func (s *Scheduler) admit(now time.Time) {
	for {
		s.mu.Lock()
		var ready [admission.NumPriorities]bool
		any := false
		for p := range s.waiting {
			ready[p] = s.waiting[p].n > 0
			any = any || ready[p]
		}
		if !any {
			s.mu.Unlock()
			return
		}
		full := len(s.running) >= s.cfg.MaxRunning
		var p admission.Priority
		if full {
			var ok bool
			if p, ok = s.bumpingClass(ready); !ok {
				s.mu.Unlock()
				return
			}
		} else {
			p = s.pick.Next(ready)
		}
		q := s.waiting[p].head
		s.mu.Unlock()

		if full {
			s.bump(s.priorityVictim(p))
		}
		t := s.pool.NewTable()
		cached := s.pool.Match(t, q.tokens)
		fits := s.pool.Reserve(t, len(q.tokens)-cached)
		for !fits {
			v := s.priorityVictim(p)
			if v == nil {
				break
			}
			s.bump(v)
			fits = s.pool.Reserve(t, len(q.tokens)-cached)
		}
		if !fits {
			s.pool.Release(t)
			if len(s.running) == 0 {
				// Nothing will free blocks: this sequence can never fit.
				s.finish(q, errorEvent(ErrNoRoom), "too_long")
				continue
			}
			return // wait for blocks; arrival order within the class holds
		}
		s.mu.Lock()
		if q.ended.Load() {
			s.mu.Unlock()
			s.pool.Release(t)
			continue
		}
		s.waiting[p].remove(q)
		s.waitingBy[p].Add(-1)
		q.state = seqRunning
		s.mu.Unlock()
		q.table = t
		if !q.preempted {
			s.progress(q, q.promptLen)
		}
		q.admitted = now
		s.running = append(s.running, q)
		s.runningN.Add(1)
		s.m.admitted(cached, len(q.tokens)-cached)
	}
}

// bumpingClass is the highest waiting class that a full running set makes room for: one with a
// running sequence below it that may still be preempted. Called with mu held.
func (s *Scheduler) bumpingClass(ready [admission.NumPriorities]bool) (admission.Priority, bool) {
	for _, p := range admission.Priorities {
		if ready[p] && s.priorityVictim(p) != nil {
			return p, true
		}
	}
	return 0, false
}

// priorityVictim is the running sequence a waiting one of class p may take the place of: of a
// lower class, preempted for priority fewer than PreemptLimit times; the lowest class, and in
// it the latest admitted. Nil when there is none.
func (s *Scheduler) priorityVictim(p admission.Priority) *sequence {
	var v *sequence
	for _, q := range s.running {
		if q.req.Priority <= p || q.bumped >= s.cfg.PreemptLimit || q.ended.Load() || q.table == nil {
			continue
		}
		if v == nil || q.req.Priority > v.req.Priority ||
			(q.req.Priority == v.req.Priority && !q.admitted.Before(v.admitted)) {
			v = q
		}
	}
	return v
}

// bump preempts q for a higher class.
func (s *Scheduler) bump(q *sequence) {
	q.bumped++
	s.preempt(q, true)
}

// reserve makes room for q's new tokens, preempting the lowest-priority, most recently admitted
// sequences while the pool is short; q itself may be the one preempted. A sequence alone that
// still does not fit can never run: it ends with ErrNoRoom.
func (s *Scheduler) reserve(q *sequence) {
	need := q.take
	for !s.pool.Reserve(q.table, need) {
		victim := s.victim()
		if victim == q && len(s.running) == 1 {
			s.finish(q, errorEvent(ErrNoRoom), "too_long")
			s.retire(q, s.clk.Now())
			return
		}
		s.preempt(victim, false)
		if victim == q {
			return
		}
	}
}

// victim is the running sequence to preempt: the lowest class, and in it the latest admitted
// (of those admitted together, the last in the running set).
func (s *Scheduler) victim() *sequence {
	var v *sequence
	for _, q := range s.running {
		if q.ended.Load() || q.table == nil {
			continue
		}
		if v == nil || q.req.Priority > v.req.Priority ||
			(q.req.Priority == v.req.Priority && !q.admitted.Before(v.admitted)) {
			v = q
		}
	}
	return v
}

// preempt gives q's blocks back and puts it at the front of its class's waiting list, to be
// recomputed (prompt and generated tokens) when it is admitted again: because the pool ran
// short, or forPriority.
func (s *Scheduler) preempt(q *sequence, forPriority bool) {
	s.pool.Release(q.table)
	q.table = nil
	q.preempted = true
	if i := slices.Index(s.running, q); i >= 0 {
		s.running = slices.Delete(s.running, i, i+1)
		s.runningN.Add(-1)
	}
	s.mu.Lock()
	q.state = seqWaiting
	s.waiting[q.req.Priority].pushFront(q)
	s.waitingBy[q.req.Priority].Add(1)
	s.mu.Unlock()
	s.m.preempted(forPriority)
}

// progress moves n of q's tokens from the work to do to the work done. A sequence that has
// ended gave its work back already.
func (s *Scheduler) progress(q *sequence, n int) {
	for {
		left := q.workLeft.Load()
		if left <= 0 {
			return
		}
		take := min(int64(n), left)
		if q.workLeft.CompareAndSwap(left, left-take) {
			s.work.Add(-take)
			s.workDone.Add(uint64(take))
			return
		}
	}
}
