package warmpool

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

type fakeModel struct {
	name    string
	closed  atomic.Bool
	closing *atomic.Int64 // counts the closes begun, when not nil
	hold    chan struct{} // a close ends once it is closed, when not nil
}

func (m *fakeModel) Close(context.Context) error {
	if m.closing != nil {
		m.closing.Add(1)
	}
	if m.hold != nil {
		<-m.hold
	}
	m.closed.Store(true)
	return nil
}

// fakeModels loads models named in sizes, each after gate (when not nil) lets it, counting
// the loads.
type fakeModels struct {
	sizes map[string]int64
	gate  chan struct{}
	// holdClose, when not nil, holds each model's Close until it is closed; closes counts them.
	holdClose chan struct{}
	closes    atomic.Int64
	loads     atomic.Int64
	fail      atomic.Bool
	mu        sync.Mutex
	made      []*fakeModel
}

func (f *fakeModels) load(ctx context.Context, name string) (Model, int64, error) {
	f.loads.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	if f.fail.Load() {
		return nil, 0, errors.New("load failed")
	}
	m := &fakeModel{name: name, closing: &f.closes, hold: f.holdClose}
	f.mu.Lock()
	f.made = append(f.made, m)
	f.mu.Unlock()
	return m, f.sizes[name], nil
}

func (f *fakeModels) estimate(name string) (int64, error) {
	size, ok := f.sizes[name]
	if !ok {
		return 0, ErrUnknown
	}
	return size, nil
}

func newPool(t *testing.T, cfg Config, f *fakeModels, clk clock.Clock) *Pool {
	t.Helper()
	p, err := New(cfg, f.load, f.estimate, clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// eventually waits, yielding, for cond; a hang guard bounds it.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 100000; i++ {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("condition never held")
}

var epoch = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// TestConcurrentRequestsLoadOnce: requests that arrive while their model loads wait for that
// one load and all get its model.
func TestConcurrentRequestsLoadOnce(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 10}, gate: make(chan struct{})}
	p := newPool(t, Config{Forever: true}, f, clock.NewFake(epoch))
	got := make(chan Model, 3)
	for range 3 {
		go func() {
			m, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
			if err != nil {
				t.Error(err)
				got <- nil
				return
			}
			release()
			got <- m
		}()
	}
	eventually(t, func() bool { s := p.Snapshot(); return len(s) == 1 && s[0].Active == 3 && s[0].Loading })
	close(f.gate)
	first := <-got
	if first == nil || <-got != first || <-got != first || f.loads.Load() != 1 {
		t.Fatalf("%d loads", f.loads.Load())
	}
}

// TestIdleModelsLeaveAfterTheirKeepAlive: a model idle for its keep-alive is unloaded (a use
// in between starts it again); a request's keep_alive replaces the pool's; 0 unloads at once.
func TestIdleModelsLeaveAfterTheirKeepAlive(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1, "b": 1}}
	p := newPool(t, Config{KeepAlive: time.Minute}, f, clk)
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	clk.Advance(59 * time.Second)
	if s := p.Snapshot(); len(s) != 1 || !s[0].HasDeadline || s[0].KeepAliveRemaining != time.Second {
		t.Fatalf("%+v", s)
	}
	clk.Advance(time.Second)
	eventually(t, func() bool { return len(p.Snapshot()) == 0 })
	eventually(t, func() bool { return f.made[0].closed.Load() })

	// keep_alive 0 unloads b when its request gives it back, and its Close runs in the
	// background: wait for both, as for a above.
	b, release, err := p.Acquire(context.Background(), "b", KeepAlive{Set: true, For: 0})
	if err != nil {
		t.Fatal(err)
	}
	release()
	eventually(t, func() bool { return len(p.Snapshot()) == 0 })
	eventually(t, func() bool { return b.(*fakeModel).closed.Load() })
	_, release, _ = p.Acquire(context.Background(), "a", KeepAlive{Set: true, Forever: true})
	release()
	clk.Advance(24 * time.Hour)
	if s := p.Snapshot(); len(s) != 1 || s[0].HasDeadline {
		t.Fatalf("a model kept for ever left: %+v", s)
	}
}

