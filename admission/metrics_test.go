package admission

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-serving/sluice/clock"
)

// find returns the series of family name whose labels include every pair in want, or nil.
func find(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) *dto.Metric {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue series
				}
			}
			return m
		}
	}
	return nil
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	src := newFakeSource()
	fake := clock.NewFake(epoch)
	g, err := NewGate("analyze", Config{HighWatermark: 4, LowWatermark: 2, StaticRetryAfter: 2 * time.Second}, src, fake, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewGate("analyze", Config{HighWatermark: 4}, src, fake, m); err == nil {
		t.Fatal("second gate with the same queue name accepted")
	}
	src.set(func(l *Load) { l.Waiting[Interactive], l.Running = 3, 1 })
	if _, ok := g.Admit(Interactive); ok {
		t.Fatal("admitted at the high watermark")
	}
	g.Refuse(Bulk, ErrExpired)
	q := map[string]string{"queue": "analyze"}
	for name, want := range map[string]float64{
		"sluice_admission_queue_depth": 4,
		"sluice_admission_shedding":    1,
	} {
		s := find(t, reg, name, q)
		if s == nil || s.GetGauge().GetValue() != want {
			t.Fatalf("%s = %v, want %v", name, s, want)
		}
	}
	for _, c := range []struct {
		priority, reason string
		want             float64
	}{
		{"interactive", "high_watermark", 1}, {"bulk", "max_wait", 1}, {"interactive", "max_wait", 0},
		{"bulk", "high_watermark", 0}, {"interactive", "saturated", 0}, {"bulk", "saturated", 0},
	} {
		s := find(t, reg, "sluice_admission_shed_total", map[string]string{"queue": "analyze", "priority": c.priority, "reason": c.reason})
		if s == nil || s.GetCounter().GetValue() != c.want {
			t.Fatalf("shed_total{%s,%s} = %v, want %v", c.priority, c.reason, s, c.want)
		}
	}
	h := find(t, reg, "sluice_admission_retry_after_seconds", map[string]string{"queue": "analyze", "reason": "max_wait", "policy": "static"})
	if h == nil || h.GetHistogram().GetSampleCount() != 1 || h.GetHistogram().GetSampleSum() != 2 {
		t.Fatalf("retry_after{max_wait,static} = %v, want one 2s sample", h)
	}
	// The shedding gauge follows the depth even before the next request flips the state.
	src.setDepth(2)
	if s := find(t, reg, "sluice_admission_shedding", q); s.GetGauge().GetValue() != 0 {
		t.Fatal("shedding gauge still 1 after draining to the low watermark")
	}
}

// TestAdmitDoesNotAllocate covers both outcomes with metrics on and a warm drain_rate policy.
func TestAdmitDoesNotAllocate(t *testing.T) {
	src := newFakeSource()
	fake := clock.NewFake(epoch)
	g, err := NewGate("analyze", Config{HighWatermark: 4, Policy: PolicyDrainRate}, src, fake,
		NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	src.setDepth(1)
	warmUp(t, g, fake, src, 100)
	if n := testing.AllocsPerRun(1000, func() { g.Admit(Interactive) }); n != 0 {
		t.Fatalf("admitted path: %v allocs", n)
	}
	src.setDepth(4)
	if r, ok := g.Admit(Bulk); ok || r.RetryAfterSource != SourceDrainRate {
		t.Fatalf("refusal %+v ok=%v, want a drain_rate refusal", r, ok)
	}
	if n := testing.AllocsPerRun(1000, func() { g.Admit(Bulk) }); n != 0 {
		t.Fatalf("refusal path: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() { g.Refuse(Bulk, ErrExpired) }); n != 0 {
		t.Fatalf("Refuse: %v allocs", n)
	}
}

// TestAClosedGatesNameCanBeUsedAgain: a gate closed (its model unloaded) leaves its queue's
// gauges, so a gate of the same name can take them; an open one still holds the name.
func TestAClosedGatesNameCanBeUsedAgain(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	clk := clock.NewFake(epoch)
	g, err := NewGate("model-a", Config{HighWatermark: 4}, newFakeSource(), clk, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewGate("model-a", Config{HighWatermark: 4}, newFakeSource(), clk, m); err == nil {
		t.Fatal("two open gates share a name")
	}
	g.Close()
	if _, err := NewGate("model-a", Config{HighWatermark: 4}, newFakeSource(), clk, m); err != nil {
		t.Fatal(err)
	}
}

// TestShedUntilEmpty: with ShedUntilEmpty the low watermark is 0, not half the high one.
func TestShedUntilEmpty(t *testing.T) {
	src := newFakeSource()
	g, _ := newTestGate(t, Config{HighWatermark: 4, ShedUntilEmpty: true}, src)
	for _, s := range []struct {
		depth    int
		admitted bool
	}{{4, false}, {2, false}, {1, false}, {0, true}} {
		src.setDepth(s.depth)
		if _, ok := g.Admit(Interactive); ok != s.admitted {
			t.Fatalf("depth %d: admitted %v", s.depth, ok)
		}
	}
	if err := (Config{HighWatermark: 4, LowWatermark: 1, ShedUntilEmpty: true}).Validate(); err == nil {
		t.Fatal("a low watermark with ShedUntilEmpty")
	}
}
