package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Poisson draws the gaps between arrivals of a Poisson process: independent, exponentially
// distributed, with mean 1/rate. That is what many independent clients look like to a server,
// and its bursts are what admission control has to absorb.
type Poisson struct {
	rate float64
	rng  *rand.Rand
}

// NewPoisson returns a gap source for rate arrivals per second; rate must be > 0.
func NewPoisson(rate float64, rng *rand.Rand) *Poisson { return &Poisson{rate: rate, rng: rng} }

// Gap returns the time to the next arrival.
func (p *Poisson) Gap() time.Duration {
	return time.Duration(p.rng.ExpFloat64() / p.rate * float64(time.Second))
}

// RunOpenLoop calls fire once for every arrival of the schedule from start to end, at the
// arrival's time, and returns at end or when ctx is done. Arrivals are placed on absolute
// times (start plus the sum of gaps), so a late wake-up is caught up at once instead of
// stretching the schedule: the offered load is the schedule's, whatever the server does.
// fire must not block; it is handed the arrival's sequence number and scheduled time.
func RunOpenLoop(ctx context.Context, clk clock.Clock, start, end time.Time, gap func() time.Duration, fire func(seq uint64, at time.Time)) {
	next := start
	for seq := uint64(0); ; seq++ {
		next = next.Add(gap())
		if !next.Before(end) {
			return
		}
		if wait := next.Sub(clk.Now()); wait > 0 {
			t := clk.NewTimer(wait)
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		fire(seq, next)
	}
}

// RunClosedLoop runs workers goroutines, each calling work back to back until end or until ctx
// is done, and returns when all have finished their last call. The offered load is whatever
// the server's latency allows: the loop models a fixed population of clients.
func RunClosedLoop(ctx context.Context, clk clock.Clock, workers int, end time.Time, work func(ctx context.Context, worker int)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && clk.Now().Before(end) {
				work(ctx, w)
			}
		}()
	}
	wg.Wait()
}

// InFlight caps concurrent requests in the open loop without ever blocking: an arrival that
// finds the cap reached is dropped by the generator and reported as such, so that the open loop
// never quietly turns into a closed one.
type InFlight struct {
	limit int64
	cur   atomic.Int64
	high  atomic.Int64
}

// NewInFlight returns a cap of limit concurrent requests; limit <= 0 means no cap.
func NewInFlight(limit int) *InFlight { return &InFlight{limit: int64(limit)} }

// TryAcquire takes a slot if one is free.
func (f *InFlight) TryAcquire() bool {
	for {
		cur := f.cur.Load()
		if f.limit > 0 && cur >= f.limit {
			return false
		}
		if f.cur.CompareAndSwap(cur, cur+1) {
			f.raiseHigh(cur + 1)
			return true
		}
	}
}

// Acquire takes a slot unconditionally; the closed loop uses it only to track the count.
func (f *InFlight) Acquire() { f.raiseHigh(f.cur.Add(1)) }

// Release frees a slot.
func (f *InFlight) Release() { f.cur.Add(-1) }

// Current is the number of requests in flight now.
func (f *InFlight) Current() int64 { return f.cur.Load() }

// High is the most requests that were ever in flight at once.
func (f *InFlight) High() int64 { return f.high.Load() }

func (f *InFlight) raiseHigh(n int64) {
	for {
		h := f.high.Load()
		if n <= h || f.high.CompareAndSwap(h, n) {
			return
		}
	}
}
