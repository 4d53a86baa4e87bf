package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
)

// Why a stream was ended before it finished, the fixed label set of
// sluice_generate_requests_aborted_total.
var abortReasons = []string{"client_disconnect", "client_stall", "stall", "timeout", "shutdown", "too_long", "engine_error"}

// RunnerMetrics holds the generation series of every Runner that shares it; the label "queue"
// is the Runner's name. Create one per registry with NewRunnerMetrics. A nil *RunnerMetrics
// disables metrics.
type RunnerMetrics struct {
	streams      *prometheus.CounterVec
	aborted      *prometheus.CounterVec
	afterGone    *prometheus.CounterVec
	abortSeconds *prometheus.HistogramVec
	abortSteps   *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	ttft         *prometheus.HistogramVec
	interToken   *prometheus.HistogramVec
	preemptions  *prometheus.CounterVec
	trips        *prometheus.CounterVec
	stepSeconds  *prometheus.HistogramVec
	stepRows     *prometheus.HistogramVec
	prefixTokens *prometheus.CounterVec
	kvCopy       *prometheus.CounterVec
	gauges       *runnerCollector
}

// NewRunnerMetrics creates the series and registers them with reg (when not nil). It panics if
// reg already holds them, like prometheus.MustRegister: that is a wiring bug.
func NewRunnerMetrics(reg prometheus.Registerer) *RunnerMetrics {
	q := []string{"queue"}
	lat := prometheus.ExponentialBuckets(0.001, 2, 16)
	m := &RunnerMetrics{
		streams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_streams_total",
			Help: "Generations that ran to their end, by why they ended: length (token limit) or stop (end of sequence, stop sequence).",
		}, []string{"queue", "finish"}),
		aborted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_requests_aborted_total",
			Help: "Generations ended early, by reason: client_disconnect, client_stall (stopped reading), stall (the decoder hung), timeout, shutdown, too_long (cannot fit the KV cache), engine_error.",
		}, []string{"queue", "reason"}),
		afterGone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_tokens_after_disconnect_total",
			Help: "Tokens generated for a sequence after its client was seen to leave: waste, at most the step in flight.",
		}, q),
		abortSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_abort_latency_seconds",
			Help:    "Time from a client's departure being seen to its sequence's KV blocks being back in the pool.",
			Buckets: lat,
		}, q),
		abortSteps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_abort_latency_steps",
			Help:    "Decoder steps from a client's departure being seen to its KV blocks being back in the pool.",
			Buckets: []float64{0, 1, 2, 3, 5, 10},
		}, q),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_tokens_total",
			Help: "Tokens generated.",
		}, q),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_time_to_first_token_seconds",
			Help:    "Time from submission to a sequence's first generated token.",
			Buckets: lat,
		}, q),
		interToken: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_inter_token_seconds",
			Help:    "Time between consecutive tokens of a sequence.",
			Buckets: lat,
		}, q),
		preemptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_preemptions_total",
			Help: "Running sequences whose blocks were taken back for others, to be recomputed later.",
		}, q),
		trips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_watchdog_trips_total",
			Help: "Times no decoder step finished within the stall timeout; every stream in flight was ended.",
		}, q),
		stepSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_step_seconds",
			Help:    "Time of one decoder step, by kind: prefill (new prompts) or decode (one token per sequence).",
			Buckets: lat,
		}, []string{"queue", "kind"}),
		stepRows: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_step_sequences",
			Help:    "Sequences in one decoder step, by kind.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}, []string{"queue", "kind"}),
		prefixTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_prompt_tokens_total",
			Help: "Tokens admitted sequences brought (prompts, and a preempted sequence's tokens again), by whether the prefix cache already held their keys and values (cached) or they were computed (computed).",
		}, []string{"queue", "source"}),
		kvCopy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_kv_copy_seconds_total",
			Help: "Time spent gathering past keys and values from the KV blocks into a step's tensors and writing the new ones back: what paging costs, to set beside sluice_generate_step_seconds.",
		}, q),
		gauges: &runnerCollector{runners: map[string]*Runner{}},
	}
	m.gauges.init()
	if reg != nil {
		reg.MustRegister(m.streams, m.aborted, m.afterGone, m.abortSeconds, m.abortSteps, m.tokens, m.ttft,
			m.interToken, m.preemptions, m.trips, m.stepSeconds, m.stepRows, m.prefixTokens, m.kvCopy, m.gauges)
	}
	return m
}

