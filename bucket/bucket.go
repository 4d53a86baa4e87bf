package bucket

import (
	"math"
	"time"
)

// Limit is a bucket's refill rate, per second, and its size. A rate of 0 never refills.
type Limit struct {
	PerSecond float64
	Burst     float64
}

// Bucket is what a token bucket held at an instant. Below zero it is in debt, which refills
// like any shortfall (a charge settled for more than it was estimated at).
type Bucket struct {
	tokens float64
	at     time.Time
}

// Full is a bucket holding its whole burst at now.
func Full(l Limit, now time.Time) Bucket { return Bucket{tokens: l.Burst, at: now} }

// Level refills b up to now and says what it holds.
func (b *Bucket) Level(l Limit, now time.Time) float64 {
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(l.Burst, b.tokens+dt*l.PerSecond)
		b.at = now
	}
	return b.tokens
}

// Wait refills b up to now and says how long until it holds n: 0 when it does now, Forever
// when it never will (n above the burst, or no refill).
func (b *Bucket) Wait(l Limit, now time.Time, n float64) time.Duration {
	return l.Wait(b.Level(l, now), n)
}

// Wait is how long a bucket that holds level now takes to hold n: 0 when it does, Forever
// when it never will (n above the burst, or no refill).
func (l Limit) Wait(level, n float64) time.Duration {
	short := n - level
	switch {
	case short <= 0:
		return 0
	case n > l.Burst || l.PerSecond <= 0:
		return Forever
	}
	return durationOf(short / l.PerSecond)
}

// Take removes n from b, into debt if it holds less; Wait says beforehand whether it holds n.
func (b *Bucket) Take(n float64) { b.tokens -= n }

// Give puts n back into b (a refund), never above the burst.
func (b *Bucket) Give(l Limit, n float64) { b.tokens = min(l.Burst, b.tokens+n) }

// Full says whether b holds its whole burst at now.
func (b *Bucket) Full(l Limit, now time.Time) bool { return b.Level(l, now) >= l.Burst }

// Refill is how long b, as it was last refilled, takes to hold its whole burst again.
func (b *Bucket) Refill(l Limit) time.Duration { return l.Refill(b.tokens) }

// Refill is how long a bucket that holds level takes to hold its whole burst.
func (l Limit) Refill(level float64) time.Duration {
	if level >= l.Burst {
		return 0
	}
	if l.PerSecond <= 0 {
		return Forever
	}
	return durationOf((l.Burst - level) / l.PerSecond)
}

// Forever is the wait for what a bucket will never hold.
const Forever = time.Duration(math.MaxInt64)

// durationOf is s seconds, rounded up to the nanosecond so that a wait is never short of
// what refills the bucket, and Forever past what a Duration holds.
func durationOf(s float64) time.Duration {
	if ns := math.Ceil(s * float64(time.Second)); ns < float64(math.MaxInt64) {
		return time.Duration(ns)
	}
	return Forever
}
