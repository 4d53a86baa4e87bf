package admission

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The moving averages of this package (completions per second, the show rate of retry tokens)
// are folded once per foldInterval with weight foldAlpha for the newest interval.
const (
	foldInterval = time.Second
	foldAlpha    = 0.3
)

// lazyFold lets one caller at a time fold a moving average, at most once per foldInterval,
// without a goroutine or a ticker: the first caller that notices an interval has passed takes
// a TryLock that nobody waits on, and everyone else goes on at once. Callers on the request
// path therefore never block on it, and nothing runs while the server is idle.
type lazyFold struct {
	due  atomic.Int64 // UnixNano at which the next fold is due; 0 before the first call
	mu   sync.Mutex   // TryLock only
	last time.Time    // guarded by mu: when the previous fold (or the first call) happened
}

// begin reports whether the caller folds now. When ok, the caller holds the fold until it
// calls end, and span is the time since the previous fold; the first call of all returns ok
// with span 0, for the caller to take its baseline. It never blocks and does not allocate.
func (f *lazyFold) begin(now time.Time) (span time.Duration, ok bool) {
	if due := f.due.Load(); due != 0 && now.UnixNano() < due {
		return 0, false
	}
	if !f.mu.TryLock() {
		return 0, false
	}
	if !f.last.IsZero() {
		span = now.Sub(f.last)
		if span < foldInterval {
			f.mu.Unlock() // another caller folded while this one reached the lock
			return 0, false
		}
	}
	f.last = now
	f.due.Store(now.Add(foldInterval).UnixNano())
	return span, true
}

// end releases the fold that begin granted.
func (f *lazyFold) end() { f.mu.Unlock() }

// ewma is an exponentially weighted moving average; it is guarded by the lazyFold of its
// owner, and published to readers through an atomic by the owner.
type ewma struct{ v float64 }

// fold moves the average towards sample as steps intervals of weight foldAlpha each would, so
// that a fold that comes late (no caller for a while) weighs what on-time folds would have.
func (e *ewma) fold(sample, steps float64) float64 {
	e.v = sample + math.Pow(1-foldAlpha, steps)*(e.v-sample)
	return e.v
}