// runnerMetrics is one Runner's series with labels resolved once. A nil one does nothing.
type runnerMetrics struct {
	parent                             *RunnerMetrics
	name                               string
	finish                             map[Finish]prometheus.Counter
	aborted                            map[string]prometheus.Counter
	afterGone, tokens, preempts, trips prometheus.Counter
	abortSeconds, abortSteps           prometheus.Observer
	ttft, inter                        prometheus.Observer
	stepSeconds, stepRows              [2]prometheus.Observer // [0] decode, [1] prefill
	cachedTokens, computedTokens       prometheus.Counter
	kvCopySeconds                      prometheus.Counter
}

func (m *RunnerMetrics) forRunner(r *Runner) (*runnerMetrics, error) {
	if m == nil {
		return nil, nil
	}
	if err := m.gauges.attach(r); err != nil {
		return nil, err
	}
	n := r.name
	rm := &runnerMetrics{parent: m, name: n,
		finish:    map[Finish]prometheus.Counter{},
		aborted:   map[string]prometheus.Counter{},
		afterGone: m.afterGone.WithLabelValues(n), tokens: m.tokens.WithLabelValues(n),
		preempts: m.preemptions.WithLabelValues(n), trips: m.trips.WithLabelValues(n),
		abortSeconds: m.abortSeconds.WithLabelValues(n), abortSteps: m.abortSteps.WithLabelValues(n),
		ttft: m.ttft.WithLabelValues(n), inter: m.interToken.WithLabelValues(n),
		cachedTokens: m.prefixTokens.WithLabelValues(n, "cached"), computedTokens: m.prefixTokens.WithLabelValues(n, "computed"),
		kvCopySeconds: m.kvCopy.WithLabelValues(n),
	}
	for _, f := range []Finish{FinishLength, FinishStop} {
		rm.finish[f] = m.streams.WithLabelValues(n, f.String())
	}
	for _, reason := range abortReasons {
		rm.aborted[reason] = m.aborted.WithLabelValues(n, reason)
	}
	for i, kind := range []string{"decode", "prefill"} {
		rm.stepSeconds[i] = m.stepSeconds.WithLabelValues(n, kind)
		rm.stepRows[i] = m.stepRows.WithLabelValues(n, kind)
	}
	return rm, nil
}

func (rm *runnerMetrics) detach() {
	if rm != nil {
		rm.parent.gauges.detach(rm.name)
	}
}

// ended counts how a stream ended: a finish, or an abort reason ("" for a refusal the
// admission layer counts, such as max_wait).
func (rm *runnerMetrics) ended(final Event, reason string) {
	if rm == nil {
		return
	}
	if final.Err == nil {
		rm.finish[final.Finish].Inc()
		return
	}
	if c, ok := rm.aborted[reason]; ok {
		c.Inc()
	}
}

func (rm *runnerMetrics) abortLatency(d time.Duration, steps uint64) {
	if rm != nil {
		rm.abortSeconds.Observe(d.Seconds())
		rm.abortSteps.Observe(float64(steps))
	}
}

func (rm *runnerMetrics) admitted(cached, computed int) {
	if rm != nil {
		rm.cachedTokens.Add(float64(cached))
		rm.computedTokens.Add(float64(computed))
	}
}

