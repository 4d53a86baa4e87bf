package main

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// Number is a float that encodes NaN and infinities as JSON null (a ratio with nothing to
// divide is unknown, not zero) and everything else rounded to three decimals.
type Number float64

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, math.Round(f*1000)/1000, 'f', -1, 64), nil
}

// String renders the number for the HTML report, "n/a" when unknown.
func (n Number) String() string {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}

// Rate is a count over the measurement window.
type Rate struct {
	Count int    `json:"count"`
	RPS   Number `json:"rps"`
}

// Latency is a distribution of durations in milliseconds.
type Latency struct {
	Count int    `json:"count"`
	Mean  Number `json:"mean"`
	P50   Number `json:"p50"`
	P95   Number `json:"p95"`
	P99   Number `json:"p99"`
	Max   Number `json:"max"`
}

// Sent counts what went on the wire.
type Sent struct {
	FirstAttempts int `json:"first_attempts"`
	Retries       int `json:"retries"`
}

// RetrySummary answers the question the harness exists for: when a client waits as long as
// Retry-After says, is it let in, and how long does admission really take?
type RetrySummary struct {
	Enabled    bool   `json:"enabled"`
	Budget     Number `json:"budget"`
	MaxRetries int    `json:"max_retries"`
	Retries    int    `json:"retries"`
	Admitted   int    `json:"admitted"`
	// AdmitRatio is admitted retries over all retries.
	AdmitRatio Number `json:"admit_ratio"`
	// RequestsRetried counts requests with at least one retry; AdmittedAtFirstRetry those
	// whose first retry was admitted.
	RequestsRetried           int    `json:"requests_retried"`
	AdmittedAtFirstRetry      int    `json:"admitted_at_first_retry"`
	AdmittedAtFirstRetryRatio Number `json:"admitted_at_first_retry_ratio"`
	MeanSuggestedDelayMS      Number `json:"mean_suggested_delay_ms"`
	MeanActualDelayMS         Number `json:"mean_actual_delay_ms"`
	// For requests admitted after at least one refusal: how many; and for those whose first
	// refusal carried a Retry-After, its mean, the mean observed time from that refusal to
	// admission, and the second over the first (1 means the suggestion was exactly right;
	// above 1, it was too optimistic).
	AdmittedAfterRefusal         int    `json:"admitted_after_refusal"`
	MeanFirstSuggestedDelayMS    Number `json:"mean_first_suggested_delay_ms"`
	MeanTimeToAdmissionMS        Number `json:"mean_time_to_admission_ms"`
	TimeToAdmissionOverSuggested Number `json:"time_to_admission_over_suggested"`
	// GaveUp counts requests left refused, by why they were not retried further.
	GaveUp map[string]int `json:"gave_up"`
}

// GroupSummary is the per-endpoint, per-priority or per-length view.
type GroupSummary struct {
	Offered         int    `json:"offered"`
	Served          int    `json:"served"`
	Goodput         int    `json:"goodput"`
	RefusedAttempts int    `json:"refused_attempts"`
	P50MS           Number `json:"p50_ms"`
	P99MS           Number `json:"p99_ms"`
}

// ScrapeSummary says how the /metrics scraping went.
type ScrapeSummary struct {
	OK       int      `json:"ok"`
	Failed   int      `json:"failed"`
	Families []string `json:"families"`
}

