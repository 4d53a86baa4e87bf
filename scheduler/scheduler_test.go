package engine

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/kvcache"
)

// argmaxChooser picks the highest score and never stops early.
type argmaxChooser struct{}

func (argmaxChooser) Choose(logits []float32) Choice { return Choice{ID: argmax(logits)} }

type runnerOpts struct {
	blocks int
	cfg    func(*RunnerConfig)
	clk    clock.Clock
}

func newTestRunner(t *testing.T, o runnerOpts) *Runner {
	t.Helper()
	d := tinyLM(t)
	sh := d.Shape()
	if o.blocks == 0 {
		o.blocks = 256
	}
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 16, Blocks: o.blocks, Layers: sh.Layers,
		Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	cfg := RunnerConfig{MaxRunning: 8, MaxStepTokens: 4096, QueueSize: 64, OutBuffer: 64,
		StallTimeout: time.Minute, MaxPositions: 256}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	if o.clk == nil {
		o.clk = clock.Real()
	}
	r, err := NewRunner("tiny-lm", d, pool, cfg, o.clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func startRunner(t *testing.T, r *Runner) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	t.Cleanup(func() {
		cancel()
		_ = r.Close(context.Background())
		if st := r.Pool().Stats(); st.Used != 0 {
			t.Errorf("blocks still held after Close: %+v", st)
		}
	})
}

// collect reads a stream to its end.
func collect(t *testing.T, s *Stream) ([]int64, Event) {
	t.Helper()
	var ids []int64
	for {
		ev, err := s.Next(context.Background())
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if ev.HasToken() {
			ids = append(ids, ev.ID)
		}
		if ev.Done {
			if _, err := s.Next(context.Background()); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last event: %v, want EOF", err)
			}
			return ids, ev
		}
	}
}

func greedyRequest(prompt []int64, n int) Request {
	return Request{Prompt: prompt, MaxNewTokens: n, Chooser: argmaxChooser{}}
}

