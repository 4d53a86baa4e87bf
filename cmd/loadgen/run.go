package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Loop modes.
const (
	modeOpen   = "open"
	modeClosed = "closed"
)

// Config is a validated run description; main builds it from the flags.
type Config struct {
	URL            string
	Mode           string
	Rate           float64 // open loop: arrivals per second
	Workers        int     // closed loop
	MaxInFlight    int     // open loop cap; arrivals beyond it are dropped by the generator
	Duration       time.Duration
	Warmup         time.Duration
	Drain          time.Duration // how long in-flight requests and retries may run past the end
	Timeout        time.Duration
	ScrapeInterval time.Duration // 0 turns scraping off
	Endpoints      Mix
	Priorities     Mix
	Lengths        Mix
	Retry          RetryPolicy
	Seed           uint64
	// APIKey, when set, is sent as X-API-Key: the run is one tenant's.
	APIKey string
}

// Validate checks the fields that main cannot check one flag at a time.
func (c Config) Validate() error {
	var errs []error
	switch c.Mode {
	case modeOpen:
		if !(c.Rate > 0) {
			errs = append(errs, errors.New("-rate must be > 0 in open mode"))
		}
		if c.MaxInFlight <= 0 {
			errs = append(errs, errors.New("-max-in-flight must be > 0 in open mode"))
		}
	case modeClosed:
		if c.Workers <= 0 {
			errs = append(errs, errors.New("-workers must be > 0 in closed mode"))
		}
	default:
		errs = append(errs, fmt.Errorf("-mode must be %q or %q", modeOpen, modeClosed))
	}
	if c.Duration <= 0 {
		errs = append(errs, errors.New("-duration must be > 0"))
	}
	if c.Warmup < 0 || c.Drain < 0 || c.ScrapeInterval < 0 {
		errs = append(errs, errors.New("-warmup, -drain and -scrape-interval must be >= 0"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("-timeout must be > 0"))
	}
	if c.Retry.Enabled && c.Retry.Rules == nil {
		errs = append(errs, errors.New("-retry needs valid -max-retries (>= 0) and -retry-budget (>= 0)"))
	}
	return errors.Join(errs...)
}

// Result is everything a run produced.
type Result struct {
	Config Config
	// Start is when the run began; [MeasureStart, MeasureEnd) is the measurement window.
	// MeasureEnd is earlier than planned if the run was interrupted.
	Start, MeasureStart, MeasureEnd time.Time
	Interrupted                     bool
	Records                         []*Record
	Scrapes                         []Scrape
	ScrapeFailed                    int
	Families                        []string
	MaxInFlight                     int64
}

// Summary summarises the result and fills in the run's description.
func (r *Result) Summary() Summary {
	c := r.Config
	s := Summarize(r.Records, Window{Start: r.MeasureStart, End: r.MeasureEnd, Timeout: c.Timeout})
	s.Mode, s.URL, s.Seed = c.Mode, c.URL, c.Seed
	s.DurationS = Number(r.MeasureEnd.Sub(r.MeasureStart).Seconds())
	s.WarmupS = Number(c.Warmup.Seconds())
	s.TimeoutMS = ms(c.Timeout)
	s.Mix, s.PriorityMix, s.LengthMix = c.Endpoints.String(), c.Priorities.String(), c.Lengths.String()
	s.Interrupted = r.Interrupted
	if c.Mode == modeOpen {
		s.TargetRate = Number(c.Rate)
		lag := scheduleLag(r.Records)
		s.ScheduleLag = &lag
	} else {
		s.Workers = c.Workers
	}
	s.Retry.Enabled = c.Retry.Enabled
	s.Retry.MaxRetries = c.Retry.MaxRetries
	s.Retry.Budget = Number(c.Retry.BudgetRatio)
	s.MaxInFlight = r.MaxInFlight
	s.Scrapes = ScrapeSummary{OK: len(r.Scrapes), Failed: r.ScrapeFailed, Families: r.Families}
	if s.Scrapes.Families == nil {
		s.Scrapes.Families = []string{}
	}
	return s
}

// scheduleLag is how late the generator sent first attempts relative to their scheduled
// arrival; a large value means the harness, not the server, was the bottleneck.
func scheduleLag(records []*Record) Latency {
	var lags []time.Duration
	for _, r := range records {
		if !r.Warmup && len(r.Attempts) > 0 {
			lags = append(lags, r.Attempts[0].Start.Sub(r.Scheduled))
		}
	}
	return latencyOf(lags)
}

// Runner runs one load test.
type Runner struct {
	cfg      Config
	clk      clock.Clock
	client   *http.Client
	corpus   *Corpus
	target   *Target
	live     Live
	inFlight *InFlight
	records  Collector
	seq      atomic.Uint64
}

// NewRunner prepares a run; client carries every request and scrape.
func NewRunner(cfg Config, clk clock.Clock, client *http.Client) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	corpus, err := NewCorpus()
	if err != nil {
		return nil, err
	}
	return &Runner{
		cfg: cfg, clk: clk, client: client, corpus: corpus,
		target:   NewTarget(cfg.URL, client, clk, cfg.Timeout).WithKey(cfg.APIKey),
		inFlight: NewInFlight(cfg.MaxInFlight),
	}, nil
}

