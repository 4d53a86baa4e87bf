package admission

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

func TestConfigValidate(t *testing.T) {
	if err := (Config{HighWatermark: 256}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c := Config{HighWatermark: 256}.withDefaults()
	if c.LowWatermark != 128 || c.Policy != PolicyStatic {
		t.Fatalf("defaults = %+v, want low 128, static", c)
	}
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{HighWatermark: 0}, "HighWatermark"},
		{Config{HighWatermark: 10, LowWatermark: 10}, "LowWatermark"},
		{Config{HighWatermark: 10, LowWatermark: 11}, "LowWatermark"},
		{Config{HighWatermark: 10, LowWatermark: -1}, "LowWatermark"},
		{Config{HighWatermark: 10, Policy: "auto"}, "Policy"},
		{Config{HighWatermark: 10, RetryReserve: 1.5}, "RetryReserve"},
		{Config{HighWatermark: 10, StaticRetryAfter: -time.Second}, "StaticRetryAfter"},
		{Config{HighWatermark: 10, StaticRetryAfter: 61 * time.Second}, "StaticRetryAfter"},
	} {
		err := c.cfg.Validate()
		var ce *settings.Problem
		if !errors.As(err, &ce) || ce.Package != "admission" || ce.Field != c.field || strings.Contains(ce.Text, c.field) {
			t.Errorf("%+v: err = %v, want a settings.Problem for %s", c.cfg, err, c.field)
		}
	}
	if _, err := NewGate("q", Config{HighWatermark: 4, LowWatermark: 4}, newFakeSource(), clock.NewFake(epoch), nil); err == nil {
		t.Fatal("NewGate accepted low >= high")
	}
	if _, err := NewGate("", Config{HighWatermark: 4}, newFakeSource(), clock.NewFake(epoch), nil); err == nil {
		t.Fatal("NewGate accepted an empty queue name")
	}
	if _, err := NewGate("q", Config{HighWatermark: 4}, nil, clock.NewFake(epoch), nil); err == nil {
		t.Fatal("NewGate accepted a nil source")
	}
	if _, err := NewGate("q", Config{HighWatermark: 4}, newFakeSource(), nil, nil); err == nil {
		t.Fatal("NewGate accepted a nil clock")
	}
	for in, want := range map[Policy]Policy{"": PolicyStatic, "static": PolicyStatic, "drain_rate": PolicyDrainRate} {
		c := Config{HighWatermark: 4, Policy: in}
		if err := c.Validate(); err != nil || c.withDefaults().Policy != want {
			t.Errorf("policy %q: %v, %v", in, c.withDefaults().Policy, err)
		}
	}
	if err := (Config{HighWatermark: 4, Policy: "router_queue_drain_rate"}).Validate(); err == nil {
		t.Error("unknown policy accepted")
	}
}

