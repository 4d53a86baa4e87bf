package admission

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Reason says why a request was refused; it is the "reason" of the error body and of metrics.
type Reason string

const (
	// ReasonSaturated: the request's priority class queue was full (ErrQueueFull).
	ReasonSaturated Reason = "saturated"
	// ReasonHighWatermark: the endpoint is shedding (depth reached the high watermark and has
	// not yet drained to the low one).
	ReasonHighWatermark Reason = "high_watermark"
	// ReasonMaxWait: the request waited the max queue wait without being dispatched
	// (ErrExpired).
	ReasonMaxWait Reason = "max_wait"
	// ReasonMemory: the Queue's memory (KV cache blocks) in use reached the memory high
	// watermark and has not yet drained to the low one.
	ReasonMemory Reason = "memory"
)

// reasons lists every Reason in a fixed order, for label sets.
var reasons = [...]Reason{ReasonSaturated, ReasonHighWatermark, ReasonMaxWait, ReasonMemory}

func (r Reason) index() int {
	switch r {
	case ReasonSaturated:
		return 0
	case ReasonHighWatermark:
		return 1
	case ReasonMaxWait:
		return 2
	default:
		return 3
	}
}

// Where a Retry-After came from: the rung of the fallback ladder that produced it. These are
// the values of Refusal.RetryAfterSource and of the "policy" label of
// sluice_admission_retry_after_seconds.
const (
	SourceDrainRate = "drain_rate"
	SourceStatic    = "static"
)

// Option adjusts a Gate at construction.
type Option func(*Gate)

// WithRand replaces the source of the Retry-After jitter. f must return values in [0, 1) and
// be safe for concurrent use. Tests pass fixed values to check the jitter's bounds.
func WithRand(f func() float64) Option {
	return func(g *Gate) { g.rand = f }
}

// Gate is one endpoint's admission state: the watermark hysteresis, the drain-rate estimate
// and the Retry-After policy. All its methods are safe for concurrent use, take no lock that
// anyone waits on, and do not allocate.
type Gate struct {
	queue string
	cfg   Config
	src   Queue
	lim   Limits
	clk   clock.Clock
	rand  func() float64
	m     *gateMetrics

	shedding atomic.Bool
	// memShedding is the memory watermark's own hysteresis; memHigh and memLow are its
	// bounds in the Queue's memory units (memHigh 0: off).
	memShedding     atomic.Bool
	memHigh, memLow int
	// streak counts refusals since the last admission; it feeds the saturation factor.
	streak atomic.Int64
	drain  drainRate
	// book holds the retry reservations; nil when Config.RetryReserve is 0.
	book *book
	// lastInteractive is when an interactive request last came to the door (Unix ns; 0:
	// never), for the work that yields to it (Yield).
	lastInteractive atomic.Int64
}

// NewGate checks cfg and builds the Gate of the endpoint queue (the metrics label "queue"),
// reading depth and completions from src on every request and its Limits once, now. m may be
// nil to disable metrics; two Gates may not share a queue name on the same Metrics.
func NewGate(queue string, cfg Config, src Queue, clk clock.Clock, m *Metrics, opts ...Option) (*Gate, error) {
	if queue == "" {
		return nil, errors.New("admission: queue name must not be empty")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err // settings.Problems, which name the package and field
	}
	if src == nil {
		return nil, fmt.Errorf("admission: gate %q: source must not be nil", queue)
	}
	if clk == nil {
		return nil, fmt.Errorf("admission: gate %q: clock must not be nil", queue)
	}
	g := &Gate{queue: queue, cfg: cfg.withDefaults(), src: src, lim: src.Limits(), clk: clk, rand: rand.Float64}
	for _, o := range opts {
		o(g)
	}
	if g.cfg.RetryReserve > 0 {
		g.book = newBook(clk.Now())
	}
	if g.cfg.MemoryHighWatermark > 0 && g.lim.Memory > 0 {
		g.memHigh = max(int(g.cfg.MemoryHighWatermark*float64(g.lim.Memory)), 1)
		g.memLow = int(g.cfg.MemoryLowWatermark * float64(g.lim.Memory))
	}
	gm, err := m.forGate(g)
	if err != nil {
		return nil, err
	}
	g.m = gm
	return g, nil
}

// Close takes the gate's gauges off its metrics, so that a gate of the same name may follow it
// (a model unloaded and loaded again). Its counters stay, as counters do.
func (g *Gate) Close() {
	if g.m != nil && g.m.parent != nil {
		g.m.parent.gauges.detach(g)
	}
}

// Queue is the endpoint's queue name.
func (g *Gate) Queue() string { return g.queue }

// Config is the Gate's configuration with defaults applied.
func (g *Gate) Config() Config { return g.cfg }

// Depth is what the guarded Queue holds now: waiting in every class plus running.
func (g *Gate) Depth() int { return g.src.Load().Depth() }