// Summary is the JSON result of a run. Every count and rate covers requests that arrived in the
// measurement window (after warmup), whenever they finished.
type Summary struct {
	Mode        string  `json:"mode"`
	URL         string  `json:"url"`
	Seed        uint64  `json:"seed"`
	DurationS   Number  `json:"duration_s"`
	WarmupS     Number  `json:"warmup_s"`
	TargetRate  Number  `json:"target_rate,omitempty"`
	Workers     int     `json:"workers,omitempty"`
	TimeoutMS   Number  `json:"timeout_ms"`
	Mix         string  `json:"mix"`
	PriorityMix string  `json:"priority_mix"`
	LengthMix   string  `json:"length_mix"`
	Interrupted bool    `json:"interrupted"`
	Offered     Rate    `json:"offered"`
	Sent        Sent    `json:"sent"`
	Dropped     int     `json:"dropped_by_generator"`
	Served      Rate    `json:"served"`
	Goodput     Rate    `json:"goodput"`
	Latency     Latency `json:"latency_ms"`
	EndToEnd    Latency `json:"end_to_end_latency_ms"`
	// Refusals and Errors count attempts by "status/code/reason" or by failure kind.
	Refusals    map[string]int `json:"refusals"`
	RefusalRate Number         `json:"refusal_rate"`
	Errors      map[string]int `json:"errors"`
	// Outcomes counts requests by how they ended.
	Outcomes    map[string]int          `json:"outcomes"`
	Retry       RetrySummary            `json:"retry"`
	MaxInFlight int64                   `json:"max_in_flight"`
	ScheduleLag *Latency                `json:"schedule_lag_ms,omitempty"`
	ByEndpoint  map[string]GroupSummary `json:"by_endpoint"`
	ByPriority  map[string]GroupSummary `json:"by_priority"`
	ByLength    map[string]GroupSummary `json:"by_length"`
	Scrapes     ScrapeSummary           `json:"scrapes"`
}

// Window is the measurement window and what the summary needs to know about the run.
type Window struct {
	Start, End time.Time
	// Timeout is the goodput deadline: a request counts as goodput if it was served within
	// Timeout of its arrival, retries included.
	Timeout time.Duration
}

// Summarize computes the summary of records over w. Records marked Warmup are left out. The
// caller fills in the run description, retry policy and scrape fields.
func Summarize(records []*Record, w Window) Summary {
	s := Summary{
		Refusals: map[string]int{},
		Errors:   map[string]int{},
		Outcomes: map[string]int{},
		Retry:    RetrySummary{GaveUp: map[string]int{}},
	}
	secs := w.End.Sub(w.Start).Seconds()
	var served, e2e []time.Duration
	var attempts, refused int
	var suggested, actual, firstSuggested, toAdmission []time.Duration
	groups := map[string]map[string]*groupAcc{"endpoint": {}, "priority": {}, "length": {}}
	for _, r := range records {
		if r.Warmup {
			continue
		}
		s.Offered.Count++
		s.Outcomes[r.Outcome]++
		if r.GaveUp != "" {
			s.Retry.GaveUp[r.GaveUp]++
		}
		accs := []*groupAcc{
			groupFor(groups["endpoint"], r.Endpoint),
			groupFor(groups["priority"], r.Priority),
			groupFor(groups["length"], r.Length),
		}
		for _, g := range accs {
			g.offered++
		}
		if r.Outcome == outcomeDropped {
			s.Dropped++
			continue
		}
		s.Sent.FirstAttempts++
		s.Sent.Retries += len(r.Retries)
		for _, a := range r.Attempts {
			attempts++
			switch {
			case a.Refused():
				refused++
				s.Refusals[a.Key()]++
				for _, g := range accs {
					g.refused++
				}
			case a.Status == 0 && a.Err != errCanceled, a.Status >= 400:
				s.Errors[a.Key()]++
			}
		}
		if last, _ := r.Last(); r.Outcome == outcomeServed {
			served = append(served, last.Latency())
			e2e = append(e2e, r.EndToEnd())
			good := r.EndToEnd() <= w.Timeout
			if good {
				s.Goodput.Count++
			}
			for _, g := range accs {
				g.served = append(g.served, last.Latency())
				if good {
					g.goodput++
				}
			}
		}
		summarizeRetries(r, &s.Retry, &suggested, &actual, &firstSuggested, &toAdmission)
	}
	s.Served.Count = len(served)
	s.Offered.RPS = Number(float64(s.Offered.Count) / secs)
	s.Served.RPS = Number(float64(s.Served.Count) / secs)
	s.Goodput.RPS = Number(float64(s.Goodput.Count) / secs)
	s.Latency = latencyOf(served)
	s.EndToEnd = latencyOf(e2e)
	s.RefusalRate = ratio(refused, attempts)
	s.Retry.AdmitRatio = ratio(s.Retry.Admitted, s.Retry.Retries)
	s.Retry.AdmittedAtFirstRetryRatio = ratio(s.Retry.AdmittedAtFirstRetry, s.Retry.RequestsRetried)
	s.Retry.MeanSuggestedDelayMS = meanMS(suggested)
	s.Retry.MeanActualDelayMS = meanMS(actual)
	s.Retry.MeanFirstSuggestedDelayMS = meanMS(firstSuggested)
	s.Retry.MeanTimeToAdmissionMS = meanMS(toAdmission)
	s.Retry.TimeToAdmissionOverSuggested = s.Retry.MeanTimeToAdmissionMS / s.Retry.MeanFirstSuggestedDelayMS
	s.ByEndpoint = finishGroups(groups["endpoint"])
	s.ByPriority = finishGroups(groups["priority"])
	s.ByLength = finishGroups(groups["length"])
	return s
}

