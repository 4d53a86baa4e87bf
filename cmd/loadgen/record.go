package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Outcomes of a logical request (its first attempt and any retries).
const (
	outcomeServed    = "served"    // the last attempt returned 200
	outcomeRefused   = "refused"   // the last attempt was a 429 or 503
	outcomeFailed    = "failed"    // the last attempt got another HTTP status
	outcomeError     = "error"     // the last attempt got no HTTP response
	outcomeDropped   = "dropped"   // the generator's in-flight cap was reached; never sent
	outcomeAbandoned = "abandoned" // the run's drain deadline ended it mid-attempt or mid-wait
)

// Reasons the retry loop stopped with the request still refused.
const (
	gaveUpBudget       = "budget"
	gaveUpMaxRetries   = "max_retries"
	gaveUpRetryAfter   = "retry_after_too_long" // past the client's MaxRetryAfter
	gaveUpNotRetryable = "not_retryable"        // a refusal no wait can help (too_large)
	gaveUpRunEnded     = "run_ended"
)

// Attempt is one HTTP exchange.
type Attempt struct {
	Start time.Time
	End   time.Time // after the whole response body was read
	// Status is the HTTP status, 0 when no response came back (see Err).
	Status int
	// Code and Reason come from the error envelope: error.code and error.details.reason.
	Code   string
	Reason string
	// RetryAfter is the server's suggested delay; HasRetryAfter says whether it sent one.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// RetryToken is the server's retry reservation for this refusal (X-Sluice-Retry-Token),
	// sent back unchanged with the retry; "" when there was none.
	RetryToken string
	// Err names what went wrong without a response: errClientTimeout, errTransport, errCanceled.
	Err string
}

// Refused reports whether the server turned the attempt away before doing the work.
func (a Attempt) Refused() bool {
	return a.Status == http.StatusServiceUnavailable || a.Status == http.StatusTooManyRequests
}

// Admitted reports whether the server took the attempt in: any HTTP answer that is not a
// refusal, a 504 after queueing included. An attempt without a response is not known to be.
func (a Attempt) Admitted() bool { return a.Status != 0 && !a.Refused() }

// Latency is the attempt's duration as the client saw it.
func (a Attempt) Latency() time.Duration { return a.End.Sub(a.Start) }

// Key names the attempt's kind for refusal and error tables: "503/backpressure/saturated",
// "429/rate_limited", "client_timeout".
func (a Attempt) Key() string {
	if a.Status == 0 {
		return a.Err
	}
	k := strconv.Itoa(a.Status)
	if a.Code != "" {
		k += "/" + a.Code
	}
	if a.Reason != "" {
		k += "/" + a.Reason
	}
	return k
}

// Retry is what happened to one retry of a refused attempt.
type Retry struct {
	// Suggested is the Retry-After of the refusal being retried (0: it sent none); Jitter is
	// what the wait added to it (the client's backoff where there was none).
	Suggested time.Duration
	Jitter    time.Duration
	// Actual is the time from the refusal's response to the retry being sent.
	Actual time.Duration
	// Admitted says whether the retry got past admission.
	Admitted bool
	// SinceFirstRefusal is the time from the request's first refusal to this retry being sent;
	// for the admitted retry it is the request's time to admission.
	SinceFirstRefusal time.Duration
}

// Record is one logical request: what was sent, every attempt, every retry and the outcome.
type Record struct {
	Seq      uint64
	Endpoint string
	Priority string
	Length   string
	// Scheduled is the arrival time on the open-loop schedule, or the first attempt's start in
	// the closed loop. End-to-end latency counts from here, so that a generator that falls
	// behind its schedule cannot hide the delay.
	Scheduled time.Time
	// Warmup marks requests that arrived before the measurement window.
	Warmup   bool
	Attempts []Attempt
	Retries  []Retry
	Outcome  string
	// GaveUp says why a refused request was not retried further; empty when retry is off or
	// the request was not refused in the end.
	GaveUp string
}

// Last returns the final attempt; ok is false for a dropped request.
func (r *Record) Last() (Attempt, bool) {
	if len(r.Attempts) == 0 {
		return Attempt{}, false
	}
	return r.Attempts[len(r.Attempts)-1], true
}

// EndToEnd is the time from arrival to the final response.
func (r *Record) EndToEnd() time.Duration {
	last, ok := r.Last()
	if !ok {
		return 0
	}
	return last.End.Sub(r.Scheduled)
}

// Collector gathers finished records from many goroutines.
type Collector struct {
	mu      sync.Mutex
	records []*Record
}

// Add stores a finished record.
func (c *Collector) Add(r *Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r)
}

// Records returns the records gathered so far.
func (c *Collector) Records() []*Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Record(nil), c.records...)
}

// recordJSON is the -records line format: times in milliseconds since the run began, sizes
// and classes only, never the text that was sent.
type recordJSON struct {
	Seq         uint64        `json:"seq"`
	Endpoint    string        `json:"endpoint"`
	Priority    string        `json:"priority"`
	Length      string        `json:"length"`
	ScheduledMS Number        `json:"scheduled_ms"`
	Warmup      bool          `json:"warmup"`
	Outcome     string        `json:"outcome"`
	GaveUp      string        `json:"gave_up,omitempty"`
	Attempts    []attemptJSON `json:"attempts"`
	Retries     []retryJSON   `json:"retries,omitempty"`
}

type attemptJSON struct {
	StartMS      Number  `json:"start_ms"`
	EndMS        Number  `json:"end_ms"`
	Status       int     `json:"status,omitempty"`
	Code         string  `json:"code,omitempty"`
	Reason       string  `json:"reason,omitempty"`
	RetryAfterMS *Number `json:"retry_after_ms,omitempty"`
	Err          string  `json:"err,omitempty"`
}

type retryJSON struct {
	SuggestedMS         Number `json:"suggested_ms"`
	JitterMS            Number `json:"jitter_ms"`
	ActualMS            Number `json:"actual_ms"`
	Admitted            bool   `json:"admitted"`
	SinceFirstRefusalMS Number `json:"since_first_refusal_ms"`
}

// WriteRecords writes one JSON line per request, in arrival order, for analysis beyond the
// summary.
func WriteRecords(w io.Writer, start time.Time, records []*Record) error {
	sorted := slices.Clone(records)
	slices.SortFunc(sorted, func(a, b *Record) int { return cmp.Compare(a.Seq, b.Seq) })
	since := func(t time.Time) Number { return ms(t.Sub(start)) }
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, r := range sorted {
		line := recordJSON{Seq: r.Seq, Endpoint: r.Endpoint, Priority: r.Priority, Length: r.Length,
			ScheduledMS: since(r.Scheduled), Warmup: r.Warmup, Outcome: r.Outcome, GaveUp: r.GaveUp,
			Attempts: []attemptJSON{}}
		for _, a := range r.Attempts {
			aj := attemptJSON{StartMS: since(a.Start), EndMS: since(a.End), Status: a.Status,
				Code: a.Code, Reason: a.Reason, Err: a.Err}
			if a.HasRetryAfter {
				ra := ms(a.RetryAfter)
				aj.RetryAfterMS = &ra
			}
			line.Attempts = append(line.Attempts, aj)
		}
		for _, rt := range r.Retries {
			line.Retries = append(line.Retries, retryJSON{SuggestedMS: ms(rt.Suggested), JitterMS: ms(rt.Jitter),
				ActualMS: ms(rt.Actual), Admitted: rt.Admitted, SinceFirstRefusalMS: ms(rt.SinceFirstRefusal)})
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
