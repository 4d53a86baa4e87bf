package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Buckets holds per-second counts and latencies over the whole run, warmup included.
type Buckets struct {
	N        int
	Offered  []float64            // first attempts scheduled in the second
	Served   []float64            // 200s whose response ended in the second
	Refused  []float64            // refused attempts that ended in the second
	Errors   []float64            // other failed attempts that ended in the second
	P50, P99 []float64            // of attempts served in the second, ms; NaN when none
	ByReason map[string][]float64 // refused attempts by Attempt.Key
}

// BucketRecords sorts every attempt of records into one-second buckets from start; anything
// past n seconds lands in the last bucket's successor and is dropped.
func BucketRecords(records []*Record, start time.Time, n int) Buckets {
	b := Buckets{N: n, Offered: make([]float64, n), Served: make([]float64, n), Refused: make([]float64, n),
		Errors: make([]float64, n), P50: make([]float64, n), P99: make([]float64, n), ByReason: map[string][]float64{}}
	lat := make([][]time.Duration, n)
	at := func(t time.Time) int {
		i := int(t.Sub(start) / time.Second)
		if i < 0 || i >= n {
			return -1
		}
		return i
	}
	for _, r := range records {
		if i := at(r.Scheduled); i >= 0 {
			b.Offered[i]++
		}
		for _, a := range r.Attempts {
			i := at(a.End)
			if i < 0 {
				continue
			}
			switch {
			case a.Status == 200:
				b.Served[i]++
				lat[i] = append(lat[i], a.Latency())
			case a.Refused():
				b.Refused[i]++
				k := a.Key()
				if b.ByReason[k] == nil {
					b.ByReason[k] = make([]float64, n)
				}
				b.ByReason[k][i]++
			case a.Err != errCanceled:
				b.Errors[i]++
			}
		}
	}
	for i, l := range lat {
		b.P50[i], b.P99[i] = math.NaN(), math.NaN()
		if len(l) > 0 {
			slices.Sort(l)
			b.P50[i] = float64(ms(Percentile(l, 0.5)))
			b.P99[i] = float64(ms(Percentile(l, 0.99)))
		}
	}
	return b
}

// secondsAxis is 0.5, 1.5, ...: each bucket plotted at its middle.
func secondsAxis(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i) + 0.5
	}
	return xs
}

