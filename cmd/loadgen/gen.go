package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Generation mode: streams instead of entity requests. Each stream is POST /v1/completions
// with "stream": true, greedy, and vLLM's ignore_eos, so that every stream asks for exactly
// MaxTokens tokens and runs compare like for like. A share of the clients (Abandon) hangs up
// at half their tokens, as users who stop reading do; the server should stop computing for
// them within a step. Refused streams are not retried: generation is priced in tokens, and a
// retry of a refusal measures admission, which the entity mode does.

// GenConfig is a validated generation run.
type GenConfig struct {
	URL            string
	Mode           string
	Rate           float64
	Workers        int
	MaxInFlight    int
	Duration       time.Duration
	Warmup         time.Duration
	Drain          time.Duration
	Timeout        time.Duration // per stream, from sending to the last byte
	ScrapeInterval time.Duration
	Priorities     Mix
	MaxTokens      int
	Model          string  // the model named in each request: one the server serves
	Abandon        float64 // share of streams that hang up at half their tokens
	Seed           uint64
}

// Validate checks what one flag at a time cannot.
func (c GenConfig) Validate() error {
	var errs []error
	if c.MaxTokens < 2 || c.MaxTokens > 4096 {
		errs = append(errs, errors.New("-max-tokens must be between 2 and 4096"))
	}
	if !(c.Abandon >= 0 && c.Abandon <= 1) {
		errs = append(errs, errors.New("-abandon must be between 0 and 1"))
	}
	base := Config{URL: c.URL, Mode: c.Mode, Rate: c.Rate, Workers: c.Workers, MaxInFlight: c.MaxInFlight,
		Duration: c.Duration, Warmup: c.Warmup, Drain: c.Drain, Timeout: c.Timeout, ScrapeInterval: c.ScrapeInterval}
	errs = append(errs, base.Validate())
	return errors.Join(errs...)
}

// Stream outcomes.
const (
	streamServed    = "served"    // every token came, then [DONE]
	streamAbandoned = "abandoned" // the client hung up at half, by design
	streamRefused   = "refused"   // 429 or 503 before the stream started
	streamFailed    = "failed"    // another status, an error event, or a stream cut short
	streamError     = "error"     // no HTTP response
)

// StreamRecord is one stream as the client saw it.
type StreamRecord struct {
	Seq       uint64
	Priority  string
	Scheduled time.Time
	Start     time.Time
	First     time.Time // the first token's chunk; zero when none came
	End       time.Time
	Status    int
	Outcome   string
	Tokens    int             // token chunks received
	Gaps      []time.Duration // between consecutive token chunks
	Abandon   bool            // chose to hang up at half
	Warmup    bool
	Reason    string // refusal or failure kind
}

// genPrompts are short clinical openings; the prompt is not what is measured.
var genPrompts = []string{
	"The patient was started on", "She was admitted to", "Follow up with", "Assessment: likely",
	"He denies chest pain and", "Discharge medications include", "The wound was cleaned and",
	"Plan: continue", "Past medical history is notable for", "On examination the abdomen was",
}

// GenResult is what a generation run produced.
type GenResult struct {
	Config                          GenConfig
	Start, MeasureStart, MeasureEnd time.Time
	Records                         []*StreamRecord
	Scrapes                         []Scrape
	ScrapeFailed                    int
}

