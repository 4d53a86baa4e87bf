package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-serving/sluice/stepplan"
)

// runnable is the running sequences that can take a step: not paused on their reader, nor
// waiting on their choice's Prepare. One whose Prepare panicked ends here.
func (s *Scheduler) runnable() []*sequence {
	rows := s.scratch.rows[:0]
	for _, q := range s.running {
		if q.prepPanic.Load() != nil && !q.ended.Load() {
			s.finish(q, prepPanicked(q), "engine_error")
		}
		if !q.hasPending && !q.preparing.Load() && !q.ended.Load() {
			rows = append(rows, q)
		}
	}
	s.scratch.rows = rows
	return rows
}

// runRows runs one iteration's steps: prefill for the rows with several new tokens (newly
// admitted or resumed), then one decode step for the rest. Prefill computes at most
// MaxStepTokens new positions an iteration, shortest prompts first, in steps whose rows x
// padded new positions fit that budget; a prompt longer than what is left is computed in
// chunks over several iterations (chunked prefill), so the decode step of every other
// running sequence still comes once an iteration.
func (s *Scheduler) runRows(ctx context.Context, rows []*sequence) {
	decode := s.scratch.decode[:0]
	prefill := s.scratch.prefill[:0]
	for _, q := range rows {
		if q.uncached() > 1 {
			prefill = append(prefill, q)
		} else {
			q.take = 1
			decode = append(decode, q)
		}
	}
	s.scratch.decode, s.scratch.prefill = decode, prefill
	// A prompt already partly computed goes first, so that a long one is never starved by a
	// stream of short ones; then the shortest.
	slices.SortFunc(prefill, func(a, b *sequence) int {
		if sa, sb := a.table.Len() > 0, b.table.Len() > 0; sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		return a.uncached() - b.uncached()
	})
	budget := s.cfg.MaxStepTokens
	for start := 0; start < len(prefill) && budget > 0; {
		// A step's reservations may have preempted a row not yet run: it waits again.
		rest := slices.DeleteFunc(prefill[start:], func(q *sequence) bool { return q.table == nil || q.ended.Load() })
		prefill = prefill[:start+len(rest)]
		if start >= len(prefill) {
			break
		}
		end, seq := start, 0
		for end < len(prefill) {
			n := max(seq, min(prefill[end].uncached(), budget))
			if end > start && (end-start+1)*n > budget {
				break
			}
			seq = n
			end++
		}
		for _, q := range prefill[start:end] {
			q.take = min(q.uncached(), seq)
		}
		s.runGroup(ctx, prefill[start:end])
		budget -= (end - start) * seq
		start = end
	}
	if len(decode) > 0 {
		s.runGroup(ctx, decode)
	}
}

// runGroup makes room for every row's new tokens (preempting when the pool is short), hands
// the runner the plan of one step over them, records the tokens it computed, and hands each
// row's logits to its Chooser.
func (s *Scheduler) runGroup(ctx context.Context, rows []*sequence) {
	for _, q := range rows {
		if q.state == seqRunning && !q.ended.Load() {
			s.reserve(q)
		}
	}
	// Reserving may have preempted rows that reserved before: keep those still running.
	kept := s.scratch.group[:0]
	for _, q := range rows {
		if q.state == seqRunning && !q.ended.Load() {
			kept = append(kept, q)
		}
	}
	s.scratch.group = kept
	if len(kept) == 0 {
		return
	}
	plan := s.scratch.build(kept, s.pool, s.cfg.PadID)
	batch, seq := len(plan.Rows), plan.Seq()
	prefill := seq > 1
	start := s.clk.Now()
	s.mu.Lock()
	s.inFlight = append(s.inFlight[:0], kept...)
	s.inFlightLimit = s.cost.limit(prefill, batch, seq, s.cfg.StallTimeout)
	s.mu.Unlock()
	s.stepStarted.Store(start.UnixNano())
	err := s.run(ctx, plan)
	s.stepStarted.Store(0)
	s.mu.Lock()
	clear(s.inFlight)
	s.inFlight = s.inFlight[:0]
	s.mu.Unlock()
	end := s.clk.Now()
	// The step's time is the model's; moving keys and values is counted apart, as what
	// paging costs. The watchdog's measure is the whole run, which is what it times.
	s.m.step(max(end.Sub(start)-plan.KVTime, 0), len(kept), prefill)
	s.m.kvCopy(plan.KVTime)
	if err == nil {
		s.cost.observe(prefill, batch, seq, end.Sub(start))
	}
	if err != nil {
		if ctx.Err() != nil {
			return // the loop is stopping: shutdown ends these with ErrShutdown
		}
		cause := fmt.Errorf("%w: %w", ErrStepFailed, err)
		for _, q := range kept {
			s.finish(q, errorEvent(cause), "engine_error")
		}
		return
	}
	// The runner has written every row's new keys and values into its blocks: record their
	// tokens, then choose each row's next token (choosing may end a sequence, which frees its
	// blocks).
	for i, q := range kept {
		if q.ended.Load() {
			continue // the watchdog ended it during the step; the boundary retires it
		}
		k := q.take
		if q.scorer != nil && !s.guard(q, func() { s.scorePrompt(q, &plan.Rows[i], s.vocab) }) {
			continue // it panicked, and is ended; the boundary retires it
		}
		s.pool.Append(q.table, q.tokens[q.table.Len():q.table.Len()+k])
	}
	for i, q := range kept {
		if q.ended.Load() || q.uncached() > 0 {
			continue // ended meanwhile, or a chunk of a prompt whose rest is still to come
		}
		logits := plan.Rows[i].Logits
		var c Choice
		if s.guard(q, func() { c = q.req.Chooser.Choose(logits[len(logits)-s.vocab:]) }) {
			s.emit(q, c, end)
		}
	}
}

