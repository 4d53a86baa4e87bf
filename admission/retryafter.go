package admission

import (
	"math"
	"strconv"
	"time"
)

// RetryAfterRule is how a wait becomes a Retry-After, the one rule behind every refusal's
// header: spread by Jitter, rounded up to the whole seconds the header's delta-seconds
// require, at least 1 s, at most Max.
type RetryAfterRule struct {
	Max time.Duration
	// Jitter spreads a wait by up to this share either way, so that callers refused together
	// do not come back together; 0: none.
	Jitter float64
}

// The rules in use. A refusal for the server's own state (a queue, a model loading, a
// shutdown) asks for at most a minute, as common clients ignore longer ones; a caller's own
// limit (its budget, its failed logins) says honestly how long, up to a day.
var (
	ServerRetryAfter = RetryAfterRule{Max: MaxRetryAfter}
	DrainRetryAfter  = RetryAfterRule{Max: MaxRetryAfter, Jitter: jitterFraction}
	CallerRetryAfter = RetryAfterRule{Max: 24 * time.Hour}
)

// Of is the Retry-After for a wait of seconds (+Inf: as long as the rule allows); u, uniform
// in [0, 1), draws the jitter.
func (r RetryAfterRule) Of(seconds, u float64) time.Duration {
	limit := r.Max.Seconds()
	if math.IsNaN(seconds) || seconds > 2*limit {
		seconds = 2 * limit // the cap decides
	}
	s := math.Ceil(seconds * (1 + r.Jitter*(2*u-1)))
	return time.Duration(min(max(s, 1), limit)) * time.Second
}

// Wait is Of for a wait as a Duration, without jitter.
func (r RetryAfterRule) Wait(d time.Duration) time.Duration { return r.Of(d.Seconds(), 0.5) }

// AppendRetryAfter appends d as the header's value, whole seconds; it does not allocate.
func AppendRetryAfter(dst []byte, d time.Duration) []byte {
	return strconv.AppendInt(dst, int64(d/time.Second), 10)
}