// RunGeneration drives the streams and returns what it saw.
func RunGeneration(ctx context.Context, cfg GenConfig, clk clock.Clock, client *http.Client) *GenResult {
	start := clk.Now()
	measureStart := start.Add(cfg.Warmup)
	end := measureStart.Add(cfg.Duration)
	reqCtx, cancelReqs := context.WithCancel(ctx)
	defer cancelReqs()
	bg, stopBackground := context.WithCancel(ctx)
	var bgDone sync.WaitGroup
	var scraper *Scraper
	if cfg.ScrapeInterval > 0 {
		scraper = NewScraper(cfg.URL+"/metrics", client, clk, cfg.ScrapeInterval)
		bgDone.Add(1)
		go func() { defer bgDone.Done(); scraper.Run(bg) }()
	}
	var (
		mu      sync.Mutex
		records []*StreamRecord
		streams sync.WaitGroup
	)
	add := func(r *StreamRecord) {
		mu.Lock()
		records = append(records, r)
		mu.Unlock()
	}
	newRecord := func(seq uint64, rng *rand.Rand, at time.Time) *StreamRecord {
		return &StreamRecord{Seq: seq, Priority: cfg.Priorities.Pick(rng), Scheduled: at,
			Abandon: rng.Float64() < cfg.Abandon, Warmup: at.Before(measureStart)}
	}
	if cfg.Mode == modeOpen {
		rng := rand.New(rand.NewPCG(cfg.Seed, 1))
		poisson := NewPoisson(cfg.Rate, rand.New(rand.NewPCG(cfg.Seed, 2)))
		inFlight := NewInFlight(cfg.MaxInFlight)
		RunOpenLoop(ctx, clk, start, end, poisson.Gap, func(seq uint64, at time.Time) {
			rec := newRecord(seq, rng, at)
			if !inFlight.TryAcquire() {
				rec.Outcome, rec.Start, rec.End = outcomeDropped, at, at
				add(rec)
				return
			}
			streams.Add(1)
			go func() {
				defer streams.Done()
				defer inFlight.Release()
				streamOnce(reqCtx, cfg, clk, client, rec)
				add(rec)
			}()
		})
	} else {
		var seq uint64
		var seqMu sync.Mutex
		rngs := make([]*rand.Rand, cfg.Workers)
		for w := range rngs {
			rngs[w] = rand.New(rand.NewPCG(cfg.Seed, 1000+uint64(w)))
		}
		streams.Add(1)
		go func() {
			defer streams.Done()
			RunClosedLoop(ctx, clk, cfg.Workers, end, func(_ context.Context, w int) {
				seqMu.Lock()
				n := seq
				seq++
				seqMu.Unlock()
				rec := newRecord(n, rngs[w], clk.Now())
				streamOnce(reqCtx, cfg, clk, client, rec)
				add(rec)
			})
		}()
		sleep(ctx, clk, end.Sub(clk.Now()))
	}
	drained := make(chan struct{})
	go func() { streams.Wait(); close(drained) }()
	if !sleepUntilDone(reqCtx, clk, cfg.Drain, drained) {
		cancelReqs()
		<-drained
	}
	if scraper != nil && ctx.Err() == nil {
		_ = scraper.ScrapeOnce(ctx)
	}
	stopBackground()
	bgDone.Wait()
	res := &GenResult{Config: cfg, Start: start, MeasureStart: measureStart, MeasureEnd: end, Records: records}
	if scraper != nil {
		res.Scrapes, res.ScrapeFailed, _ = scraper.Results()
	}
	return res
}

// streamOnce sends one stream and reads it, hanging up at half its tokens when the record
// says so.
func streamOnce(ctx context.Context, cfg GenConfig, clk clock.Clock, client *http.Client, rec *StreamRecord) {
	rec.Start = clk.Now()
	ctx, cancel := withClockTimeout(ctx, clk, cfg.Timeout)
	defer cancel(nil)
	body, _ := json.Marshal(map[string]any{"model": cfg.Model,
		"prompt": genPrompts[rec.Seq%uint64(len(genPrompts))], "max_tokens": cfg.MaxTokens,
		"temperature": 0, "ignore_eos": true, "stream": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		rec.End, rec.Outcome, rec.Reason = clk.Now(), streamError, errTransport
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(priorityHeader, rec.Priority)
	resp, err := client.Do(req)
	if err != nil {
		rec.End, rec.Outcome, rec.Reason = clk.Now(), streamError, errTransport
		return
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		code, reason := parseErrorEnvelope(raw)
		rec.End, rec.Reason = clk.Now(), strings.Trim(code+"/"+reason, "/")
		rec.Outcome = streamFailed
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			rec.Outcome = streamRefused
		}
		return
	}
	last := time.Time{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			rec.End, rec.Outcome = clk.Now(), streamServed
			return
		}
		if strings.Contains(data, `"error"`) {
			rec.End, rec.Outcome, rec.Reason = clk.Now(), streamFailed, "error_event"
			return
		}
		now := clk.Now()
		if rec.First.IsZero() {
			rec.First = now
		} else {
			rec.Gaps = append(rec.Gaps, now.Sub(last))
		}
		last = now
		rec.Tokens++
		if rec.Abandon && rec.Tokens >= cfg.MaxTokens/2 {
			rec.End, rec.Outcome = now, streamAbandoned
			return // the deferred Close hangs up mid-stream
		}
	}
	rec.End, rec.Outcome, rec.Reason = clk.Now(), streamFailed, "cut_short"
	if ctx.Err() != nil {
		rec.Reason = errClientTimeout
	}
}