// TestTheCapAndTheBudgetUnloadTheLeastRecentlyUsed: a new model takes the room of the idle
// model used longest ago; pinned and busy models stay, and when only they are left the new
// one is refused (ErrBusy); one larger than the whole budget is too large.
func TestTheCapAndTheBudgetUnloadTheLeastRecentlyUsed(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"pinned": 40, "a": 20, "b": 20, "c": 20, "d": 50, "huge": 200}}
	p := newPool(t, Config{MaxResident: 3, MemoryBudget: 100, Forever: true}, f, clk)
	p.Pin("pinned", &fakeModel{name: "pinned"}, 40)
	use := func(name string) (func(), error) {
		_, release, err := p.Acquire(context.Background(), name, KeepAlive{})
		clk.Advance(time.Second)
		return release, err
	}
	ra, _ := use("a")
	ra()
	rb, _ := use("b")
	rb()
	rc, err := use("c") // the cap of 3: a, used longest ago, leaves
	if err != nil {
		t.Fatal(err)
	}
	if names := names(p); names != "b c pinned" {
		t.Fatalf("resident %s", names)
	}
	if _, err := use("d"); !errors.Is(err, ErrBusy) { // b is idle but 40+20(c)+50 > 100 even without it
		t.Fatalf("d: %v", err)
	}
	rc()
	if _, err := use("d"); err != nil {
		t.Fatalf("d after c is idle: %v", err)
	}
	if names := names(p); names != "d pinned" {
		t.Fatalf("resident %s", names)
	}
	if _, err := use("huge"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("huge: %v", err)
	}
	if _, err := use("nope"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("nope: %v", err)
	}
}

// TestALoadWaitsForTheModelsUnloadedForIt: a model unloaded to make room still holds its
// memory until its close returns: the load that needed the room begins only then.
func TestALoadWaitsForTheModelsUnloadedForIt(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 10, "b": 10}, holdClose: make(chan struct{})}
	p := newPool(t, Config{MemoryBudget: 10, Forever: true}, f, clock.NewFake(epoch))
	letClose := sync.OnceFunc(func() { close(f.holdClose) })
	t.Cleanup(letClose) // before the pool's Close, which waits for every close
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	done := make(chan error, 1)
	go func() {
		_, release, err := p.Acquire(context.Background(), "b", KeepAlive{})
		if err == nil {
			release()
		}
		done <- err
	}()
	eventually(t, func() bool { return f.closes.Load() == 1 }) // a is closing, for b's room
	for range 10000 {
		if f.loads.Load() != 1 {
			t.Fatal("b loaded while a, unloaded for its room, still held it")
		}
		runtime.Gosched()
	}
	letClose()
	if err := <-done; err != nil || f.loads.Load() != 2 {
		t.Fatalf("b: %v after %d loads", err, f.loads.Load())
	}
}

// TestALoadWaitsForAnotherCloseAWhileOnly: a close that hangs holds the next load for
// closeWait, not for the load's whole time.
func TestALoadWaitsForAnotherCloseAWhileOnly(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 10, "b": 10}, holdClose: make(chan struct{})}
	clk := clock.NewFake(epoch)
	p := newPool(t, Config{MemoryBudget: 10, Forever: true}, f, clk)
	t.Cleanup(sync.OnceFunc(func() { close(f.holdClose) }))
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	done := make(chan error, 1)
	armed := clk.TimerCreated()
	go func() {
		_, release, err := p.Acquire(context.Background(), "b", KeepAlive{})
		if err == nil {
			release()
		}
		done <- err
	}()
	<-armed // the load's wait for a's close
	clk.Advance(closeWait)
	if err := <-done; err != nil || f.loads.Load() != 2 {
		t.Fatalf("b, a's close hanging: %v after %d loads", err, f.loads.Load())
	}
}

func names(p *Pool) string {
	out := ""
	for i, s := range p.Snapshot() {
		if i > 0 {
			out += " "
		}
		out += s.Name
	}
	return out
}

