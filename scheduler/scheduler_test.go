package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/stepplan"
)

// argmaxChooser picks the highest score and never stops early.
type argmaxChooser struct{}

func (argmaxChooser) Choose(logits []float32) Choice {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return Choice{ID: int64(best)}
}

type testOpts struct {
	blocks   int
	cfg      func(*Config)
	clk      clock.Clock
	registry *prometheus.Registry // nil: no metrics
}

// newTestScheduler builds a scheduler over a fresh fake model, not started.
func newTestScheduler(t *testing.T, o testOpts) (*Scheduler, *fakeModel) {
	t.Helper()
	model := newFakeModel()
	sh := model.Shape()
	if o.blocks == 0 {
		o.blocks = 256
	}
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: blockTokens, Blocks: o.blocks, Layers: sh.Layers,
		Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{MaxRunning: 8, MaxStepTokens: 4096, QueueSize: 64, OutBuffer: 64,
		StallTimeout: time.Minute, MaxPositions: 256}
	cfg.MaxPositions = min(cfg.MaxPositions, o.blocks*16) // what the pool holds
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	if o.clk == nil {
		o.clk = clock.Real()
	}
	var m *Metrics
	if o.registry != nil {
		m = NewMetrics(o.registry)
	}
	s, err := New("fake-lm", model, pool, cfg, o.clk, m)
	if err != nil {
		t.Fatal(err)
	}
	return s, model
}

func start(t *testing.T, s *Scheduler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	t.Cleanup(func() {
		cancel()
		_ = s.Close(context.Background())
		if st := s.Pool().Stats(); st.Used != 0 {
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

// prompts are five prompts of different lengths with distinct first tokens.
func prompts() [][]int64 {
	var out [][]int64
	for i, n := range []int{3, 9, 17, 5, 24} {
		p := make([]int64, n)
		for j := range p {
			p[j] = int64(10*i + 1 + (j*7)%40)
		}
		out = append(out, p)
	}
	return out
}

// submitAll submits every prompt for n greedy tokens.
func submitAll(t *testing.T, s *Scheduler, ps [][]int64, n int) []*Stream {
	t.Helper()
	var streams []*Stream
	for _, p := range ps {
		st, err := s.Submit(context.Background(), greedyRequest(p, n))
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	return streams
}

// TestBatchedSequencesMatchTheirReference: prompts of different lengths, submitted together
// and decoded as one left-padded batch, each come out as the model gives them alone, and the
// batch took about as many steps as one of them alone would.
func TestBatchedSequencesMatchTheirReference(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{})
	const n = 12
	ps := prompts()
	streams := submitAll(t, s, ps, n)
	start(t, s) // every sequence is waiting: the first step admits them all together
	for i, st := range streams {
		ids, last := collect(t, st)
		if last.Finish != FinishLength || last.Index != n {
			t.Fatalf("prompt %d: last event %+v", i, last)
		}
		if want := referenceGreedy(ps[i], n); !slices.Equal(ids, want) {
			t.Fatalf("prompt %d batched: %v, alone %v", i, ids, want)
		}
	}
	if steps := s.Steps(); steps > n+1 {
		t.Fatalf("%d steps for %d sequences of %d tokens: they were not batched", steps, len(ps), n)
	}
	// From the second decode step on the batch kept its rows, in order: a runner takes the
	// previous step's present as those steps' past instead of gathering it (engine's
	// TestRunnerTakesThePresentOfTheSameRowsAsThePast proves that exact).
	if kept := model.keptSteps(); kept < n-3 {
		t.Fatalf("%d steps kept the previous step's rows, want nearly every decode step", kept)
	}
}

// TestPreemptedSequencesResumeExactly: a pool too small for every sequence at once makes the
// scheduler preempt and recompute; every sequence still ends with its reference tokens.
func TestPreemptedSequencesResumeExactly(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{blocks: 4}) // 64 positions for 5 sequences of up to 44
	const n = 20
	ps := prompts()
	streams := submitAll(t, s, ps, n) // all queued before the loop starts: they compete
	start(t, s)
	for i, st := range streams {
		ids, last := collect(t, st)
		if last.Err != nil {
			t.Fatalf("prompt %d: %v", i, last.Err)
		}
		if want := referenceGreedy(ps[i], n); !slices.Equal(ids, want) {
			t.Fatalf("prompt %d: %v, alone %v", i, ids, want)
		}
	}
	if got := slices.Collect(func(yield func(bool) bool) {
		for _, st := range streams {
			if !yield(st.seq.preempted) {
				return
			}
		}
	}); !slices.Contains(got, true) {
		t.Fatal("nothing was preempted: the pool was not short")
	}
}

// TestPreemptionTakesTheLowestClassLatestFirst: when the pool runs short, bulk sequences go
// before interactive ones, and within a class the latest admitted goes first.
func TestPreemptionTakesTheLowestClassLatestFirst(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{blocks: 5})
	prompt := func(first int64) []int64 { return []int64{first, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} }
	submit := func(p admission.Priority, first int64) *Stream {
		st, err := s.Submit(context.Background(), Request{Prompt: prompt(first), MaxNewTokens: 30, Priority: p, Chooser: argmaxChooser{}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	bulkEarly := submit(admission.Bulk, 1)
	inter := submit(admission.Interactive, 2)
	bulkLate := submit(admission.Bulk, 3)
	start(t, s)
	for _, st := range []*Stream{bulkEarly, inter, bulkLate} {
		if _, last := collect(t, st); last.Err != nil {
			t.Fatal(last.Err)
		}
	}
	if inter.seq.preempted {
		t.Fatal("the interactive sequence was preempted while bulk ones ran")
	}
	if !bulkLate.seq.preempted {
		t.Fatal("the latest bulk sequence was never preempted")
	}
}

// TestAdmissionSharesTurnsByWeight: with one sequence running at a time, waiting classes are
// admitted four interactive to one bulk, each class in arrival order.
func TestAdmissionSharesTurnsByWeight(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxRunning = 1 }})
	var streams []*Stream
	for i := range 5 {
		for _, p := range []admission.Priority{admission.Bulk, admission.Interactive} {
			first := int64(100*int(p) + i + 1) // interactive 1..5, bulk 101..105
			st, err := s.Submit(context.Background(), Request{Prompt: []int64{first, 7}, MaxNewTokens: 1, Priority: p, Chooser: argmaxChooser{}})
			if err != nil {
				t.Fatal(err)
			}
			streams = append(streams, st)
		}
	}
	start(t, s)
	for _, st := range streams {
		collect(t, st)
	}
	// admission.Picker's 4:1 turns are I I B I I, then bulk alone.
	if got, want := model.prefilled(), []int64{1, 2, 101, 3, 4, 5, 102, 103, 104, 105}; !slices.Equal(got, want) {
		t.Fatalf("admission order %v, want %v", got, want)
	}
}

// TestAbortFreesBlocksWithinOneStep: a reader that takes three tokens and leaves has its
// blocks back in the pool by the next step boundary, and at most one token is generated for
// it after its departure was seen.
func TestAbortFreesBlocksWithinOneStep(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{})
	start(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := s.Submit(ctx, greedyRequest([]int64{11, 12, 13, 14, 15}, 200))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if s.Pool().Stats().Used == 0 {
		t.Fatal("no blocks held while generating")
	}
	cancel()
	seen := s.Steps()
	waitUntil(t, func() bool { return s.Pool().Stats().Used == 0 })
	if steps := s.Steps() - seen; steps > 1 {
		t.Fatalf("blocks came back %d steps after the abort was seen, want at most 1", steps)
	}
	ev := lastEvent(t, st)
	if !errors.Is(ev.Err, context.Canceled) {
		t.Fatalf("last event %+v; want the cancellation", ev)
	}
	if n := st.seq.afterAbort; n > 1 {
		t.Fatalf("%d tokens generated after the departure was seen, want at most one", n)
	}
}

// TestPrefixCacheServesASharedPrompt: the second of two sequences with the same 40-token
// prompt takes the first's full blocks from the cache instead of recomputing them, and still
// generates the same tokens.
func TestPrefixCacheServesASharedPrompt(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{})
	start(t, s)
	prompt := make([]int64, 40)
	for i := range prompt {
		prompt[i] = int64(600 + i)
	}
	s1, _ := s.Submit(context.Background(), greedyRequest(prompt, 8))
	first, _ := collect(t, s1)
	s2, _ := s.Submit(context.Background(), greedyRequest(prompt, 8))
	second, _ := collect(t, s2)
	if st := s.Pool().Stats(); st.Hits != 2 {
		t.Fatalf("prefix cache %+v, want the two full blocks of the prompt hit", st)
	}
	if !slices.Equal(first, second) || !slices.Equal(first, referenceGreedy(prompt, 8)) {
		t.Fatalf("cached prompt generated %v, computed %v", second, first)
	}
}

// TestSlowReaderPausesThenIsEnded: a reader that takes nothing fills its buffer; its sequence
// pauses (no more tokens, blocks kept), and at the stall timeout it is ended and its blocks
// freed.
func TestSlowReaderPausesThenIsEnded(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, _ := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.OutBuffer = 2; c.StallTimeout = 10 * time.Second }})
	start(t, s)
	st, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 100))
	waitUntil(t, func() bool { return st.seq.paused.Load() })
	// The step that paused it is counted once the loop is done with it: here, gone idle.
	waitUntil(t, func() bool {
		s.pace.mu.Lock()
		defer s.pace.mu.Unlock()
		return !s.pace.busy
	})
	steps := s.Steps()
	for range 5 {
		runtime.Gosched()
	}
	if got := s.Steps(); got != steps {
		t.Fatalf("a paused sequence kept stepping: %d -> %d", steps, got)
	}
	if s.Pool().Stats().Used == 0 {
		t.Fatal("a paused sequence gave its blocks up")
	}
	waitUntil(t, func() bool {
		fake.Advance(time.Second)
		return s.Pool().Stats().Used == 0
	})
	last := lastEvent(t, st)
	if !errors.Is(last.Err, ErrClientStalled) || last.Index != 3 {
		t.Fatalf("last event %+v, want ErrClientStalled after 3 tokens (2 buffered, 1 pending)", last)
	}
}

