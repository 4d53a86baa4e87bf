package admission

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Yield paces bulk work the server starts on its own (a job's documents) behind an endpoint's
// interactive traffic: while an interactive request came to the endpoint's Gate within Window,
// at most Few such units run at once; otherwise as many as their caller starts. A lower class
// in the batcher alone is not enough: the work's own host side (reading, tokenizing, storing)
// takes the same cores, and its requests count in the queue depth the watermarks read.
type Yield struct {
	gate   *Gate
	clk    clock.Clock
	few    int
	window time.Duration

	mu    sync.Mutex
	busy  int
	freed chan struct{} // closed, and replaced, when a unit ends
}

// NewYield paces units behind g's interactive traffic: few at once for window after the last
// interactive request. few 0 turns the pacing off.
func NewYield(g *Gate, clk clock.Clock, few int, window time.Duration) (*Yield, error) {
	if g == nil || clk == nil {
		return nil, fmt.Errorf("admission: a yield needs a gate and a clock")
	}
	if few < 0 || window < 0 {
		return nil, fmt.Errorf("admission: a yield's size (%d) and window (%s) must not be negative", few, window)
	}
	return &Yield{gate: g, clk: clk, few: few, window: window, freed: make(chan struct{})}, nil
}

// Acquire waits until a unit may start and returns the func that ends it (call it once), or
// ctx's error.
func (y *Yield) Acquire(ctx context.Context) (func(), error) {
	for {
		y.mu.Lock()
		now := y.clk.Now()
		about, until := y.gate.InteractiveWithin(now, y.window)
		if y.few == 0 || !about || y.busy < y.few {
			y.busy++
			y.mu.Unlock()
			var once sync.Once
			return func() { once.Do(y.end) }, nil
		}
		freed := y.freed
		y.mu.Unlock()
		t := y.clk.NewTimer(until.Sub(now))
		select {
		case <-freed:
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		t.Stop()
	}
}

func (y *Yield) end() {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.busy--
	close(y.freed)
	y.freed = make(chan struct{})
}