// TestAWaitThatEndsBeforeTheLoadSaysHowLong: a request whose context ends while its model
// loads gets a LoadingError with the expected rest of the load, measured from earlier loads;
// the load goes on; a failed load answers its failure at once for a minute, then is tried
// again.
func TestAWaitThatEndsBeforeTheLoadSaysHowLong(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1, "b": 1}, gate: make(chan struct{}, 1)}
	p := newPool(t, Config{KeepAlive: time.Hour}, f, clk)
	go func() {
		eventually(t, func() bool { s := p.Snapshot(); return len(s) == 1 && s[0].Loading })
		clk.Advance(8 * time.Second) // the load of a takes 8 s
		f.gate <- struct{}{}
	}()
	if _, release, err := p.Acquire(context.Background(), "a", KeepAlive{}); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := p.Acquire(ctx, "b", KeepAlive{})
	var le *LoadingError
	if !errors.As(err, &le) || !errors.Is(err, ErrLoading) || le.Remaining != 8*time.Second {
		t.Fatalf("%v %+v", err, le)
	}
	f.fail.Store(true)
	f.gate <- struct{}{}
	eventually(t, func() bool { return len(p.Snapshot()) == 1 }) // b's failed load left
	f.fail.Store(false)
	loads := f.loads.Load()
	if _, _, err := p.Acquire(context.Background(), "b", KeepAlive{}); err == nil || f.loads.Load() != loads {
		t.Fatalf("a failed model was loaded again at once: %v", err)
	}
	clk.Advance(time.Minute) // RetryFailedAfter's default
	f.gate <- struct{}{}
	if _, release, err := p.Acquire(context.Background(), "b", KeepAlive{}); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
}

// TestUnload: an idle model unloads at once; a pinned or busy one stays and says why.
func TestUnload(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 1, "b": 1}}
	p := newPool(t, Config{Forever: true}, f, clock.NewFake(epoch))
	p.Pin("pinned", &fakeModel{}, 1)
	_, ra, _ := p.Acquire(context.Background(), "a", KeepAlive{})
	_, rb, _ := p.Acquire(context.Background(), "b", KeepAlive{})
	rb()
	if u := p.Unload("pinned"); u.Unloaded || !u.Pinned || !u.Known {
		t.Fatalf("%+v", u)
	}
	if u := p.Unload("a"); u.Unloaded || u.Active != 1 {
		t.Fatalf("%+v", u)
	}
	if u := p.Unload("b"); !u.Unloaded {
		t.Fatalf("%+v", u)
	}
	if n, busy := p.UnloadAll(); n != 0 || busy["a"] != 1 {
		t.Fatalf("%d %v", n, busy)
	}
	ra()
	if n, busy := p.UnloadAll(); n != 1 || len(busy) != 0 || names(p) != "pinned" {
		t.Fatalf("%d %v %s", n, busy, names(p))
	}
	if u := p.Unload("nope"); u.Known {
		t.Fatalf("%+v", u)
	}
}

// TestALoadNobodyWaitedForStillExpires: when every request gave up waiting for a load, the
// model's keep-alive starts when the load ends.
func TestALoadNobodyWaitedForStillExpires(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1}, gate: make(chan struct{})}
	// Longer than the retry the request is told to make (a minute: no load measured yet).
	p := newPool(t, Config{KeepAlive: 5 * time.Minute}, f, clk)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := p.Acquire(ctx, "a", KeepAlive{}); !errors.Is(err, ErrLoading) {
		t.Fatal(err)
	}
	close(f.gate)
	eventually(t, func() bool { s := p.Snapshot(); return len(s) == 1 && s[0].HasDeadline })
	clk.Advance(5 * time.Minute)
	eventually(t, func() bool { return len(p.Snapshot()) == 0 })
}

// TestALoadNobodyWaitedForStaysForTheRetry: at keep-alive 0, a model whose load ends after its
// request gave up stays for the retry its LoadingError asked for (retryGrace past it), which
// it serves without loading it again; nobody back by then, it leaves.
func TestALoadNobodyWaitedForStaysForTheRetry(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1}, gate: make(chan struct{}, 1)}
	// KeepAlive 0; with no load measured, one is expected to take LoadTimeout/60: 1 s.
	p := newPool(t, Config{LoadTimeout: time.Minute}, f, clk)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := p.Acquire(ctx, "a", KeepAlive{})
	var le *LoadingError
	if !errors.As(err, &le) || le.Remaining != time.Second {
		t.Fatalf("%v %+v", err, le)
	}
	f.gate <- struct{}{}
	eventually(t, func() bool { s := p.Snapshot(); return len(s) == 0 || !s[0].Loading })
	if s := p.Snapshot(); len(s) != 1 || !s[0].HasDeadline || s[0].KeepAliveRemaining != time.Second+retryGrace {
		t.Fatalf("a model loaded for a request that will retry in 1 s: %+v", s)
	}
	clk.Advance(time.Second) // the retry, as Retry-After said
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil || f.loads.Load() != 1 {
		t.Fatalf("the retry: %v after %d loads", err, f.loads.Load())
	}
	release()
	clk.Advance(retryGrace - time.Millisecond)
	if names(p) != "a" {
		t.Fatalf("resident %q before the retry's time had passed", names(p))
	}
	clk.Advance(time.Millisecond)
	eventually(t, func() bool { return len(p.Snapshot()) == 0 })
}