// TestReaderThatCatchesUpResumes: a paused sequence goes on, from where it stopped, as soon as
// its reader makes room, and its tokens are the ones it would have had unpaused.
func TestReaderThatCatchesUpResumes(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.OutBuffer = 1 }})
	start(t, s)
	prompt := []int64{21, 22, 23}
	st, _ := s.Submit(context.Background(), greedyRequest(prompt, 10))
	waitUntil(t, func() bool { return st.seq.paused.Load() })
	ids, last := collect(t, st)
	if last.Err != nil || !slices.Equal(ids, referenceGreedy(prompt, 10)) {
		t.Fatalf("after pausing: %v %+v, want %v", ids, last, referenceGreedy(prompt, 10))
	}
}

// TestWatchdogEndsStreamsWhenTheDecoderHangs: a step that does not return within the stall
// timeout is terminated, every stream ends with ErrStalled and the scheduler is unhealthy;
// once steps finish again, it is healthy.
func TestWatchdogEndsStreamsWhenTheDecoderHangs(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, model := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.StallTimeout = 4 * time.Second }})
	hanging, release := make(chan struct{}), make(chan struct{})
	model.setHook(func(step int64, _ *stepplan.Plan) error {
		if step == 3 {
			close(hanging)
			return model.hang(release)
		}
		return nil
	})
	// Both are queued before the loop starts, so both are in every step up to the hung one.
	st, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 50))
	second, _ := s.Submit(context.Background(), greedyRequest([]int64{13, 14}, 5))
	start(t, s)
	<-hanging
	waitUntil(t, func() bool {
		fake.Advance(time.Second)
		return !s.Healthy()
	})
	for _, stream := range []*Stream{st, second} {
		if last := lastEvent(t, stream); !errors.Is(last.Err, ErrStalled) {
			t.Fatalf("last event %+v, want ErrStalled", last)
		}
	}
	if len(model.terminated) != 1 {
		t.Fatal("the hung step was not terminated")
	}
	close(release) // the step returns, failed as a terminated run does
	waitUntil(t, func() bool { return s.Pool().Stats().Used == 0 })
	s2, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 3))
	if ids, last := collect(t, s2); len(ids) != 3 || last.Err != nil {
		t.Fatalf("after the stall: %v %+v", ids, last)
	}
	if !s.Healthy() {
		t.Fatal("still unhealthy after steps finished again")
	}
}

// TestFailedStepEndsItsRows: an error from the model ends the sequences of that step with
// ErrStepFailed, gives their blocks back, and the next request is served.
func TestFailedStepEndsItsRows(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{})
	boom := errors.New("fake: out of memory")
	model.setHook(func(step int64, _ *stepplan.Plan) error {
		if step == 2 {
			return boom
		}
		return nil
	})
	start(t, s)
	st, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 10))
	if last := lastEvent(t, st); !errors.Is(last.Err, ErrStepFailed) || !errors.Is(last.Err, boom) {
		t.Fatalf("last event %+v, want ErrStepFailed wrapping the model's error", last)
	}
	waitUntil(t, func() bool { return s.Pool().Stats().Used == 0 })
	next, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 2))
	if ids, last := collect(t, next); len(ids) != 2 || last.Err != nil {
		t.Fatalf("after the failure: %v %+v", ids, last)
	}
}

// TestARunnerThatPanicsFailsOnlyItsStep: a panic in Runner.Run ends the rows of that step with
// ErrStepFailed, naming only the panic's type, and a sequence stepped apart from it goes on
// to its reference tokens. The panic used to unwind the loop's goroutine and end the process,
// every stream of every model with it.
func TestARunnerThatPanicsFailsOnlyItsStep(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{})
	const canary = "Jane Doe, born 1961-04-02" // what a panic value may carry of a request
	inStep, release := make(chan struct{}), make(chan struct{})
	model.setHook(func(step int64, p *stepplan.Plan) error {
		if step == 1 {
			close(inStep)
			<-release
		}
		for _, r := range p.Rows {
			if r.Past == 0 && r.Tokens[0] == 90 {
				panic("fake: index out of range over " + canary)
			}
		}
		return nil
	})
	start(t, s)
	good := mustSubmit(t, s, greedyRequest([]int64{11, 12}, 6))
	<-inStep // good's prompt is in step 1: bad's comes in a prefill step of its own
	bad := mustSubmit(t, s, greedyRequest([]int64{90, 91, 92}, 6))
	close(release)
	last := lastEvent(t, bad)
	if !errors.Is(last.Err, ErrStepFailed) {
		t.Fatalf("the sequence of the step that panicked: %+v, want ErrStepFailed", last)
	}
	if strings.Contains(last.Err.Error(), canary) {
		t.Fatalf("the error tells the panic's value: %v", last.Err)
	}
	if ids, last := collect(t, good); last.Err != nil || !slices.Equal(ids, referenceGreedy([]int64{11, 12}, 6)) {
		t.Fatalf("the sequence stepped beside it: %v %+v", ids, last)
	}
	waitUntil(t, func() bool { return s.Pool().Stats().Used == 0 })
	if !s.Healthy() {
		t.Fatal("unhealthy after the step that panicked returned")
	}
}

// panicChooser panics on its second choice.
type panicChooser struct{ n int }

func (c *panicChooser) Choose(logits []float32) Choice {
	if c.n++; c.n == 2 {
		var none []int
		_ = none[c.n] // an index out of range, as a sampler's bug would make
	}
	return argmaxChooser{}.Choose(logits)
}

// TestAChooserThatPanicsEndsItsSequenceAlone: a sequence whose Chooser panics ends with
// ErrStepFailed and gives its blocks back; the loop goes on, and so does a sequence batched
// with it.
func TestAChooserThatPanicsEndsItsSequenceAlone(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{})
	start(t, s)
	bad, err := s.Submit(context.Background(), Request{Prompt: []int64{11, 12}, MaxNewTokens: 10, Chooser: &panicChooser{}})
	if err != nil {
		t.Fatal(err)
	}
	good, err := s.Submit(context.Background(), greedyRequest([]int64{21, 22, 23}, 10))
	if err != nil {
		t.Fatal(err)
	}
	if last := lastEvent(t, bad); !errors.Is(last.Err, ErrStepFailed) {
		t.Fatalf("the panicking sequence's last event: %+v", last)
	}
	if ids, last := collect(t, good); len(ids) != 10 || last.Err != nil {
		t.Fatalf("the sequence beside it: %v %+v", ids, last)
	}
	waitUntil(t, func() bool { return s.Pool().Stats().Used == 0 })
}

// preparingChooser picks greedily; after its first token its Prepare waits for release
// (a dear mask, say), and a later one panics when panics is set.
type preparingChooser struct {
	n       int
	started chan struct{} // closed when the first Prepare begins
	release chan struct{}
	panics  bool
}