// summarizeRetries adds one request's retries to the retry summary and its samples.
func summarizeRetries(r *Record, rs *RetrySummary, suggested, actual, firstSuggested, toAdmission *[]time.Duration) {
	if len(r.Retries) == 0 {
		return
	}
	rs.RequestsRetried++
	if r.Retries[0].Admitted {
		rs.AdmittedAtFirstRetry++
	}
	// Suggested delays are the server's: a retry after the client's own backoff (no
	// Retry-After) has none, and leaves them out.
	for _, rt := range r.Retries {
		rs.Retries++
		if rt.Suggested > 0 {
			*suggested = append(*suggested, rt.Suggested)
			*actual = append(*actual, rt.Actual)
		}
		if rt.Admitted {
			rs.Admitted++
			rs.AdmittedAfterRefusal++
			if r.Retries[0].Suggested > 0 {
				*firstSuggested = append(*firstSuggested, r.Retries[0].Suggested)
				*toAdmission = append(*toAdmission, rt.SinceFirstRefusal)
			}
		}
	}
}

type groupAcc struct {
	offered, goodput, refused int
	served                    []time.Duration
}

func groupFor(m map[string]*groupAcc, key string) *groupAcc {
	g, ok := m[key]
	if !ok {
		g = &groupAcc{}
		m[key] = g
	}
	return g
}

func finishGroups(m map[string]*groupAcc) map[string]GroupSummary {
	out := make(map[string]GroupSummary, len(m))
	for k, g := range m {
		l := latencyOf(g.served)
		out[k] = GroupSummary{Offered: g.offered, Served: len(g.served), Goodput: g.goodput,
			RefusedAttempts: g.refused, P50MS: l.P50, P99MS: l.P99}
	}
	return out
}

// latencyOf summarises durations; an empty set gives nulls.
func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		nan := Number(math.NaN())
		return Latency{Mean: nan, P50: nan, P95: nan, P99: nan, Max: nan}
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return Latency{
		Count: len(sorted),
		Mean:  meanMS(sorted),
		P50:   ms(Percentile(sorted, 0.50)),
		P95:   ms(Percentile(sorted, 0.95)),
		P99:   ms(Percentile(sorted, 0.99)),
		Max:   ms(sorted[len(sorted)-1]),
	}
}

// Percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted durations: the
// smallest value with at least q of the sample at or below it. It is a value that was
// actually observed, never an interpolation. sorted must be non-empty and ascending.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func meanMS(ds []time.Duration) Number {
	if len(ds) == 0 {
		return Number(math.NaN())
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return ms(sum / time.Duration(len(ds)))
}

func ms(d time.Duration) Number { return Number(float64(d) / float64(time.Millisecond)) }

func ratio(num, den int) Number {
	if den == 0 {
		return Number(math.NaN())
	}
	return Number(float64(num) / float64(den))
}
