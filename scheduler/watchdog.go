package scheduler

import (
	"context"
	"slices"
	"time"
)

// watchdog ends the streams of a step that has run past its limit (the decoder hangs): it
// claims the step, stops it (Model.Terminate), ends that step's sequences and leaves the
// scheduler unhealthy until the step returns. Sequences that were not in the step, queued
// ones included, wait for the next.
func (s *Scheduler) watchdog(ctx context.Context) {
	period := max(s.cfg.StallTimeout/4, time.Millisecond)
	for {
		t := s.clk.NewTimer(period)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.stopped:
			t.Stop()
			return
		case <-t.C():
		}
		started := s.stepStarted.Load()
		s.mu.Lock()
		limit := s.inFlightLimit
		s.mu.Unlock()
		if started <= 0 || s.clk.Now().Sub(time.Unix(0, started)) < limit {
			continue
		}
		if !s.stepStarted.CompareAndSwap(started, -started) {
			continue // the step ended meanwhile (the limit read may have been the next one's)
		}
		s.m.stalled()
		s.runner.Terminate()
		s.mu.Lock()
		rows := slices.Clone(s.inFlight)
		s.mu.Unlock()
		for _, q := range rows {
			s.finish(q, errorEvent(ErrStalled), "stall")
		}
	}
}

// stallSlack is how many times its expected cost a step may take before it counts as hung:
// wide, because a step's cost varies with the machine's other load, and a false trip ends
// streams while a late one only delays the verdict on a true hang.
const stallSlack = 8

// stepCost learns what a step costs from the steps that finished, so that a step with a lot
// to compute (a long prompt's prefill) is given the time it needs and only one far past its
// expected cost counts as hung. Decode steps are measured per row and prefill steps per
// computed position, each as a moving average; a kind not yet measured borrows the other's
// rate. Owned by the loop goroutine.
type stepCost struct {
	perRow, perPosition time.Duration // 0 until measured
}

func (c *stepCost) observe(prefill bool, batch, seq int, took time.Duration) {
	rate, units := &c.perRow, batch
	if prefill {
		rate, units = &c.perPosition, batch*seq
	}
	per := took / time.Duration(max(units, 1))
	if *rate == 0 {
		*rate = per
	} else {
		*rate += (per - *rate) / 8
	}
}

// limit is how long a step of batch rows and seq new positions each may run: stallSlack times
// its expected cost, never under floor (the configured stall timeout).
func (c *stepCost) limit(prefill bool, batch, seq int, floor time.Duration) time.Duration {
	rate, units := c.perRow, batch
	if prefill {
		rate, units = c.perPosition, batch*seq
		if rate == 0 {
			rate = c.perRow // a position of prefill costs at most a row of decode
		}
	} else if rate == 0 {
		rate = c.perPosition
	}
	return max(floor, stallSlack*rate*time.Duration(units))
}