func (rm *runnerMetrics) step(d time.Duration, rows int, prefill bool) {
	if rm != nil {
		i := boolIndex(prefill)
		rm.stepSeconds[i].Observe(d.Seconds())
		rm.stepRows[i].Observe(float64(rows))
	}
}

func (rm *runnerMetrics) kvCopy(d time.Duration) {
	if rm != nil {
		rm.kvCopySeconds.Add(d.Seconds())
	}
}

func (rm *runnerMetrics) preempted() {
	if rm != nil {
		rm.preempts.Inc()
	}
}

func (rm *runnerMetrics) stalled() {
	if rm != nil {
		rm.trips.Inc()
	}
}

func (rm *runnerMetrics) firstToken(d time.Duration) {
	if rm != nil {
		rm.tokens.Inc()
		rm.ttft.Observe(d.Seconds())
	}
}

func (rm *runnerMetrics) interToken(d time.Duration) {
	if rm != nil {
		rm.tokens.Inc()
		rm.inter.Observe(d.Seconds())
	}
}

func (rm *runnerMetrics) afterDisconnect() {
	if rm != nil {
		rm.afterGone.Inc()
	}
}

// runnerCollector reads each runner's counters and its pool's when Prometheus scrapes.
type runnerCollector struct {
	waiting, running, blocks, lookups, hits, evictions, cows *prometheus.Desc

	mu      sync.Mutex
	runners map[string]*Runner
}

func (c *runnerCollector) init() {
	q := []string{"queue"}
	c.waiting = prometheus.NewDesc("sluice_generate_queue_depth",
		"Sequences waiting for admission in a priority class's queue (new, or preempted).", []string{"queue", "priority"}, nil)
	c.running = prometheus.NewDesc("sluice_generate_running_sequences",
		"Sequences admitted and holding KV blocks, paused ones included.", q, nil)
	c.blocks = prometheus.NewDesc("sluice_kvcache_blocks",
		"KV cache blocks by state: free, used (held by a sequence), cached (only the prefix cache keeps them).", []string{"queue", "state"}, nil)
	c.lookups = prometheus.NewDesc("sluice_kvcache_prefix_lookups_total",
		"Full prompt blocks looked up in the prefix cache.", q, nil)
	c.hits = prometheus.NewDesc("sluice_kvcache_prefix_hits_total",
		"Full prompt blocks found in the prefix cache (their keys and values not recomputed).", q, nil)
	c.evictions = prometheus.NewDesc("sluice_kvcache_evictions_total",
		"Cached blocks taken back for other tokens.", q, nil)
	c.cows = prometheus.NewDesc("sluice_kvcache_copies_on_write_total",
		"Shared blocks copied before a write.", q, nil)
}

func (c *runnerCollector) attach(r *Runner) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.runners[r.name]; ok {
		return fmt.Errorf("engine: runner name %q is already in use on these metrics", r.name)
	}
	c.runners[r.name] = r
	return nil
}

func (c *runnerCollector) detach(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.runners, name)
}

// Describe implements prometheus.Collector.
func (c *runnerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.waiting, c.running, c.blocks, c.lookups, c.hits, c.evictions, c.cows} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *runnerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, r := range c.runners {
		l := r.Load()
		for _, p := range admission.Priorities {
			ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(l.Waiting[p]), name, p.String())
		}
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(l.Running), name)
		st := r.pool.Stats()
		for state, v := range map[string]int{"free": st.Free, "used": st.Used, "cached": st.Cached} {
			ch <- prometheus.MustNewConstMetric(c.blocks, prometheus.GaugeValue, float64(v), name, state)
		}
		ch <- prometheus.MustNewConstMetric(c.lookups, prometheus.CounterValue, float64(st.Lookups), name)
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(st.Hits), name)
		ch <- prometheus.MustNewConstMetric(c.evictions, prometheus.CounterValue, float64(st.Evictions), name)
		ch <- prometheus.MustNewConstMetric(c.cows, prometheus.CounterValue, float64(st.CopiesOnWrite), name)
	}
}