// GenSummary is the JSON summary of a generation run.
type GenSummary struct {
	Mode       string         `json:"mode"`
	URL        string         `json:"url"`
	Workers    int            `json:"workers,omitempty"`
	TargetRate Number         `json:"target_rate,omitempty"`
	DurationS  Number         `json:"duration_s"`
	MaxTokens  int            `json:"max_tokens"`
	Abandon    Number         `json:"abandon"`
	Streams    int            `json:"streams"`
	Outcomes   map[string]int `json:"outcomes"`
	Refusals   map[string]int `json:"refusals"`
	// TokensPerSecond counts every token chunk received in the window; GoodTokensPerSecond
	// only those of streams served whole, and GoodStreamsPerSecond those streams.
	TokensPerSecond      Number  `json:"tokens_per_second"`
	GoodTokensPerSecond  Number  `json:"good_tokens_per_second"`
	GoodStreamsPerSecond Number  `json:"good_streams_per_second"`
	TimeToFirstToken     Latency `json:"time_to_first_token_ms"`
	// TimeToFirstTokenBy is the same by priority class (x-openmed-priority).
	TimeToFirstTokenBy map[string]Latency `json:"time_to_first_token_ms_by_priority"`
	InterToken         Latency            `json:"inter_token_ms"`
	StreamLatency      Latency            `json:"served_stream_ms"`
	// Server-side, from /metrics over the run: tokens generated, and tokens generated after
	// a client was seen to leave (waste).
	ServerTokens          Number `json:"server_tokens"`
	ServerTokensAfterGone Number `json:"server_tokens_after_disconnect"`
}

// Summary summarises the streams that started in the measurement window.
func (r *GenResult) Summary() GenSummary {
	c := r.Config
	s := GenSummary{Mode: c.Mode, URL: c.URL, MaxTokens: c.MaxTokens, Abandon: Number(c.Abandon),
		Outcomes: map[string]int{}, Refusals: map[string]int{}}
	if c.Mode == modeOpen {
		s.TargetRate = Number(c.Rate)
	} else {
		s.Workers = c.Workers
	}
	window := r.MeasureEnd.Sub(r.MeasureStart).Seconds()
	s.DurationS = Number(window)
	var ttft, gaps, whole []time.Duration
	byPriority := map[string][]time.Duration{}
	tokens, goodTokens, good := 0, 0, 0
	for _, rec := range r.Records {
		if rec.Warmup || !rec.Scheduled.Before(r.MeasureEnd) {
			continue
		}
		s.Streams++
		s.Outcomes[rec.Outcome]++
		if rec.Outcome == streamRefused {
			s.Refusals[fmt.Sprint(rec.Status)+"/"+rec.Reason]++
		}
		tokens += rec.Tokens
		if !rec.First.IsZero() {
			ttft = append(ttft, rec.First.Sub(rec.Start))
			byPriority[rec.Priority] = append(byPriority[rec.Priority], rec.First.Sub(rec.Start))
		}
		gaps = append(gaps, rec.Gaps...)
		if rec.Outcome == streamServed {
			good++
			goodTokens += rec.Tokens
			whole = append(whole, rec.End.Sub(rec.Start))
		}
	}
	s.TokensPerSecond = Number(float64(tokens) / window)
	s.GoodTokensPerSecond = Number(float64(goodTokens) / window)
	s.GoodStreamsPerSecond = Number(float64(good) / window)
	s.TimeToFirstToken = latencyOf(ttft)
	s.TimeToFirstTokenBy = map[string]Latency{}
	for p, d := range byPriority {
		s.TimeToFirstTokenBy[p] = latencyOf(d)
	}
	s.InterToken = latencyOf(gaps)
	s.StreamLatency = latencyOf(whole)
	s.ServerTokens = counterDelta(r.Scrapes, "sluice_generate_tokens_total")
	s.ServerTokensAfterGone = counterDelta(r.Scrapes, "sluice_generate_tokens_after_disconnect_total")
	return s
}

// counterDelta is how much a counter family (summed over its series) grew from the first
// scrape to the last; NaN without two scrapes.
func counterDelta(scrapes []Scrape, family string) Number {
	if len(scrapes) < 2 {
		return Number(math.NaN())
	}
	sum := func(sc Scrape) float64 {
		t := 0.0
		for _, smp := range sc.Samples {
			if smp.Name == family {
				t += smp.Value
			}
		}
		return t
	}
	return Number(sum(scrapes[len(scrapes)-1]) - sum(scrapes[0]))
}