// run is the runner's step with a panic in it made the step's error: it then ends that
// step's rows as a failed step does, rather than the loop, every other stream and the
// process. The error names only the panic value's type: the value may hold request content.
func (s *Scheduler) run(ctx context.Context, plan *stepplan.Plan) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the runner panicked (%T)", p)
		}
	}()
	return s.runner.Run(ctx, plan)
}

// guard runs f, a call into q's own code (its Chooser, its prompt's scorer), and says whether
// it returned. One that panics ends q alone, as a failed step would, rather than the loop and
// every stream on it.
func (s *Scheduler) guard(q *sequence, f func()) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			s.finish(q, errorEvent(fmt.Errorf("%w: its token's choice panicked (%T)", ErrStepFailed, p)), "engine_error")
			ok = false
		}
	}()
	f()
	return true
}

// emit records a generated token and hands its event to the reader, or, when that is the
// last one, ends the stream with it and frees the blocks at once.
func (s *Scheduler) emit(q *sequence, c Choice, now time.Time) {
	q.tokens = append(q.tokens, c.ID)
	q.generated++
	q.count.Store(int64(q.generated))
	s.progress(q, 1)
	s.tokens.Add(1)
	if q.generated == 1 {
		s.m.firstToken(now.Sub(q.enqueued))
	} else {
		s.m.interToken(now.Sub(q.lastToken))
	}
	q.lastToken = now
	if q.abortedAt.Load() != 0 {
		q.afterAbort++
		s.m.afterDisconnect()
	}
	ev := Event{Choice: c, Index: q.generated}
	switch {
	case c.Stop:
		ev.Done, ev.Finish = true, FinishStop
	case q.generated >= q.req.MaxNewTokens || len(q.tokens) >= s.cfg.MaxPositions:
		ev.Done, ev.Finish = true, FinishLength
	}
	if ev.Done {
		s.finish(q, ev, "")
		s.retire(q, now)
		return
	}
	if c.Prepare != nil {
		s.prepare(q, c.Prepare)
	}
	select {
	case q.events <- ev:
	default:
		q.pending, q.hasPending = ev, true
		q.pausedAt = now
		q.paused.Store(true)
		// A reader that emptied the buffer before paused was set had no reason to wake the
		// loop: with paused set, one more try finds the room it made.
		select {
		case q.events <- ev:
			q.hasPending = false
			q.paused.Store(false)
		default:
			s.m.paused()
		}
	}
}

// scorePrompt hands q's scorer the scores of the prompt positions row computed (the row's
// new positions after those q's table holds): position p's scores predict prompt token p+1.
func (s *Scheduler) scorePrompt(q *sequence, row *stepplan.Row, vocab int) {
	base := q.table.Len()
	for t := range row.Tokens {
		next := base + t + 1
		if next >= q.promptLen {
			return
		}
		q.scorer.ScorePrompt(next, row.Logits[t*vocab:(t+1)*vocab])
	}
}
