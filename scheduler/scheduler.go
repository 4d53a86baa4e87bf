package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/kvcache"
)

// RunnerConfig sets a Runner's limits. Validate says which fields are wrong.
type RunnerConfig struct {
	// MaxRunning is how many sequences decode together: the batch of a decode step.
	MaxRunning int
	// MaxStepTokens bounds a prefill step: rows x (cached + new positions, padded).
	MaxStepTokens int
	// QueueSize is each priority class's hard capacity of waiting sequences.
	QueueSize int
	// MaxQueueWait ends a sequence still waiting for admission with admission.ErrExpired;
	// 0 means no limit.
	MaxQueueWait time.Duration
	// Weights are the classes' admission weights when several wait (defaults 4:1).
	Weights [admission.NumPriorities]int
	// OutBuffer is how many events a stream may leave unread before its sequence pauses.
	OutBuffer int
	// StallTimeout ends every stream in flight when no step finishes for this long (the
	// watchdog), and ends a paused stream whose reader has not caught up for this long.
	StallTimeout time.Duration
	// MaxPositions is the model's longest sequence, prompt and generated tokens together.
	MaxPositions int
	// PadID fills the padded input positions (any valid id: the mask hides them).
	PadID int64
}

// DefaultRunnerWeights are the admission weights of the classes whose weight is 0.
var DefaultRunnerWeights = [admission.NumPriorities]int{admission.Interactive: 4, admission.Bulk: 1}

// Validate reports every field that is out of range: the result joins one *ConfigError per bad
// field.
func (c RunnerConfig) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		name string
		v    int
		max  int
	}{{"MaxRunning", c.MaxRunning, 1 << 12}, {"MaxStepTokens", c.MaxStepTokens, 1 << 24},
		{"QueueSize", c.QueueSize, 1 << 20}, {"OutBuffer", c.OutBuffer, 1 << 16}, {"MaxPositions", c.MaxPositions, 1 << 24}} {
		if f.v < 1 || f.v > f.max {
			bad(f.name, "must be between 1 and %d, got %d", f.max, f.v)
		}
	}
	if c.MaxStepTokens < c.MaxPositions && c.MaxStepTokens >= 1 {
		bad("MaxStepTokens", "must hold one sequence of the model's %d positions, got %d", c.MaxPositions, c.MaxStepTokens)
	}
	if c.MaxQueueWait < 0 {
		bad("MaxQueueWait", "must not be negative (0: no limit), got %s", c.MaxQueueWait)
	}
	if c.StallTimeout <= 0 {
		bad("StallTimeout", "must be positive, got %s", c.StallTimeout)
	}
	for _, p := range admission.Priorities {
		if w := c.Weights[p]; w < 0 || w > 1<<20 {
			bad("Weights["+p.String()+"]", "must be between 0 (default %d) and %d, got %d", DefaultRunnerWeights[p], 1<<20, w)
		}
	}
	return errors.Join(errs...)
}

// Request is one generation to run.
type Request struct {
	// Prompt is the token ids to continue; at least one.
	Prompt []int64
	// MaxNewTokens bounds the generated tokens.
	MaxNewTokens int
	// Priority is the request's class: admission order, and who is preempted first.
	Priority admission.Priority
	// Chooser picks each token and says when to stop.
	Chooser Chooser
	// FirstTokenTimeout ends the stream with ErrFirstTokenTimeout when no token has come this
	// long after Submit; 0 means none. (The request context's deadline bounds the whole.)
	FirstTokenTimeout time.Duration
}

