package scheduler

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
)

// Why a stream was ended before it finished, the fixed label set of
// sluice_generate_requests_aborted_total.
var abortReasons = []string{"client_disconnect", "client_stall", "stall", "starved", "timeout", "shutdown", "too_long", "engine_error"}

// Metrics holds the generation series of every Scheduler that shares it; the label "queue" is
// the Scheduler's name. Create one per registry with NewMetrics. A nil *Metrics disables
// metrics.
type Metrics struct {
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
	busy         *prometheus.CounterVec
	pauses       *prometheus.CounterVec
	gauges       *collector
}

// NewMetrics creates the series and registers them with reg (when not nil). It panics if reg
// already holds them, like prometheus.MustRegister: that is a wiring bug.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	q := []string{"queue"}
	lat := prometheus.ExponentialBuckets(0.001, 2, 16)
	m := &Metrics{
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
			Help: "Running sequences whose blocks were taken back, to be recomputed later, by reason: memory (the KV pool ran short) or priority (a higher class was waiting).",
		}, []string{"queue", "reason"}),
		trips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_watchdog_trips_total",
			Help: "Decoder steps that ran past their limit (the stall timeout, or more for a step measured to cost more); the streams of that step were ended.",
		}, q),
		stepSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_generate_step_seconds",
			Help:    "Time of one decoder step, by kind: prefill (new prompts, or a chunk of a long one) or decode (one token per sequence).",
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
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_busy_seconds_total",
			Help: "Wall time of the step loop's iterations that ran a step: the model's steps (sluice_generate_step_seconds), the KV copies (sluice_generate_kv_copy_seconds_total) and the host's work around them (the boundary, a step's plan, each row's choice, the events handed to readers, and, on a server with fewer cores than busy goroutines, the readers themselves). What is left after the other two is the host's share of a step.",
		}, q),
		pauses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_generate_stream_pauses_total",
			Help: "Times a stream's reader fell a full buffer of events behind and its sequence stopped stepping until the reader made room (flow control).",
		}, q),
		gauges: newCollector(),
	}
	if reg != nil {
		reg.MustRegister(m.streams, m.aborted, m.afterGone, m.abortSeconds, m.abortSteps, m.tokens, m.ttft,
			m.interToken, m.preemptions, m.trips, m.stepSeconds, m.stepRows, m.prefixTokens, m.kvCopy, m.busy, m.pauses, m.gauges)
	}
	return m
}

// metrics is one Scheduler's series with labels resolved once. A nil one does nothing.
type metrics struct {
	parent                       *Metrics
	name                         string
	finish                       map[Finish]prometheus.Counter
	aborted                      map[string]prometheus.Counter
	afterGone, tokens, trips     prometheus.Counter
	preempts                     [2]prometheus.Counter // [0] memory, [1] priority
	abortSeconds, abortSteps     prometheus.Observer
	ttft, inter                  prometheus.Observer
	stepSeconds, stepRows        [2]prometheus.Observer // [0] decode, [1] prefill
	cachedTokens, computedTokens prometheus.Counter
	kvCopySeconds, pauses        prometheus.Counter
	busySeconds                  prometheus.Counter
}