// Admit decides, before any work is done on the request, whether a request of class p may
// proceed. ok is true when it may; otherwise the Refusal says how to answer. The endpoint
// starts shedding when its depth (waiting + running) reaches the high watermark and stops once
// the depth has drained to the low watermark. A class whose queue is already full is refused
// here too, so that a request the Queue would refuse is not parsed first; the Queue
// remains the final bound (see Refuse).
func (g *Gate) Admit(p Priority) (r Refusal, ok bool) {
	return g.AdmitRetry(p, nil)
}

// AdmitRetry is Admit for a request that may carry a retry token (the RetryTokenHeader value;
// nil or empty for none). A token this gate booked, presented once within its time, lets the
// request past the watermarks: the place was promised when the earlier attempt was refused,
// and the bookings per second are a fraction of what the endpoint completes. The class's hard
// capacity still applies. Any other token (unknown, early, late, used) is counted and the
// request is judged as if it carried none.
func (g *Gate) AdmitRetry(p Priority, token []byte) (r Refusal, ok bool) {
	return g.admit(p, token, true)
}

// AdmitUnbooked is Admit for work whose refusal no client brings back with a token: a job's
// document, which the server requeues itself, or a request at a second gate after the one
// its retries present their tokens to. Its refusal books no place (one nobody could claim
// would take a real retry's, and lower the show rate that sizes the others).
func (g *Gate) AdmitUnbooked(p Priority) (r Refusal, ok bool) {
	return g.admit(p, nil, false)
}

func (g *Gate) admit(p Priority, token []byte, book bool) (r Refusal, ok bool) {
	if !p.Valid() {
		p = Interactive
	}
	now := g.clk.Now()
	if p == Interactive {
		g.lastInteractive.Store(now.UnixNano())
	}
	l := g.src.Load()
	depth := l.Depth()
	g.drain.observe(now, g.done(l), depth > 0)
	if len(token) > 0 && g.book != nil {
		st := g.book.redeem(now, token)
		g.m.token(st)
		if st == TokenHonoured {
			if g.full(p, l) {
				return g.refuse(now, p, ReasonSaturated, l, book), false
			}
			g.admitted()
			return Refusal{}, true
		}
	}
	if g.shedding.Load() {
		if depth > g.cfg.LowWatermark {
			return g.refuse(now, p, ReasonHighWatermark, l, book), false
		}
		g.shedding.Store(false)
	} else if depth >= g.cfg.HighWatermark {
		g.shedding.Store(true)
		return g.refuse(now, p, ReasonHighWatermark, l, book), false
	}
	if g.memHigh > 0 {
		if g.memShedding.Load() {
			if l.MemoryUsed > g.memLow {
				return g.refuse(now, p, ReasonMemory, l, book), false
			}
			g.memShedding.Store(false)
		} else if l.MemoryUsed >= g.memHigh {
			g.memShedding.Store(true)
			return g.refuse(now, p, ReasonMemory, l, book), false
		}
	}
	if g.full(p, l) {
		return g.refuse(now, p, ReasonSaturated, l, book), false
	}
	g.admitted()
	return Refusal{}, true
}

// InteractiveWithin says whether an interactive request came to the door within window before
// now, and if so until when that holds.
func (g *Gate) InteractiveWithin(now time.Time, window time.Duration) (bool, time.Time) {
	last := g.lastInteractive.Load()
	if last == 0 {
		return false, time.Time{}
	}
	until := time.Unix(0, last).Add(window)
	return now.Before(until), until
}

// done is the Queue's cumulative completions in the unit its drain rate is measured in.
func (g *Gate) done(l Load) uint64 {
	if g.lim.WorkUnits {
		return l.WorkDone
	}
	return l.Completed
}

// full reports whether class p's queue is at its hard capacity.
func (g *Gate) full(p Priority, l Load) bool {
	return g.lim.QueueSize > 0 && l.Waiting[p] >= g.lim.QueueSize
}

// admitted ends the refusal streak.
func (g *Gate) admitted() {
	if g.streak.Load() != 0 {
		g.streak.Store(0)
	}
}

// Refuse turns an error from the guarded Queue into a refusal of a request of class p:
// ErrQueueFull becomes ReasonSaturated and ErrExpired ReasonMaxWait. For any other error ok is
// false and the caller handles the error itself.
func (g *Gate) Refuse(p Priority, err error) (r Refusal, ok bool) {
	return g.refuseErr(p, err, true)
}

// RefuseUnbooked is Refuse for work whose refusal no client brings back (AdmitUnbooked).
func (g *Gate) RefuseUnbooked(p Priority, err error) (r Refusal, ok bool) {
	return g.refuseErr(p, err, false)
}

func (g *Gate) refuseErr(p Priority, err error, book bool) (r Refusal, ok bool) {
	var reason Reason
	switch {
	case errors.Is(err, ErrQueueFull):
		reason = ReasonSaturated
	case errors.Is(err, ErrExpired):
		reason = ReasonMaxWait
	default:
		return Refusal{}, false
	}
	if !p.Valid() {
		p = Interactive
	}
	return g.refuse(g.clk.Now(), p, reason, g.src.Load(), book), true
}

