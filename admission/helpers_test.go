package admission

import (
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

var epoch = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// fakeSource is a Queue whose state the test sets by hand. A Gate reads its Limits once, when
// it is built: change them with setLimits before NewGate.
type fakeSource struct {
	mu  sync.Mutex
	l   Load
	lim Limits
}

func newFakeSource() *fakeSource {
	return &fakeSource{lim: Limits{Workers: 1, QueueSize: 256, MaxQueueWait: time.Second,
		Weights: [NumPriorities]int{4, 1}}}
}

func (s *fakeSource) Load() Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.l
}

func (s *fakeSource) Limits() Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lim
}

func (s *fakeSource) setLimits(f func(lim *Limits)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.lim)
}

func (s *fakeSource) set(f func(l *Load)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.l)
}

// setDepth puts depth requests in the source: all running up to the workers' worth... kept
// simple: everything waits in the interactive class.
func (s *fakeSource) setDepth(depth int) {
	s.set(func(l *Load) { l.Waiting[Interactive], l.Running = depth, 0 })
}

func (s *fakeSource) complete(n int) {
	s.set(func(l *Load) { l.Completed += uint64(n) })
}

func newTestGate(t *testing.T, cfg Config, src Queue, opts ...Option) (*Gate, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(epoch)
	g, err := NewGate("test", cfg, src, fake, nil, opts...)
	if err != nil {
		t.Fatalf("NewGate: %v", err)
	}
	return g, fake
}

func fixedRand(u float64) Option { return WithRand(func() float64 { return u }) }

// warmUp feeds the gate's EWMA perSecond completions a second for warmIntervals + 1 seconds,
// with some depth so the intervals count as busy.
func warmUp(t *testing.T, g *Gate, fake *clock.Fake, src *fakeSource, perSecond int) {
	t.Helper()
	g.Admit(Interactive) // first sample
	for range warmIntervals {
		fake.Advance(foldInterval)
		src.complete(perSecond)
		g.Admit(Interactive)
	}
	if rate, warm := g.drain.get(); !warm || rate != float64(perSecond) {
		t.Fatalf("after warm-up: rate %v warm %v, want %d and warm", rate, warm, perSecond)
	}
}