func (m *Metrics) forScheduler(s *Scheduler) (*metrics, error) {
	if m == nil {
		return nil, nil
	}
	if err := m.gauges.attach(s); err != nil {
		return nil, err
	}
	n := s.name
	rm := &metrics{parent: m, name: n,
		finish:    map[Finish]prometheus.Counter{},
		aborted:   map[string]prometheus.Counter{},
		afterGone: m.afterGone.WithLabelValues(n), tokens: m.tokens.WithLabelValues(n),
		preempts:     [2]prometheus.Counter{m.preemptions.WithLabelValues(n, "memory"), m.preemptions.WithLabelValues(n, "priority")},
		trips:        m.trips.WithLabelValues(n),
		abortSeconds: m.abortSeconds.WithLabelValues(n), abortSteps: m.abortSteps.WithLabelValues(n),
		ttft: m.ttft.WithLabelValues(n), inter: m.interToken.WithLabelValues(n),
		cachedTokens: m.prefixTokens.WithLabelValues(n, "cached"), computedTokens: m.prefixTokens.WithLabelValues(n, "computed"),
		kvCopySeconds: m.kvCopy.WithLabelValues(n), pauses: m.pauses.WithLabelValues(n),
		busySeconds: m.busy.WithLabelValues(n),
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

func (rm *metrics) detach() {
	if rm != nil {
		rm.parent.gauges.detach(rm.name)
	}
}

// ended counts how a stream ended: a finish, or an abort reason ("" for a refusal the
// admission layer counts, such as max_wait).
func (rm *metrics) ended(final Event, reason string) {
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

func (rm *metrics) abortLatency(d time.Duration, steps uint64) {
	if rm != nil {
		rm.abortSeconds.Observe(d.Seconds())
		rm.abortSteps.Observe(float64(steps))
	}
}

func (rm *metrics) admitted(cached, computed int) {
	if rm != nil {
		rm.cachedTokens.Add(float64(cached))
		rm.computedTokens.Add(float64(computed))
	}
}

func (rm *metrics) step(d time.Duration, rows int, prefill bool) {
	if rm != nil {
		i := 0
		if prefill {
			i = 1
		}
		rm.stepSeconds[i].Observe(d.Seconds())
		rm.stepRows[i].Observe(float64(rows))
	}
}

func (rm *metrics) kvCopy(d time.Duration) {
	if rm != nil {
		rm.kvCopySeconds.Add(d.Seconds())
	}
}

func (rm *metrics) busy(d time.Duration) {
	if rm != nil {
		rm.busySeconds.Add(d.Seconds())
	}
}

func (rm *metrics) preempted(forPriority bool) {
	if rm != nil {
		i := 0
		if forPriority {
			i = 1
		}
		rm.preempts[i].Inc()
	}
}

func (rm *metrics) paused() {
	if rm != nil {
		rm.pauses.Inc()
	}
}

func (rm *metrics) stalled() {
	if rm != nil {
		rm.trips.Inc()
	}
}

func (rm *metrics) firstToken(d time.Duration) {
	if rm != nil {
		rm.tokens.Inc()
		rm.ttft.Observe(d.Seconds())
	}
}

func (rm *metrics) interToken(d time.Duration) {
	if rm != nil {
		rm.tokens.Inc()
		rm.inter.Observe(d.Seconds())
	}
}

func (rm *metrics) afterDisconnect() {
	if rm != nil {
		rm.afterGone.Inc()
	}
}

// collector reads each scheduler's queue when Prometheus scrapes. (Its KV cache reports
// itself: kvcache.Pool.Collector.)
type collector struct {
	waiting, queued, running *prometheus.Desc

	mu         sync.Mutex
	schedulers map[string]*Scheduler
}

func newCollector() *collector {
	return &collector{
		waiting: prometheus.NewDesc("sluice_generate_queue_depth",
			"Sequences waiting for admission in a priority class's queue (new, or preempted).", []string{"queue", "priority"}, nil),
		// One series for all classes: what the inference gateway's endpoint picker reads as a
		// pod's queued requests.
		queued: prometheus.NewDesc("sluice_generate_queued_requests",
			"Sequences waiting for admission, every priority class together.", []string{"queue"}, nil),
		running: prometheus.NewDesc("sluice_generate_running_sequences",
			"Sequences admitted and holding KV blocks, paused ones included.", []string{"queue"}, nil),
		schedulers: map[string]*Scheduler{},
	}
}

func (c *collector) attach(s *Scheduler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.schedulers[s.name]; ok {
		return fmt.Errorf("scheduler: model %q: the name is already in use on these metrics", s.name)
	}
	c.schedulers[s.name] = s
	return nil
}

func (c *collector) detach(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.schedulers, name)
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waiting
	ch <- c.queued
	ch <- c.running
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, s := range c.schedulers {
		l := s.Load()
		queued := 0
		for _, p := range admission.Priorities {
			ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(l.Waiting[p]), name, p.String())
			queued += l.Waiting[p]
		}
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(queued), name)
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(l.Running), name)
	}
}