func (c *preparingChooser) Choose(logits []float32) Choice {
	ch := argmaxChooser{}.Choose(logits)
	switch c.n++; c.n {
	case 1:
		ch.Prepare = func(func() bool) { close(c.started); <-c.release }
	case 2:
		if c.panics {
			ch.Prepare = func(func() bool) { panic("a mask's bug") }
		}
	}
	return ch
}

// TestAChoiceBeingPreparedHoldsOnlyItsSequence: while one sequence's next choice is being
// prepared (its Prepare blocked), the sequence beside it takes every step to its end; the
// first then goes on from where it was, its tokens what the model gives it alone. A Prepare
// that panics ends its sequence alone.
func TestAChoiceBeingPreparedHoldsOnlyItsSequence(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{})
	start(t, s)
	slow := &preparingChooser{started: make(chan struct{}), release: make(chan struct{})}
	held, err := s.Submit(context.Background(), Request{Prompt: []int64{11, 12}, MaxNewTokens: 6, Chooser: slow})
	if err != nil {
		t.Fatal(err)
	}
	<-slow.started
	beside, err := s.Submit(context.Background(), greedyRequest([]int64{21, 22, 23}, 12))
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	var (
		ids  []int64
		last Event
	)
	go func() {
		defer close(ended)
		ids, last = collect(t, beside)
	}()
	select {
	case <-ended:
	case <-time.After(20 * time.Second): // a hang guard: the loop waits on the Prepare
		close(slow.release)
		t.Fatal("the sequence beside one being prepared did not end")
	}
	if len(ids) != 12 || last.Err != nil {
		t.Fatalf("the sequence beside the one being prepared: %v %+v", ids, last)
	}
	close(slow.release)
	ids, last = collect(t, held)
	if want := referenceGreedy([]int64{11, 12}, 6); last.Err != nil || !slices.Equal(ids, want) {
		t.Fatalf("the prepared sequence: %v %+v, want %v", ids, last, want)
	}

	bad := &preparingChooser{started: make(chan struct{}), release: make(chan struct{}), panics: true}
	close(bad.release)
	st, err := s.Submit(context.Background(), Request{Prompt: []int64{31, 32}, MaxNewTokens: 6, Chooser: bad})
	if err != nil {
		t.Fatal(err)
	}
	if last := lastEvent(t, st); !errors.Is(last.Err, ErrStepFailed) {
		t.Fatalf("a sequence whose Prepare panicked ended with %+v", last)
	}
	if ids, last := collect(t, mustSubmit(t, s, greedyRequest([]int64{41, 42}, 4))); len(ids) != 4 || last.Err != nil {
		t.Fatalf("after a Prepare panicked: %v %+v", ids, last)
	}
	waitUntil(t, func() bool { return s.Pool().Stats().Used == 0 })
}

// piecesChooser's first choice has a Prepare of pieces pieces, each taking cost of processor
// time (on the meter workMeter makes) and noting when it began on the fake clock, the loop's
// step count and whether the sequence beside has ended, with the pause between them.
type piecesChooser struct {
	n      int
	s      *Scheduler
	clk    *clock.Fake
	work   atomic.Int64 // the pieces' processor time so far, in nanoseconds
	cost   time.Duration
	pieces int
	other  *Stream // the sequence beside, whose end the pieces note
	seen   []pieceSeen
	ran    atomic.Int32
}

type pieceSeen struct {
	at         time.Time
	step       uint64
	otherEnded bool
}

func (c *piecesChooser) Choose(logits []float32) Choice {
	ch := argmaxChooser{}.Choose(logits)
	if c.n++; c.n == 1 {
		ch.Prepare = func(pause func() bool) {
			for i := range c.pieces {
				c.seen = append(c.seen, pieceSeen{c.clk.Now(), c.s.Steps(), c.other.seq.ended.Load()})
				c.work.Add(int64(c.cost))
				c.ran.Add(1)
				if i < c.pieces-1 && !pause() {
					return
				}
			}
		}
	}
	return ch
}

// workMeter is a meter of the pieces' processor time as they count it.
func (c *piecesChooser) workMeter() func() time.Duration {
	began := c.work.Load()
	return func() time.Duration { return time.Duration(c.work.Load() - began) }
}

// pacedScheduler is a scheduler on a fake clock whose steps each take step, metering the
// pieces of c (made for it: s and clk set) by their count, and beside sequences that run 200
// steps each, never pausing on their readers (a buffer for every token: a loop left idle
// would let every piece go), the first of them c.other. ctx stops it.
func pacedScheduler(t *testing.T, ctx context.Context, step time.Duration, c *piecesChooser, beside int) (*Scheduler, []*Stream) {
	fake := clock.NewFake(epoch)
	s, model := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.OutBuffer = 256 }})
	c.s, c.clk = s, fake
	s.pace.meter = c.workMeter
	model.setHook(func(int64, *stepplan.Plan) error {
		fake.Advance(step)
		// In step with the Prepare: a step ends only once its pieces wait for one (or none
		// are under way), so that how many run a step is the pacer's doing, not the timing
		// of goroutines that cost no time on the fake clock.
		for deadline := time.Now().Add(20 * time.Second); ; runtime.Gosched() { // a hang guard
			s.pace.mu.Lock()
			settled := s.pace.working == 0 || len(s.pace.waiting) > 0
			s.pace.mu.Unlock()
			if settled {
				return nil
			}
			if time.Now().After(deadline) {
				return errors.New("the Prepare neither waited nor ended")
			}
		}
	})
	s.Start(ctx)
	t.Cleanup(func() {
		_ = s.Close(context.Background())
		if st := s.Pool().Stats(); st.Used != 0 {
			t.Errorf("blocks still held after Close: %+v", st)
		}
	})
	var streams []*Stream
	for i := range beside {
		streams = append(streams, mustSubmit(t, s, greedyRequest([]int64{21 + int64(i), 22, 23}, 200)))
	}
	c.other = streams[0]
	return s, streams
}

// runPieces runs c's pieces beside the sequences beside, all to their ends.
func runPieces(t *testing.T, s *Scheduler, beside []*Stream, c *piecesChooser) {
	t.Helper()
	st := mustSubmit(t, s, Request{Prompt: []int64{11, 12}, MaxNewTokens: 3, Chooser: c})
	for _, b := range beside {
		if ids, last := collect(t, b); len(ids) != 200 || last.Err != nil {
			t.Fatalf("a sequence beside: %d tokens, %+v", len(ids), last)
		}
	}
	if _, last := collect(t, st); last.Err != nil {
		t.Fatal(last.Err)
	}
	if len(c.seen) != c.pieces {
		t.Fatalf("%d pieces ran", len(c.seen))
	}
}

// TestAPreparationTakesAStreamsShare: pieces of a Prepare that each take longer than a step
// (1 ms against 0.3) take at most the time one of the three sequences beside it gets, a
// quarter (give or take the piece that overdraws the credit), while those run, and run on
// once the loop has none.
func TestAPreparationTakesAStreamsShare(t *testing.T) {
	c := &piecesChooser{cost: time.Millisecond, pieces: 40}
	s, beside := pacedScheduler(t, context.Background(), 300*time.Microsecond, c, 3)
	runPieces(t, s, beside, c)
	paced := 0
	for i, p := range c.seen {
		if p.otherEnded {
			break
		}
		paced++
		if took, allowed := time.Duration(i)*c.cost, p.at.Sub(epoch)/4+c.cost; took > allowed {
			t.Fatalf("piece %d began %v in, after %v of pieces: more than a quarter (%v)", i, p.at.Sub(epoch), took, allowed)
		}
	}
	// A few pieces beside the sequences show them paced rather than held back; how many fit
	// in the sequences' time is the machine's (nine, once, under a loaded make test).
	if paced < 3 {
		t.Fatalf("only %d pieces ran while the sequence beside did: nothing was paced", paced)
	}
}

// TestASlowStepLetsAPreparationRunAtOnce: where a step takes long (30 ms, a GPU's), a Prepare
// of eight 1 ms pieces beside one sequence is done by the end of the step after the one it
// began in, not one piece a step.
func TestASlowStepLetsAPreparationRunAtOnce(t *testing.T) {
	c := &piecesChooser{cost: time.Millisecond, pieces: 8}
	s, beside := pacedScheduler(t, context.Background(), 30*time.Millisecond, c, 1)
	runPieces(t, s, beside, c)
	first, last := c.seen[0], c.seen[len(c.seen)-1]
	if last.otherEnded {
		t.Fatal("the sequence beside ended before the pieces did")
	}
	if last.step > first.step+1 {
		t.Fatalf("eight pieces of 1 ms took steps %d to %d of 30 ms each", first.step, last.step)
	}
}

