package scheduler

import (
	"context"
	"time"
)

// watchdog ends every stream when a step has run for StallTimeout (the decoder hangs): it
// claims the step, stops it (Model.Terminate) and leaves the scheduler unhealthy until the
// step returns.
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
		if started <= 0 || s.clk.Now().Sub(time.Unix(0, started)) < s.cfg.StallTimeout {
			continue
		}
		if !s.stepStarted.CompareAndSwap(started, -started) {
			continue // the step ended meanwhile
		}
		s.m.stalled()
		s.model.Terminate()
		s.endAll(ErrStalled, "stall")
	}
}
