package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// alternatingServer answers 200 and 503+Retry-After in strict turns, counted over every
// request it receives, and serves a small /metrics. It is a stand-in for a server under
// overload whose behaviour, unlike a real one's, fixes the expected counts exactly.
type alternatingServer struct {
	n          atomic.Int64
	retryAfter string
	mu         sync.Mutex
	priorities map[string]int
}

func (s *alternatingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, "# TYPE sluice_admission_queue_depth gauge\nsluice_admission_queue_depth{queue=\"analyze\"} 2\n")
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.priorities[r.Header.Get(priorityHeader)]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if s.n.Add(1)%2 == 0 {
		w.Header().Set("Retry-After", s.retryAfter)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"backpressure","message":"busy","details":{"reason":"saturated"},"request_id":"r"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"text":"x","entities":[],"model_name":"m","timestamp":"t","processing_time":0.001,"metadata":{}}`)
}

func testConfig(t *testing.T, url string, mode string) Config {
	t.Helper()
	all := func(flag, spec string, allowed []string) Mix {
		m, err := ParseMix(flag, spec, allowed)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return Config{
		URL: url, Mode: mode, Rate: 200, Workers: 1, MaxInFlight: 64,
		Duration: 300 * time.Millisecond, Drain: 10 * time.Second, Timeout: 5 * time.Second,
		ScrapeInterval: 50 * time.Millisecond,
		Endpoints:      all("mix", "analyze=1,pii=1", endpointNames),
		Priorities:     all("priority-mix", "interactive=1,bulk=1", priorityNames),
		Lengths:        all("lengths", "short=1,medium=1,long=1", lengthClasses),
		Retry:          mustRetryPolicy(false, 3, 1),
		Seed:           42,
	}
}

func TestClosedLoopWithRetryAgainstEveryOtherRefused(t *testing.T) {
	srv := &alternatingServer{retryAfter: "0", priorities: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cfg := testConfig(t, ts.URL, modeClosed)
	cfg.Retry.Enabled = true
	runner, err := NewRunner(cfg, clock.Real(), ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	res := runner.Run(context.Background(), &progress, false)
	s := res.Summary()

	// One worker in turn with the server: request 1 is served; every later one is refused,
	// retried after the client's backoff (Retry-After: 0 suggests nothing) and served by the
	// very next answer.
	n := s.Offered.Count
	if n < 2 {
		t.Fatalf("only %d requests in the run; the test needs at least 2", n)
	}
	if s.Served.Count != n || s.Outcomes[outcomeServed] != n || len(s.Outcomes) != 1 {
		t.Errorf("served %d of %d, outcomes %v; want all served", s.Served.Count, n, s.Outcomes)
	}
	if got := s.Refusals["503/backpressure/saturated"]; got != n-1 || len(s.Refusals) != 1 {
		t.Errorf("refusals %v, want %d of 503/backpressure/saturated", s.Refusals, n-1)
	}
	r := s.Retry
	if r.Retries != n-1 || r.Admitted != n-1 || r.AdmitRatio != 1 || r.AdmittedAtFirstRetryRatio != 1 ||
		r.RequestsRetried != n-1 || r.AdmittedAfterRefusal != n-1 || len(r.GaveUp) != 0 {
		t.Errorf("retry summary %+v, want %d retries all admitted at the first retry", r, n-1)
	}
	if s.Sent.FirstAttempts != n || s.Sent.Retries != n-1 || int(srv.n.Load()) != 2*n-1 {
		t.Errorf("sent %+v, server saw %d; want %d first attempts and %d retries", s.Sent, srv.n.Load(), n, n-1)
	}
	if len(s.Errors) != 0 || s.Dropped != 0 || s.MaxInFlight != 1 {
		t.Errorf("errors %v, dropped %d, max in flight %d; want none, 0, 1", s.Errors, s.Dropped, s.MaxInFlight)
	}
	if s.Scrapes.OK < 2 || len(s.Scrapes.Families) != 1 || s.Scrapes.Families[0] != famAdmissionDepth {
		t.Errorf("scrapes %+v, want at least the first and the last, with the queue depth family", s.Scrapes)
	}
	if !strings.Contains(progress.String(), "served") {
		t.Errorf("no final progress line: %q", progress.String())
	}

	var html bytes.Buffer
	if err := WriteHTML(&html, res, s); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	if got := strings.Count(page, "<svg"); got < 5 {
		t.Errorf("report has %d charts, want at least 5 drawn", got)
	}
	for _, banned := range []string{"<script", "src=", "href=", "<link"} {
		if strings.Contains(page, banned) {
			t.Errorf("report is not self-contained: it contains %q", banned)
		}
	}
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("summary does not encode: %v", err)
	}
	var records bytes.Buffer
	if err := WriteRecords(&records, res.Start, res.Records); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(records.String(), "\n"); lines != n {
		t.Errorf("%d record lines, want %d", lines, n)
	}
	// Nothing the harness writes may carry the text it sent.
	for _, out := range []string{page, string(js), records.String(), progress.String()} {
		for _, text := range append(append(slices.Clone(shortTexts), mediumTexts...), longParagraphs...) {
			if strings.Contains(out, text[:24]) {
				t.Fatalf("output contains request text %q...", text[:24])
			}
		}
	}
}

func TestOpenLoopOffersTheScheduleWhateverTheAnswers(t *testing.T) {
	srv := &alternatingServer{retryAfter: "1", priorities: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cfg := testConfig(t, ts.URL, modeOpen)
	runner, err := NewRunner(cfg, clock.Real(), ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	s := runner.Run(context.Background(), nil, false).Summary()

	// The arrivals are fixed by the seed, not by the server: count them from the same source.
	p := NewPoisson(cfg.Rate, rand.New(rand.NewPCG(cfg.Seed, 2)))
	want := 0
	for t := p.Gap(); t < cfg.Duration; t += p.Gap() {
		want++
	}
	if s.Offered.Count != want {
		t.Errorf("offered %d, want the schedule's %d", s.Offered.Count, want)
	}
	// Retry is off: each request is one attempt, and the server alternated over them.
	served, refused := s.Served.Count, s.Refusals["503/backpressure/saturated"]
	if s.Dropped != 0 || served+refused != want || served-refused < 0 || served-refused > 1 {
		t.Errorf("served %d, refused %d, dropped %d of %d; want an alternating split", served, refused, s.Dropped, want)
	}
	if s.Retry.Retries != 0 || s.Outcomes[outcomeRefused] != refused {
		t.Errorf("retries %d, outcomes %v; want no retries and every refusal final", s.Retry.Retries, s.Outcomes)
	}
	if s.ScheduleLag == nil || s.ScheduleLag.Count != want {
		t.Errorf("schedule lag %+v, want one sample per request", s.ScheduleLag)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.priorities["interactive"] == 0 || srv.priorities["bulk"] == 0 || len(srv.priorities) != 2 {
		t.Errorf("priorities seen by the server: %v", srv.priorities)
	}
}

func TestOpenLoopDropsAtTheCapInsteadOfWaiting(t *testing.T) {
	// The server holds every request until the client gives up, so no slot is ever freed.
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	cfg := testConfig(t, ts.URL, modeOpen)
	cfg.MaxInFlight = 3
	cfg.Drain = 0 // cancel the held requests as soon as the schedule ends
	runner, err := NewRunner(cfg, clock.Real(), ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	s := runner.Run(context.Background(), nil, false).Summary()
	if s.Offered.Count < 10 {
		t.Fatalf("only %d arrivals; the test needs more than the cap", s.Offered.Count)
	}
	if s.MaxInFlight != 3 || s.Sent.FirstAttempts != 3 || s.Dropped != s.Offered.Count-3 {
		t.Errorf("max in flight %d, sent %d, dropped %d of %d; want 3, 3 and the rest dropped",
			s.MaxInFlight, s.Sent.FirstAttempts, s.Dropped, s.Offered.Count)
	}
	if s.Outcomes[outcomeAbandoned] != 3 || s.Outcomes[outcomeDropped] != s.Dropped || s.Served.Count != 0 {
		t.Errorf("outcomes %v, want 3 abandoned at the drain deadline and the rest dropped", s.Outcomes)
	}
	if s.Scrapes.OK != 0 || s.Scrapes.Failed == 0 {
		t.Errorf("scrapes %+v, want every scrape failed (404) and the run unharmed", s.Scrapes)
	}
}

func TestParseFlagsBuildsAValidConfig(t *testing.T) {
	var stderr bytes.Buffer
	cfg, opts, err := parseFlags([]string{"-url", "http://h:1/", "-mode", "closed", "-workers", "4",
		"-retry", "-retry-budget", "0.5", "-json", "o.json", "-mix", "pii=1"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL != "http://h:1" || cfg.Workers != 4 || !cfg.Retry.Enabled || cfg.Retry.BudgetRatio != 0.5 || cfg.Retry.Rules == nil ||
		opts.jsonPath != "o.json" || cfg.Endpoints.String() != "pii=1" {
		t.Errorf("config %+v, options %+v", cfg, opts)
	}
	_, _, err = parseFlags([]string{"-mode", "open", "-rate", "0", "-mix", "generate=1", "-timeout", "0s"}, &stderr)
	for _, want := range []string{"-rate", "-mix", "-timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad flags: error %v should mention %s", err, want)
		}
	}
}