// TestRunnerBatchesMixedPromptsLikeSingleRuns: the golden prompts, of different lengths,
// submitted together and decoded as one batch, each come out as torch's greedy ids, and the
// batch took about as many steps as one of them alone would.
func TestRunnerBatchesMixedPromptsLikeSingleRuns(t *testing.T) {
	r := newTestRunner(t, runnerOpts{})
	goldens := readLMGoldens(t)
	var streams []*Stream
	for _, g := range goldens {
		s, err := r.Submit(context.Background(), greedyRequest(g.PromptIDs, len(g.Greedy)))
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	startRunner(t, r) // every sequence is waiting: the first step admits them all together
	for i, s := range streams {
		ids, last := collect(t, s)
		if last.Finish != FinishLength || last.Index != len(goldens[i].Greedy) {
			t.Fatalf("%q: last event %+v", goldens[i].Prompt, last)
		}
		for j := range ids {
			if ids[j] != goldens[i].Greedy[j] {
				t.Fatalf("%q batched: %v, torch %v", goldens[i].Prompt, ids, goldens[i].Greedy)
			}
		}
	}
	if steps := r.Steps(); steps > uint64(len(goldens[0].Greedy))+1 {
		t.Fatalf("%d steps for %d sequences of %d tokens: they were not batched", steps, len(goldens), len(goldens[0].Greedy))
	}
	// The batch kept its rows from the second decode step on: those steps took the previous
	// step's present as their past instead of gathering it, and the tokens above prove it exact.
	if r.scratch.reused < len(goldens[0].Greedy)-3 {
		t.Fatalf("%d steps reused the previous present, want nearly every decode step", r.scratch.reused)
	}
}

// TestPreemptedSequencesResumeExactly: a pool too small for every sequence at once makes the
// runner preempt and recompute; every sequence still ends with torch's greedy ids.
func TestPreemptedSequencesResumeExactly(t *testing.T) {
	r := newTestRunner(t, runnerOpts{blocks: 4}) // 64 positions for 5 sequences of ~20
	startRunner(t, r)
	goldens := readLMGoldens(t)
	var streams []*Stream
	for _, g := range goldens {
		s, err := r.Submit(context.Background(), greedyRequest(g.PromptIDs, len(g.Greedy)))
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	for i, s := range streams {
		ids, _ := collect(t, s)
		for j := range ids {
			if ids[j] != goldens[i].Greedy[j] {
				t.Fatalf("%q: %v, torch %v", goldens[i].Prompt, ids, goldens[i].Greedy)
			}
		}
	}
}

// TestAbortFreesBlocksWithinOneStep: a reader that takes three tokens and leaves has its
// blocks back in the pool by the next step boundary, and at most one token is generated for
// it after its departure was seen.
func TestAbortFreesBlocksWithinOneStep(t *testing.T) {
	r := newTestRunner(t, runnerOpts{})
	startRunner(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := r.Submit(ctx, greedyRequest([]int64{1198, 922, 799, 1960, 682}, 200))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r.Pool().Stats().Used == 0 {
		t.Fatal("no blocks held while generating")
	}
	cancel()
	seen := r.Steps()
	waitUntil(t, func() bool { return r.Pool().Stats().Used == 0 })
	if steps := r.Steps() - seen; steps > 1 {
		t.Fatalf("blocks came back %d steps after the abort was seen, want at most 1", steps)
	}
	ev := lastEvent(t, s)
	if !errors.Is(ev.Err, context.Canceled) {
		t.Fatalf("last event %+v; want the cancellation", ev)
	}
	if n := s.seq.afterAbort; n > 1 {
		t.Fatalf("%d tokens generated after the departure was seen, want at most one", n)
	}
}

// TestPrefixCacheServesASharedPrompt: the second of two sequences with the same 40-token
// prompt takes the first's full blocks from the cache instead of recomputing them, and still
// generates the same tokens.
func TestPrefixCacheServesASharedPrompt(t *testing.T) {
	r := newTestRunner(t, runnerOpts{})
	startRunner(t, r)
	prompt := make([]int64, 40)
	for i := range prompt {
		prompt[i] = int64(600 + i)
	}
	s1, _ := r.Submit(context.Background(), greedyRequest(prompt, 8))
	first, _ := collect(t, s1)
	s2, _ := r.Submit(context.Background(), greedyRequest(prompt, 8))
	second, _ := collect(t, s2)
	if st := r.Pool().Stats(); st.Hits != 2 {
		t.Fatalf("prefix cache %+v, want the two full blocks of the prompt hit", st)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("cached prompt generated %v, computed %v", second, first)
		}
	}
}

// TestSlowReaderPausesThenIsEnded: a reader that takes nothing fills its buffer; its sequence
// pauses (no more tokens, blocks kept), and at the stall timeout it is ended and its blocks
// freed.
func TestSlowReaderPausesThenIsEnded(t *testing.T) {
	fake := clock.NewFake(epoch)
	r := newTestRunner(t, runnerOpts{clk: fake, cfg: func(c *RunnerConfig) { c.OutBuffer = 2; c.StallTimeout = 10 * time.Second }})
	startRunner(t, r)
	s, _ := r.Submit(context.Background(), greedyRequest([]int64{1198, 922}, 100))
	waitUntil(t, func() bool { return s.seq.paused.Load() })
	steps := r.Steps()
	for range 5 {
		runtime.Gosched()
	}
	if got := r.Steps(); got != steps {
		t.Fatalf("a paused sequence kept stepping: %d -> %d", steps, got)
	}
	if r.Pool().Stats().Used == 0 {
		t.Fatal("a paused sequence gave its blocks up")
	}
	waitUntil(t, func() bool {
		fake.Advance(time.Second)
		return r.Pool().Stats().Used == 0
	})
	last := lastEvent(t, s)
	if !errors.Is(last.Err, ErrClientStalled) || last.Index != 3 {
		t.Fatalf("last event %+v, want ErrClientStalled after 3 tokens (2 buffered, 1 pending)", last)
	}
}

// TestWatchdogEndsStreamsWhenTheDecoderHangs: a step that does not return within the stall
// timeout ends every stream with ErrEngineStalled and marks the runner unhealthy; once steps
// finish again, it is healthy.
func TestWatchdogEndsStreamsWhenTheDecoderHangs(t *testing.T) {
	fake := clock.NewFake(epoch)
	r := newTestRunner(t, runnerOpts{clk: fake, cfg: func(c *RunnerConfig) { c.StallTimeout = 4 * time.Second }})
	hang := make(chan struct{})
	var once sync.Once
	r.hook = func() {
		if r.Steps() == 2 {
			once.Do(func() { <-hang })
		}
	}
	startRunner(t, r)
	s, _ := r.Submit(context.Background(), greedyRequest([]int64{1198, 922}, 50))
	waitUntil(t, func() bool { return r.stepStarted.Load() != 0 && r.Steps() == 2 })
	waitUntil(t, func() bool {
		fake.Advance(time.Second)
		return !r.Healthy()
	})
	last := lastEvent(t, s)
	if !errors.Is(last.Err, ErrEngineStalled) {
		t.Fatalf("last event %+v, want ErrEngineStalled", last)
	}
	close(hang)
	waitUntil(t, func() bool { return r.Pool().Stats().Used == 0 })
	s2, _ := r.Submit(context.Background(), greedyRequest([]int64{1198, 922}, 3))
	if ids, last := collect(t, s2); len(ids) != 3 || last.Err != nil {
		t.Fatalf("after the stall: %v %+v", ids, last)
	}
	if !r.Healthy() {
		t.Fatal("still unhealthy after steps finished again")
	}
}

func TestQueueLimitsAndExpiry(t *testing.T) {
	fake := clock.NewFake(epoch)
	r := newTestRunner(t, runnerOpts{clk: fake, cfg: func(c *RunnerConfig) {
		c.QueueSize = 1
		c.MaxQueueWait = time.Second
	}})
	// Not started: submissions wait.
	s, err := r.Submit(context.Background(), greedyRequest([]int64{5}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(context.Background(), greedyRequest([]int64{5}, 2)); !errors.Is(err, admission.ErrQueueFull) {
		t.Fatalf("second interactive: %v, want ErrQueueFull", err)
	}
	if _, err := r.Submit(context.Background(), Request{Prompt: []int64{5}, MaxNewTokens: 2, Priority: admission.Bulk, Chooser: argmaxChooser{}}); err != nil {
		t.Fatalf("bulk has its own queue: %v", err)
	}
	if l := r.Load(); l.Waiting != [admission.NumPriorities]int{1, 1} || l.Depth() != 2 {
		t.Fatalf("load %+v", l)
	}
	for _, bad := range []Request{{MaxNewTokens: 1, Chooser: argmaxChooser{}}, {Prompt: make([]int64, 256), MaxNewTokens: 1, Chooser: argmaxChooser{}},
		{Prompt: []int64{1}, Chooser: argmaxChooser{}}, {Prompt: []int64{1}, MaxNewTokens: 1}} {
		if _, err := r.Submit(context.Background(), bad); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("%+v: %v, want ErrInvalidRequest", bad, err)
		}
	}
	fake.Advance(2 * time.Second) // both expire before the loop ever starts
	startRunner(t, r)
	ev, err := s.Next(context.Background())
	if err != nil || !errors.Is(ev.Err, admission.ErrExpired) {
		t.Fatalf("expired: %+v %v", ev, err)
	}
	waitUntil(t, func() bool { return r.Load().Depth() == 0 })
}

// TestCloseLetsRunningFinishThenEndsTheRest: Close refuses new work and ends the waiting at
// once; the running finish when they can, or end with ErrShutdown when Close gives up.
func TestCloseLetsRunningFinishThenEndsTheRest(t *testing.T) {
	r := newTestRunner(t, runnerOpts{cfg: func(c *RunnerConfig) { c.MaxRunning = 1 }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.Start(ctx)
	running, _ := r.Submit(context.Background(), greedyRequest([]int64{1198, 922}, 200))
	if _, err := running.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	queued, _ := r.Submit(context.Background(), greedyRequest([]int64{1198, 922}, 5))
	giveUp, stop := context.WithCancel(context.Background())
	closed := make(chan error, 1)
	go func() { closed <- r.Close(giveUp) }()
	ev, err := queued.Next(context.Background())
	if err != nil || !errors.Is(ev.Err, admission.ErrClosed) {
		t.Fatalf("queued at shutdown: %+v %v", ev, err)
	}
	if _, err := r.Submit(context.Background(), greedyRequest([]int64{1}, 1)); !errors.Is(err, admission.ErrClosed) {
		t.Fatalf("submit after Close: %v", err)
	}
	if _, err := running.Next(context.Background()); err != nil {
		t.Fatal("the running stream was cut before the grace ended")
	}
	stop()
	if err := <-closed; !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	last := lastEvent(t, running)
	if !errors.Is(last.Err, ErrShutdown) {
		t.Fatalf("last %+v, want ErrShutdown", last)
	}
	if st := r.Pool().Stats(); st.Used != 0 {
		t.Fatalf("blocks held after Close: %+v", st)
	}
}

// lastEvent reads a stream's events up to its last one.
func lastEvent(t *testing.T, s *Stream) Event {
	t.Helper()
	for {
		ev, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Done {
			return ev
		}
	}
}

// waitUntil polls a condition another goroutine makes true; it never sleeps for a fixed time.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		runtime.Gosched()
	}
}

// epoch starts the fake clocks; the runner keeps times as UnixNano with 0 meaning "none".
var epoch = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// TestLoadMeasuresTokensAndBlocks: the runner reports its demand in tokens, the tokens it has
// computed, and its KV blocks in use, for the admission layer; all return to rest.
func TestLoadMeasuresTokensAndBlocks(t *testing.T) {
	r := newTestRunner(t, runnerOpts{cfg: func(c *RunnerConfig) { c.OutBuffer = 1 }})
	if lim := r.Limits(); !lim.WorkUnits || lim.Memory != 256 || lim.Workers != 8 {
		t.Fatalf("limits %+v", lim)
	}
	s, _ := r.Submit(context.Background(), greedyRequest([]int64{1198, 922, 799}, 10))
	if l := r.Load(); l.Work != 13 || l.WorkDone != 0 {
		t.Fatalf("waiting: %+v, want 13 tokens of work", l)
	}
	startRunner(t, r)
	waitUntil(t, func() bool { return s.seq.paused.Load() }) // one token unread, one pending
	if l := r.Load(); l.MemoryUsed == 0 || l.WorkDone != 5 || l.Work != 8 || l.Running != 1 {
		t.Fatalf("paused: %+v, want blocks held, the prompt and two tokens done, eight to come", l)
	}
	lastEvent(t, s)
	waitUntil(t, func() bool { l := r.Load(); return l.MemoryUsed == 0 && l.Work == 0 })
	if l := r.Load(); l.WorkDone != 13 {
		t.Fatalf("after: %+v, want 13 tokens done", l)
	}
}
