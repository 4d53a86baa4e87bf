package warmpool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// Model is a loaded model; Close unloads it once its users are gone.
type Model interface {
	Close(ctx context.Context) error
}

// Loader builds the model called name and says what it takes in memory.
type Loader func(ctx context.Context, name string) (m Model, footprint int64, err error)

// Estimator says what the model called name will take in memory, before it is loaded; an error
// (ErrUnknown, typically) means there is no such model.
type Estimator func(name string) (footprint int64, err error)

// Config sets the pool's limits.
type Config struct {
	// MaxResident caps the models resident, pinned ones included; 0: no cap.
	MaxResident int
	// MemoryBudget caps their footprints together, pinned ones included; 0: no budget.
	MemoryBudget int64
	// KeepAlive is how long an idle model loaded on demand stays, when its requests say
	// nothing; Forever keeps it until the cap or the budget needs the room.
	KeepAlive time.Duration
	Forever   bool
	// LoadTimeout bounds one load (0: an hour).
	LoadTimeout time.Duration
	// RetryFailedAfter is how long a model whose load failed answers its failure at once
	// instead of loading again (0: a minute): a broken model directory must not cost a full
	// load on every request.
	RetryFailedAfter time.Duration
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	check := settings.For("warmpool")
	if c.MaxResident < 0 {
		check.Addf("MaxResident", "must not be negative (0: no cap), got %d", c.MaxResident)
	}
	if c.MemoryBudget < 0 {
		check.Addf("MemoryBudget", "must not be negative (0: no budget), got %d", c.MemoryBudget)
	}
	if c.KeepAlive < 0 {
		check.Addf("KeepAlive", "must not be negative, got %s", c.KeepAlive)
	}
	if c.LoadTimeout < 0 {
		check.Addf("LoadTimeout", "must not be negative (0: an hour), got %s", c.LoadTimeout)
	}
	if c.RetryFailedAfter < 0 {
		check.Addf("RetryFailedAfter", "must not be negative (0: a minute), got %s", c.RetryFailedAfter)
	}
	if c.Forever && c.KeepAlive > 0 {
		check.Addf("KeepAlive", "must be 0 with Forever, got %s", c.KeepAlive)
	}
	return check.Err()
}

// KeepAlive is one request's keep_alive: unset takes the pool's (for ever for a model
// preloaded); Forever keeps the model. Of a model's overlapping requests, the one to finish
// last sets its keep-alive, as OpenMed's finish_request does.
type KeepAlive struct {
	Set, Forever bool
	For          time.Duration
}

var (
	// ErrUnknown: no model of that name.
	ErrUnknown = errors.New("warmpool: no such model")
	// ErrBusy: the model does not fit, even with every idle model unloaded.
	ErrBusy = errors.New("warmpool: no room for the model: the resident ones are pinned or in use")
	// ErrClosed: the pool is closing (the server shuts down).
	ErrClosed = errors.New("warmpool: closed")
)

// TooLargeError is a model that can never fit the memory budget: its footprint is more than
// the room the pinned models leave, which stays what it is for the life of the pool. Unlike
// ErrBusy, waiting does not help.
type TooLargeError struct {
	Footprint, Room int64 // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("warmpool: the model takes %d bytes; the memory budget has %d bytes beside the pinned models", e.Footprint, e.Room)
}

// ErrTooLarge matches a *TooLargeError with errors.Is.
var ErrTooLarge = &TooLargeError{}

// Is makes every *TooLargeError match ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { _, ok := target.(*TooLargeError); return ok }

// LoadingError is a request that gave up waiting for its model's load.
type LoadingError struct {
	// Remaining is how much longer the load is expected to take (measured from earlier
	// loads; the load timeout's share when none finished yet).
	Remaining time.Duration
}

func (e *LoadingError) Error() string { return "warmpool: the model is still loading" }

// ErrLoading matches a *LoadingError with errors.Is.
var ErrLoading = &LoadingError{}

// Is makes every *LoadingError match ErrLoading.
func (e *LoadingError) Is(target error) bool { _, ok := target.(*LoadingError); return ok }

type entry struct {
	name      string
	model     Model
	footprint int64
	pinned    bool
	loading   chan struct{} // closed when the load ends; nil once resident
	err       error         // the load's failure
	started   time.Time
	active    int
	lastUsed  time.Time
	// keep is the keep_alive of the request that gave the model back last: the one its
	// keep-alive follows once idle.
	keep KeepAlive
	// preloaded models stay for ever when the last request's keep_alive is unset.
	preloaded bool
	deadline  time.Time     // zero: none
	expiry    chan struct{} // closed to stop the keep-alive timer's goroutine; nil: none
	// retryBy is when the last request that gave up waiting for the load was told to be back
	// (its Retry-After), with retryGrace: the model stays idle at least until then.
	retryBy time.Time
}

