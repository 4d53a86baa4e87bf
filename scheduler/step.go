package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/kvcache"
)

// runnable is the running sequences that can take a step: not paused on their reader.
func (s *Scheduler) runnable() []*sequence {
	rows := s.scratch.rows[:0]
	for _, q := range s.running {
		if !q.hasPending && !q.ended.Load() {
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

// runGroup makes room for every row's new tokens (preempting when the pool is short), runs
// one step over them, writes their keys and values back, and hands each row's logits to its
// Chooser.
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
	shape := s.model.Shape()
	copyStart := s.clk.Now()
	st := s.scratch.build(kept, s.pool, shape, s.cfg.PadID)
	start := s.clk.Now()
	copied := start.Sub(copyStart)
	prefill := st.Seq > 1
	s.mu.Lock()
	s.inFlight = append(s.inFlight[:0], kept...)
	s.inFlightLimit = s.cost.limit(prefill, st.Batch, st.Seq, s.cfg.StallTimeout)
	s.mu.Unlock()
	s.stepStarted.Store(start.UnixNano())
	err := s.model.RunStep(ctx, st)
	s.scratch.remember(kept, st, err == nil)
	s.stepStarted.Store(0)
	s.mu.Lock()
	clear(s.inFlight)
	s.inFlight = s.inFlight[:0]
	s.mu.Unlock()
	end := s.clk.Now()
	s.m.step(end.Sub(start), len(kept), prefill)
	if err == nil {
		s.cost.observe(prefill, st.Batch, st.Seq, end.Sub(start))
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
	// Write every row's new keys and values back into its blocks, then choose its tokens:
	// choosing may end a sequence, which frees its blocks.
	writeBack := s.clk.Now()
	for i, q := range kept {
		if q.ended.Load() {
			continue // the watchdog ended it during the step; the boundary retires it
		}
		k := q.take
		from := st.Past + st.Seq - k
		for l := range shape.Layers {
			s.pool.Scatter(q.table, i, from, k, l, kvcache.Key, kvcache.Tensor{Data: st.Present[l][0], Batch: st.Batch, Positions: st.Past + st.Seq})
			s.pool.Scatter(q.table, i, from, k, l, kvcache.Value, kvcache.Tensor{Data: st.Present[l][1], Batch: st.Batch, Positions: st.Past + st.Seq})
		}
		if q.scorer != nil {
			s.scorePrompt(q, st, i, k, shape.Vocab)
		}
		s.pool.Append(q.table, q.tokens[q.table.Len():q.table.Len()+k])
	}
	s.m.kvCopy(copied + s.clk.Now().Sub(writeBack))
	for i, q := range kept {
		if q.ended.Load() || q.uncached() > 0 {
			continue // ended meanwhile, or a chunk of a prompt whose rest is still to come
		}
		at := (i*st.Seq + st.Seq - 1) * shape.Vocab
		s.emit(q, q.req.Chooser.Choose(st.Logits[at:at+shape.Vocab]), end)
	}
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
	select {
	case q.events <- ev:
	default:
		q.pending, q.hasPending = ev, true
		q.pausedAt = now
		q.paused.Store(true)
		s.m.paused()
	}
}

// scorePrompt hands q's scorer the scores of the prompt positions row i computed in st (k new
// positions after those q's table holds): position p's scores predict prompt token p+1.
func (s *Scheduler) scorePrompt(q *sequence, st *engine.Step, i, k, vocab int) {
	base := q.table.Len()
	for t := range k {
		next := base + t + 1
		if next >= q.promptLen {
			return
		}
		at := (i*st.Seq + st.Seq - k + t) * vocab
		q.scorer.ScorePrompt(next, st.Logits[at:at+vocab])
	}
}
