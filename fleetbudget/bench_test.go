package fleetbudget

import (
	"context"
	"io"
	"log/slog"
	"slices"
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
	for _, tc := range []struct {
		name   string
		shared bool
		budget admission.Budget
	}{
		{"local", false, admission.Budget{RequestsPerSecond: 1e9, TokensPerSecond: 1e12}},
		{"redis", true, admission.Budget{RequestsPerSecond: 1e9, TokensPerSecond: 1e12}},
		{"redis-slots", true, admission.Budget{RequestsPerSecond: 1e9, TokensPerSecond: 1e12, MaxConcurrent: 1 << 20}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var store admission.BudgetStore
			if tc.shared {
				s, err := New(Config{URL: srv.URL, Failure: FailClosed, Replicas: 1, Timeout: time.Second, LeaseTTL: 3 * time.Second},
					clock.Real(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				store = s
			}
			budgets, err := admission.NewBudgets(admission.BudgetsConfig{}, store, clock.Real(), nil)
			if err != nil {
				b.Fatal(err)
			}
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
