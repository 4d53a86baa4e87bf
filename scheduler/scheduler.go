package scheduler

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/settings"
)

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
	// CacheScope is whose prefix cache the prompt shares (a tenant; "" is one scope too): a
	// prompt is computed from the blocks of earlier prompts of its scope only (kvcache.Scope).
	CacheScope string
	// Prepare, when set, is work the first Choose needs, run as a Choice's Prepare is (see
	// Choice.Prepare) from when the loop first sees the request: the sequence takes no step
	// before it returns, and its time counts towards FirstTokenTimeout.
	Prepare func(pause func() bool)
}

// Scheduler is one generation model's step loop: iteration-level scheduling over a paged KV
// cache. See the package documentation.
type Scheduler struct {
	name   string
	cfg    Config
	runner Runner
	vocab  int
	pool   *kvcache.Pool
	clk    clock.Clock
	m      *metrics

	mu      sync.Mutex
	waiting [admission.NumPriorities]seqList // guarded by mu
	live    map[*sequence]struct{}           // guarded by mu: every sequence not yet ended
	closing bool                             // guarded by mu: no new submissions
	started bool                             // guarded by mu
	// inFlight are the rows of the step in flight and inFlightLimit how long that step may
	// take before the watchdog calls it hung, both guarded by mu.
	inFlight      []*sequence
	inFlightLimit time.Duration

	// Owned by the loop goroutine.
	running []*sequence
	pick    admission.Picker
	scratch stepScratch
	cost    stepCost

	wake    chan struct{} // buffer 1
	stopped chan struct{} // closed when the loop has returned
	stop    context.CancelFunc
	drain   chan struct{} // closed by Close: finish the running, then return

	// preparers counts the goroutines running Prepares (started on the loop's goroutine,
	// waited for when it stops); pace gives them a share of the steps' time.
	preparers sync.WaitGroup
	pace      pacer

	// nextSeq numbers the sequences (stepplan.Row.Seq).
	nextSeq atomic.Uint64

	// Read by Load, metrics and the watchdog from other goroutines.
	waitingBy [admission.NumPriorities]atomic.Int64
	runningN  atomic.Int64
	completed atomic.Uint64
	work      atomic.Int64  // tokens not yet computed: prompts waiting and new tokens to come
	workDone  atomic.Uint64 // prompt tokens admitted and tokens generated, ever
	tokens    atomic.Uint64 // generated tokens, ever
	steps     atomic.Uint64 // boundaries passed: one per loop iteration that ran the model
	// stepStarted is the UnixNano when the step in flight started, 0 between steps, and its
	// negative once the watchdog has claimed the step as hung: one word, so that the
	// watchdog can never trip on a step that has just ended.
	stepStarted atomic.Int64
}

// New checks cfg and builds the scheduler of one model, run by runner over pool's blocks;
// name labels its metrics. m may be nil (no metrics). It does nothing until Start.
func New(name string, runner Runner, pool *kvcache.Pool, cfg Config, clk clock.Clock, m *Metrics) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if runner == nil || pool == nil || clk == nil {
		return nil, fmt.Errorf("scheduler: model %q: runner, pool and clock are required", name)
	}
	if fits := pool.MaxSequence(); cfg.MaxPositions > fits {
		// A sequence the pool cannot hold alone would wait for room that never comes.
		check := settings.For("scheduler")
		check.Addf("MaxPositions", "must be at most the %d tokens the KV pool holds, got %d", fits, cfg.MaxPositions)
		return nil, check.Err()
	}
	s := &Scheduler{
		name: name, cfg: cfg, runner: runner, vocab: runner.Vocab(), pool: pool, clk: clk,
		pick:    admission.Picker{Weights: admission.WithDefaults(cfg.Weights)},
		live:    map[*sequence]struct{}{},
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		drain:   make(chan struct{}),
		pace:    pacer{clk: clk, meter: threadTime},
	}
	sm, err := m.forScheduler(s)
	if err != nil {
		return nil, err
	}
	s.m = sm
	return s, nil
}

// Name is the model's name.
func (s *Scheduler) Name() string { return s.name }

// Pool is the scheduler's KV cache.
func (s *Scheduler) Pool() *kvcache.Pool { return s.pool }

// Steps counts the step boundaries the loop has passed (once per iteration that ran the
// model). Tests count in steps rather than seconds.
func (s *Scheduler) Steps() uint64 { return s.steps.Load() }

// Vocab is the width of the model's scores: token ids run below it.
func (s *Scheduler) Vocab() int { return s.vocab }

// Healthy is false from the moment the watchdog trips until the hung step returns.
func (s *Scheduler) Healthy() bool { return s.stepStarted.Load() >= 0 }

// Load is the scheduler's live state for the admission layer (admission.Queue). It takes no
// lock a caller waits on and does not allocate.
func (s *Scheduler) Load() admission.Load {
	running := int(s.runningN.Load())
	l := admission.Load{Running: running, BusyWorkers: running, Completed: s.completed.Load(),
		Work: s.work.Load(), WorkDone: s.workDone.Load(), MemoryUsed: s.pool.Stats().Used}
	for p := range l.Waiting {
		l.Waiting[p] = int(s.waitingBy[p].Load())
	}
	return l
}