// Runner is one generation model's step loop: iteration-level scheduling over a paged KV
// cache. See the package documentation.
type Runner struct {
	name    string
	cfg     RunnerConfig
	weights [admission.NumPriorities]int
	dec     *Decoder
	pool    *kvcache.Pool
	clk     clock.Clock
	m       *runnerMetrics
	opts    *ort.RunOptions // terminates a step that hangs

	mu      sync.Mutex
	waiting [admission.NumPriorities]seqList // guarded by mu
	live    map[*sequence]struct{}           // guarded by mu: every sequence not yet ended
	closing bool                             // guarded by mu: no new submissions
	started bool                             // guarded by mu

	// Owned by the loop goroutine.
	running []*sequence
	pick    classPicker
	scratch stepScratch

	wake    chan struct{} // buffer 1
	stopped chan struct{} // closed when the loop has returned
	stop    context.CancelFunc
	drain   chan struct{} // closed by Close: finish the running, then return

	// Read by Load, metrics and the watchdog from other goroutines.
	waitingBy   [admission.NumPriorities]atomic.Int64
	runningN    atomic.Int64
	completed   atomic.Uint64
	work        atomic.Int64  // tokens not yet computed: prompts waiting and new tokens to come
	workDone    atomic.Uint64 // prompt tokens admitted and tokens generated, ever
	tokens      atomic.Uint64 // generated tokens, ever
	steps       atomic.Uint64 // boundaries passed: one per loop iteration that ran the model
	stepStarted atomic.Int64  // UnixNano when the step in flight started; 0 between steps
	stalled     atomic.Bool   // the watchdog tripped and no step has finished since

	// hook, when set (tests only), runs at the start of every step: a test makes it block to
	// play a decoder that hangs.
	hook func()
}

// NewRunner checks cfg and builds the runner of one decoder over pool. m may be nil (no
// metrics). It does nothing until Start.
func NewRunner(name string, dec *Decoder, pool *kvcache.Pool, cfg RunnerConfig, clk clock.Clock, m *RunnerMetrics) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dec == nil || pool == nil || clk == nil {
		return nil, fmt.Errorf("runner %q: decoder, pool and clock are required", name)
	}
	opts, err := ort.NewRunOptions()
	if err != nil {
		return nil, fmt.Errorf("runner %q: %w", name, err)
	}
	r := &Runner{
		name: name, cfg: cfg, dec: dec, pool: pool, clk: clk, opts: opts,
		live:    map[*sequence]struct{}{},
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		drain:   make(chan struct{}),
	}
	for p := range r.weights {
		r.weights[p] = cfg.Weights[p]
		if r.weights[p] == 0 {
			r.weights[p] = DefaultRunnerWeights[p]
		}
	}
	rm, err := m.forRunner(r)
	if err != nil {
		_ = opts.Destroy()
		return nil, err
	}
	r.m = rm
	return r, nil
}

// Name is the model's name.
func (r *Runner) Name() string { return r.name }

// Pool is the runner's KV cache.
func (r *Runner) Pool() *kvcache.Pool { return r.pool }

// Steps counts the step boundaries the loop has passed (once per iteration that ran the
// model). Tests count in steps rather than seconds.
func (r *Runner) Steps() uint64 { return r.steps.Load() }

// Healthy is false from the moment the watchdog trips until a step finishes again.
func (r *Runner) Healthy() bool { return !r.stalled.Load() }

// Load is the runner's live state for the admission layer (admission.Queue). It takes no lock
// a caller waits on and does not allocate.
func (r *Runner) Load() admission.Load {
	running := int(r.runningN.Load())
	l := admission.Load{Running: running, BusyWorkers: running, Completed: r.completed.Load(),
		Work: r.work.Load(), WorkDone: r.workDone.Load(), MemoryUsed: r.pool.Stats().Used}
	for p := range l.Waiting {
		l.Waiting[p] = int(r.waitingBy[p].Load())
	}
	return l
}

// Limits are the runner's bounds for the admission layer (admission.Queue). Workers is
// MaxRunning: a sequence is what runs. Work is measured in tokens, memory in KV blocks.
func (r *Runner) Limits() admission.Limits {
	return admission.Limits{QueueSize: r.cfg.QueueSize, MaxQueueWait: r.cfg.MaxQueueWait,
		Workers: r.cfg.MaxRunning, Weights: r.weights, WorkUnits: true, Memory: r.pool.Blocks()}
}