// TestNoUnloadThatDoesNotMakeTheRoom: a model that would not fit even with every idle model
// gone leaves them resident.
func TestNoUnloadThatDoesNotMakeTheRoom(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"idle": 2, "busy": 6, "new": 5}}
	p := newPool(t, Config{MemoryBudget: 10, Forever: true}, f, clock.NewFake(epoch))
	_, r1, _ := p.Acquire(context.Background(), "idle", KeepAlive{})
	r1()
	_, r2, _ := p.Acquire(context.Background(), "busy", KeepAlive{})
	defer r2()
	if _, _, err := p.Acquire(context.Background(), "new", KeepAlive{}); !errors.Is(err, ErrBusy) {
		t.Fatal(err)
	}
	if names(p) != "busy idle" {
		t.Fatalf("resident %s", names(p))
	}
}

// TestAModelThatCanNeverFitIsTooLargeNotBusy: a model larger than the budget's room beside
// the pinned models is a TooLargeError saying both sizes, with nothing resident to wait for,
// and not ErrBusy, which a retry can outlast; one that fits that room but not beside a model
// in use is ErrBusy.
func TestAModelThatCanNeverFitIsTooLargeNotBusy(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"big": 61, "fits": 60, "other": 10}}
	p := newPool(t, Config{MemoryBudget: 100, Forever: true}, f, clock.NewFake(epoch))
	p.Pin("pinned", &fakeModel{name: "pinned"}, 40)
	_, _, err := p.Acquire(context.Background(), "big", KeepAlive{})
	var tl *TooLargeError
	if !errors.As(err, &tl) || errors.Is(err, ErrBusy) || tl.Footprint != 61 || tl.Room != 60 ||
		!strings.Contains(err.Error(), "61 bytes") || !strings.Contains(err.Error(), "60 bytes") {
		t.Fatalf("a model of 61 bytes, 60 of room beside the pinned: %v %+v", err, tl)
	}
	if strings.Contains(err.Error(), "big") {
		t.Fatalf("the error names the model the request asked for: %v", err)
	}
	_, release, err := p.Acquire(context.Background(), "fits", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, _, err := p.Acquire(context.Background(), "other", KeepAlive{}); !errors.Is(err, ErrBusy) || errors.Is(err, ErrTooLarge) {
		t.Fatalf("other, while fits is in use: %v", err)
	}
	if f.loads.Load() != 1 {
		t.Fatalf("%d loads", f.loads.Load())
	}
}

// TestCloseDuringALoad: requests waiting for a load that ends after Close get ErrClosed, not a
// model that is being closed.
func TestCloseDuringALoad(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 1}, gate: make(chan struct{})}
	p := newPool(t, Config{Forever: true}, f, clock.NewFake(epoch))
	got := make(chan error, 1)
	go func() { _, _, err := p.Acquire(context.Background(), "a", KeepAlive{}); got <- err }()
	eventually(t, func() bool { s := p.Snapshot(); return len(s) == 1 && s[0].Active == 1 })
	closed := make(chan error, 1)
	go func() { closed <- p.Close(context.Background()) }()
	eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.closed })
	close(f.gate)
	if err := <-got; !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return f.made[0].closed.Load() })
}

// TestCloseStopsTheLoadsUnderWay: Close ends the context of a load under way and returns once
// it has ended, its requests answered ErrClosed; nothing of the pool runs after it.
func TestCloseStopsTheLoadsUnderWay(t *testing.T) {
	started := make(chan struct{})
	p, err := New(Config{Forever: true}, func(ctx context.Context, _ string) (Model, int64, error) {
		close(started)
		<-ctx.Done() // a load as long as it is let
		return nil, 0, ctx.Err()
	}, func(string) (int64, error) { return 1, nil }, clock.NewFake(epoch))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, _, err := p.Acquire(context.Background(), "a", KeepAlive{}); got <- err }()
	<-started
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, ErrClosed) {
		t.Fatalf("the request of a load Close stopped: %v", err)
	}
}

