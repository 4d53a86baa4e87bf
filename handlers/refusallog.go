package handlers

import (
	"sync"
	"time"
)

// refusalSampler lets at most a given number of refusal lines a second through for one
// route, and counts the ones it holds back; the next line written for the route, a refusal's
// or any other, reports that count (refusals_not_logged), so the log still adds up to every
// refusal once the route answers again. At ten times overload a line per refusal would be
// most of what the server writes, and the metrics count them anyway.
type refusalSampler struct {
	perSecond int

	mu      sync.Mutex
	second  int64  // the Unix second being counted
	logged  int    // lines let through in that second
	skipped uint64 // lines held back since the last one let through
}

// admit says whether a refusal at now gets its line, and if so how many were held back
// before it.
func (r *refusalSampler) admit(now time.Time) (skipped uint64, ok bool) {
	sec := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	if sec != r.second {
		r.second, r.logged = sec, 0
	}
	if r.logged >= r.perSecond {
		r.skipped++
		return 0, false
	}
	r.logged++
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