func TestParsePriority(t *testing.T) {
	for in, want := range map[string]Priority{
		"": Interactive, "   ": Interactive, "interactive": Interactive, "HIGH": Interactive,
		"latency": Interactive, "realtime": Interactive, "real-time": Interactive,
		"Real_Time": Interactive, " foreground\t": Interactive, "normal": Interactive,
		"bulk": Bulk, "Batch": Bulk, "background": Bulk, " low ": Bulk, "BULK": Bulk,
	} {
		got, err := ParsePriority(in)
		if err != nil || got != want {
			t.Errorf("ParsePriority(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"urgent", "bulk!", "inter active", "real--time", "lowest",
		strings.Repeat("a", 100), "b\u00fclk"} {
		if _, err := ParsePriority(in); !errors.Is(err, ErrInvalidPriority) {
			t.Errorf("ParsePriority(%q): err = %v, want ErrInvalidPriority", in, err)
		} else if strings.Contains(err.Error(), in) && in != "" {
			t.Errorf("error repeats the header value %q", in)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParsePriority(" Real_Time ") }); n != 0 {
		t.Fatalf("ParsePriority allocates %v times", n)
	}
}

// TestHysteresis: shedding starts at the high watermark, continues at high-1 and everything
// above the low watermark, and stops at the low watermark.
func TestHysteresis(t *testing.T) {
	src := newFakeSource()
	g, _ := newTestGate(t, Config{HighWatermark: 10, LowWatermark: 5}, src)
	steps := []struct {
		depth    int
		admitted bool
	}{
		{0, true}, {9, true}, // below high: admitted
		{10, false}, // at high: shedding starts
		{9, false},  // high-1: still shedding
		{6, false},  // above low: still shedding
		{5, true},   // at low: shedding stops
		{9, true},   // not shedding again until high
		{12, false}, // over high
		{4, true},   // below low
	}
	for i, s := range steps {
		src.setDepth(s.depth)
		r, ok := g.Admit(Interactive)
		if ok != s.admitted {
			t.Fatalf("step %d (depth %d): admitted = %v, want %v", i, s.depth, ok, s.admitted)
		}
		if !ok && (r.Reason != ReasonHighWatermark || r.Depth != s.depth || r.Capacity != 10 || r.LowWatermark != 5) {
			t.Fatalf("step %d: refusal %+v", i, r)
		}
		if got := g.Shedding(); got != !s.admitted {
			t.Fatalf("step %d: Shedding() = %v", i, got)
		}
	}
}

func TestSaturatedClassRefusedAtTheDoor(t *testing.T) {
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.QueueSize = 4 })
	src.set(func(l *Load) { l.Waiting[Bulk] = 4; l.Running = 1 })
	g, _ := newTestGate(t, Config{HighWatermark: 100}, src)
	r, ok := g.Admit(Bulk)
	if ok || r.Reason != ReasonSaturated || r.Priority != Bulk || r.Capacity != 4 || r.Depth != 5 {
		t.Fatalf("bulk with a full class: ok=%v refusal %+v", ok, r)
	}
	if _, ok := g.Admit(Interactive); !ok {
		t.Fatal("interactive refused although only bulk is full")
	}
	if g.Shedding() {
		t.Fatal("a full class must not start watermark shedding")
	}
}

func TestRefuseMapsQueueErrors(t *testing.T) {
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.QueueSize = 8; lim.MaxQueueWait = 1500 * time.Millisecond })
	g, _ := newTestGate(t, Config{HighWatermark: 100}, src)
	r, ok := g.Refuse(Bulk, fmt.Errorf("extract: %w", ErrQueueFull))
	if !ok || r.Reason != ReasonSaturated || r.Capacity != 8 || r.Priority != Bulk {
		t.Fatalf("ErrQueueFull: ok=%v %+v", ok, r)
	}
	r, ok = g.Refuse(Interactive, fmt.Errorf("batcher: %w", ErrExpired))
	if !ok || r.Reason != ReasonMaxWait || r.MaxWait != 1500*time.Millisecond || r.Capacity != 100 {
		t.Fatalf("ErrExpired: ok=%v %+v", ok, r)
	}
	for _, err := range []error{nil, ErrClosed, errors.New("engine")} {
		if _, ok := g.Refuse(Interactive, err); ok {
			t.Fatalf("%v mapped to a refusal", err)
		}
	}
}

func TestStaticPolicy(t *testing.T) {
	src := newFakeSource()
	src.setDepth(10)
	g, _ := newTestGate(t, Config{HighWatermark: 10, StaticRetryAfter: 1500 * time.Millisecond}, src)
	r, ok := g.Admit(Interactive)
	if ok || r.RetryAfter != 2*time.Second || r.RetryAfterSource != SourceStatic {
		t.Fatalf("static 1.5s: %+v, want 2s from static", r)
	}
	g, _ = newTestGate(t, Config{HighWatermark: 10}, src)
	if r, _ := g.Admit(Interactive); r.RetryAfter != 0 || r.RetryAfterSource != "" {
		t.Fatalf("no static value: %+v, want no header", r)
	}
}