// TestALoadThatPanicsIsAFailedLoad: a Loader that panics (a model directory no check
// foresaw) is the requests' error, remembered as a failed load, and the process goes on.
func TestALoadThatPanicsIsAFailedLoad(t *testing.T) {
	p, err := New(Config{Forever: true}, func(context.Context, string) (Model, int64, error) {
		var rows []int
		return nil, 0, errors.New(string(rune(rows[3]))) // an index out of range, as a makeslice would
	}, func(string) (int64, error) { return 10, nil }, clock.NewFake(epoch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	for range 2 {
		if _, _, err := p.Acquire(context.Background(), "a", KeepAlive{}); !errors.Is(err, ErrLoadPanicked) {
			t.Fatalf("acquiring a model whose load panics: %v", err)
		}
	}
}

// TestARequestInItsEstimateSeesAFailureMeanwhile: a request still reading its model's size
// when another request's load of it fails gets that failure, and does not load it again.
func TestARequestInItsEstimateSeesAFailureMeanwhile(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 10}}
	f.fail.Store(true)
	inEstimate, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	estimate := func(name string) (int64, error) {
		if calls.Add(1) == 1 {
			close(inEstimate)
			<-release
		}
		return f.estimate(name)
	}
	p, err := New(Config{Forever: true, RetryFailedAfter: time.Minute}, f.load, estimate, clock.NewFake(epoch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	first := make(chan error, 1)
	go func() {
		_, _, err := p.Acquire(context.Background(), "a", KeepAlive{})
		first <- err
	}()
	<-inEstimate
	if _, _, err := p.Acquire(context.Background(), "a", KeepAlive{}); err == nil {
		t.Fatal("a load that fails: no error")
	}
	close(release)
	if err := <-first; err == nil {
		t.Fatal("the request in its estimate: no error")
	}
	if n := f.loads.Load(); n != 1 {
		t.Fatalf("%d loads of a model whose load had just failed; want 1", n)
	}
}

// TestCloseWaitsForAnUnloadsCloseWhileItsContextLasts: a model unloaded before Close, still
// closing, holds Close only until Close's context ends, which Close then reports.
func TestCloseWaitsForAnUnloadsCloseWhileItsContextLasts(t *testing.T) {
	f := &fakeModels{sizes: map[string]int64{"a": 1}, holdClose: make(chan struct{})}
	p, err := New(Config{Forever: true}, f.load, f.estimate, clock.NewFake(epoch))
	if err != nil {
		t.Fatal(err)
	}
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	if u := p.Unload("a"); !u.Unloaded {
		t.Fatalf("%+v", u)
	}
	eventually(t, func() bool { return f.closes.Load() == 1 }) // its Close has begun, and holds
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Close(ctx); err == nil || !strings.Contains(err.Error(), "still under way") {
		t.Fatalf("Close with a close held and its context ended: %v", err)
	}
	close(f.holdClose)
}

// TestARequestWithoutKeepAliveTakesThePoolDefault: a request that sends no keep_alive leaves
// its model on the pool's keep-alive, whatever an earlier request sent. It broke when a
// request's keep_alive stuck to its model: a later request without one kept the earlier "for
// ever", where OpenMed applies its default keep-alive.
func TestARequestWithoutKeepAliveTakesThePoolDefault(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1}}
	p := newPool(t, Config{KeepAlive: time.Minute}, f, clk)
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{Set: true, Forever: true})
	if err != nil {
		t.Fatal(err)
	}
	release()
	_, release, err = p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	if s := p.Snapshot(); len(s) != 1 || !s[0].HasDeadline || s[0].KeepAliveRemaining != time.Minute {
		t.Fatalf("a request without keep_alive left the model on the earlier request's keep-alive: %+v", s)
	}
}

