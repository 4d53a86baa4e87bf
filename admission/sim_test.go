package admission

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// simResult is what one simulated overload run measured.
type simResult struct {
	offered, admitted        int
	retries, retriesAdmitted int
	meanSuggested            time.Duration // over retries sent
	meanToAdmission          time.Duration // first refusal to admission, over requests admitted after a refusal
}

func (r simResult) retryAdmitRatio() float64 {
	if r.retries == 0 {
		return 0
	}
	return float64(r.retriesAdmitted) / float64(r.retries)
}

// simulate drives a Gate on a fake clock with an endpoint that completes capacity requests a
// second and Poisson arrivals at load x capacity. Every refused client comes back exactly at
// its Retry-After (up to maxRetries times); a refusal without one is given up. It is a model
// of the queue, not of the engine: what it checks is whether the suggestions point at the
// time the door opens again.
func simulate(t *testing.T, cfg Config, capacity, load float64, dur time.Duration, seed uint64) simResult {
	t.Helper()
	const (
		dt          = 10 * time.Millisecond
		maxRetries  = 3
		retryBudget = 0.2 // retries per first attempt over the run, as the load harness allows
		clientJit   = 0.1 // the client adds up to this share of Retry-After
	)
	rng := rand.New(rand.NewPCG(seed, 1))
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.QueueSize = 1 << 20; lim.MaxQueueWait = 0 })
	fake := clock.NewFake(epoch)
	g, err := NewGate("sim", cfg, src, fake, nil, WithRand(rng.Float64))
	if err != nil {
		t.Fatal(err)
	}
	type client struct {
		attempts     int
		firstRefusal time.Time
		suggested    time.Duration
	}
	due := map[int][]*client{} // tick -> clients retrying then
	var (
		res      simResult
		depth    int
		credit   float64
		sumSugg  time.Duration
		sumAdmit time.Duration
		nAdmit   int
	)
	ticks := int(dur / dt)
	try := func(tick int, c *client) {
		if c.attempts > 0 {
			res.retries++
			sumSugg += c.suggested
		}
		c.attempts++
		src.set(func(l *Load) {
			l.Waiting[Interactive] = max(depth-1, 0)
			l.Running = min(depth, 1)
			l.BusyWorkers = min(depth, 1)
		})
		r, ok := g.Admit(Interactive)
		if ok {
			depth++
			res.admitted++
			if c.attempts > 1 {
				res.retriesAdmitted++
				sumAdmit += fake.Now().Sub(c.firstRefusal)
				nAdmit++
			}
			return
		}
		if c.attempts == 1 {
			c.firstRefusal = fake.Now()
		}
		if r.RetryAfter == 0 || c.attempts > maxRetries || float64(res.retries+len(due)) >= retryBudget*float64(res.offered) {
			return
		}
		c.suggested = r.RetryAfter
		wait := time.Duration(float64(r.RetryAfter) * (1 + clientJit*rng.Float64()))
		at := tick + int(wait/dt)
		due[at] = append(due[at], c)
	}
	for tick := range ticks {
		fake.Advance(dt)
		credit += capacity * dt.Seconds()
		n := min(depth, int(credit))
		credit -= float64(n)
		if depth == 0 {
			credit = 0 // an idle endpoint banks no capacity
		}
		depth -= n
		src.complete(n)
		for _, c := range due[tick] {
			try(tick, c)
		}
		delete(due, tick)
		for range poisson(rng, load*capacity*dt.Seconds()) {
			res.offered++
			try(tick, &client{})
		}
	}
	if res.retries > 0 {
		res.meanSuggested = sumSugg / time.Duration(res.retries)
	}
	if nAdmit > 0 {
		res.meanToAdmission = sumAdmit / time.Duration(nAdmit)
	}
	return res
}

func poisson(rng *rand.Rand, mean float64) int {
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// TestDrainRateSimulation runs both policies through the same overloads (2x and 10x a
// capacity, for several capacities against the default watermarks) and logs, for each, the
// share of retries admitted at the suggested delay and the mean suggestion against the mean
// time to admission. It asserts what must hold in every case: the endpoint keeps admitting
// its capacity, and at 2x a drain_rate suggestion does not overstate the wait by more than half. The
// share of admitted retries is asserted only where the door's open and closed phases last
// seconds (capacity small against the watermark gap): with phases shorter than a second, a
// whole-second Retry-After cannot aim at them, whatever the policy. Run with -v for the table.
func TestDrainRateSimulation(t *testing.T) {
	const dur = 60 * time.Second
	for _, c := range []struct {
		capacity  float64
		high, low int
	}{{20, 256, 128}, {50, 256, 128}, {100, 256, 128}, {200, 256, 128}, {100, 100, 50}} {
		for _, load := range []float64{2, 10} {
			res := map[Policy]simResult{}
			for _, pol := range []Policy{PolicyStatic, PolicyDrainRate} {
				cfg := Config{HighWatermark: c.high, LowWatermark: c.low, Policy: pol, StaticRetryAfter: time.Second}
				r := simulate(t, cfg, c.capacity, load, dur, 7)
				res[pol] = r
				t.Logf("C=%3.0f/s H=%3d L=%3d load %2.0fx %-10s offered %5d admitted %5d retries %5d admitted at suggestion %5.1f%%, mean suggestion %5.2fs, mean time to admission %5.2fs",
					c.capacity, c.high, c.low, load, pol, r.offered, r.admitted, r.retries, 100*r.retryAdmitRatio(),
					r.meanSuggested.Seconds(), r.meanToAdmission.Seconds())
				if float64(r.admitted) < 0.95*c.capacity*dur.Seconds() {
					t.Errorf("C=%v load %vx %s: admitted %d, want at least 95%% of capacity", c.capacity, load, pol, r.admitted)
				}
			}
			d, s := res[PolicyDrainRate], res[PolicyStatic]
			// At 10x almost no retry is admitted, and the few that are say little about the rest.
			if load == 2 && d.meanSuggested.Seconds() > 1.5*d.meanToAdmission.Seconds() {
				t.Errorf("C=%v load %vx: mean suggestion %v over 1.5x the mean time to admission %v", c.capacity, load, d.meanSuggested, d.meanToAdmission)
			}
			if c.capacity <= 50 && load == 2 && d.retryAdmitRatio() < 2*s.retryAdmitRatio() {
				t.Errorf("C=%v load 2x: drain_rate admits %.2f of retries, static %.2f; want drain_rate at least twice as good with long phases",
					c.capacity, d.retryAdmitRatio(), s.retryAdmitRatio())
			}
		}
	}
}