// TestAStopMidPreparationEnds: the loop stopped while a Prepare paces itself on its steps
// (another sequence running) stops the Prepare at its next pause, and Close returns.
func TestAStopMidPreparationEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &piecesChooser{cost: time.Millisecond, pieces: 1000}
	s, _ := pacedScheduler(t, ctx, 300*time.Microsecond, c, 1)
	mustSubmit(t, s, Request{Prompt: []int64{11, 12}, MaxNewTokens: 3, Chooser: c})
	waitUntil(t, func() bool { return c.ran.Load() >= 2 }) // pacing itself on beside's steps
	cancel()
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // a hang guard
		t.Fatal("Close did not return with a Prepare pacing itself on the steps")
	}
	if len(c.seen) == c.pieces {
		t.Fatalf("all %d pieces ran after the loop stopped", c.pieces)
	}
}

// firstPrepare is a Request.Prepare that says it started, then pauses until pause says to
// stop or release is closed, noting what its last pause said.
type firstPrepare struct {
	started, release chan struct{}
	stopped          atomic.Bool
}

func (f *firstPrepare) prepare(pause func() bool) {
	close(f.started)
	for {
		select {
		case <-f.release:
			return
		default:
		}
		if !pause() {
			f.stopped.Store(true)
			return
		}
	}
}

// TestARequestsPrepareComesBeforeItsFirstStep: a request's Prepare (its first mask) runs off
// the loop before the sequence takes a step, while the sequence beside it runs; a client that
// leaves meanwhile stops it at its next pause.
func TestARequestsPrepareComesBeforeItsFirstStep(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{})
	start(t, s)
	beside := mustSubmit(t, s, greedyRequest([]int64{21, 22, 23}, 30))
	f := &firstPrepare{started: make(chan struct{}), release: make(chan struct{})}
	st := mustSubmit(t, s, Request{Prompt: []int64{11, 12}, MaxNewTokens: 4, Chooser: argmaxChooser{}, Prepare: f.prepare})
	<-f.started
	if ids, last := collect(t, beside); len(ids) != 30 || last.Err != nil {
		t.Fatalf("beside a request being prepared: %v %+v", ids, last)
	}
	if slices.Contains(model.prefilled(), 11) {
		t.Fatal("the request being prepared took a step")
	}
	close(f.release)
	if ids, last := collect(t, st); last.Err != nil || !slices.Equal(ids, referenceGreedy([]int64{11, 12}, 4)) {
		t.Fatalf("once prepared: %v %+v", ids, last)
	}

	ctx, cancel := context.WithCancel(context.Background())
	mustSubmit(t, s, greedyRequest([]int64{31, 32}, 200))
	g := &firstPrepare{started: make(chan struct{}), release: make(chan struct{})}
	left, err := s.Submit(ctx, Request{Prompt: []int64{41, 42}, MaxNewTokens: 4, Chooser: argmaxChooser{}, Prepare: g.prepare})
	if err != nil {
		t.Fatal(err)
	}
	<-g.started
	cancel()
	if last := lastEvent(t, left); !errors.Is(last.Err, context.Canceled) {
		t.Fatalf("a client that left while its request was prepared: %+v", last)
	}
	waitUntil(t, g.stopped.Load)
}

// TestARequestBeingPreparedHoldsNoSlot: a request whose Prepare is under way is not admitted,
// so it holds neither a running slot nor blocks: with one slot, the request after it runs.
func TestARequestBeingPreparedHoldsNoSlot(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxRunning = 1 }})
	start(t, s)
	f := &firstPrepare{started: make(chan struct{}), release: make(chan struct{})}
	st := mustSubmit(t, s, Request{Prompt: []int64{11, 12}, MaxNewTokens: 4, Chooser: argmaxChooser{}, Prepare: f.prepare})
	<-f.started
	after := mustSubmit(t, s, greedyRequest([]int64{21, 22}, 5))
	type result struct {
		ids  []int64
		last Event
		err  error
	}
	ended := make(chan result, 1)
	go func() {
		var r result
		for {
			ev, err := after.Next(context.Background())
			if err != nil {
				r.err = err
				break
			}
			if ev.HasToken() {
				r.ids = append(r.ids, ev.ID)
			}
			if ev.Done {
				r.last = ev
				break
			}
		}
		ended <- r
	}()
	select {
	case r := <-ended:
		if len(r.ids) != 5 || r.last.Err != nil || r.err != nil {
			t.Fatalf("the request after one being prepared: %v %+v %v", r.ids, r.last, r.err)
		}
	case <-time.After(20 * time.Second): // a hang guard: the one being prepared holds the slot
		close(f.release)
		t.Fatal("the request after one being prepared did not run")
	}
	close(f.release)
	if ids, last := collect(t, st); len(ids) != 4 || last.Err != nil {
		t.Fatalf("once prepared: %v %+v", ids, last)
	}
}

// TestAWaitingSequenceBeingPreparedSetsNoStallDeadline: an idle loop's next deadline leaves
// out the stall limit of a waiting sequence sitting out on its Prepare (it cannot starve, and
// a deadline already past would spin the loop); the Prepare's end pokes the loop instead.
func TestAWaitingSequenceBeingPreparedSetsNoStallDeadline(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, _ := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.TokenStallTimeout = 5 * time.Second }})
	q := newSequence(context.Background(), greedyRequest([]int64{1, 2}, 4), 4, epoch, s.poke)
	q.generated, q.lastToken, q.preempted = 1, epoch, true
	q.preparing.Store(true)
	s.mu.Lock()
	s.waiting[admission.Interactive].pushBack(q)
	s.mu.Unlock()
	fake.Advance(time.Minute)
	if at, ok := s.nextDeadline(); ok {
		t.Fatalf("a deadline at %v for a sequence being prepared", at)
	}
	q.preparing.Store(false)
	q.preparedAt.Store(fake.Now().UnixNano())
	if at, ok := s.nextDeadline(); !ok || !at.Equal(fake.Now().Add(5*time.Second)) {
		t.Fatalf("after its Prepare: %v %v, want the stall limit from its end", at, ok)
	}
}

// untilClosing chooses greedily, its second choice once s is closing.
type untilClosing struct {
	s *Scheduler
	n int
}

func (c *untilClosing) Choose(logits []float32) Choice {
	if c.n++; c.n == 2 {
		for !c.s.isClosing() {
			runtime.Gosched()
		}
	}
	return argmaxChooser{}.Choose(logits)
}

// TestClosingResumesAPreemptedSequenceBeingPrepared: a sequence preempted while it sits out
// on its Prepare waits, not running, when Close lets the running finish; the loop does not
// stop on the running set's being empty, and the sequence resumes and finishes once prepared.
func TestClosingResumesAPreemptedSequenceBeingPrepared(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxRunning, c.PreemptLimit, c.OutBuffer = 1, 1, 256 }})
	start(t, s)
	slow := &preparingChooser{started: make(chan struct{}), release: make(chan struct{})}
	var released sync.Once
	release := func() { released.Do(func() { close(slow.release) }) }
	t.Cleanup(release) // before the scheduler's Close, should the test fail first
	bulk := mustSubmit(t, s, Request{Prompt: []int64{11, 12}, MaxNewTokens: 6, Priority: admission.Bulk, Chooser: slow})
	<-slow.started
	// The interactive sequence, which takes the bulk one's slot, ends only once Close is
	// under way.
	inter := mustSubmit(t, s, Request{Prompt: []int64{21, 22}, MaxNewTokens: 3, Priority: admission.Interactive,
		Chooser: &untilClosing{s: s}})
	if ev, err := inter.Next(context.Background()); err != nil || !ev.HasToken() {
		t.Fatalf("interactive's first token: %+v %v", ev, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	if ids, last := collect(t, inter); len(ids) != 2 || last.Err != nil {
		t.Fatalf("interactive: %v %+v", ids, last)
	}
	if bulk.seq.bumped != 1 {
		t.Fatalf("the bulk sequence was preempted %d times, want once", bulk.seq.bumped)
	}
	// The loop, closing with nothing running, stops (wrongly) or goes idle.
	waitUntil(t, func() bool {
		select {
		case <-s.stopped:
			return true
		default:
		}
		s.pace.mu.Lock()
		defer s.pace.mu.Unlock()
		return !s.pace.busy
	})
	release()
	if ids, last := collect(t, bulk); last.Err != nil || !slices.Equal(ids, referenceGreedy([]int64{11, 12}, 6)) {
		t.Fatalf("the preempted sequence, closing: %v %+v", ids, last)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// TestPreparingIsNotStarving: a sequence sitting out the steps on its own Prepare, longer than
// the token stall timeout while another sequence runs, is not ended as starved, then or when
// it goes on.
func TestPreparingIsNotStarving(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, model := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.TokenStallTimeout = 5 * time.Second }})
	model.setHook(func(int64, *stepplan.Plan) error {
		fake.Advance(time.Second)
		return nil
	})
	start(t, s)
	slow := &preparingChooser{started: make(chan struct{}), release: make(chan struct{})}
	held := mustSubmit(t, s, Request{Prompt: []int64{11, 12}, MaxNewTokens: 6, Chooser: slow})
	<-slow.started
	if ids, last := collect(t, mustSubmit(t, s, greedyRequest([]int64{21, 22, 23}, 20))); len(ids) != 20 || last.Err != nil {
		t.Fatalf("beside: %v %+v", ids, last)
	}
	close(slow.release)
	if ids, last := collect(t, held); last.Err != nil || len(ids) != 6 {
		t.Fatalf("after preparing for 20 s of steps: %v %+v", ids, last)
	}
}

