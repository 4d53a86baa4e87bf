package batcher

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// series gathers reg and returns the series of family name with label queue="test", or nil.
// series finds name{queue="test"} and, for a family labelled by class, the interactive class's.
func series(t *testing.T, reg prometheus.Gatherer, name string) *dto.Metric {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			queue, class := false, true
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "queue":
					queue = l.GetValue() == "test"
				case "priority":
					class = l.GetValue() == "interactive"
				}
			}
			if queue && class {
				return m
			}
		}
	}
	return nil
}

func wantGauge(t *testing.T, reg prometheus.Gatherer, name string, want float64) {
	t.Helper()
	m := series(t, reg, name)
	if m == nil {
		t.Fatalf("%s{queue=test} missing", name)
	}
	if got := m.GetGauge().GetValue(); got != want {
		t.Fatalf("%s = %v, want %v", name, got, want)
	}
}

func wantHistogram(t *testing.T, reg prometheus.Gatherer, name string, count uint64, sum float64) {
	t.Helper()
	m := series(t, reg, name)
	if m == nil {
		t.Fatalf("%s{queue=test} missing", name)
	}
	h := m.GetHistogram()
	if h.GetSampleCount() != count || h.GetSampleSum() != sum {
		t.Fatalf("%s: count=%d sum=%v, want count=%d sum=%v", name, h.GetSampleCount(), h.GetSampleSum(), count, sum)
	}
}

func TestMetricsReportDepthBatchesAndOutcomes(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 2
	cfg.QueueSize = 3
	b, fake := newTestBatcher(t, cfg, r, m)
	for i := 1; i <= 3; i++ {
		submitAsync(b, t.Context(), i, Cost{Sequences: 1, MaxLen: 10 * i})
	}
	if o := <-submitAsync(b, t.Context(), 4, one(8)); o.err == nil {
		t.Fatal("fourth request should find the queue full")
	}
	b.Start(t.Context())
	call := recv(t, r.calls, "run call") // [1 2]: 2 sequences padded to 20
	wantBatch(t, call.batch, []int{1, 2})
	wantGauge(t, reg, "sluice_batcher_queue_depth", 1)
	wantGauge(t, reg, "sluice_batcher_running_requests", 2)

	fake.Advance(3 * time.Millisecond)
	call.reply <- nil
	closed := make(chan error, 1)
	go func() { closed <- b.Close(t.Context()) }()
	// [3] is alone and only 3ms into its 10ms window: draining dispatches it.
	recv(t, r.calls, "second call").reply <- nil
	if err := recv(t, closed, "Close"); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"served", counterValue(t, m.requests.WithLabelValues("test", outcomeServed)), 3},
		{"queue_full", counterValue(t, m.requests.WithLabelValues("test", outcomeQueueFull)), 1},
		{"full batches", counterValue(t, m.batches.WithLabelValues("test", "full")), 1},
		{"drain batches", counterValue(t, m.batches.WithLabelValues("test", "drain")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	wantHistogram(t, reg, "sluice_batcher_batch_sequences", 2, 3)
	wantHistogram(t, reg, "sluice_batcher_batch_requests", 2, 3)
	wantHistogram(t, reg, "sluice_batcher_batch_padded_tokens", 2, 2*20+1*30)
	wantHistogram(t, reg, "sluice_batcher_batch_fill_ratio", 2, (10+20)/40.0+1)
	wantHistogram(t, reg, "sluice_batcher_queue_wait_seconds", 3, 0.003)
	wantHistogram(t, reg, "sluice_batcher_batch_run_seconds", 2, 0.003) // fake clock: 3ms in the first Run

	// A closed batcher leaves the depth gauges, so its name can be used again.
	if s := series(t, reg, "sluice_batcher_queue_depth"); s != nil {
		t.Fatal("depth gauge still reported after Close")
	}
	if _, err := New[int, int]("test", cfg, r, clock.NewFake(epoch), m); err != nil {
		t.Fatalf("reusing a closed batcher's name: %v", err)
	}
}

func TestMetricsRejectDuplicateLiveName(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	fake := clock.NewFake(epoch)
	a, err := New[int, int]("analyze", baseConfig(), newEchoRunner(), fake, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New[int, int]("analyze", baseConfig(), newEchoRunner(), fake, m); err == nil {
		t.Fatal("second live batcher with the same name accepted")
	}
	if _, err := New[int, int]("pii", baseConfig(), newEchoRunner(), fake, m); err != nil {
		t.Fatalf("second name: %v", err)
	}
	_ = a.Close(context.Background())
}

// TestNilMetricsDisablesMetrics: a nil *Metrics gives the batcher no series (a nil
// *queueMetrics records nothing) and registers none, on the default registry either, once a
// request has been served.
func TestNilMetricsDisablesMetrics(t *testing.T) {
	b, _ := newTestBatcher(t, baseConfig(), newEchoRunner(), nil)
	if b.metrics != nil {
		t.Fatal("nil Metrics gave the batcher series")
	}
	b.Start(t.Context())
	if _, err := b.Submit(t.Context(), admission.Interactive, 1, Cost{Sequences: 4, MaxLen: 8}); err != nil {
		t.Fatal(err)
	}
	// A family with no series is left out of Gather, so registering the batcher's own families
	// is what tells whether they are there: it fails on a name already taken.
	probe := NewMetrics(nil)
	for _, c := range []prometheus.Collector{probe.batchSequences, probe.batchRequests, probe.paddedTokens,
		probe.fillRatio, probe.queueWait, probe.runSeconds, probe.requests, probe.batches, probe.depth} {
		if err := prometheus.DefaultRegisterer.Register(c); err != nil {
			t.Errorf("the default registry already holds a batcher family: %v", err)
			continue
		}
		prometheus.DefaultRegisterer.Unregister(c)
	}
}