// metricSeries turns the scraped samples of the named families into one series per label set,
// in seconds since start. With rate set, counters become per-second increases between scrapes.
func metricSeries(scrapes []Scrape, start time.Time, rate bool, families ...string) []Series {
	want := map[string]bool{}
	for _, f := range families {
		want[f] = true
	}
	byKey := map[string]*Series{}
	prev := map[string][2]float64{} // key -> (t, value) of the previous scrape
	for _, sc := range scrapes {
		t := sc.At.Sub(start).Seconds()
		for _, s := range sc.Samples {
			if !want[s.Name] {
				continue
			}
			key := s.Name
			if s.Labels != "" {
				key += "{" + s.Labels + "}"
			}
			ser, ok := byKey[key]
			if !ok {
				ser = &Series{Name: key}
				byKey[key] = ser
			}
			v := s.Value
			if rate {
				p, seen := prev[key]
				prev[key] = [2]float64{t, s.Value}
				if !seen || t <= p[0] {
					continue
				}
				// A counter that went down was reset (server restart): no rate for that step.
				v = math.NaN()
				if s.Value >= p[1] {
					v = (s.Value - p[1]) / (t - p[0])
				}
			}
			ser.X = append(ser.X, t)
			ser.Y = append(ser.Y, v)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Series, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// retryAfterHistogram counts, per whole second, the Retry-After values the server sent and
// the observed times from first refusal to admission.
func retryAfterHistogram(records []*Record) ([]string, Series, Series) {
	var suggested, observed []int
	grow := func(h []int, secs int) []int {
		for len(h) <= secs {
			h = append(h, 0)
		}
		h[secs]++
		return h
	}
	const top = 60 // the server clamps Retry-After to [1, 60] s; longer waits share the last bin
	for _, r := range records {
		for _, a := range r.Attempts {
			if a.Refused() && a.HasRetryAfter {
				suggested = grow(suggested, min(int(a.RetryAfter/time.Second), top))
			}
		}
		for _, rt := range r.Retries {
			if rt.Admitted {
				observed = grow(observed, min(int(rt.SinceFirstRefusal/time.Second), top))
			}
		}
	}
	n := max(len(suggested), len(observed))
	cats := make([]string, n)
	s := Series{Name: "Retry-After sent (refused attempts)", Y: make([]float64, n)}
	o := Series{Name: "observed time from first refusal to admission", Y: make([]float64, n)}
	for i := range cats {
		cats[i] = strconv.Itoa(i)
		if i == top {
			cats[i] += "+"
		}
		if i < len(suggested) {
			s.Y[i] = float64(suggested[i])
		}
		if i < len(observed) {
			o.Y[i] = float64(observed[i])
		}
	}
	return cats, s, o
}

// Charts builds the report's charts from a result.
func Charts(res *Result) []template.HTML {
	last := res.MeasureEnd
	for _, r := range res.Records {
		if a, ok := r.Last(); ok && a.End.After(last) {
			last = a.End
		}
	}
	n := int(math.Ceil(last.Sub(res.Start).Seconds()))
	n = max(n, 1)
	b := BucketRecords(res.Records, res.Start, n)
	xs := secondsAxis(n)
	xmax := float64(n)
	shaded := [][2]float64{
		{0, res.MeasureStart.Sub(res.Start).Seconds()},
		{res.MeasureEnd.Sub(res.Start).Seconds(), xmax},
	}

	reasons := make([]string, 0, len(b.ByReason))
	for k := range b.ByReason {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	var refusals []Series
	for _, k := range reasons {
		refusals = append(refusals, Series{Name: k, X: xs, Y: b.ByReason[k]})
	}
	missing := func(fams string) string {
		if len(res.Scrapes) == 0 {
			return "no successful /metrics scrape"
		}
		return "none of " + fams + " in /metrics"
	}
	cats, sent, observed := retryAfterHistogram(res.Records)
	charts := []fmt.Stringer{
		LineChart{Title: "Throughput per second", YLabel: "requests/s", XMax: xmax, Shaded: shaded, Series: []Series{
			{Name: "offered (first attempts)", X: xs, Y: b.Offered, Color: "#1f77b4"},
			{Name: "served (200)", X: xs, Y: b.Served, Color: "#2ca02c"},
			{Name: "refused (429/503)", X: xs, Y: b.Refused, Color: "#d62728"},
			{Name: "errors", X: xs, Y: b.Errors, Color: "#ff7f0e"},
		}},
		LineChart{Title: "Latency of served attempts", YLabel: "ms", XMax: xmax, Shaded: shaded, Series: []Series{
			{Name: "p50", X: xs, Y: b.P50}, {Name: "p99", X: xs, Y: b.P99},
		}, Empty: "no request was served"},
		LineChart{Title: "Refusals per second by status/code/reason", YLabel: "attempts/s", XMax: xmax, Shaded: shaded,
			Series: refusals, Empty: "no refusals"},
		LineChart{Title: "Queue depth (scraped)", YLabel: "requests", XMax: xmax, Shaded: shaded,
			Series: metricSeries(res.Scrapes, res.Start, false, famAdmissionDepth, famBatcherDepth, famBatcherRunning),
			Empty:  missing("the queue depth families")},
		LineChart{Title: "Shedding state (scraped gauge, 1 = shedding)", YLabel: "state", XMax: xmax, Shaded: shaded,
			Series: metricSeries(res.Scrapes, res.Start, false, famAdmissionShedding), Empty: missing(famAdmissionShedding)},
		LineChart{Title: "Shed rate by queue and reason (scraped counters)", YLabel: "sheds/s", XMax: xmax, Shaded: shaded,
			Series: metricSeries(res.Scrapes, res.Start, true, famAdmissionShed),
			Empty:  missing(famAdmissionShed)},
		BarChart{Title: "Retry-After histogram (whole seconds)", XLabel: "seconds", YLabel: "count",
			Categories: cats, Series: []Series{sent, observed}, Empty: "no refusal carried Retry-After"},
	}
	out := make([]template.HTML, len(charts))
	for i, c := range charts {
		// svg.go escapes every label it writes, so the markup is safe to insert as is.
		out[i] = template.HTML(c.String())
	}
	return out
}

func (c LineChart) String() string { return c.HTML() }
func (c BarChart) String() string  { return c.HTML() }

// WriteHTML writes the self-contained report.
func WriteHTML(w io.Writer, res *Result, s Summary) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return reportTemplate.Execute(w, struct {
		S       Summary
		Charts  []template.HTML
		JSON    string
		Started string
	}{s, Charts(res), string(js), res.Start.UTC().Format(time.RFC3339)})
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice load report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f4f4f4;text-align:left}figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:12px;font-size:12px}
.legend span{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.empty{color:#888;font-style:italic}pre{background:#f8f8f8;padding:8px;overflow:auto;font-size:12px}
</style></head><body>
<h1>Sluice load report</h1>
<p>{{.S.Mode}} loop against {{.S.URL}}, started {{.Started}}, {{.S.DurationS}} s measured after {{.S.WarmupS}} s warmup
(the charts grey out the warmup and the drain after the end),
seed {{.S.Seed}}{{if .S.Interrupted}}, <b>interrupted</b>{{end}}.
Mix {{.S.Mix}}; priorities {{.S.PriorityMix}}; lengths {{.S.LengthMix}}.</p>
<table>
<tr><th>offered</th><td>{{.S.Offered.Count}}</td><td>{{.S.Offered.RPS}} req/s</td></tr>
<tr><th>served</th><td>{{.S.Served.Count}}</td><td>{{.S.Served.RPS}} req/s</td></tr>
<tr><th>goodput (served within {{.S.TimeoutMS}} ms of arrival)</th><td>{{.S.Goodput.Count}}</td><td>{{.S.Goodput.RPS}} req/s</td></tr>
<tr><th>latency of served, ms (p50 / p95 / p99)</th><td colspan="2">{{.S.Latency.P50}} / {{.S.Latency.P95}} / {{.S.Latency.P99}}</td></tr>
<tr><th>refusal rate (attempts)</th><td colspan="2">{{.S.RefusalRate}}</td></tr>
<tr><th>dropped by the generator</th><td colspan="2">{{.S.Dropped}}</td></tr>
<tr><th>retries / admitted / admit ratio</th><td colspan="2">{{.S.Retry.Retries}} / {{.S.Retry.Admitted}} / {{.S.Retry.AdmitRatio}}</td></tr>
<tr><th>mean Retry-After vs observed time to admission, ms</th><td colspan="2">{{.S.Retry.MeanFirstSuggestedDelayMS}} vs {{.S.Retry.MeanTimeToAdmissionMS}}</td></tr>
<tr><th>max in flight</th><td colspan="2">{{.S.MaxInFlight}}</td></tr>
</table>
{{range .Charts}}{{.}}
{{end}}
<h2>Summary</h2>
<pre>{{.JSON}}</pre>
</body></html>
`))
