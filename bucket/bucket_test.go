package bucket

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)

func TestBucketRefillsAtItsRateUpToItsBurst(t *testing.T) {
	lim := Limit{PerSecond: 2, Burst: 4}
	b := Full(lim, t0)
	if w := b.Wait(lim, t0, 4); w != 0 {
		t.Fatalf("full bucket: wait %v for its burst", w)
	}
	b.Take(4)
	if w := b.Wait(lim, t0, 1); w != 500*time.Millisecond {
		t.Fatalf("empty at 2/s: wait %v for 1, want 500ms", w)
	}
	if got := b.Level(lim, t0.Add(time.Second)); got != 2 {
		t.Fatalf("after 1 s: %v, want 2", got)
	}
	if got := b.Level(lim, t0.Add(time.Hour)); got != 4 {
		t.Fatalf("after an hour: %v, want the burst 4", got)
	}
	if !b.Full(lim, t0.Add(time.Hour)) || b.Refill(lim) != 0 {
		t.Fatal("a refilled bucket is not full")
	}
}

func TestBucketDebtRefundsAndWhatNeverFits(t *testing.T) {
	lim := Limit{PerSecond: 10, Burst: 100}
	b := Full(lim, t0)
	b.Take(150) // settled for more than it held: 50 in debt
	if got := b.Level(lim, t0); got != -50 {
		t.Fatalf("debt: %v", got)
	}
	if w := b.Wait(lim, t0, 10); w != 6*time.Second {
		t.Fatalf("wait out of debt: %v, want 6s", w)
	}
	if r := b.Refill(lim); r != 15*time.Second {
		t.Fatalf("refill from -50 at 10/s: %v, want 15s", r)
	}
	b.Give(lim, 1000)
	if got := b.Level(lim, t0); got != 100 {
		t.Fatalf("a refund above the burst: %v, want 100", got)
	}
	if w := b.Wait(lim, t0, 101); w != Forever {
		t.Fatalf("more than the burst: wait %v, want Forever", w)
	}
	still := Limit{Burst: 1}
	s := Full(still, t0)
	s.Take(1)
	if w := s.Wait(still, t0.Add(time.Hour), 1); w != Forever || s.Refill(still) != Forever {
		t.Fatalf("no refill: wait %v", w)
	}
}

func TestALimitChangedBetweenCallsAppliesFromTheNext(t *testing.T) {
	b := Full(Limit{PerSecond: 1, Burst: 10}, t0)
	smaller := Limit{PerSecond: 1, Burst: 3}
	if got := b.Level(smaller, t0.Add(time.Second)); got != 3 {
		t.Fatalf("burst lowered by a reload: %v, want 3", got)
	}
}