// TestAWaitingCallerThatLeavesFreesItsSlotAtOnce: a waiting request whose caller leaves ends
// and gives its queue slot back while a step is still running, not at the next boundary. A
// long prefill (or a hung step, up to the stall limit) used to keep departed callers counted
// against QueueSize and in Load, refusing new requests with ErrQueueFull.
func TestAWaitingCallerThatLeavesFreesItsSlotAtOnce(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.QueueSize = 1; c.MaxRunning = 1 }})
	inStep, release := make(chan struct{}), make(chan struct{})
	model.setHook(func(step int64, _ *stepplan.Plan) error {
		if step == 1 {
			close(inStep)
			<-release
		}
		return nil
	})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer letGo() // a failure must not leave the step, and Close after it, waiting
	start(t, s)
	running := mustSubmit(t, s, greedyRequest([]int64{1, 2, 3}, 2))
	<-inStep
	ctx, cancel := context.WithCancel(context.Background())
	left, err := s.Submit(ctx, greedyRequest([]int64{4, 5, 6}, 2))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waitUntil(t, func() bool { return s.Load().Waiting[admission.Interactive] == 0 })
	if ev, err := left.Next(context.Background()); err != nil || !errors.Is(ev.Err, context.Canceled) {
		t.Fatalf("the caller that left: %+v %v, want its stream ended with its context's error", ev, err)
	}
	next, err := s.Submit(context.Background(), greedyRequest([]int64{7, 8, 9}, 2))
	if err != nil {
		t.Fatalf("with the only queue slot's caller gone, mid-step: %v", err)
	}
	letGo()
	for _, st := range []*Stream{running, next} {
		if _, last := collect(t, st); last.Err != nil {
			t.Fatalf("a request beside the one that left: %+v", last)
		}
	}
	waitUntil(t, func() bool { return s.Load().Work == 0 })
}

func TestQueueLimitsAndExpiry(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, _ := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) {
		c.QueueSize = 1
		c.MaxQueueWait = time.Second
	}})
	// Not started: submissions wait.
	st, err := s.Submit(context.Background(), greedyRequest([]int64{5}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(context.Background(), greedyRequest([]int64{5}, 2)); !errors.Is(err, admission.ErrQueueFull) {
		t.Fatalf("second interactive: %v, want ErrQueueFull", err)
	}
	if _, err := s.Submit(context.Background(), Request{Prompt: []int64{5}, MaxNewTokens: 2, Priority: admission.Bulk, Chooser: argmaxChooser{}}); err != nil {
		t.Fatalf("bulk has its own queue: %v", err)
	}
	if l := s.Load(); l.Waiting != [admission.NumPriorities]int{1, 1} || l.Depth() != 2 {
		t.Fatalf("load %+v", l)
	}
	for _, bad := range []Request{{MaxNewTokens: 1, Chooser: argmaxChooser{}}, {Prompt: make([]int64, 256), MaxNewTokens: 1, Chooser: argmaxChooser{}},
		{Prompt: []int64{1}, Chooser: argmaxChooser{}}, {Prompt: []int64{1}, MaxNewTokens: 1}} {
		if _, err := s.Submit(context.Background(), bad); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("%+v: %v, want ErrInvalidRequest", bad, err)
		}
	}
	fake.Advance(2 * time.Second) // both expire before the loop ever starts
	start(t, s)
	ev, err := st.Next(context.Background())
	if err != nil || !errors.Is(ev.Err, admission.ErrExpired) {
		t.Fatalf("expired: %+v %v", ev, err)
	}
	waitUntil(t, func() bool { return s.Load().Depth() == 0 })
}

// TestCloseLetsRunningFinishThenEndsTheRest: Close refuses new work and ends the waiting at
// once; the running finish when they can, or end with ErrShutdown when Close gives up.
func TestCloseLetsRunningFinishThenEndsTheRest(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxRunning = 1 }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	running, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 200))
	if _, err := running.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	queued, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 5))
	giveUp, stop := context.WithCancel(context.Background())
	closed := make(chan error, 1)
	go func() { closed <- s.Close(giveUp) }()
	ev, err := queued.Next(context.Background())
	if err != nil || !errors.Is(ev.Err, admission.ErrClosed) {
		t.Fatalf("queued at shutdown: %+v %v", ev, err)
	}
	if _, err := s.Submit(context.Background(), greedyRequest([]int64{1}, 1)); !errors.Is(err, admission.ErrClosed) {
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
	if st := s.Pool().Stats(); st.Used != 0 {
		t.Fatalf("blocks held after Close: %+v", st)
	}
}

// TestAStopByStartsContextRefusesLaterSubmissions: once Start's context has ended and the loop
// has returned, Submit answers ErrClosed and nothing is left waiting. It used to queue the
// request for a loop that was gone: its stream was never answered, not even by Close, and
// Load counted it as waiting work for ever.
func TestAStopByStartsContextRefusesLaterSubmissions(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	cancel()
	<-s.stopped
	if _, err := s.Submit(context.Background(), greedyRequest([]int64{1, 2, 3}, 4)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after the loop stopped: %v, want ErrClosed (load %+v)", err, s.Load())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := s.Load(); l.Depth() != 0 || l.Work != 0 {
		t.Fatalf("load %+v after Close, want nothing waiting", l)
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

// epoch starts the fake clocks; the scheduler keeps times as UnixNano with 0 meaning "none".
var epoch = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// TestLoadMeasuresTokensAndBlocks: the scheduler reports its demand in tokens, the tokens it
// has computed, and its KV blocks in use, for the admission layer; all return to rest.
func TestLoadMeasuresTokensAndBlocks(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.OutBuffer = 1 }})
	if lim := s.Limits(); !lim.WorkUnits || lim.Memory != 256 || lim.Workers != 8 || lim.Weights != admission.DefaultWeights {
		t.Fatalf("limits %+v", lim)
	}
	st, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12, 13}, 10))
	if l := s.Load(); l.Work != 13 || l.WorkDone != 0 {
		t.Fatalf("waiting: %+v, want 13 tokens of work", l)
	}
	start(t, s)
	waitUntil(t, func() bool { return st.seq.paused.Load() }) // one token unread, one pending
	if l := s.Load(); l.MemoryUsed == 0 || l.WorkDone != 5 || l.Work != 8 || l.Running != 1 {
		t.Fatalf("paused: %+v, want blocks held, the prompt and two tokens done, eight to come", l)
	}
	lastEvent(t, st)
	waitUntil(t, func() bool { l := s.Load(); return l.MemoryUsed == 0 && l.Work == 0 })
	if l := s.Load(); l.WorkDone != 13 {
		t.Fatalf("after: %+v, want 13 tokens done", l)
	}
}

// TestWatchdogSparesWhatWasNotInTheHungStep: the watchdog ends the sequences of the step that
// hung; one waiting behind it is served once the step returns.
func TestWatchdogSparesWhatWasNotInTheHungStep(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, model := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.MaxRunning = 1; c.StallTimeout = 4 * time.Second }})
	hanging, release := make(chan struct{}), make(chan struct{})
	model.setHook(func(step int64, _ *stepplan.Plan) error {
		if step == 2 {
			close(hanging)
			return model.hang(release)
		}
		return nil
	})
	start(t, s)
	hung, _ := s.Submit(context.Background(), greedyRequest([]int64{11, 12}, 50))
	<-hanging
	queued, _ := s.Submit(context.Background(), greedyRequest([]int64{13, 14}, 5))
	waitUntil(t, func() bool {
		fake.Advance(time.Second)
		return !s.Healthy()
	})
	if last := lastEvent(t, hung); !errors.Is(last.Err, ErrStalled) {
		t.Fatalf("the hung step's sequence: %+v, want ErrStalled", last)
	}
	close(release)
	ids, last := collect(t, queued)
	if last.Err != nil || !slices.Equal(ids, referenceGreedy([]int64{13, 14}, 5)) {
		t.Fatalf("the sequence waiting behind the hung step: %v %+v", ids, last)
	}
}

