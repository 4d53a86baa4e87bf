package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
		}
		os.Exit(2)
	}
}

// options are the flags that are not part of Config.
type options struct {
	jsonPath, htmlPath, recordsPath string
	quiet                           bool
	// generate switches to generation mode (streams); gen is its configuration.
	generate bool
	gen      GenConfig
	// exercise names an in-process exercise to run instead (outage); failShare is its
	// backend's failure rate.
	exercise  string
	failShare float64
}

// parseFlags turns the command line into a validated Config.
func parseFlags(args []string, stderr io.Writer) (Config, options, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		c                    Config
		o                    options
		mix, prioMix, lenMix string
		retry                bool
		budget               float64
		maxRetries           int
		seed                 uint64
	)
	fs.StringVar(&c.URL, "url", "http://localhost:8080", "server base URL (scheme://host:port)")
	fs.StringVar(&c.Mode, "mode", modeOpen, "open (Poisson arrivals at -rate) or closed (-workers back to back)")
	fs.Float64Var(&c.Rate, "rate", 50, "open loop: mean arrivals per second")
	fs.IntVar(&c.Workers, "workers", 8, "closed loop: concurrent clients")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", 1024, "open loop: in-flight cap; arrivals beyond it are dropped by the generator and reported")
	fs.DurationVar(&c.Duration, "duration", 30*time.Second, "measured run time, after warmup")
	fs.DurationVar(&c.Warmup, "warmup", 5*time.Second, "load before measuring; plotted, left out of the summary")
	fs.DurationVar(&c.Drain, "drain", 30*time.Second, "how long in-flight requests and their retries may run past the end")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "per-attempt timeout; also the goodput deadline from arrival to served")
	fs.DurationVar(&c.ScrapeInterval, "scrape-interval", time.Second, "how often to read /metrics (0: never)")
	fs.StringVar(&mix, "mix", "analyze=0.5,pii=0.5", "endpoint weights: analyze, pii")
	fs.StringVar(&prioMix, "priority-mix", "interactive=0.8,bulk=0.2", "x-openmed-priority weights: interactive, bulk")
	fs.StringVar(&lenMix, "lengths", "short=0.6,medium=0.3,long=0.1", "text length weights: short (~20 tokens), medium (~120), long (~600)")
	fs.BoolVar(&retry, "retry", false, "retry 429/503 refusals after their Retry-After")
	fs.Float64Var(&budget, "retry-budget", 0.2, "retries allowed per request started, over a 10 s window (the Go client's budget)")
	fs.IntVar(&maxRetries, "max-retries", 3, "retries per request at most")
	fs.StringVar(&o.jsonPath, "json", "", "write the JSON summary here (default: stdout)")
	fs.StringVar(&o.htmlPath, "html", "", "write the HTML report here")
	fs.StringVar(&o.recordsPath, "records", "", "write every request, its attempts and retries here, one JSON line each")
	fs.Uint64Var(&seed, "seed", 1, "random seed for arrivals, mixes and jitter")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.StringVar(&c.APIKey, "api-key", "", "send this API key (X-API-Key): the run is its tenant's")
	fs.StringVar(&o.exercise, "exercise", "", "outage: seed 002's exercise D, in process against a backend failing -fail-share of requests, through the Go client (client/), instead of a run against -url")
	fs.Float64Var(&o.failShare, "fail-share", 0.3, "exercise outage: the share of requests the backend fails")
	fs.BoolVar(&o.generate, "generate", false, "generation mode: streams of /v1/completions instead of entity requests")
	fs.IntVar(&o.gen.MaxTokens, "max-tokens", 64, "generation: tokens per stream (greedy, ignore_eos)")
	fs.StringVar(&o.gen.Model, "model", "tiny-lm", "generation: the model each request names (GET /v1/models lists them)")
	fs.Float64Var(&o.gen.Abandon, "abandon", 0, "generation: share of clients that hang up at half their tokens")
	if err := fs.Parse(args); err != nil {
		return Config{}, options{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, options{}, fmt.Errorf("unexpected arguments: %d extra", fs.NArg())
	}
	c.URL = strings.TrimRight(c.URL, "/")
	c.Seed = seed
	var errs []error
	var err error
	if c.Endpoints, err = ParseMix("mix", mix, endpointNames); err != nil {
		errs = append(errs, err)
	}
	if c.Priorities, err = ParseMix("priority-mix", prioMix, priorityNames); err != nil {
		errs = append(errs, err)
	}
	if c.Lengths, err = ParseMix("lengths", lenMix, lengthClasses); err != nil {
		errs = append(errs, err)
	}
	if maxRetries < 0 {
		errs = append(errs, errors.New("-max-retries must be >= 0"))
	} else if c.Retry, err = NewRetryPolicy(retry, maxRetries, budget, clock.Real()); err != nil && retry {
		errs = append(errs, fmt.Errorf("-max-retries, -retry-budget: %w", err))
	}
	if o.generate {
		g := &o.gen
		g.URL, g.Mode, g.Rate, g.Workers, g.MaxInFlight = c.URL, c.Mode, c.Rate, c.Workers, c.MaxInFlight
		g.Duration, g.Warmup, g.Drain, g.Timeout, g.ScrapeInterval = c.Duration, c.Warmup, c.Drain, c.Timeout, c.ScrapeInterval
		g.Priorities, g.Seed = c.Priorities, c.Seed
		if err := g.Validate(); err != nil {
			errs = append(errs, err)
		}
	} else if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	return c, o, errors.Join(errs...)
}

