package main

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestPoissonGapsAreExponentialWithMeanOneOverRate(t *testing.T) {
	const rate, n = 250.0, 50000
	p := NewPoisson(rate, rand.New(rand.NewPCG(7, 7)))
	var sum, sumSq float64
	for i := 0; i < n; i++ {
		g := p.Gap().Seconds()
		if g < 0 {
			t.Fatalf("negative gap %v", g)
		}
		sum += g
		sumSq += g * g
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	// An exponential distribution has sd == mean; a fixed-interval schedule would have sd 0.
	if math.Abs(mean*rate-1) > 0.02 {
		t.Errorf("mean gap %.5fs, want %.5fs", mean, 1/rate)
	}
	if math.Abs(sd/mean-1) > 0.03 {
		t.Errorf("coefficient of variation %.3f, want 1 (exponential)", sd/mean)
	}
}

type firing struct {
	seq     uint64
	at      time.Time // scheduled
	firedAt time.Time
}

func TestOpenLoopFiresOnAbsoluteScheduleAndCatchesUp(t *testing.T) {
	clk := clock.NewFake(epoch)
	var mu sync.Mutex
	var fired []firing
	fire := func(seq uint64, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		fired = append(fired, firing{seq, at, clk.Now()})
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(fired) }
	gap := func() time.Duration { return 100 * time.Millisecond }
	armed := clk.TimerCreated()
	done := make(chan struct{})
	go func() {
		RunOpenLoop(context.Background(), clk, epoch, epoch.Add(time.Second), gap, fire)
		close(done)
	}()
	<-armed
	if count() != 0 {
		t.Fatal("fired before the first arrival time")
	}
	// Jump past two arrivals at once, as a late wake-up would: both must fire, and the next
	// arrival must stay at 300 ms rather than move to 250+100.
	armed = clk.TimerCreated()
	clk.Advance(250 * time.Millisecond)
	<-armed
	if got := count(); got != 2 {
		t.Fatalf("after 250ms: %d arrivals, want 2", got)
	}
	armed = clk.TimerCreated()
	clk.Advance(50 * time.Millisecond)
	<-armed
	if got := count(); got != 3 {
		t.Fatalf("after 300ms: %d arrivals, want 3", got)
	}
	for i := 0; i < 6; i++ {
		armed = clk.TimerCreated()
		clk.Advance(100 * time.Millisecond)
		if i < 5 {
			<-armed
		}
	}
	<-done
	if len(fired) != 9 { // 100..900 ms; 1000 ms is not before the end
		t.Fatalf("%d arrivals, want 9", len(fired))
	}
	for i, f := range fired {
		want := epoch.Add(time.Duration(i+1) * 100 * time.Millisecond)
		if f.seq != uint64(i) || !f.at.Equal(want) {
			t.Errorf("arrival %d: seq %d at %v, want seq %d at %v", i, f.seq, f.at.Sub(epoch), i, want.Sub(epoch))
		}
		if f.firedAt.Before(f.at) {
			t.Errorf("arrival %d fired at %v, before its time %v", i, f.firedAt.Sub(epoch), f.at.Sub(epoch))
		}
	}
	if fired[0].firedAt != epoch.Add(250*time.Millisecond) || fired[1].firedAt != epoch.Add(250*time.Millisecond) {
		t.Error("the two overdue arrivals should both fire at the late wake-up")
	}
}

func TestOpenLoopReturnsWhenCanceled(t *testing.T) {
	clk := clock.NewFake(epoch)
	ctx, cancel := context.WithCancel(context.Background())
	armed := clk.TimerCreated()
	done := make(chan struct{})
	fires := 0
	go func() {
		RunOpenLoop(ctx, clk, epoch, epoch.Add(time.Hour), func() time.Duration { return time.Second },
			func(uint64, time.Time) { fires++ })
		close(done)
	}()
	<-armed
	cancel()
	<-done
	if fires != 0 {
		t.Errorf("%d arrivals after cancel, want 0", fires)
	}
	if clk.Pending() != 0 {
		t.Errorf("%d timers left pending", clk.Pending())
	}
}

func TestInFlightCapRefusesWithoutBlocking(t *testing.T) {
	f := NewInFlight(2)
	for i := 0; i < 2; i++ {
		if !f.TryAcquire() {
			t.Fatalf("acquire %d of 2 failed", i+1)
		}
	}
	if f.TryAcquire() {
		t.Fatal("a third acquire should fail at a cap of 2")
	}
	f.Release()
	if !f.TryAcquire() {
		t.Fatal("a released slot should be reusable")
	}
	if f.Current() != 2 || f.High() != 2 {
		t.Errorf("current %d high %d, want 2 and 2", f.Current(), f.High())
	}
	unlimited := NewInFlight(0)
	for i := 0; i < 100; i++ {
		if !unlimited.TryAcquire() {
			t.Fatal("a cap of 0 means no cap")
		}
	}
	if unlimited.High() != 100 {
		t.Errorf("high %d, want 100", unlimited.High())
	}
}

func TestClosedLoopKeepsWorkersBusyUntilEnd(t *testing.T) {
	const workers = 3
	clk := clock.NewFake(epoch)
	var mu sync.Mutex
	busy, most, calls := 0, 0, 0
	started := make(chan struct{}, 100)
	release := make(chan struct{})
	work := func(ctx context.Context, worker int) {
		mu.Lock()
		busy++
		calls++
		most = max(most, busy)
		mu.Unlock()
		started <- struct{}{}
		<-release
		mu.Lock()
		busy--
		mu.Unlock()
	}
	done := make(chan struct{})
	go func() {
		RunClosedLoop(context.Background(), clk, workers, epoch.Add(time.Second), work)
		close(done)
	}()
	for i := 0; i < workers; i++ {
		<-started
	}
	// Each finished call is followed at once by the same worker's next one.
	for i := 0; i < 5; i++ {
		release <- struct{}{}
		<-started
	}
	clk.Advance(time.Second)
	close(release)
	<-done
	if most != workers {
		t.Errorf("at most %d calls at once, want %d", most, workers)
	}
	// 3 first calls and 5 follow-ups; past the end a finishing worker starts nothing new.
	if calls != workers+5 {
		t.Errorf("%d calls, want %d", calls, workers+5)
	}
}
