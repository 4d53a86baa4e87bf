package batcher

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// BenchmarkSubmit measures the batcher's own overhead per request with a runner that does no
// work: enqueue, batch formation, dispatch, fan-out of the answers. req/batch shows how well
// concurrent callers were grouped.
func BenchmarkSubmit(b *testing.B) {
	for _, c := range []struct {
		name        string
		wait        time.Duration
		parallelism int // goroutines per GOMAXPROCS; 0: a single caller
	}{
		{"serial/window=0", 0, 0},
		{"callers=64xP/window=0", 0, 64},
		{"callers=64xP/window=200us", 200 * time.Microsecond, 64},
	} {
		b.Run(c.name, func(b *testing.B) {
			var batches atomic.Int64
			r := runFunc(func(_ context.Context, batch []int) ([]int, error) {
				batches.Add(1)
				return batch, nil
			})
			cfg := Config{MaxBatchSize: 32, MaxWait: c.wait, MaxPaddedTokens: 32 * 128, QueueSize: 1 << 16, Workers: 2}
			bt, err := New[int, int]("bench", cfg, r, clock.Real(), nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			bt.Start(ctx)
			b.ReportAllocs()
			b.ResetTimer()
			if c.parallelism == 0 {
				for i := range b.N {
					if _, err := bt.Submit(ctx, admission.Interactive, i, Cost{Sequences: 1, MaxLen: 16 + i%100}); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(c.parallelism)
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i++
						if _, err := bt.Submit(ctx, admission.Interactive, i, Cost{Sequences: 1, MaxLen: 16 + i%100}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			if err := bt.Close(ctx); err != nil {
				b.Fatal(err)
			}
			if n := batches.Load(); n > 0 {
				b.ReportMetric(float64(b.N)/float64(n), "req/batch")
			}
		})
	}
}