// Shedding reports whether the endpoint is refusing at the door: it entered shedding at the
// high watermark (of depth, or of memory) and has not yet drained to the low one.
func (g *Gate) Shedding() bool { return g.shedsAt(g.src.Load()) }

// shedsAt reports whether either watermark still refuses at load l.
func (g *Gate) shedsAt(l Load) bool {
	return (g.shedding.Load() && l.Depth() > g.cfg.LowWatermark) ||
		(g.memShedding.Load() && l.MemoryUsed > g.memLow)
}

func (g *Gate) refuse(now time.Time, p Priority, reason Reason, l Load, book bool) Refusal {
	streak := g.streak.Add(1)
	ra, source := g.retryAfter(p, reason, l, streak)
	var tok RetryToken
	if book && g.book != nil && ra > 0 {
		// Book the place the Retry-After points to, or one of the few seconds after it:
		// then the header says when this client will be let in, not only when the door may
		// open for everyone.
		if rate, warm := g.drain.get(); warm {
			if d, t, ok := g.book.reserve(now, ra, reservePerSecond(g.cfg.RetryReserve, rate/g.perRequest(l))); ok {
				ra, tok = d, t
			}
			g.m.booked(tok.ok)
		}
	}
	r := Refusal{
		Reason: reason, Priority: p, Queue: g.queue,
		Depth: l.Depth(), Capacity: g.cfg.HighWatermark, LowWatermark: g.cfg.LowWatermark,
		MaxWait: g.lim.MaxQueueWait, RetryAfter: ra, RetryAfterSource: source, Token: tok,
	}
	switch reason {
	case ReasonSaturated:
		r.Capacity = g.lim.QueueSize
	case ReasonMemory:
		r.Depth, r.Capacity, r.LowWatermark = l.MemoryUsed, g.memHigh, g.memLow
	}
	g.m.refused(p, reason, ra, source)
	return r
}

// perRequest is one request's work in the drain rate's unit: 1 when the Queue counts requests,
// its average demand in tokens (say) when it measures work.
func (g *Gate) perRequest(l Load) float64 {
	if depth := l.Depth(); g.lim.WorkUnits && depth > 0 && l.Work > 0 {
		return float64(l.Work) / float64(depth)
	}
	return 1
}

// retryAfter walks the fallback ladder: the drain-rate estimate when that policy is chosen and
// the estimate is warm, else the static value when one is set, else no header.
func (g *Gate) retryAfter(p Priority, reason Reason, l Load, streak int64) (time.Duration, string) {
	if g.cfg.Policy == PolicyDrainRate {
		if rate, warm := g.drain.get(); warm {
			raw := g.estimate(p, reason, l, rate, streak)
			return DrainRetryAfter.Of(raw, g.rand()), SourceDrainRate
		}
	}
	if g.cfg.StaticRetryAfter > 0 {
		return ServerRetryAfter.Wait(g.cfg.StaticRetryAfter), SourceStatic
	}
	return 0, ""
}

// estimate is the drain_rate policy's raw answer in seconds: the work that must drain before
// a request like this one would be admitted, divided by the rate at which it drains, times
// the saturation factor.
//
//   - high_watermark: the depth above the low watermark, at the endpoint's rate.
//   - saturated: the class's waiting requests above half its capacity (the low watermark's
//     analogue), at the class's rate.
//   - max_wait: the class's waiting requests beyond what drains within the max queue wait,
//     at the class's rate: a retry sent after that long would be dispatched in time.
//
// While the endpoint is shedding, the watermark's term applies to every reason, since a retry
// must pass the door first. A class's rate is its share of the endpoint's rate under the
// Queue's dispatch weights, among the classes that have requests waiting. At least one request
// must always drain.
func (g *Gate) estimate(p Priority, reason Reason, l Load, rate float64, streak int64) float64 {
	if rate <= 0 {
		return math.Inf(1)
	}
	classRate := rate * g.lim.share(p, l.Waiting)
	depth := l.Depth()
	unit := g.perRequest(l)
	var secs float64
	switch reason {
	case ReasonHighWatermark:
		secs = float64(max(depth-g.cfg.LowWatermark, 1)) * unit / rate
	case ReasonSaturated:
		secs = float64(max(l.Waiting[p]-g.lim.QueueSize/2, 1)) * unit / classRate
	case ReasonMemory:
		// Memory frees as sequences end: the share of it above the low watermark frees
		// when about that share of the work in flight has drained.
		share := float64(l.MemoryUsed-g.memLow) / float64(max(l.MemoryUsed, 1))
		secs = max(share*float64(depth)*unit, unit) / rate
	default:
		backlog := float64(l.Waiting[p])*unit - classRate*g.lim.MaxQueueWait.Seconds()
		secs = max(backlog, unit) / classRate
	}
	if reason != ReasonHighWatermark && g.shedding.Load() {
		secs = max(secs, float64(max(depth-g.cfg.LowWatermark, 1))*unit/rate)
	}
	return secs * saturationFactor(l.BusyWorkers, g.lim.Workers, streak)
}