// TestSlowStepIsNotAHang: a long prompt's prefill that takes twice the stall timeout, at the
// rate the steps before it were measured at, is given the time it needs; the floor alone
// would call it hung.
func TestSlowStepIsNotAHang(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, model := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) { c.StallTimeout = time.Second }})
	const perPosition = 50 * time.Millisecond
	model.setHook(func(_ int64, st *stepplan.Plan) error {
		if st.Seq() == 1 {
			return nil
		}
		took := perPosition * time.Duration(len(st.Rows)*st.Seq())
		if took < time.Second {
			fake.Advance(took)
			return nil
		}
		// Let the watchdog look at the step at every one of its periods while it runs.
		for range int(took / (250 * time.Millisecond)) {
			armed := fake.TimerCreated()
			fake.Advance(250 * time.Millisecond)
			<-armed
		}
		return nil
	})
	start(t, s)
	if ids, last := collect(t, mustSubmit(t, s, greedyRequest([]int64{11, 12}, 3))); len(ids) != 3 || last.Err != nil {
		t.Fatalf("the measured request: %v %+v", ids, last)
	}
	long := make([]int64, 40)
	for i := range long {
		long[i] = int64(20 + i)
	}
	ids, last := collect(t, mustSubmit(t, s, greedyRequest(long, 3)))
	if last.Err != nil || !slices.Equal(ids, referenceGreedy(long, 3)) {
		t.Fatalf("the long prompt: %v %+v, want it served whole", ids, last)
	}
	if !s.Healthy() {
		t.Fatal("unhealthy after a slow step")
	}
}

func mustSubmit(t *testing.T, s *Scheduler, r Request) *Stream {
	t.Helper()
	st, err := s.Submit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLongPromptIsPrefilledInChunks: a prompt three times the step budget is computed in
// chunks within the budget, a running sequence's decode step comes between every two chunks,
// and both generate their reference tokens.
func TestLongPromptIsPrefilledInChunks(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxStepTokens = 16 }})
	var mu sync.Mutex
	var steps []int // each step's new positions per row; 1 for decode
	submitted := make(chan struct{})
	model.setHook(func(_ int64, st *stepplan.Plan) error {
		if len(st.Rows)*st.Seq() > 16 {
			return fmt.Errorf("a step of %d x %d positions, over the budget of 16", len(st.Rows), st.Seq())
		}
		mu.Lock()
		steps = append(steps, st.Seq())
		mu.Unlock()
		if st.Seq() == 1 {
			<-submitted // the running sequence's first decode waits for the long prompt
		}
		return nil
	})
	start(t, s)
	running := mustSubmit(t, s, greedyRequest([]int64{11, 12}, 60))
	if ev, err := running.Next(context.Background()); err != nil || ev.Err != nil {
		t.Fatalf("first token: %+v %v", ev, err)
	}
	long := make([]int64, 50)
	for i := range long {
		long[i] = int64(30 + i)
	}
	stream := mustSubmit(t, s, greedyRequest(long, 3))
	close(submitted)
	ids, last := collect(t, stream)
	if last.Err != nil || !slices.Equal(ids, referenceGreedy(long, 3)) {
		t.Fatalf("the long prompt: %v %+v, want %v", ids, last, referenceGreedy(long, 3))
	}
	rest, end := collect(t, running)
	if end.Err != nil || len(rest) != 59 {
		t.Fatalf("the running sequence: %d tokens, %+v", len(rest), end)
	}
	mu.Lock()
	defer mu.Unlock()
	chunks, sinceChunk := 0, 1
	for _, seq := range steps[1:] { // after the running sequence's own prefill
		if seq == 1 {
			sinceChunk++
			continue
		}
		if sinceChunk == 0 {
			t.Fatalf("two prefill chunks with no decode step between: %v", steps)
		}
		chunks, sinceChunk = chunks+1, 0
	}
	if chunks != 4 { // 16 + 16 + 16 + 2
		t.Fatalf("%d chunks, want 4: %v", chunks, steps)
	}
}

// TestMaxPositionsMustFitThePool: a scheduler whose longest sequence the pool cannot hold
// alone is refused at construction, not left to wait for room that never comes.
func TestMaxPositionsMustFitThePool(t *testing.T) {
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 16, Blocks: 4, Layers: 2, Heads: 2, HeadDim: 2, MaxSeqLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New("fake-lm", newFakeModel(), pool, Config{MaxRunning: 1, MaxStepTokens: 16, QueueSize: 1, OutBuffer: 1,
		StallTimeout: time.Second, MaxPositions: 65}, clock.Real(), nil)
	if err == nil || !strings.Contains(err.Error(), "MaxPositions must be at most the 64 tokens the KV pool holds") {
		t.Fatalf("got %v", err)
	}
}