// Pool is the resident models. It is safe for concurrent use.
type Pool struct {
	cfg      Config
	load     Loader
	estimate Estimator
	clk      clock.Clock

	mu       sync.Mutex
	entries  map[string]*entry
	loadTime time.Duration // mean of the loads so far (0: none yet)
	loads    int
	loaded   int // loads finished, for metrics
	evicted  int
	closed   bool
	done     chan struct{}
	// closing holds, per name, the close of its last model still draining: a load of the
	// same name waits for it (the model's metrics and gate names are free only then).
	closing map[string]chan struct{}
	closers sync.WaitGroup
	// running counts the loads under way; Close ends their contexts (stopLoads) and waits.
	running   sync.WaitGroup
	loadsCtx  context.Context
	stopLoads context.CancelFunc
	// failed holds the loads that failed lately, until they may be tried again.
	failed Failures
}

// Failures remembers loads that failed, by name, for After: a name asked for again sooner is
// answered with its failure at once rather than read and loaded again. Its owner's lock
// guards it; the zero value with After set is ready to use.
type Failures struct {
	After time.Duration
	m     map[string]failure
}

type failure struct {
	err   error
	until time.Time
}

// maxFailed bounds the failures remembered: past it, a directory listing's worth of broken
// models, they start over.
const maxFailed = 1024

// Remember keeps name's failure err, as of now.
func (f *Failures) Remember(name string, err error, now time.Time) {
	if f.m == nil || len(f.m) >= maxFailed {
		f.m = map[string]failure{}
	}
	f.m[name] = failure{err: err, until: now.Add(f.After)}
}

// Recall is name's failure while it is remembered at now, else nil.
func (f *Failures) Recall(name string, now time.Time) error {
	e, ok := f.m[name]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(f.m, name)
		return nil
	}
	return e.err
}

// New validates cfg and returns an empty pool.
func New(cfg Config, load Loader, estimate Estimator, clk clock.Clock) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.LoadTimeout == 0 {
		cfg.LoadTimeout = time.Hour
	}
	if cfg.RetryFailedAfter == 0 {
		cfg.RetryFailedAfter = DefaultRetryFailedAfter
	}
	if load == nil || estimate == nil || clk == nil {
		return nil, errors.New("warmpool: a loader, an estimator and a clock are required")
	}
	p := &Pool{cfg: cfg, load: load, estimate: estimate, clk: clk, entries: map[string]*entry{},
		done: make(chan struct{}), closing: map[string]chan struct{}{}, failed: Failures{After: cfg.RetryFailedAfter}}
	p.loadsCtx, p.stopLoads = context.WithCancel(context.Background())
	return p, nil
}

// Pin adds a model that stays resident for the life of the pool.
func (p *Pool) Pin(name string, m Model, footprint int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entries[name] = &entry{name: name, model: m, footprint: footprint, pinned: true, lastUsed: p.clk.Now()}
}

// Acquire returns the model called name, loading it if it is not resident, and the function
// that gives it back (call it once, when the request is done). keep, the request's
// keep_alive, counts when the request gives the model back: the last to do so sets how long
// the model then stays.
func (p *Pool) Acquire(ctx context.Context, name string, keep KeepAlive) (Model, func(), error) {
	e, err := p.acquire(ctx, name, keep)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	return e.model, func() { once.Do(func() { p.mu.Lock(); p.releaseLocked(e, keep); p.mu.Unlock() }) }, nil
}

// Preload loads the model called name, if it is not resident, to stay: idle, it keeps no
// deadline unless a request's keep_alive gives it one (until it is unloaded or evicted).
func (p *Pool) Preload(ctx context.Context, name string) error {
	e, err := p.acquire(ctx, name, KeepAlive{})
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e.preloaded = true
	// A preload is no request: it gives the model back leaving the keep-alive as the last
	// request to give it back set it (one that shared its load and ended first included).
	p.releaseLocked(e, e.keep)
	return nil
}

