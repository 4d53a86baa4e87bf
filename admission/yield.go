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

	mu      sync.Mutex
	busy    int
	waiters []chan struct{} // in arrival order; a unit's end hands its place to the first
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
	return &Yield{gate: g, clk: clk, few: few, window: window}, nil
}

// Acquire waits until a unit may start and returns the func that ends it (call it once), or
// ctx's error. Waiters are woken one at a time, as places free, in their order; all of them
// look again when the interactive window ends.
func (y *Yield) Acquire(ctx context.Context) (func(), error) {
	for {
		y.mu.Lock()
		now := y.clk.Now()
		about, until := y.gate.InteractiveWithin(now, y.window)
		if y.few == 0 || !about || y.busy < y.few {
			y.busy++
			y.mu.Unlock()
			return y.ender(), nil
		}
		turn := make(chan struct{})
		y.waiters = append(y.waiters, turn)
		y.mu.Unlock()
		t := y.clk.NewTimer(until.Sub(now))
		select {
		case <-turn:
			t.Stop()
			return y.ender(), nil // the place of the unit that ended
		case <-t.C():
			if y.leave(turn) {
				continue
			}
			return y.ender(), nil // handed a place as the window ended
		case <-ctx.Done():
			t.Stop()
			if !y.leave(turn) {
				y.ender()() // handed a place meanwhile: pass it on
			}
			return nil, ctx.Err()
		}
	}
}

// leave takes turn out of the waiters; false means a place was handed to it first.
func (y *Yield) leave(turn chan struct{}) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	for i, w := range y.waiters {
		if w == turn {
			y.waiters = append(y.waiters[:i], y.waiters[i+1:]...)
			return true
		}
	}
	return false
}

func (y *Yield) ender() func() {
	var once sync.Once
	return func() { once.Do(y.end) }
}

// end frees the ending unit's place and lets waiters in while there is room: all of them when
// no interactive request is about, else up to few running (places taken while traffic was
// quiet are not handed on).
func (y *Yield) end() {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.busy--
	about, _ := y.gate.InteractiveWithin(y.clk.Now(), y.window)
	for len(y.waiters) > 0 && (y.few == 0 || !about || y.busy < y.few) {
		y.busy++
		close(y.waiters[0])
		y.waiters = y.waiters[1:]
	}
}