// TestTheLastRequestToFinishSetsTheKeepAlive: of overlapping requests, the keep_alive of the
// one that gives the model back last counts, as in OpenMed's finish_request. It broke when
// the keep_alive was taken as each request started: a short keep_alive 0 request that began
// during a long "forever" one unloaded the model when the long one ended.
func TestTheLastRequestToFinishSetsTheKeepAlive(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1}}
	p := newPool(t, Config{KeepAlive: time.Minute}, f, clk)
	_, releaseLong, err := p.Acquire(context.Background(), "a", KeepAlive{Set: true, Forever: true})
	if err != nil {
		t.Fatal(err)
	}
	_, releaseShort, err := p.Acquire(context.Background(), "a", KeepAlive{Set: true, For: 0})
	if err != nil {
		t.Fatal(err)
	}
	releaseShort()
	releaseLong()
	if s := p.Snapshot(); len(s) != 1 || s[0].HasDeadline {
		t.Fatalf("the last request to finish asked to keep the model for ever: %+v", s)
	}

	// And the other way round: the keep_alive 0 request, finishing last, unloads it.
	_, releaseLong, _ = p.Acquire(context.Background(), "a", KeepAlive{Set: true, Forever: true})
	_, releaseShort, _ = p.Acquire(context.Background(), "a", KeepAlive{Set: true, For: 0})
	releaseLong()
	releaseShort()
	eventually(t, func() bool { return len(p.Snapshot()) == 0 })
}

// TestAPreloadedModelStaysWhenItsRequestsSayNothing: a preloaded model keeps no deadline after
// a request without keep_alive (it was preloaded to stay), while one that sends keep_alive
// still sets it.
func TestAPreloadedModelStaysWhenItsRequestsSayNothing(t *testing.T) {
	clk := clock.NewFake(epoch)
	f := &fakeModels{sizes: map[string]int64{"a": 1}}
	p := newPool(t, Config{KeepAlive: time.Minute}, f, clk)
	if err := p.Preload(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if s := p.Snapshot(); len(s) != 1 || s[0].HasDeadline {
		t.Fatalf("a preloaded model got a deadline: %+v", s)
	}
	_, release, err := p.Acquire(context.Background(), "a", KeepAlive{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	if s := p.Snapshot(); len(s) != 1 || s[0].HasDeadline {
		t.Fatalf("a preloaded model took the pool's keep-alive after a request without one: %+v", s)
	}
	_, release, _ = p.Acquire(context.Background(), "a", KeepAlive{Set: true, For: time.Second})
	release()
	if s := p.Snapshot(); len(s) != 1 || !s[0].HasDeadline || s[0].KeepAliveRemaining != time.Second {
		t.Fatalf("a request's keep_alive did not count for a preloaded model: %+v", s)
	}
}

// TestAPreloadLeavesTheKeepAliveToTheRequests: a preload is no request (OpenMed's never
// finishes one), so a request that shares its load and gives the model back first with
// keep_alive 10s leaves the model on 10s. The preload, giving it back after, set it for ever.
// Which of the two gives it back last is the scheduler's choice: the check runs many times.
func TestAPreloadLeavesTheKeepAliveToTheRequests(t *testing.T) {
	overridden := 0
	const runs = 100
	for range runs {
		clk := clock.NewFake(epoch)
		f := &fakeModels{sizes: map[string]int64{"a": 1}, gate: make(chan struct{})}
		p, err := New(Config{KeepAlive: time.Minute}, f.load, f.estimate, clk)
		if err != nil {
			t.Fatal(err)
		}
		asked := make(chan struct{})
		go func() {
			defer close(asked)
			_, release, err := p.Acquire(context.Background(), "a", KeepAlive{Set: true, For: 10 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			release()
		}()
		for s := p.Snapshot(); len(s) != 1 || s[0].Active != 1; s = p.Snapshot() {
			runtime.Gosched()
		}
		preloaded := make(chan error, 1)
		go func() { preloaded <- p.Preload(context.Background(), "a") }()
		for s := p.Snapshot(); len(s) != 1 || s[0].Active != 2; s = p.Snapshot() {
			runtime.Gosched()
		}
		close(f.gate)
		<-asked
		if err := <-preloaded; err != nil {
			t.Fatal(err)
		}
		if s := p.Snapshot(); len(s) != 1 || !s[0].HasDeadline || s[0].KeepAliveRemaining != 10*time.Second {
			overridden++
		}
		_ = p.Close(context.Background())
	}
	if overridden > 0 {
		t.Errorf("in %d of %d runs the preload replaced the request's keep_alive of 10s", overridden, runs)
	}
}