// Start launches the step loop and the watchdog. When ctx ends, the runner stops as if Close
// had given up. Calls after the first do nothing.
func (r *Runner) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	ctx, r.stop = context.WithCancel(ctx)
	go r.loop(ctx)
	go r.watchdog(ctx)
}

// Submit queues req and returns its stream at once: it fails only when the class's queue is
// full (admission.ErrQueueFull), the runner is closed (admission.ErrClosed) or the request is
// invalid. ctx is the request's: when it ends, the sequence leaves the queue, or stops running
// at the next step boundary with its blocks back in the pool.
func (r *Runner) Submit(ctx context.Context, req Request) (*Stream, error) {
	if err := r.validate(req); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := newSequence(ctx, req, r.cfg.OutBuffer, r.clk.Now(), r.poke)
	// A client that leaves is noticed at once, not at the next step: the time is what the
	// abort-latency metric measures from, and a waiting sequence's slot frees right away.
	q.stopWatch = context.AfterFunc(ctx, func() {
		r.seen(q)
		r.poke()
	})
	r.mu.Lock()
	switch {
	case r.closing:
		r.mu.Unlock()
		q.stopWatch()
		return nil, fmt.Errorf("runner %q: %w", r.name, admission.ErrClosed)
	case r.waiting[req.Priority].n >= r.cfg.QueueSize:
		r.mu.Unlock()
		q.stopWatch()
		return nil, fmt.Errorf("runner %q: %w", r.name, admission.ErrQueueFull)
	}
	r.waiting[req.Priority].pushBack(q)
	r.waitingBy[req.Priority].Add(1)
	r.live[q] = struct{}{}
	demand := int64(len(req.Prompt) + req.MaxNewTokens)
	q.workLeft.Store(demand)
	r.work.Add(demand)
	r.mu.Unlock()
	r.poke()
	return &Stream{seq: q}, nil
}

// ErrInvalidRequest marks a Request the runner cannot run (no prompt, a prompt at the model's
// positions, no token to generate, no Chooser, an unknown class).
var ErrInvalidRequest = errors.New("invalid generation request")

func (r *Runner) validate(req Request) error {
	switch {
	case len(req.Prompt) == 0:
		return fmt.Errorf("%w: empty prompt", ErrInvalidRequest)
	case len(req.Prompt) >= r.cfg.MaxPositions:
		return fmt.Errorf("%w: a prompt of %d tokens leaves no room in %d positions", ErrInvalidRequest, len(req.Prompt), r.cfg.MaxPositions)
	case req.MaxNewTokens < 1:
		return fmt.Errorf("%w: max new tokens %d", ErrInvalidRequest, req.MaxNewTokens)
	case req.Chooser == nil:
		return fmt.Errorf("%w: no chooser", ErrInvalidRequest)
	case !req.Priority.Valid():
		return fmt.Errorf("%w: priority %d", ErrInvalidRequest, req.Priority)
	}
	return nil
}

// Close stops taking submissions and ends the waiting ones with admission.ErrClosed; the
// running ones finish. If ctx ends first, the rest end with ErrShutdown. Close returns once
// the loop has stopped, every block back in the pool; ctx.Err() when it had to give up.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	first := !r.closing
	r.closing = true
	started := r.started
	r.mu.Unlock()
	if first {
		close(r.drain)
	}
	if !started {
		r.endAll(fmt.Errorf("runner %q: %w", r.name, admission.ErrClosed), "shutdown")
		return nil
	}
	r.poke()
	var err error
	select {
	case <-r.stopped:
	case <-ctx.Done():
		err = ctx.Err()
		r.stop()
		<-r.stopped
	}
	_ = r.opts.Destroy()
	r.m.detach()
	return err
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// endAll ends every live sequence with err (the loop is not running).
func (r *Runner) endAll(err error, reason string) {
	r.mu.Lock()
	var all []*sequence
	for q := range r.live {
		all = append(all, q)
	}
	r.mu.Unlock()
	for _, q := range all {
		r.finish(q, Event{Done: true, Finish: FinishError, Err: err}, reason)
	}
}
