package handlers

import (
	"sync"
	"time"

	"github.com/sluice-serving/sluice/bucket"
)

// refusalSampler lets at most a given number of refusal lines a second through for one
// route, and counts the ones it holds back; the next line written for the route, a refusal's
// or any other, reports that count (refusals_not_logged), so the log still adds up to every
// refusal once the route answers again. At ten times overload a line per refusal would be
// most of what the server writes, and the metrics count them anyway.
type refusalSampler struct {
	lines bucket.Limit // a second's lines, refilled as the second goes

	mu      sync.Mutex
	b       bucket.Bucket
	skipped uint64 // lines held back since the last one let through
}

func newRefusalSampler(perSecond int, now time.Time) *refusalSampler {
	lim := bucket.Limit{PerSecond: float64(perSecond), Burst: float64(perSecond)}
	return &refusalSampler{lines: lim, b: bucket.Full(lim, now)}
}

// admit says whether a refusal at now gets its line, and if so how many were held back
// before it.
func (r *refusalSampler) admit(now time.Time) (skipped uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b.Wait(r.lines, now, 1) > 0 {
		r.skipped++
		return 0, false
	}
	r.b.Take(1)
	skipped, r.skipped = r.skipped, 0
	return skipped, true
}

// takeSkipped returns the refusals held back since the last line written, for a line that is
// not a refusal's, and starts the count again.
func (r *refusalSampler) takeSkipped() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.skipped
	r.skipped = 0
	return n
}