func run(args []string, stdout, stderr io.Writer) error {
	cfg, opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	// The default transport keeps two idle connections per host, which would make every
	// request past the second open a new connection and measure TCP set-up, not the server.
	conns := max(cfg.MaxInFlight, cfg.Workers) + 4
	transport := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.exercise != "" {
		if opts.exercise != "outage" {
			return fmt.Errorf("-exercise: unknown %q (want outage)", opts.exercise)
		}
		rows, err := RunOutage(ctx, OutageConfig{Rate: cfg.Rate, Duration: cfg.Duration, FailShare: opts.failShare, Seed: cfg.Seed})
		if err != nil {
			return err
		}
		WriteOutage(stdout, rows)
		return nil
	}
	if opts.generate {
		res := RunGeneration(ctx, opts.gen, clock.Real(), client)
		summary := res.Summary()
		return writeOutputs(stdout, opts, summary, func(w io.Writer) error { return WriteGenHTML(w, res, summary) })
	}
	runner, err := NewRunner(cfg, clock.Real(), client)
	if err != nil {
		return err
	}
	var progress io.Writer
	if !opts.quiet {
		progress = stderr
	}
	res := runner.Run(ctx, progress, isTerminal(stderr))
	summary := res.Summary()
	if err := writeOutputs(stdout, opts, summary, func(w io.Writer) error { return WriteHTML(w, res, summary) }); err != nil {
		return err
	}
	if opts.recordsPath != "" {
		if err := writeFile(opts.recordsPath, func(w io.Writer) error { return WriteRecords(w, res.Start, res.Records) }); err != nil {
			return err
		}
	}
	return nil
}

// writeOutputs writes the JSON summary (to -json, or stdout) and the HTML report (to -html).
func writeOutputs(stdout io.Writer, opts options, summary any, html func(io.Writer) error) error {
	js, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if opts.jsonPath == "" {
		if _, err := stdout.Write(js); err != nil {
			return err
		}
	} else if err := os.WriteFile(opts.jsonPath, js, 0o644); err != nil {
		return err
	}
	if opts.htmlPath != "" {
		return writeFile(opts.htmlPath, html)
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isTerminal reports whether w is a character device, so that the progress line can be
// rewritten in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
