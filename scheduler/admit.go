package scheduler

import (
	"slices"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/kvcache"
)

// admit moves waiting sequences into the running set while there is room and their tokens
// fit in the pool, choosing classes by weight and each class in arrival order. A class that
// finds the running set full, or the pool short, takes the place of a running sequence of a
// lower class (preempted for priority, at most PreemptLimit times each).
func (s *Scheduler) admit(now time.Time) {
	var waits [admission.NumPriorities]bool // the class's head waits for a prefix in the making
	for {
		s.mu.Lock()
		var (
			ready [admission.NumPriorities]bool
			first [admission.NumPriorities]*sequence // each class's first in arrival order that may go
		)
		any := false
		for p := range s.waiting {
			if !waits[p] {
				first[p] = s.waiting[p].first(s.readyToAdmit)
			}
			ready[p] = first[p] != nil
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
		q := first[p]
		s.mu.Unlock()

		t := s.pool.NewTable(q.scope)
		cached := 0
		if q.scorer == nil {
			cached = s.pool.Match(t, q.tokens)
		}
		if q.scorer == nil && s.awaitsPrefix(q, cached) {
			// Its prefix is being computed: it takes it from the cache at a next boundary, and
			// its class, in arrival order, waits with it; the other classes go on.
			s.pool.Release(t)
			waits[p] = true
			continue
		}
		need := len(q.tokens) - cached
		fits := s.pool.Reserve(t, need)
		if full || !fits {
			// Lower classes give way only when that admits q: a slot when the set is full,
			// and enough blocks when the pool is short.
			plan := s.bumpPlan(p, full, fits, s.blocksFor(t, need))
			for _, v := range plan {
				s.bump(v)
			}
			clear(s.scratch.victims)
			if !fits && plan != nil {
				fits = s.pool.Reserve(t, need)
			}
			if plan == nil && full {
				s.pool.Release(t)
				return
			}
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
			if s.waiting[p].holds(q) { // ended meanwhile: finish took it out, or will
				s.waiting[p].remove(q)
				s.waitingBy[p].Add(-1)
			}
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

// awaitsPrefix reports whether a running sequence is computing more of q's leading full
// blocks than the prefix cache gave q (cached tokens). q then waits until they are cached
// instead of computing them a second time: the choices of an n > 1 request share one prompt,
// and requests often share a long preamble.
func (s *Scheduler) awaitsPrefix(q *sequence, cached int) bool {
	bt := s.pool.BlockTokens()
	limit := (len(q.tokens) - 1) / bt * bt // Match leaves the last token to compute
	if limit <= cached {
		return false
	}
	for _, r := range s.running {
		if r.ended.Load() || r.table == nil || r.hasPending || r.preparing.Load() || r.uncached() <= 1 {
			continue // only a sequence in prefill and stepping is about to cache blocks
		}
		if r.scope != q.scope {
			continue // its blocks are not q's to take, and waiting for them would tell q of them
		}
		// The blocks both begin with (a block is cached under its whole prefix's hash), of
		// which r has yet to compute some past what q found cached.
		n := min(limit, len(r.tokens)/bt*bt)
		k := 0
		for k+bt <= n && slices.Equal(q.tokens[k:k+bt], r.tokens[k:k+bt]) {
			k += bt
		}
		if k > cached && k > r.table.Len() {
			return true
		}
	}
	return false
}

// bumpingClass is the highest waiting class that a full running set makes room for: one with a
// running sequence below it that may still be preempted. Called with mu held.
func (s *Scheduler) bumpingClass(ready [admission.NumPriorities]bool) (admission.Priority, bool) {
	for _, p := range admission.Priorities {
		if ready[p] && slices.ContainsFunc(s.running, func(q *sequence) bool { return s.bumpable(q, p) }) {
			return p, true
		}
	}
	return 0, false
}

// bumpable reports whether running sequence q may give its place to a waiting one of class
// p: of a lower class, running with blocks, preempted for priority fewer than PreemptLimit
// times.
func (s *Scheduler) bumpable(q *sequence, p admission.Priority) bool {
	return q.req.Priority > p && q.bumped < s.cfg.PreemptLimit && !q.ended.Load() && q.table != nil
}

// bumpPlan is the running sequences of classes below p to preempt so that a waiting sequence
// of class p is admitted: one for a slot when the running set is full, and, when its tokens do
// not fit, enough to free the blocks it needs (each victim's blocks counted as freed, which
// shared prefix blocks are not: the reservation after the bumps still decides). Victims go
// lowest class first, latest admitted first. Nil when the candidates cannot make room.
func (s *Scheduler) bumpPlan(p admission.Priority, full, fits bool, blocks int) []*sequence {
	cands := s.scratch.victims[:0]
	for _, q := range slices.Backward(s.running) { // of those admitted together, the last first
		if s.bumpable(q, p) {
			cands = append(cands, q)
		}
	}
	s.scratch.victims = cands
	slices.SortStableFunc(cands, func(a, b *sequence) int {
		if a.req.Priority != b.req.Priority {
			return int(b.req.Priority) - int(a.req.Priority)
		}
		return b.admitted.Compare(a.admitted)
	})
	freed, n := 0, 0
	for n < len(cands) && ((full && n == 0) || (!fits && freed < blocks)) {
		freed += cands[n].table.Blocks()
		n++
	}
	if (full && n == 0) || (!fits && freed < blocks) {
		return nil
	}
	return cands[:n]
}

// blocksFor is how many more blocks t needs for n more tokens.
func (s *Scheduler) blocksFor(t *kvcache.Table, n int) int {
	bt := s.pool.BlockTokens()
	return (t.Len()+n+bt-1)/bt - t.Blocks()
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
	if !q.ended.Load() { // one that ended meanwhile is not waited for: finish has run or runs
		q.state = seqWaiting
		s.waiting[q.req.Priority].pushFront(q)
		s.waitingBy[q.req.Priority].Add(1)
	}
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