// TestDrainRateSurvivesAQuietSpell: the last request of a busy spell completes, nothing comes
// for ten minutes, then a burst: the first fold counts one completion over ten minutes, which
// must not become the rate; the burst's refusals wait as long as the queue takes at the rate
// before the lull, not the longest Retry-After. A long span that ends with work held still
// counts.
func TestDrainRateSurvivesAQuietSpell(t *testing.T) {
	src := newFakeSource()
	g, fake := newTestGate(t, Config{HighWatermark: 128, LowWatermark: 64, Policy: PolicyDrainRate}, src, fixedRand(0.5))
	src.setDepth(10)
	warmUp(t, g, fake, src, 20)
	src.complete(1)
	src.setDepth(0)
	fake.Advance(10 * time.Minute)
	g.Admit(Interactive)
	if rate, _ := g.drain.get(); rate != 20 {
		t.Fatalf("after a quiet spell the rate is %v/s, want 20", rate)
	}
	src.setDepth(300)
	r, ok := g.Admit(Interactive)
	if ok || r.RetryAfter > 20*time.Second {
		t.Fatalf("the burst's first refusal: admitted %v, Retry-After %v", ok, r.RetryAfter)
	}
	fake.Advance(10 * time.Minute) // a long span with work held: the engine was slow, not idle
	src.complete(60)
	g.Admit(Interactive)
	if rate, _ := g.drain.get(); rate >= 1 {
		t.Fatalf("a slow busy span left the rate at %v/s", rate)
	}
}

// TestDrainRateLadder: computed when warm, else static when set, else no header.
func TestDrainRateLadder(t *testing.T) {
	src := newFakeSource()
	g, fake := newTestGate(t, Config{HighWatermark: 100, LowWatermark: 50, Policy: PolicyDrainRate,
		StaticRetryAfter: 3 * time.Second}, src, fixedRand(0.5))
	src.setDepth(10)
	g.Admit(Interactive)
	for i := range warmIntervals - 1 {
		fake.Advance(foldInterval)
		src.complete(10)
		g.Admit(Interactive)
		if _, warm := g.drain.get(); warm {
			t.Fatalf("warm after %d intervals", i+1)
		}
	}
	src.setDepth(100)
	r, _ := g.Admit(Interactive)
	if r.RetryAfter != 3*time.Second || r.RetryAfterSource != SourceStatic {
		t.Fatalf("cold estimate: %+v, want the static 3s", r)
	}
	cold, _ := newTestGate(t, Config{HighWatermark: 100, Policy: PolicyDrainRate}, src)
	if r, _ := cold.Admit(Interactive); r.RetryAfter != 0 || r.RetryAfterSource != "" {
		t.Fatalf("cold estimate without static: %+v, want no header", r)
	}

	fake.Advance(foldInterval)
	src.complete(10)
	src.set(func(l *Load) { l.Waiting[Interactive], l.Running, l.BusyWorkers = 99, 1, 1 })
	r, _ = g.Admit(Interactive)
	// 10/s, 50 over the low watermark: 5 s; factor 1 + 0.2 (all workers busy) + 0.05 x 2/5
	// (second refusal in a row) = 1.22; 6.1 s, no jitter at u=0.5: 7 s.
	if r.RetryAfter != 7*time.Second || r.RetryAfterSource != SourceDrainRate {
		t.Fatalf("warm estimate: %+v, want 7s from drain_rate", r)
	}
}

func TestEstimateByReason(t *testing.T) {
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.Workers, lim.QueueSize = 2, 40 })
	g, _ := newTestGate(t, Config{HighWatermark: 100, LowWatermark: 50}, src)
	l := Load{BusyWorkers: 0}
	l.Waiting[Interactive], l.Running = 30, 2
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	// saturated: 30 waiting, half of 40 is 20: 10 to drain at 10/s.
	if got := g.estimate(Interactive, ReasonSaturated, l, 10, 0); !near(got, 1) {
		t.Errorf("saturated = %v, want 1", got)
	}
	// max_wait: 30 waiting, 10 drain within the 1 s wait: 20 at 10/s.
	if got := g.estimate(Interactive, ReasonMaxWait, l, 10, 0); !near(got, 2) {
		t.Errorf("max_wait = %v, want 2", got)
	}
	// Bulk waits behind interactive: its share is 1/5 of the rate while interactive waits.
	lb := l
	lb.Waiting[Bulk] = 40
	if got := g.estimate(Bulk, ReasonSaturated, lb, 10, 0); !near(got, 20.0/2) {
		t.Errorf("bulk saturated = %v, want 10", got)
	}
	// Nothing to drain still costs one request's time.
	l0 := l
	l0.Waiting[Interactive] = 0
	if got := g.estimate(Interactive, ReasonMaxWait, l0, 10, 0); !near(got, 0.1) {
		t.Errorf("empty max_wait = %v, want 0.1", got)
	}
	// A stalled endpoint has no finite estimate; the clamp turns it into 60 s.
	if got := g.estimate(Interactive, ReasonHighWatermark, l, 0, 0); !math.IsInf(got, 1) {
		t.Errorf("zero rate = %v, want +Inf", got)
	}
	// While shedding, every reason waits at least for the watermark to clear.
	g.shedding.Store(true)
	lw := l
	g.lim.QueueSize = 200
	lw.Waiting[Interactive] = 98 // depth 100: 50 over low at 10/s = 5 s; the class alone: 0.1 s
	if got := g.estimate(Interactive, ReasonSaturated, lw, 10, 0); !near(got, 5) {
		t.Errorf("saturated while shedding = %v, want 5", got)
	}
}