// acquire is Acquire's entry, counted in use.
func (p *Pool) acquire(ctx context.Context, name string, keep KeepAlive) (*entry, error) {
	p.mu.Lock()
	e, ok := p.entries[name]
	if err := p.failed.Recall(name, p.clk.Now()); !ok && err != nil {
		p.mu.Unlock()
		return nil, err
	}
	if !ok {
		// The estimate reads the model's files: not under the lock every request takes.
		p.mu.Unlock()
		size, err := p.estimate(name)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		if e, ok = p.entries[name]; !ok { // another request may have started it meanwhile
			if err := p.failed.Recall(name, p.clk.Now()); err != nil { // or seen it fail
				p.mu.Unlock()
				return nil, err
			}
			if e, err = p.startLoad(name, size); err != nil {
				p.mu.Unlock()
				return nil, err
			}
		}
	}
	e.active++ // counted while waiting too, so the load is not evicted from under it
	e.stopExpiry()
	loading := e.loading
	p.mu.Unlock()
	if loading != nil {
		select {
		case <-loading:
		case <-ctx.Done():
			p.mu.Lock()
			remaining := p.remaining(e)
			if by := p.clk.Now().Add(remaining + retryGrace); by.After(e.retryBy) {
				e.retryBy = by
			}
			p.releaseLocked(e, keep)
			p.mu.Unlock()
			return nil, &LoadingError{Remaining: remaining}
		}
		p.mu.Lock()
		err := e.err
		if err != nil {
			p.releaseLocked(e, keep)
			p.mu.Unlock()
			return nil, err
		}
		p.mu.Unlock()
	}
	return e, nil
}

// startLoad reserves the room for name (unloading idle models if it must) and starts its load.
// Called with mu held.
func (p *Pool) startLoad(name string, size int64) (*entry, error) {
	if p.closed {
		return nil, ErrClosed
	}
	if room := p.roomBesidePinned(); size > room {
		return nil, &TooLargeError{Footprint: size, Room: room}
	}
	if !p.makeRoom(size) {
		return nil, ErrBusy
	}
	e := &entry{name: name, footprint: size, loading: make(chan struct{}), started: p.clk.Now(), lastUsed: p.clk.Now()}
	p.entries[name] = e
	p.running.Add(1)
	go func() {
		defer p.running.Done()
		p.runLoad(e)
	}()
	return e, nil
}

// loadSafely is the Loader's answer, a panic in it (a model directory no check foresaw) an
// error: it runs on a goroutine of its own, where a panic would end the process.
func (p *Pool) loadSafely(ctx context.Context, name string) (m Model, size int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			m, size, err = nil, 0, fmt.Errorf("%w: loading the model panicked (%T)", ErrLoadPanicked, v)
		}
	}()
	return p.load(ctx, name)
}

// closeWait bounds how long a load waits for other models' closes before it goes on.
const closeWait = 30 * time.Second

// retryGrace is how long past the wait a LoadingError told its request a model is kept for
// the retry: Retry-After is whole seconds rounded up, and a retry comes later still by its
// client's own delays (a round trip, a jitter it adds). Erring long costs no other model its
// room: an idle model is unloaded for room as ever.
const retryGrace = 10 * time.Second

// DefaultRetryFailedAfter is Config.RetryFailedAfter when it is 0.
const DefaultRetryFailedAfter = time.Minute

// ErrLoadPanicked is a load whose Loader panicked.
var ErrLoadPanicked = errors.New("warmpool: the model could not be loaded")