// Run drives the load until the duration has passed or ctx is done (an interrupt), lets
// in-flight requests and their retries finish for up to Drain, and returns what it saw.
// progress receives the live line; tty says whether it is a terminal.
func (r *Runner) Run(ctx context.Context, progress io.Writer, tty bool) *Result {
	cfg := r.cfg
	start := r.clk.Now()
	measureStart := start.Add(cfg.Warmup)
	end := measureStart.Add(cfg.Duration)

	// Requests outlive the generator by up to Drain; an interrupt cancels them at once.
	reqCtx, cancelReqs := context.WithCancel(ctx)
	defer cancelReqs()

	bg, stopBackground := context.WithCancel(ctx)
	var bgDone sync.WaitGroup
	var scraper *Scraper
	if cfg.ScrapeInterval > 0 {
		scraper = NewScraper(r.cfg.URL+"/metrics", r.client, r.clk, cfg.ScrapeInterval)
		bgDone.Add(1)
		go func() { defer bgDone.Done(); scraper.Run(bg) }()
	}
	if progress != nil {
		bgDone.Add(1)
		go func() {
			defer bgDone.Done()
			RunProgress(bg, r.clk, progress, tty, &r.live, r.inFlight, start, cfg.Warmup+cfg.Duration)
		}()
	}

	var requests sync.WaitGroup
	if cfg.Mode == modeOpen {
		rng := rand.New(rand.NewPCG(cfg.Seed, 1))
		poisson := NewPoisson(cfg.Rate, rand.New(rand.NewPCG(cfg.Seed, 2)))
		RunOpenLoop(ctx, r.clk, start, end, poisson.Gap, func(seq uint64, at time.Time) {
			rec := r.newRecord(seq, rng, at, measureStart)
			jitterSeed := rng.Uint64()
			r.live.Arrival()
			if !r.inFlight.TryAcquire() {
				r.live.Dropped()
				rec.Outcome = outcomeDropped
				r.records.Add(rec)
				return
			}
			requests.Add(1)
			go func() {
				defer requests.Done()
				defer r.inFlight.Release()
				r.execute(reqCtx, rec, rand.New(rand.NewPCG(jitterSeed, seq)))
			}()
		})
	} else {
		// Each worker owns its generator; seeding by worker keeps runs reproducible.
		rngs := make([]*rand.Rand, cfg.Workers)
		for w := range rngs {
			rngs[w] = rand.New(rand.NewPCG(cfg.Seed, 1000+uint64(w)))
		}
		requests.Add(1)
		go func() {
			defer requests.Done()
			RunClosedLoop(ctx, r.clk, cfg.Workers, end, func(_ context.Context, worker int) {
				rec := r.newRecord(r.seq.Add(1)-1, rngs[worker], r.clk.Now(), measureStart)
				r.live.Arrival()
				r.inFlight.Acquire()
				defer r.inFlight.Release()
				r.execute(reqCtx, rec, rngs[worker])
			})
		}()
		// The workers stop starting requests at end; the drain below bounds their last ones.
		sleep(ctx, r.clk, end.Sub(r.clk.Now()))
	}
	stoppedAt := r.clk.Now()

	drained := make(chan struct{})
	go func() { requests.Wait(); close(drained) }()
	if !sleepUntilDone(reqCtx, r.clk, cfg.Drain, drained) {
		cancelReqs()
		<-drained
	}

	if scraper != nil && ctx.Err() == nil {
		// One last look at the queues after the load, if the server still answers.
		_ = scraper.ScrapeOnce(ctx)
	}
	stopBackground()
	bgDone.Wait()

	res := &Result{Config: cfg, Start: start, MeasureStart: measureStart, MeasureEnd: end,
		Records: r.records.Records(), MaxInFlight: r.inFlight.High()}
	if ctx.Err() != nil && stoppedAt.Before(end) {
		res.Interrupted = true
		// Keep the window non-empty so that rates stay finite after an early interrupt.
		res.MeasureEnd = stoppedAt
		if !stoppedAt.After(measureStart) {
			res.MeasureEnd = measureStart.Add(time.Millisecond)
		}
	}
	if scraper != nil {
		res.Scrapes, res.ScrapeFailed, res.Families = scraper.Results()
	}
	return res
}

func (r *Runner) newRecord(seq uint64, rng *rand.Rand, at, measureStart time.Time) *Record {
	return &Record{
		Seq:       seq,
		Endpoint:  r.cfg.Endpoints.Pick(rng),
		Priority:  r.cfg.Priorities.Pick(rng),
		Length:    r.cfg.Lengths.Pick(rng),
		Scheduled: at,
		Warmup:    at.Before(measureStart),
	}
}

func (r *Runner) execute(ctx context.Context, rec *Record, rng *rand.Rand) {
	body := r.corpus.Body(rec.Length, rec.Seq)
	attempts := 0
	do := func(ctx context.Context, token string) Attempt {
		a := r.target.Do(ctx, rec.Endpoint, rec.Priority, token, body)
		r.live.Attempt(a, attempts > 0)
		attempts++
		return a
	}
	Execute(ctx, r.clk, r.cfg.Retry, do, rec)
	r.records.Add(rec)
}

// sleepUntilDone waits for done, for at most d; it reports whether done came first.
func sleepUntilDone(ctx context.Context, clk clock.Clock, d time.Duration, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C():
		return false
	case <-ctx.Done():
		return false
	}
}