func TestSaturationFactor(t *testing.T) {
	for _, c := range []struct {
		busy, workers int
		streak        int64
		want          float64
	}{
		{0, 1, 0, 1}, {1, 1, 0, 1.2}, {1, 2, 0, 1.1}, {1, 1, 5, 1.25}, {1, 1, 500, 1.25},
		{3, 2, 0, 1.2}, {0, 0, 1, 1.01},
	} {
		if got := saturationFactor(c.busy, c.workers, c.streak); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("factor(%d/%d, streak %d) = %v, want %v", c.busy, c.workers, c.streak, got, c.want)
		}
	}
}

func TestJitterBoundsAndClamp(t *testing.T) {
	for _, c := range []struct {
		raw, u float64
		want   time.Duration
	}{
		{10, 0, 8 * time.Second},             // -20%
		{10, 0.5, 10 * time.Second},          // none
		{10, 0.99999999, 12 * time.Second},   // just under +20%
		{0.1, 0.99, time.Second},             // at least 1 s
		{0, 0, time.Second},                  // nothing to wait for is still 1 s
		{-3, 0, time.Second},                 // defensive
		{59, 0.99, 60 * time.Second},         // at most 60 s
		{1000, 0, 60 * time.Second},          // far over: clamped even at -20%
		{math.Inf(1), 0.3, 60 * time.Second}, // stalled
		{math.NaN(), 0.3, 60 * time.Second},
		{2.01, 0.5, 3 * time.Second}, // rounded up
	} {
		if got := DrainRetryAfter.Of(c.raw, c.u); got != c.want {
			t.Errorf("DrainRetryAfter.Of(%v, %v) = %v, want %v", c.raw, c.u, got, c.want)
		}
	}
	// Across the whole range of u, every suggestion lies in [ceil(0.8 raw), ceil(1.2 raw)],
	// and the spread really is used (not all clients get one value).
	for _, raw := range []float64{3, 7.5, 20, 45} {
		lo, hi := math.Ceil(0.8*raw), math.Ceil(1.2*raw)
		seen := map[time.Duration]bool{}
		for i := range 1000 {
			got := DrainRetryAfter.Of(raw, float64(i)/1000).Seconds()
			if got < lo || got > min(hi, 60) {
				t.Fatalf("raw %v u %v: %v outside [%v, %v]", raw, float64(i)/1000, got, lo, hi)
			}
			seen[time.Duration(got)] = true
		}
		if len(seen) < 2 {
			t.Fatalf("raw %v: only %d distinct suggestions", raw, len(seen))
		}
	}
	for _, c := range []struct{ in, want time.Duration }{
		{time.Millisecond, time.Second}, {time.Second, time.Second}, {1001 * time.Millisecond, 2 * time.Second},
		{2 * time.Minute, time.Minute},
	} {
		if got := ServerRetryAfter.Wait(c.in); got != c.want {
			t.Errorf("ServerRetryAfter.Wait(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestDrainRateEWMA(t *testing.T) {
	var d drainRate
	at := epoch
	done := uint64(0)
	step := func(span time.Duration, n uint64, busy bool) {
		at = at.Add(span)
		done += n
		d.observe(at, done, busy)
	}
	rate := func() float64 { r, _ := d.get(); return r }
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	d.observe(at, done, false) // first sample: the clock starts
	step(foldInterval, 0, false)
	if d.folds.Load() != 0 || rate() != 0 {
		t.Fatal("an idle first interval must not seed the average")
	}
	step(foldInterval, 10, true) // seeds at 10/s
	if !near(rate(), 10) {
		t.Fatalf("seed = %v, want 10", rate())
	}
	step(foldInterval/2, 50, true) // half an interval: not folded yet
	if !near(rate(), 10) {
		t.Fatalf("folded before an interval passed: %v", rate())
	}
	step(foldInterval/2, 0, true) // the interval ends: 50 in 1 s
	if want := 10 + foldAlpha*(50-10); !near(rate(), want) {
		t.Fatalf("after 50/s = %v, want %v", rate(), want)
	}
	before := rate()
	step(foldInterval, 0, false) // idle: skipped, not pulled towards 0
	if !near(rate(), before) {
		t.Fatalf("idle interval changed the rate: %v -> %v", before, rate())
	}
	step(foldInterval, 0, true) // stalled with work held: decays
	if want := (1 - foldAlpha) * before; !near(rate(), want) {
		t.Fatalf("stalled interval: %v, want %v", rate(), want)
	}
	before = rate()
	step(3*foldInterval, 60, true) // a late fold over 3 s at 20/s weighs as three steps
	if want := 20 + math.Pow(1-foldAlpha, 3)*(before-20); !near(rate(), want) {
		t.Fatalf("late fold: %v, want %v", rate(), want)
	}
	if _, warm := d.get(); !warm {
		t.Fatal("not warm after 3 intervals with completions")
	}
}

// TestClassShareFollowsTheWeights: a class's share of the drain rate is its weight over the
// weights of the classes that compete with it (those with requests waiting), whatever the
// weights are; alone, a class has the whole rate; a class held to some of the workers
// (MaxBulkWorkers) beside others at most their part (its Retry-After was too short).
func TestClassShareFollowsTheWeights(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	for _, c := range []struct {
		weights [NumPriorities]int
		waiting [NumPriorities]int
		p       Priority
		want    float64
	}{
		{[NumPriorities]int{4, 1}, [NumPriorities]int{0, 0}, Bulk, 1},
		{[NumPriorities]int{4, 1}, [NumPriorities]int{3, 0}, Bulk, 0.2},
		{[NumPriorities]int{4, 1}, [NumPriorities]int{3, 5}, Interactive, 0.8},
		{[NumPriorities]int{4, 1}, [NumPriorities]int{0, 5}, Interactive, 0.8},
		{[NumPriorities]int{1, 3}, [NumPriorities]int{2, 5}, Interactive, 0.25},
		{[NumPriorities]int{}, [NumPriorities]int{2, 5}, Interactive, 1},
	} {
		if got := (Limits{Weights: c.weights}).share(c.p, c.waiting); !near(got, c.want) {
			t.Errorf("weights %v waiting %v: share of %s = %v, want %v", c.weights, c.waiting, c.p, got, c.want)
		}
	}
	// A class held to some of the workers drains beside others at most at their part of the
	// rate; alone, at the whole rate measured, which is already theirs alone.
	capped := Limits{Weights: [NumPriorities]int{1, 3}, Workers: 4}
	capped.ClassWorkers[Bulk] = 1
	for waiting, want := range map[[NumPriorities]int]float64{{0, 5}: 1, {2, 5}: 0.25} {
		if got := capped.share(Bulk, waiting); !near(got, want) {
			t.Errorf("bulk held to 1 of 4 workers, waiting %v: share %v, want %v", waiting, got, want)
		}
	}
	if got := capped.share(Interactive, [NumPriorities]int{2, 5}); !near(got, 0.25) {
		t.Errorf("interactive beside capped bulk: share %v, want its weight's 0.25", got)
	}
	// The estimate follows the Queue's weights, not fixed ones: with 1:3, bulk drains three
	// times as fast as interactive while both wait.
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.Weights = [NumPriorities]int{1, 3}; lim.QueueSize = 40 })
	g, _ := newTestGate(t, Config{HighWatermark: 100}, src)
	var l Load
	l.Waiting = [NumPriorities]int{30, 30}
	if got := g.estimate(Bulk, ReasonSaturated, l, 8, 0); !near(got, 10.0/6) {
		t.Errorf("bulk with weight 3 of 4: %v s, want 10 over 6/s", got)
	}
	if got := g.estimate(Interactive, ReasonSaturated, l, 8, 0); !near(got, 10.0/2) {
		t.Errorf("interactive with weight 1 of 4: %v s, want 10 over 2/s", got)
	}
}

// TestMemoryWatermarkShedsWithHysteresis: a Queue that reports memory (a generation model's KV
// blocks) is shed at the memory high watermark, with reason memory, until its use drains to
// the low one, whatever its request depth.
func TestMemoryWatermarkShedsWithHysteresis(t *testing.T) {
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.Memory = 100 })
	g, _ := newTestGate(t, Config{HighWatermark: 1000, MemoryHighWatermark: 0.9, MemoryLowWatermark: 0.5}, src)
	for i, s := range []struct {
		used     int
		admitted bool
	}{{89, true}, {90, false}, {60, false}, {50, true}, {89, true}, {95, false}} {
		src.set(func(l *Load) { l.MemoryUsed = s.used })
		r, ok := g.Admit(Interactive)
		if ok != s.admitted {
			t.Fatalf("step %d (used %d): admitted %v, want %v", i, s.used, ok, s.admitted)
		}
		if !ok && (r.Reason != ReasonMemory || r.Depth != s.used || r.Capacity != 90 || r.LowWatermark != 50) {
			t.Fatalf("step %d: refusal %+v", i, r)
		}
		if g.Shedding() == s.admitted {
			t.Fatalf("step %d: Shedding() = %v", i, g.Shedding())
		}
	}
	if err := (Config{HighWatermark: 4, MemoryHighWatermark: 0.5, MemoryLowWatermark: 0.6}).Validate(); err == nil {
		t.Fatal("memory low above high accepted")
	}
	if c := (Config{HighWatermark: 4, MemoryHighWatermark: 0.9}).withDefaults(); math.Abs(c.MemoryLowWatermark-0.8) > 1e-9 {
		t.Fatalf("default memory low = %v, want 0.8", c.MemoryLowWatermark)
	}
}

