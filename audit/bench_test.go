package audit

import (
	"context"
	"testing"
)

// BenchmarkAppend is one record appended and acknowledged by the embedded server (its file
// store on the test's temporary directory): one at a time (the latency an append adds to an
// otherwise idle request), and from many goroutines at once (what the group commit sustains).
func BenchmarkAppend(b *testing.B) {
	rec := plain(1)
	b.Run("sequential", func(b *testing.B) {
		l := openLog(b, openBox(b, b.TempDir()), "r1", defaults)
		b.ResetTimer()
		for b.Loop() {
			if _, err := l.Append(context.Background(), rec); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("parallel", func(b *testing.B) {
		l := openLog(b, openBox(b, b.TempDir()), "r1", defaults)
		b.SetParallelism(32)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := l.Append(context.Background(), rec); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
