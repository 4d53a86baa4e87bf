package fleetbudget

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/fleetbudget/redistest"
)

// BenchmarkAdmission is one request's way through its caller's budget: Admit, then Done with
// fewer tokens than estimated (the usual reconciliation, one settlement), kept in this
// process (local) and in Redis on loopback (redis; redis-slots also takes and frees a
// concurrency lease). It reports each step's p50 and p99 in microseconds; the difference
// between local and redis is what Redis adds to a request.
func BenchmarkAdmission(b *testing.B) {
	srv := redistest.Start(b)
	for _, tc := range benchCases {
		b.Run(tc.name, func(b *testing.B) {
			budgets := benchBudgets(b, srv, tc.shared)
			ctx := context.Background()
			var admits, settles []time.Duration
			for b.Loop() {
				t0 := time.Now()
				ch, ref, err := budgets.Admit(ctx, "tenant:bench", "bench", tc.budget, 100)
				t1 := time.Now()
				if err != nil || ref != nil {
					b.Fatalf("%v %+v", err, ref)
				}
				ch.Done(80)
				admits, settles = append(admits, t1.Sub(t0)), append(settles, time.Since(t1))
			}
			for _, m := range []struct {
				name string
				d    []time.Duration
			}{{"admit", admits}, {"settle", settles}} {
				slices.Sort(m.d)
				b.ReportMetric(float64(m.d[len(m.d)/2].Nanoseconds())/1e3, m.name+"-p50-µs")
				b.ReportMetric(float64(m.d[len(m.d)*99/100].Nanoseconds())/1e3, m.name+"-p99-µs")
			}
		})
	}
}

// benchCases are the stores and budgets the admission benchmarks compare: a budget of requests
// and tokens (one settlement per request, batched with others in Redis), and one with
// concurrency too (a slot taken and freed).
var benchCases = []struct {
	name   string
	shared bool
	budget admission.Budget
}{
	{"local", false, admission.Budget{RequestsPerSecond: 1e9, TokensPerSecond: 1e12}},
	{"redis", true, admission.Budget{RequestsPerSecond: 1e9, TokensPerSecond: 1e12}},
	{"redis-slots", true, admission.Budget{RequestsPerSecond: 1e9, TokensPerSecond: 1e12, MaxConcurrent: 1 << 20}},
}

// benchBudgets are Budgets over this process's buckets or over srv's Redis.
func benchBudgets(b *testing.B, srv *redistest.Server, shared bool) *admission.Budgets {
	var store admission.BudgetStore
	if shared {
		s, err := New(Config{URL: srv.URL, Failure: FailClosed, Replicas: 1, Timeout: time.Second, LeaseTTL: 3 * time.Second},
			clock.Real(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		store = s
	}
	budgets, err := admission.NewBudgets(admission.BudgetsConfig{}, store, clock.Real(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return budgets
}

// BenchmarkAdmissionParallel is BenchmarkAdmission from 32 goroutines at once, as a server's
// requests run: it reports the CPU this process spends per request (user and system time,
// redis-server's own not included), what the budget costs the server beside its work.
func BenchmarkAdmissionParallel(b *testing.B) {
	srv := redistest.Start(b)
	for _, tc := range benchCases {
		b.Run(tc.name, func(b *testing.B) {
			budgets := benchBudgets(b, srv, tc.shared)
			ctx := context.Background()
			b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0))) // 32 goroutines
			before := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ch, ref, err := budgets.Admit(ctx, "tenant:bench", "bench", tc.budget, 100)
					if err != nil || ref != nil {
						b.Errorf("%v %+v", err, ref)
						return
					}
					ch.Done(80)
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