// TestShutdownResumesPreemptedStreams: a sequence preempted after it streamed tokens has
// started: Close lets it resume and finish within the grace, as the running do, instead of
// ending it with the never-started waiting.
func TestShutdownResumesPreemptedStreams(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{blocks: 4})
	frozen, thaw, submitted := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	model.setHook(func(step int64, _ *stepplan.Plan) error {
		if step == 2 {
			<-submitted // the bulk sequence's first decode waits for the interactive one
		}
		if s.waitingBy[admission.Bulk].Load() == 1 { // the bulk sequence was preempted
			once.Do(func() {
				close(frozen)
				<-thaw
			})
		}
		return nil
	})
	start(t, s)
	prompt := func(first int64) []int64 { return []int64{first, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} }
	bulk := mustSubmit(t, s, Request{Prompt: prompt(40), MaxNewTokens: 40, Priority: admission.Bulk, Chooser: argmaxChooser{}})
	first, err := bulk.Next(context.Background())
	if err != nil || first.Err != nil {
		t.Fatalf("first token: %+v %v", first, err)
	}
	interactive := mustSubmit(t, s, Request{Prompt: prompt(50), MaxNewTokens: 40, Priority: admission.Interactive, Chooser: argmaxChooser{}})
	close(submitted)
	<-frozen
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	waitUntil(t, s.isClosing)
	close(thaw)
	ids, last := collect(t, bulk)
	if last.Err != nil || !slices.Equal(append([]int64{first.ID}, ids...), referenceGreedy(prompt(40), 40)) {
		t.Fatalf("the preempted stream: %v %+v", ids, last)
	}
	if ids, last := collect(t, interactive); last.Err != nil || len(ids) != 40 {
		t.Fatalf("the running stream: %d tokens, %+v", len(ids), last)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// freezeOnceEnded is a step hook that, at the first step after the watched stream has ended,
// holds the loop until the test thaws it: what ran before that moment stays as it was for the
// test to look at. Each watched stream freezes once. gate, when not nil, holds step gateStep
// until it closes.
type freezeOnceEnded struct {
	watched  atomic.Pointer[Stream]
	gate     chan struct{}
	gateStep int64
	frozen   chan struct{}
	thaw     chan struct{}
	thawOnce sync.Once
}

// newFreeze returns a freeze; the test defers release, so a failing test still lets the loop
// go before its cleanup closes the scheduler.
func newFreeze(gateStep int64) *freezeOnceEnded {
	return &freezeOnceEnded{gate: make(chan struct{}), gateStep: gateStep, frozen: make(chan struct{}, 1), thaw: make(chan struct{})}
}

// release lets the loop go for good.
func (f *freezeOnceEnded) release() { f.thawOnce.Do(func() { close(f.thaw) }) }

func (f *freezeOnceEnded) hook(step int64, _ *stepplan.Plan) error {
	if step == f.gateStep {
		<-f.gate
	}
	if w := f.watched.Load(); w != nil && w.seq.ended.Load() && f.watched.CompareAndSwap(w, nil) {
		f.frozen <- struct{}{}
		<-f.thaw
	}
	return nil
}

// TestInteractiveTakesTheSlotOfTheLatestBulk (issue 38, 6): with the running set full of long
// bulk sequences, an interactive one does not wait for them: it takes the place of the latest
// admitted bulk sequence, which is preempted (counted as for priority) and later recomputed to
// the same tokens.
func TestInteractiveTakesTheSlotOfTheLatestBulk(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, model := newTestScheduler(t, testOpts{registry: reg, cfg: func(c *Config) { c.MaxRunning, c.PreemptLimit, c.OutBuffer = 2, 2, 256 }})
	f := newFreeze(3)
	defer f.release()
	model.setHook(f.hook)
	bulkReq := func(first int64) Request {
		return Request{Prompt: []int64{first, 7}, MaxNewTokens: 200, Priority: admission.Bulk, Chooser: argmaxChooser{}}
	}
	early, late := mustSubmit(t, s, bulkReq(1)), mustSubmit(t, s, bulkReq(2))
	start(t, s)
	waitUntil(t, func() bool { return s.Load().Running == 2 }) // the running set is full
	inter := mustSubmit(t, s, Request{Prompt: []int64{3, 7}, MaxNewTokens: 1, Priority: admission.Interactive, Chooser: argmaxChooser{}})
	f.watched.Store(inter)
	close(f.gate) // step 3, the bulk sequences' second decode, goes on
	if ids, last := collect(t, inter); last.Err != nil || len(ids) != 1 {
		t.Fatalf("interactive: %v %+v", ids, last)
	}
	// No step runs after the interactive sequence ended (the freeze): what is not ended now
	// was not waited for.
	if early.seq.ended.Load() || late.seq.ended.Load() {
		t.Fatal("the interactive sequence waited for a bulk one to finish")
	}
	if early.seq.bumped != 0 || late.seq.bumped != 1 {
		t.Fatalf("preempted for priority: early %d, late %d times; want the latest bulk once", early.seq.bumped, late.seq.bumped)
	}
	f.release()
	for i, st := range []*Stream{early, late} {
		if ids, last := collect(t, st); last.Err != nil || !slices.Equal(ids, referenceGreedy([]int64{int64(i + 1), 7}, 200)) {
			t.Fatalf("bulk %d after the preemption: %d tokens, %+v", i, len(ids), last)
		}
	}
	if got := counterValue(t, reg, "sluice_generate_preemptions_total", "reason", "priority"); got != 1 {
		t.Fatalf("%v preemptions for priority counted, want 1", got)
	}
}

// TestPreemptionForPriorityIsBounded: a bulk sequence gives its place to an interactive one at
// most PreemptLimit times; past that, the next interactive sequence waits for it to finish.
func TestPreemptionForPriorityIsBounded(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxRunning, c.PreemptLimit, c.OutBuffer = 1, 1, 256 }})
	f := newFreeze(3)
	defer f.release()
	model.setHook(f.hook)
	bulk := mustSubmit(t, s, Request{Prompt: []int64{1, 7}, MaxNewTokens: 200, Priority: admission.Bulk, Chooser: argmaxChooser{}})
	start(t, s)
	waitUntil(t, func() bool { return s.Load().Running == 1 }) // the running set is full
	interactive := func(first int64) *Stream {
		return mustSubmit(t, s, Request{Prompt: []int64{first, 7}, MaxNewTokens: 1, Priority: admission.Interactive, Chooser: argmaxChooser{}})
	}
	first := interactive(3)
	f.watched.Store(first)
	close(f.gate)
	if _, last := collect(t, first); last.Err != nil {
		t.Fatal(last.Err)
	}
	if bulk.seq.ended.Load() || bulk.seq.bumped != 1 {
		t.Fatalf("bulk ended %v, preempted %d times: the first interactive sequence should have taken its place", bulk.seq.ended.Load(), bulk.seq.bumped)
	}
	<-f.frozen // the bulk sequence runs again (it has work left): the second one finds it running
	second := interactive(4)
	f.watched.Store(second)
	f.thaw <- struct{}{}
	if _, last := collect(t, second); last.Err != nil {
		t.Fatal(last.Err)
	}
	// No step runs after the second one ended (the freeze), so a bulk sequence not ended now
	// was preempted for it.
	if !bulk.seq.ended.Load() || bulk.seq.bumped != 1 {
		t.Fatalf("bulk ended %v, preempted %d times: the second interactive sequence should have waited", bulk.seq.ended.Load(), bulk.seq.bumped)
	}
	f.release()
	if ids, last := collect(t, bulk); last.Err != nil || !slices.Equal(ids, referenceGreedy([]int64{1, 7}, 200)) {
		t.Fatalf("bulk: %d tokens, %+v", len(ids), last)
	}
}

// counterValue is the value of the counter of family name whose label has value.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return 0
}

// TestNoPreemptionThatCannotAdmit: a bulk sequence is not preempted for an interactive one
// whose prompt would not fit even in the blocks the bulk one gives back; the interactive one
// waits for it instead, and both finish whole.
func TestNoPreemptionThatCannotAdmit(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{blocks: 4, cfg: func(c *Config) { c.PreemptLimit = 2 }})
	f := newFreeze(3) // the bulk sequence's second decode waits for the interactive one
	defer f.release()
	model.setHook(f.hook)
	prompt := func(first int64, n int) []int64 {
		p := []int64{first}
		for i := 1; i < n; i++ {
			p = append(p, int64(i%50+2))
		}
		return p
	}
	bulk := mustSubmit(t, s, Request{Prompt: prompt(1, 15), MaxNewTokens: 30, Priority: admission.Bulk, Chooser: argmaxChooser{}})
	start(t, s)
	waitUntil(t, func() bool { return s.Load().Running == 1 })
	inter := mustSubmit(t, s, Request{Prompt: prompt(2, 60), MaxNewTokens: 4, Priority: admission.Interactive, Chooser: argmaxChooser{}})
	close(f.gate)
	for _, st := range []*Stream{bulk, inter} {
		if _, last := collect(t, st); last.Err != nil {
			t.Fatal(last.Err)
		}
	}
	if bulk.seq.bumped != 0 {
		t.Fatalf("the bulk sequence was preempted %d times for a prompt it could not make room for", bulk.seq.bumped)
	}
}

// TestSharedPromptIsComputedOnce: four sequences of one 40-token prompt, queued together (the
// choices of an n = 4 request): the first computes the prompt, the others wait for its full
// blocks and compute only the 8 tokens after them; every sequence gets its reference tokens.
func TestSharedPromptIsComputedOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, _ := newTestScheduler(t, testOpts{registry: reg})
	prompt := make([]int64, 40)
	for i := range prompt {
		prompt[i] = int64(i%30 + 2)
	}
	var streams []*Stream
	for range 4 {
		streams = append(streams, mustSubmit(t, s, greedyRequest(prompt, 5)))
	}
	start(t, s)
	for _, st := range streams {
		if ids, last := collect(t, st); last.Err != nil || !slices.Equal(ids, referenceGreedy(prompt, 5)) {
			t.Fatalf("%v %+v", ids, last)
		}
	}
	computed := counterValue(t, reg, "sluice_generate_prompt_tokens_total", "source", "computed")
	cached := counterValue(t, reg, "sluice_generate_prompt_tokens_total", "source", "cached")
	if computed != 40+3*8 || cached != 3*32 {
		t.Fatalf("prompt tokens computed %v, cached %v; want 64 and 96", computed, cached)
	}
}

// firstStepRows counts the rows of model's first step, once it has run.
func firstStepRows(model *fakeModel) *atomic.Int64 {
	var rows atomic.Int64
	model.setHook(func(step int64, st *stepplan.Plan) error {
		if step == 1 {
			rows.Store(int64(len(st.Rows)))
		}
		return nil
	})
	return &rows
}

// sharedPrompt is a 40-token prompt of two full blocks and a tail, for prefix tests.
func sharedPrompt() []int64 {
	shared := make([]int64, 40)
	for i := range shared {
		shared[i] = int64(i%30 + 2)
	}
	return shared
}

// TestWaitForAPrefixHoldsOnlyItsClass: an interactive sequence that waits for its prompt's
// blocks from another one in prefill does not hold a bulk sequence back: the bulk one is
// prefilled in the first step, beside the one computing the shared prompt.
func TestWaitForAPrefixHoldsOnlyItsClass(t *testing.T) {
	s, model := newTestScheduler(t, testOpts{})
	firstBatch := firstStepRows(model)
	shared := sharedPrompt()
	leader := mustSubmit(t, s, greedyRequest(shared, 3))
	follower := mustSubmit(t, s, greedyRequest(shared, 3))
	bulk := mustSubmit(t, s, Request{Prompt: []int64{9, 8, 7, 6}, MaxNewTokens: 3, Priority: admission.Bulk, Chooser: argmaxChooser{}})
	start(t, s)
	for _, st := range []*Stream{leader, follower, bulk} {
		if _, last := collect(t, st); last.Err != nil {
			t.Fatal(last.Err)
		}
	}
	if got := firstBatch.Load(); got != 2 {
		t.Fatalf("the first step had %d rows, want the shared prompt's and the bulk one's", got)
	}
}

