package main

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.95, 95 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0.001, time.Millisecond}} {
		if got := Percentile(ds, c.q); got != c.want {
			t.Errorf("p%v = %v, want %v", c.q*100, got, c.want)
		}
	}
	if got := Percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("single sample p99 = %v", got)
	}
}

// at builds an attempt from offsets in milliseconds after epoch.
func at(startMS, endMS int, status int) Attempt {
	return Attempt{Start: epoch.Add(time.Duration(startMS) * time.Millisecond),
		End: epoch.Add(time.Duration(endMS) * time.Millisecond), Status: status}
}

func TestSummarizeCountsWindowRefusalsGoodputAndRetries(t *testing.T) {
	ms0 := func(n int) time.Time { return epoch.Add(time.Duration(n) * time.Millisecond) }
	refused := at(1000, 1010, http.StatusServiceUnavailable)
	refused.Code, refused.Reason, refused.RetryAfter, refused.HasRetryAfter = "backpressure", "saturated", time.Second, true
	refusedAgain := at(2110, 2120, http.StatusServiceUnavailable)
	refusedAgain.Code, refusedAgain.Reason, refusedAgain.RetryAfter, refusedAgain.HasRetryAfter = "backpressure", "max_wait", 2*time.Second, true
	records := []*Record{
		// Warmup: left out of everything.
		{Scheduled: ms0(-500), Warmup: true, Attempts: []Attempt{at(-500, -400, 200)}, Outcome: outcomeServed, Endpoint: "pii", Priority: "bulk", Length: "short"},
		// Served at once in 40 ms.
		{Scheduled: ms0(0), Attempts: []Attempt{at(0, 40, 200)}, Outcome: outcomeServed, Endpoint: "analyze", Priority: "interactive", Length: "short"},
		// Served in 80 ms but 200 ms after arrival (the generator ran late): outside a 150 ms goodput deadline.
		{Scheduled: ms0(100), Attempts: []Attempt{at(220, 300, 200)}, Outcome: outcomeServed, Endpoint: "analyze", Priority: "interactive", Length: "medium"},
		// Refused, retried after 1.1 s and admitted at the first retry.
		{Scheduled: ms0(1000), Attempts: []Attempt{refused, at(2110, 2130, 200)}, Outcome: outcomeServed,
			Retries:  []Retry{{Suggested: time.Second, Actual: 1100 * time.Millisecond, Admitted: true, SinceFirstRefusal: 1100 * time.Millisecond}},
			Endpoint: "pii", Priority: "bulk", Length: "long"},
		// Refused twice, then given up on by the budget.
		{Scheduled: ms0(1000), Attempts: []Attempt{refused, refusedAgain}, Outcome: outcomeRefused, GaveUp: gaveUpBudget,
			Retries:  []Retry{{Suggested: time.Second, Actual: 1100 * time.Millisecond, SinceFirstRefusal: 1100 * time.Millisecond}},
			Endpoint: "pii", Priority: "bulk", Length: "short"},
		// Timed out on the client, and a 504 from the server.
		{Scheduled: ms0(1500), Attempts: []Attempt{{Start: ms0(1500), End: ms0(1650), Err: errClientTimeout}}, Outcome: outcomeError, Endpoint: "analyze", Priority: "interactive", Length: "short"},
		{Scheduled: ms0(1600), Attempts: []Attempt{{Start: ms0(1600), End: ms0(1700), Status: 504, Code: "timeout"}}, Outcome: outcomeFailed, Endpoint: "analyze", Priority: "interactive", Length: "short"},
		// Dropped by the generator.
		{Scheduled: ms0(1900), Outcome: outcomeDropped, Endpoint: "analyze", Priority: "interactive", Length: "short"},
	}
	s := Summarize(records, Window{Start: epoch, End: epoch.Add(2 * time.Second), Timeout: 150 * time.Millisecond})

	if s.Offered.Count != 7 || s.Offered.RPS != 3.5 {
		t.Errorf("offered %+v, want 7 at 3.5/s", s.Offered)
	}
	if s.Sent.FirstAttempts != 6 || s.Sent.Retries != 2 || s.Dropped != 1 {
		t.Errorf("sent %+v dropped %d, want 6 first attempts, 2 retries, 1 dropped", s.Sent, s.Dropped)
	}
	if s.Served.Count != 3 || s.Served.RPS != 1.5 {
		t.Errorf("served %+v, want 3 at 1.5/s", s.Served)
	}
	// Goodput: the 40 ms one only; the retried one took 1130 ms from arrival.
	if s.Goodput.Count != 1 {
		t.Errorf("goodput %d, want 1", s.Goodput.Count)
	}
	if s.Latency.P50 != 40 || s.Latency.P99 != 80 || s.Latency.Count != 3 {
		t.Errorf("latency %+v, want p50 40 p99 80 over 3", s.Latency)
	}
	if s.EndToEnd.P99 != 1130 {
		t.Errorf("end-to-end p99 %v, want 1130", s.EndToEnd.P99)
	}
	wantRefusals := map[string]int{"503/backpressure/saturated": 2, "503/backpressure/max_wait": 1}
	if len(s.Refusals) != len(wantRefusals) {
		t.Errorf("refusals %v, want %v", s.Refusals, wantRefusals)
	}
	for k, v := range wantRefusals {
		if s.Refusals[k] != v {
			t.Errorf("refusals[%q] = %d, want %d", k, s.Refusals[k], v)
		}
	}
	if s.Errors[errClientTimeout] != 1 || s.Errors["504/timeout"] != 1 || len(s.Errors) != 2 {
		t.Errorf("errors %v, want one client_timeout and one 504/timeout", s.Errors)
	}
	// 3 refusals among 8 attempts.
	if s.RefusalRate != 0.375 {
		t.Errorf("refusal rate %v, want 0.375", s.RefusalRate)
	}
	r := s.Retry
	if r.Retries != 2 || r.Admitted != 1 || r.AdmitRatio != 0.5 || r.RequestsRetried != 2 || r.AdmittedAtFirstRetry != 1 {
		t.Errorf("retry %+v", r)
	}
	if r.MeanSuggestedDelayMS != 1000 || r.MeanActualDelayMS != 1100 || r.MeanTimeToAdmissionMS != 1100 ||
		r.MeanFirstSuggestedDelayMS != 1000 || math.Abs(float64(r.TimeToAdmissionOverSuggested)-1.1) > 1e-9 {
		t.Errorf("retry delays %+v", r)
	}
	if r.GaveUp[gaveUpBudget] != 1 {
		t.Errorf("gave up %v, want one budget", r.GaveUp)
	}
	if g := s.ByPriority["bulk"]; g.Offered != 2 || g.Served != 1 || g.RefusedAttempts != 3 {
		t.Errorf("bulk %+v, want 2 offered, 1 served, 3 refused attempts", g)
	}
	if g := s.ByEndpoint["analyze"]; g.Offered != 5 || g.Served != 2 || g.Goodput != 1 {
		t.Errorf("analyze %+v, want 5 offered, 2 served, 1 goodput", g)
	}
}

func TestSummaryOfNothingEncodesUnknownsAsNull(t *testing.T) {
	s := Summarize(nil, Window{Start: epoch, End: epoch.Add(time.Second), Timeout: time.Second})
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"p50":null`, `"admit_ratio":null`, `"refusal_rate":null`, `"offered":{"count":0,"rps":0}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("summary JSON lacks %s: %s", want, js)
		}
	}
}
