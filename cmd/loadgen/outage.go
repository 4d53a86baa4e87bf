package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/client"
)

// OutageConfig is seed 002's exercise D: a backend that fails FailShare of the requests it
// gets (503 without Retry-After, so the client backs off on its own), offered Rate requests a
// second (Poisson) for Duration through the Go client.
type OutageConfig struct {
	Rate      float64
	Duration  time.Duration
	FailShare float64
	Seed      uint64
}

// OutageRow is one client configuration's run.
type OutageRow struct {
	Name string
	// Offered is the requests started; Arrivals what the backend received, retries included.
	Offered, Arrivals int64
	Served            int64
	// Waits are the retries' waits (from a failed attempt's end to the retry), in
	// histogram bins of waitBin up to waitBins x waitBin.
	Waits [waitBins + 1]int64
}

const (
	waitBin  = 25 * time.Millisecond
	waitBins = 32
)

// LoadRatio is the backend's load over the offered load.
func (r OutageRow) LoadRatio() float64 { return float64(r.Arrivals) / float64(max(r.Offered, 1)) }

// RunOutage runs the four configurations one after another against one in-process backend:
// no retries; retries without a budget; retries within the default budget; and retries without
// a budget or jitter.
func RunOutage(ctx context.Context, cfg OutageConfig) ([]OutageRow, error) {
	if !(cfg.Rate > 0) || cfg.Duration <= 0 || !(cfg.FailShare >= 0 && cfg.FailShare <= 1) {
		return nil, errors.New("exercise outage: -rate and -duration must be > 0 and -fail-share in [0, 1]")
	}
	var arrivals atomic.Int64
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(cfg.Seed, 2))
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		mu.Lock()
		fail := rng.Float64() < cfg.FailShare
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"code":"backpressure","message":"failing"}}`)
			return
		}
		fmt.Fprint(w, `{"entities":[],"model_name":"outage"}`)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: backend, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	defer transport.CloseIdleConnections()
	unbudgeted := client.Budget{Ratio: 1000, Window: 10 * time.Second}
	var rows []OutageRow
	for _, c := range []struct {
		name string
		cfg  client.Config
	}{
		{"no retries", client.Config{MaxAttempts: 1}},
		{"retries, no budget", client.Config{Budget: unbudgeted}},
		{"retries, budget 10%", client.Config{}},
		{"retries, no budget, no jitter", client.Config{Budget: unbudgeted,
			Backoff: client.Backoff{Initial: client.DefaultBackoff.Initial, Multiplier: 2, Max: client.DefaultBackoff.Max, Floor: 1}}},
	} {
		row, err := runOutageOnce(ctx, cfg, "http://"+l.Addr().String(), transport, &arrivals, c.name, c.cfg)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func runOutageOnce(ctx context.Context, cfg OutageConfig, url string, transport http.RoundTripper, arrivals *atomic.Int64,
	name string, ccfg client.Config) (OutageRow, error) {
	row := OutageRow{Name: name}
	var waits [waitBins + 1]atomic.Int64
	ccfg.BaseURL, ccfg.HTTPClient = url, &http.Client{Transport: transport, Timeout: 10 * time.Second}
	ccfg.OnAttempt = func(a client.Attempt) {
		if a.Wait > 0 {
			waits[min(int(a.Wait/waitBin), waitBins)].Add(1)
		}
	}
	c, err := client.New(ccfg)
	if err != nil {
		return row, err
	}
	start := arrivals.Load()
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	var wg sync.WaitGroup
	var offered, served atomic.Int64
	end := time.Now().Add(cfg.Duration)
	for next := time.Now(); next.Before(end) && ctx.Err() == nil; {
		time.Sleep(time.Until(next)) // the arrival schedule itself, not a wait for state
		offered.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.ExtractPII(ctx, client.EntityRequest{Text: "outage"}); err == nil {
				served.Add(1)
			}
		}()
		next = next.Add(time.Duration(rng.ExpFloat64() / cfg.Rate * float64(time.Second)))
	}
	wg.Wait()
	row.Offered, row.Served, row.Arrivals = offered.Load(), served.Load(), arrivals.Load()-start
	for i := range waits {
		row.Waits[i] = waits[i].Load()
	}
	return row, nil
}

// WriteOutage prints the table and each configuration's histogram of retry waits.
func WriteOutage(w io.Writer, rows []OutageRow) {
	fmt.Fprintf(w, "%-32s %8s %9s %7s %8s\n", "client", "offered", "backend", "load", "served")
	for _, r := range rows {
		fmt.Fprintf(w, "%-32s %8d %9d %6.2fx %7.1f%%\n", r.Name, r.Offered, r.Arrivals, r.LoadRatio(),
			100*float64(r.Served)/float64(max(r.Offered, 1)))
	}
	for _, r := range rows {
		var total, peak int64
		for _, n := range r.Waits {
			total += n
			peak = max(peak, n)
		}
		if total == 0 {
			continue
		}
		fmt.Fprintf(w, "\nretry waits, %s (%d retries; bins of %v):\n", r.Name, total, waitBin)
		for i, n := range r.Waits {
			if n == 0 {
				continue
			}
			label := fmt.Sprintf("%4d-%4d ms", int(time.Duration(i)*waitBin/time.Millisecond), int(time.Duration(i+1)*waitBin/time.Millisecond))
			if i == waitBins {
				label = fmt.Sprintf(">= %6d ms", int(time.Duration(i)*waitBin/time.Millisecond))
			}
			fmt.Fprintf(w, "  %s %6d %s\n", label, n, strings.Repeat("#", int(1+49*n/peak)))
		}
	}
}
