package admission

import (
	"math"
	"sync/atomic"
	"time"
)

// Constants of the drain_rate estimate. They are the reference's starting values; the
// overload harness, which records every suggestion next to the time its retry was admitted,
// is the instrument for tuning them.
const (
	// warmIntervals is how many intervals with completions the estimate needs before it is
	// trusted; until then the static value (or no header) is used.
	warmIntervals = 3
	// Saturation factor: 1 + occupancyWeight x worker occupancy + streakWeight x
	// min(refusal streak / streakScale, 1), so in [1, 1.25]. Under overload every worker is
	// busy and the factor is about 1.25, which puts the jitter's lower bound (x0.8) right at the
	// predicted opening and the rest just after it; larger factors sent retries past the short
	// window in which the door stays open under sustained overload (sim_test.go). The streak
	// only nudges, as refusals keep coming.
	occupancyWeight = 0.2
	streakWeight    = 0.05
	streakScale     = 5
	// jitterFraction spreads suggestions over +/-20% so refused clients do not come back in
	// lockstep one Retry-After later.
	jitterFraction = 0.2
)

// quietGap is the longest span between folds that is read as busy throughout; past it, an
// endpoint that holds nothing at the fold may have been idle for most of the span.
const quietGap = 2 * foldInterval

// drainRate is the moving average of completions per second. Whichever Admit call first
// notices that an interval has passed folds it (lazyFold), so it never delays a caller and
// the batch loop never touches it. Readers see the rate through atomics.
type drainRate struct {
	fold     lazyFold
	lastDone uint64 // guarded by fold
	seeded   bool   // guarded by fold: a first interval with completions has been seen
	avg      ewma   // guarded by fold

	rate  atomic.Uint64 // float64 bits, completions per second
	warm  atomic.Int32  // intervals with completions, capped at warmIntervals
	folds atomic.Int64  // folds done; for tests and debugging
}

// observe folds the completions counted since the last fold into the average, if at least one
// interval has passed. busy says whether the endpoint held any work: an interval in which it
// held none and completed none says nothing about how fast it drains, so it is skipped rather
// than pulling the average towards zero. It never blocks and does not allocate.
func (d *drainRate) observe(now time.Time, completed uint64, busy bool) {
	span, ok := d.fold.begin(now)
	if !ok {
		return
	}
	defer d.fold.end()
	n := completed - d.lastDone
	d.lastDone = completed
	if span == 0 || (n == 0 && !busy) {
		return // the baseline, or an idle interval
	}
	sample := float64(n) / span.Seconds()
	switch {
	case !d.seeded && n == 0:
		return // nothing measured yet: a stalled start is not a rate
	case d.seeded && !busy && span > quietGap && sample < d.avg.v:
		// No caller came for a while and nothing is held now: the work this span counts
		// ended at some point inside it, so the span overstates how long it took, and the
		// sample can only be too low. Folded, it would send the first refusals of the next
		// burst away for the longest Retry-After.
		return
	case !d.seeded:
		d.seeded = true
		d.avg.v = sample
	default:
		d.avg.fold(sample, span.Seconds()/foldInterval.Seconds())
	}
	d.rate.Store(math.Float64bits(d.avg.v))
	if n > 0 && d.warm.Load() < warmIntervals {
		d.warm.Add(1)
	}
	d.folds.Add(1)
}

// get returns the average completions per second and whether it is warm.
func (d *drainRate) get() (float64, bool) {
	return math.Float64frombits(d.rate.Load()), d.warm.Load() >= warmIntervals
}

// saturationFactor stretches an estimate when the engine is fully occupied and refusals keep
// coming: 1 with idle workers and no streak, 1 + occupancyWeight + streakWeight at most.
func saturationFactor(busyWorkers, workers int, streak int64) float64 {
	occ := 0.0
	if workers > 0 {
		occ = min(float64(busyWorkers)/float64(workers), 1)
	}
	st := min(float64(streak)/streakScale, 1)
	return 1 + occupancyWeight*occ + streakWeight*st
}