func (p *Pool) runLoad(e *entry) {
	ctx, cancel := context.WithTimeout(p.loadsCtx, p.cfg.LoadTimeout)
	defer cancel()
	// Every model still closing holds what it held (memory, a GPU's above all), though the
	// pool no longer counts it: one evicted to make room for this one most of all. The load
	// waits for them a while (an idle model closes at once), and for the same name's last
	// model, which holds its names, within the load's time.
	p.mu.Lock()
	previous := p.closing[e.name]
	closing := slices.Collect(maps.Values(p.closing))
	p.mu.Unlock()
	wait := p.clk.NewTimer(closeWait)
waiting:
	for _, done := range closing {
		select {
		case <-done:
		case <-wait.C():
			break waiting
		}
	}
	wait.Stop()
	var m Model
	var size int64
	var err error
	if previous != nil {
		select {
		case <-previous:
		case <-ctx.Done():
			err = fmt.Errorf("warmpool: the last model of this name did not close within the load's time: %w", ctx.Err())
		}
	}
	if err == nil {
		m, size, err = p.loadSafely(ctx, e.name)
	}
	var unwanted Model // made for a pool that closed meanwhile: closed here, the lock let go
	defer func() {
		if unwanted != nil {
			_ = unwanted.Close(context.Background())
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	took := p.clk.Now().Sub(e.started)
	switch {
	case p.closed: // whatever the load came to: Close stopped it, or it ended after
		e.err = ErrClosed
		delete(p.entries, e.name)
		if err == nil {
			unwanted = m
		}
	case err != nil:
		e.err = err
		delete(p.entries, e.name) // tried again once RetryFailedAfter has passed
		p.failed.Remember(e.name, err, p.clk.Now())
	default:
		p.loads++
		p.loadTime += (took - p.loadTime) / time.Duration(p.loads)
		p.loaded++
		e.model = m
		if size > 0 {
			e.footprint = size
		}
	}
	close(e.loading)
	e.loading = nil
	if err == nil && !p.closed && e.active == 0 {
		p.idle(e) // every waiter gave up: its keep-alive starts now
	}
}

// remaining is how much longer e's load is expected to take. Called with mu held.
func (p *Pool) remaining(e *entry) time.Duration {
	expect := p.loadTime
	if expect == 0 {
		expect = p.cfg.LoadTimeout / 60 // nothing measured yet: a guess, at most a minute
		expect = min(expect, time.Minute)
	}
	return max(expect-p.clk.Now().Sub(e.started), time.Second)
}

// roomBesidePinned is the most a model loaded on demand can ever take: the pinned models stay
// for the pool's life (math.MaxInt64: no budget). Called with mu held.
func (p *Pool) roomBesidePinned() int64 {
	if p.cfg.MemoryBudget == 0 {
		return math.MaxInt64
	}
	room := p.cfg.MemoryBudget
	for _, e := range p.entries {
		if e.pinned {
			room -= e.footprint
		}
	}
	return max(room, 0)
}

// makeRoom unloads idle unpinned models, least recently used first, until one more model of
// size fits the cap and the budget. Called with mu held.
func (p *Pool) makeRoom(size int64) bool {
	// Unload nothing unless unloading every idle model would make the room.
	var idleBytes int64
	idleCount := 0
	for _, e := range p.entries {
		if !e.pinned && e.active == 0 && e.loading == nil {
			idleBytes += e.footprint
			idleCount++
		}
	}
	count, used := p.usage()
	if (p.cfg.MaxResident > 0 && count-idleCount+1 > p.cfg.MaxResident) ||
		(p.cfg.MemoryBudget > 0 && used-idleBytes+size > p.cfg.MemoryBudget) {
		return false
	}
	for !p.fits(size) {
		victim := p.lru()
		if victim == nil {
			return false
		}
		p.unloadLocked(victim)
	}
	return true
}

// usage is the models held and their footprints together. Called with mu held.
func (p *Pool) usage() (count int, bytes int64) {
	for _, e := range p.entries {
		bytes += e.footprint
	}
	return len(p.entries), bytes
}

func (p *Pool) fits(size int64) bool {
	count, used := p.usage()
	return (p.cfg.MaxResident == 0 || count+1 <= p.cfg.MaxResident) && (p.cfg.MemoryBudget == 0 || used+size <= p.cfg.MemoryBudget)
}

// lru is the idle unpinned resident model used longest ago (ties: the larger). Called with mu
// held.
func (p *Pool) lru() *entry {
	var idle []*entry
	for _, e := range p.entries {
		if !e.pinned && e.active == 0 && e.loading == nil {
			idle = append(idle, e)
		}
	}
	if len(idle) == 0 {
		return nil
	}
	return slices.MinFunc(idle, func(a, b *entry) int {
		if c := a.lastUsed.Compare(b.lastUsed); c != 0 {
			return c
		}
		return cmp.Compare(b.footprint, a.footprint)
	})
}

// releaseLocked gives back one use of e, by a request whose keep_alive was keep, and, when it
// was the last, starts its keep-alive. Called with mu held.
func (p *Pool) releaseLocked(e *entry, keep KeepAlive) {
	e.active--
	e.lastUsed = p.clk.Now()
	e.keep = keep
	if e.active > 0 || e.pinned || e.loading != nil || p.entries[e.name] != e {
		return
	}
	p.idle(e)
}

// idle starts the keep-alive of e, resident with no request: unloaded now (keep-alive 0),
// never, or when its timer fires unless a request came meanwhile. A model loaded for requests
// that gave up waiting stays until their retries are due, whatever its keep-alive: at 0 it
// was unloaded as its load ended and each retry loaded it again, for ever. Called with mu
// held.
func (p *Pool) idle(e *entry) {
	now := p.clk.Now()
	keep := e.keep
	if !keep.Set {
		keep = KeepAlive{Forever: p.cfg.Forever || e.preloaded, For: p.cfg.KeepAlive}
	}
	wait := max(keep.For, e.retryBy.Sub(now))
	switch {
	case keep.Forever:
		e.deadline = time.Time{}
	case wait <= 0:
		p.unloadLocked(e)
	default:
		e.deadline = now.Add(wait)
		stop := make(chan struct{})
		e.expiry = stop
		t := p.clk.NewTimer(wait)
		go func() {
			defer t.Stop()
			select {
			case <-t.C():
				p.mu.Lock()
				if p.entries[e.name] == e && e.expiry == stop {
					e.expiry = nil
					p.unloadLocked(e)
				}
				p.mu.Unlock()
			case <-stop:
			case <-p.done:
			}
		}()
	}
}

// stopExpiry stops e's keep-alive timer, if it runs. Called with mu held.
func (e *entry) stopExpiry() {
	if e.expiry != nil {
		close(e.expiry)
		e.expiry = nil
	}
	e.deadline = time.Time{}
}

// unloadLocked takes e out and closes its model in the background: its last request has
// finished, but closing drains the model's queue, which must not hold the pool.
func (p *Pool) unloadLocked(e *entry) {
	e.stopExpiry()
	delete(p.entries, e.name)
	p.evicted++
	p.closeInBackground(e.name, e.model)
}

// closeInBackground closes m, the last model called name, and tells a load of the same name
// when it is done. Called with mu held.
func (p *Pool) closeInBackground(name string, m Model) {
	done := make(chan struct{})
	p.closing[name] = done
	p.closers.Add(1)
	go func() {
		defer p.closers.Done()
		_ = m.Close(context.Background())
		p.mu.Lock()
		if p.closing[name] == done {
			delete(p.closing, name)
		}
		p.mu.Unlock()
		close(done)
	}()
}

// Unloaded is what Unload did with one model.
type Unloaded struct {
	Unloaded, Loading, Pinned, Known bool
	Active                           int
}

// Unload unloads the model called name now, unless it is pinned, loading or in use.
func (p *Pool) Unload(name string) Unloaded {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[name]
	if !ok {
		return Unloaded{}
	}
	u := Unloaded{Known: true, Pinned: e.pinned, Loading: e.loading != nil, Active: e.active}
	if !e.pinned && e.loading == nil && e.active == 0 {
		p.unloadLocked(e)
		u.Unloaded = true
	}
	return u
}

// UnloadAll unloads every model that can be, and says how many it unloaded and which stayed
// because they were in use or loading (their requests in flight).
func (p *Pool) UnloadAll() (unloaded int, busy map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	busy = map[string]int{}
	for _, e := range p.entries {
		switch {
		case e.pinned:
		case e.active > 0 || e.loading != nil:
			busy[e.name] = e.active
		default:
			p.unloadLocked(e)
			unloaded++
		}
	}
	return unloaded, busy
}

// Status is one model's state, for /models/loaded.
type Status struct {
	Name            string
	Pinned, Loading bool
	// Model is the model once resident (nil while it loads), to be read, not used: a use is
	// Acquire's, which the keep-alive and the eviction order count.
	Model              Model
	Active             int
	Footprint          int64
	KeepAliveRemaining time.Duration
	HasDeadline        bool
}

// Snapshot is every model's state, by name.
func (p *Pool) Snapshot() []Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	out := make([]Status, 0, len(p.entries))
	for _, e := range p.entries {
		s := Status{Name: e.name, Pinned: e.pinned, Loading: e.loading != nil, Active: e.active, Footprint: e.footprint}
		if e.loading == nil {
			s.Model = e.model
		}
		if !e.deadline.IsZero() && e.active == 0 {
			s.HasDeadline, s.KeepAliveRemaining = true, max(e.deadline.Sub(now), 0)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Status) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Counts are the loads and unloads so far, for metrics.
func (p *Pool) Counts() (loads, evictions int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loaded, p.evicted
}

// Close unloads every model loaded on demand (the pinned ones are their owner's to close) and
// stops the keep-alive timers. Loads under way are told to stop (their context ends) and
// waited for, with the closes of models unloaded before, while ctx lasts; a model a load still
// makes is closed when it ends.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.stopLoads()
	var models []Model
	for name, e := range p.entries {
		if e.loading == nil && !e.pinned {
			models = append(models, e.model)
			delete(p.entries, name)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, m := range models {
		errs = append(errs, m.Close(ctx))
	}
	loads := make(chan struct{})
	go func() {
		p.closers.Wait() // the models unloaded before, still draining
		p.running.Wait() // a load made for the closed pool closes its model before it ends
		close(loads)
	}()
	select {
	case <-loads:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("warmpool: closes or loads still under way: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}