// TestWorkUnitsEstimateInTokens: a Queue that measures work in tokens gets Retry-After from
// the token drain rate and the demand in tokens, not from request counts.
func TestWorkUnitsEstimateInTokens(t *testing.T) {
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.WorkUnits = true; lim.Memory = 100 })
	g, fake := newTestGate(t, Config{HighWatermark: 10, LowWatermark: 5, Policy: PolicyDrainRate,
		MemoryHighWatermark: 0.9, MemoryLowWatermark: 0.5}, src, fixedRand(0.5))
	// 500 tokens a second for four seconds, with work held, and requests completing slowly:
	// the rate must be the tokens'.
	src.set(func(l *Load) { l.Running = 1 })
	g.Admit(Interactive)
	for range warmIntervals {
		fake.Advance(foldInterval)
		src.set(func(l *Load) { l.WorkDone += 500; l.Completed++ })
		g.Admit(Interactive)
	}
	if rate, warm := g.drain.get(); !warm || rate != 500 {
		t.Fatalf("rate %v warm %v, want 500 tokens/s", rate, warm)
	}
	var l Load
	l.Waiting[Interactive], l.Running = 15, 5 // depth 20
	l.Work = 20 * 150                         // 150 tokens a request
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// 15 requests over the low watermark at 150 tokens each, at 500 tokens/s: 4.5 s.
	if got := g.estimate(Interactive, ReasonHighWatermark, l, 500, 0); !near(got, 4.5) {
		t.Errorf("high watermark = %v s, want 4.5", got)
	}
	// Memory 95 of 100, low 50: 45/95 of the 3000 tokens in flight.
	l.MemoryUsed = 95
	if got := g.estimate(Interactive, ReasonMemory, l, 500, 0); !near(got, 45.0/95*3000/500) {
		t.Errorf("memory = %v s, want %v", got, 45.0/95*3000/500)
	}
}