// Limits are the scheduler's bounds for the admission layer (admission.Queue). Workers is
// MaxRunning: a sequence is what runs. Work is measured in tokens, memory in KV blocks.
func (s *Scheduler) Limits() admission.Limits {
	return admission.Limits{QueueSize: s.cfg.QueueSize, MaxQueueWait: s.cfg.MaxQueueWait,
		Workers: s.cfg.MaxRunning, Weights: s.pick.Weights, WorkUnits: true, Memory: s.pool.Blocks()}
}

// Start launches the step loop and the watchdog. When ctx ends, the scheduler stops as if
// Close had given up, and refuses later submissions with ErrClosed. Calls after the first do
// nothing.
func (s *Scheduler) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	ctx, s.stop = context.WithCancel(ctx)
	go s.loop(ctx)
	go s.watchdog(ctx)
}

// Submit queues req and returns its stream at once: it fails only when the class's queue is
// full (ErrQueueFull), the scheduler is closed or its Start's context has ended (ErrClosed)
// or the request is invalid (ErrInvalidRequest). ctx is the request's: when it ends, a
// waiting sequence leaves the queue at once, and a running one stops at the next step
// boundary with its blocks back in the pool.
func (s *Scheduler) Submit(ctx context.Context, req Request) (*Stream, error) {
	if err := s.validate(req); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := newSequence(ctx, req, s.cfg.OutBuffer, s.clk.Now(), s.poke)
	q.id = s.nextSeq.Add(1)
	s.mu.Lock()
	switch {
	case s.closing:
		s.mu.Unlock()
		return nil, ErrClosed
	case s.waiting[req.Priority].n >= s.cfg.QueueSize:
		s.mu.Unlock()
		return nil, ErrQueueFull
	}
	s.waiting[req.Priority].pushBack(q)
	s.waitingBy[req.Priority].Add(1)
	s.live[q] = struct{}{}
	demand := int64(len(req.Prompt) + req.MaxNewTokens)
	q.workLeft.Store(demand)
	s.work.Add(demand)
	// Watched from under mu: the callback takes mu, so even a context that has already ended
	// finds q queued, and stopWatch set, when it looks.
	q.stopWatch = context.AfterFunc(ctx, func() { s.left(q) })
	s.mu.Unlock()
	s.poke()
	return &Stream{seq: q}, nil
}

func (s *Scheduler) validate(req Request) error {
	switch {
	case len(req.Prompt) == 0:
		return fmt.Errorf("%w: empty prompt", ErrInvalidRequest)
	case len(req.Prompt) >= s.cfg.MaxPositions:
		return fmt.Errorf("%w: a prompt of %d tokens leaves no room in %d positions", ErrInvalidRequest, len(req.Prompt), s.cfg.MaxPositions)
	case req.MaxNewTokens < 1 || req.MaxNewTokens > s.cfg.MaxPositions-len(req.Prompt): // not a sum: it could wrap
		return fmt.Errorf("%w: max new tokens %d after a prompt of %d in %d positions", ErrInvalidRequest, req.MaxNewTokens,
			len(req.Prompt), s.cfg.MaxPositions)
	case req.Chooser == nil:
		return fmt.Errorf("%w: no chooser", ErrInvalidRequest)
	case !req.Priority.Valid():
		return fmt.Errorf("%w: priority %d", ErrInvalidRequest, req.Priority)
	}
	return nil
}

// left runs when q's context ends, on a goroutine of its own. A client that leaves is noticed
// at once, not at the next step boundary: the time is what the abort-latency metric measures
// from, and a sequence still waiting ends now, its queue slot free for the next request even
// while a long step runs. A running one is the loop's to end at the boundary, where its
// blocks go back.
func (s *Scheduler) left(q *sequence) {
	s.seen(q)
	s.mu.Lock()
	waiting := q.state == seqWaiting
	s.mu.Unlock()
	if waiting {
		// Admitted meanwhile, it is ended as the watchdog ends one: the boundary retires it.
		s.abort(q, q.ctx.Err())
	}
	s.poke()
}

// Close stops taking submissions and ends the waiting ones that never ran with ErrClosed; the
// running ones finish, and so do those preempted earlier (after their Prepare, when one is
// under way). If ctx ends first, the rest end with ErrShutdown. Close returns once the loop has
// stopped, every block back in the pool; ctx.Err() when it had to give up.
func (s *Scheduler) Close(ctx context.Context) error {
	s.mu.Lock()
	first := !s.closing
	s.closing = true
	started := s.started
	s.mu.Unlock()
	if first {
		close(s.drain)
	}
	if !started {
		s.endAll()
		if first {
			s.m.detach() // its name is free for another scheduler
		}
		return nil
	}
	s.poke()
	var err error
	select {
	case <-s.stopped:
	case <-ctx.Done():
		err = ctx.Err()
		s.stop()
		<-s.stopped
	}
	s.m.detach()
	return err
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// endAll ends every live sequence at shutdown: with ErrShutdown one that has started
// (preempted, it may have streamed tokens), with ErrClosed one that never did.
func (s *Scheduler) endAll() {
	s.mu.Lock()
	var all []*sequence
	for q := range s.live {
		all = append(all, q)
	}
	s.mu.Unlock()
	for _, q := range all {
		err := ErrClosed
		if q.preempted {
			err = ErrShutdown
		}
		s.finish(q, errorEvent(err), "shutdown")
	}
}

// cacheScope is the kvcache scope of a Request's CacheScope: FNV-1a of its bytes, and 0 for "".
func cacheScope(name string) kvcache.Scope {
	if name == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return kvcache.Scope(h.Sum64())
}
