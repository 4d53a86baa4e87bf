package admission

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/clock"
)

// benchQueue is a Queue whose Load reads an atomic, as a real one does, so that the benchmark
// measures the door and not a test double's lock.
type benchQueue struct{ waiting atomic.Int64 }

func (q *benchQueue) Load() Load {
	var l Load
	l.Waiting[Interactive] = int(q.waiting.Load())
	return l
}

func (q *benchQueue) Limits() Limits {
	return Limits{QueueSize: 256, MaxQueueWait: time.Second, Workers: 1, Weights: [NumPriorities]int{4, 1}}
}

// benchGate builds a Gate with metrics on the wall clock. When shed is true one request waits
// and the high watermark is 1, so every Admit is refused; the drain_rate policy is warmed by
// hand so refusals take the computed path.
func benchGate(b *testing.B, shed bool) *Gate {
	b.Helper()
	q := &benchQueue{}
	high := 1 << 20
	if shed {
		q.waiting.Store(1)
		high = 1
	}
	g, err := NewGate("bench", Config{HighWatermark: high, Policy: PolicyDrainRate,
		StaticRetryAfter: time.Second}, q, clock.Real(), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	g.drain.rate.Store(math.Float64bits(50))
	g.drain.warm.Store(warmIntervals)
	return g
}

// BenchmarkAdmit measures the door itself: one Admit per op, admitted or refused (with a
// computed, jittered Retry-After and the metrics updated).
func BenchmarkAdmit(b *testing.B) {
	for _, c := range []struct {
		name string
		shed bool
	}{{"admitted", false}, {"refused", true}} {
		b.Run(c.name, func(b *testing.B) {
			g := benchGate(b, c.shed)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, ok := g.Admit(Bulk); ok == c.shed {
					b.Fatal("unexpected outcome")
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			g := benchGate(b, c.shed)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					g.Admit(Interactive)
				}
			})
		})
	}
}