// TestScopesNeitherShareNorWaitForAPrefix: two sequences of one prompt in different cache
// scopes are prefilled side by side, each computing the whole prompt: the second neither
// takes the first's blocks nor waits for them (a wait would tell it of them too).
func TestScopesNeitherShareNorWaitForAPrefix(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, model := newTestScheduler(t, testOpts{registry: reg})
	firstBatch := firstStepRows(model)
	shared := sharedPrompt()
	var streams []*Stream
	for _, scope := range []string{"clinic-a", "clinic-b"} {
		req := greedyRequest(shared, 3)
		req.CacheScope = scope
		streams = append(streams, mustSubmit(t, s, req))
	}
	start(t, s)
	for _, st := range streams {
		if _, last := collect(t, st); last.Err != nil {
			t.Fatal(last.Err)
		}
	}
	if got := firstBatch.Load(); got != 2 {
		t.Fatalf("the first step had %d rows, want both scopes' prompts", got)
	}
	if cached := counterValue(t, reg, "sluice_generate_prompt_tokens_total", "source", "cached"); cached != 0 {
		t.Fatalf("%v prompt tokens came from another scope's blocks", cached)
	}
}

// scoringChooser is argmaxChooser that records, for each prompt position, the argmax of the
// scores that predicted it.
type scoringChooser struct {
	argmaxChooser
	mu     sync.Mutex
	scored map[int][]int64
}

func (c *scoringChooser) ScorePrompt(pos int, logits []float32) {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	c.mu.Lock()
	c.scored[pos] = append(c.scored[pos], int64(best))
	c.mu.Unlock()
}

// TestPromptScoresComeForEveryPosition: a Chooser that scores its prompt gets, in chunks and
// although the prefix cache holds the prompt already, the scores of every prompt position
// after the first, once each, and they are the ones that predict each token.
func TestPromptScoresComeForEveryPosition(t *testing.T) {
	s, _ := newTestScheduler(t, testOpts{cfg: func(c *Config) { c.MaxStepTokens = 8 }})
	start(t, s)
	prompt := make([]int64, 30)
	for i := range prompt {
		prompt[i] = int64(i*7%40 + 2)
	}
	if _, last := collect(t, mustSubmit(t, s, greedyRequest(prompt, 2))); last.Err != nil { // caches the prompt's blocks
		t.Fatal(last.Err)
	}
	c := &scoringChooser{scored: map[int][]int64{}}
	ids, last := collect(t, mustSubmit(t, s, Request{Prompt: prompt, MaxNewTokens: 2, Chooser: c}))
	if last.Err != nil || !slices.Equal(ids, referenceGreedy(prompt, 2)) {
		t.Fatalf("%v %+v", ids, last)
	}
	for pos := 1; pos < len(prompt); pos++ {
		if got := c.scored[pos]; len(got) != 1 || got[0] != reference(prompt[:pos], fakeShape.Vocab) {
			t.Fatalf("position %d scored %v, want once %d", pos, got, reference(prompt[:pos], fakeShape.Vocab))
		}
	}
	if len(c.scored) != len(prompt)-1 {
		t.Fatalf("%d positions scored, want %d", len(c.scored), len(prompt)-1)
	}
}

// TestStarvedStreamEndsAtTheTokenStallTimeout: a bulk stream that has sent tokens and then
// waits, preempted, while an interactive one runs ends with ErrStarved once it has had no
// token for the token stall timeout (each step here takes a second of the fake clock); the
// interactive one goes on to its end.
func TestStarvedStreamEndsAtTheTokenStallTimeout(t *testing.T) {
	fake := clock.NewFake(epoch)
	s, model := newTestScheduler(t, testOpts{clk: fake, cfg: func(c *Config) {
		c.MaxRunning, c.PreemptLimit, c.OutBuffer, c.TokenStallTimeout = 1, 1, 256, 5*time.Second
	}})
	f := newFreeze(3) // the bulk sequence's second decode waits for the interactive one
	defer f.release()
	model.setHook(func(step int64, st *stepplan.Plan) error {
		if err := f.hook(step, st); err != nil {
			return err
		}
		fake.Advance(time.Second)
		return nil
	})
	bulk := mustSubmit(t, s, Request{Prompt: []int64{1, 7}, MaxNewTokens: 100, Priority: admission.Bulk, Chooser: argmaxChooser{}})
	start(t, s)
	waitUntil(t, func() bool { return s.Load().Running == 1 })
	inter := mustSubmit(t, s, Request{Prompt: []int64{3, 7}, MaxNewTokens: 20, Priority: admission.Interactive, Chooser: argmaxChooser{}})
	close(f.gate)
	if ids, last := collect(t, inter); last.Err != nil || len(ids) != 20 {
		t.Fatalf("interactive: %d tokens, %+v", len(ids), last)
	}
	ids, last := collect(t, bulk)
	if !errors.Is(last.Err, ErrStarved) || len(ids) == 0 || len(ids) >= 100 {
		t.Fatalf("bulk: %d tokens, last %+v; want a few, then ErrStarved", len(ids), last)
	}
}

// TestReadersKeepUpOnOneProcessor: on a runtime with one processor (a server pinned to one
// core), readers that take every event as it comes get each one before the loop steps again,
// so no stream pauses on a full buffer. A loop that held its processor until the runtime
// preempted it would run hundreds of steps of the fast fake model in a row and pause them
// all.
func TestReadersKeepUpOnOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	reg := prometheus.NewRegistry()
	s, _ := newTestScheduler(t, testOpts{registry: reg, cfg: func(c *Config) { c.OutBuffer = 4 }})
	streams := submitAll(t, s, prompts()[:4], 200)
	start(t, s)
	var wg sync.WaitGroup
	for _, st := range streams {
		wg.Go(func() {
			ids, last := collect(t, st)
			if len(ids) != 200 || last.Err != nil {
				t.Errorf("%d tokens, last %+v", len(ids), last)
			}
		})
	}
	wg.Wait()
	if got := counterValue(t, reg, "sluice_generate_stream_pauses_total", "queue", "fake-lm"); got != 0 {
		t.Fatalf("%v pauses of streams whose readers took every event at once", got)
	}
}

// TestBusyTimeHoldsTheSteps: the loop's busy time is every step's time and what the host did
// around them; with a clock that moves only inside the model's steps, the two are equal.
func TestBusyTimeHoldsTheSteps(t *testing.T) {
	reg := prometheus.NewRegistry()
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	s, model := newTestScheduler(t, testOpts{registry: reg, clk: fake})
	model.setHook(func(int64, *stepplan.Plan) error {
		fake.Advance(3 * time.Millisecond)
		return nil
	})
	st := mustSubmit(t, s, greedyRequest([]int64{5, 6, 7}, 6))
	start(t, s)
	if _, last := collect(t, st); last.Err != nil {
		t.Fatal(last.Err)
	}
	// The last step's busy time is added after its events are handed over: Close waits for it.
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	busy := counterValue(t, reg, "sluice_generate_busy_seconds_total", "queue", "fake-lm")
	var steps float64
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "sluice_generate_step_seconds" {
			for _, m := range f.GetMetric() {
				steps += m.GetHistogram().GetSampleSum()
			}
		}
	}
	if steps < 6*0.003-1e-9 || math.Abs(busy-steps) > 1e-9 {
		t.Fatalf("busy %.4fs, steps %.4fs: want the six steps' 18ms in both", busy, steps)
	}
}

// A scheduler closed before it started gives its name back to the metrics, so that another
// of that name can be made on them.
func TestCloseBeforeStartFreesTheName(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, _ := newTestScheduler(t, testOpts{registry: reg})
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	model := newFakeModel()
	sh := model.Shape()
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: blockTokens, Blocks: 16, Layers: sh.Layers,
		Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New("fake-lm", model, pool, Config{MaxRunning: 8, MaxStepTokens: 4096, QueueSize: 64, OutBuffer: 64,
		StallTimeout: time.Minute, MaxPositions: 256}, clock.Real(), s.m.parent); err != nil {
		t.Fatalf("a scheduler of the same name after Close: %v", err)
	}
}
