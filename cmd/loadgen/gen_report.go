package main

import (
	"encoding/json"
	"html/template"
	"io"
	"time"
)

// genCharts are the generation report's plots: tokens received per second (all, and of
// streams served whole), and streams ending per second by outcome.
func genCharts(res *GenResult) []template.HTML {
	n := int(res.Config.Warmup.Seconds()+res.Config.Duration.Seconds()+res.Config.Drain.Seconds()) + 1
	xs := secondsAxis(n)
	all := make([]float64, n)
	good := make([]float64, n)
	outcomes := map[string][]float64{}
	for _, rec := range res.Records {
		if rec.First.IsZero() && rec.End.IsZero() {
			continue
		}
		// A stream's tokens are spread over its life, first token to end.
		if rec.Tokens > 0 {
			span := rec.End.Sub(rec.First)
			for i := range rec.Tokens {
				at := rec.First.Add(time.Duration(float64(span) * float64(i) / float64(rec.Tokens)))
				if b := int(at.Sub(res.Start).Seconds()); b >= 0 && b < n {
					all[b]++
					if rec.Outcome == streamServed {
						good[b]++
					}
				}
			}
		}
		if b := int(rec.End.Sub(res.Start).Seconds()); b >= 0 && b < n {
			if outcomes[rec.Outcome] == nil {
				outcomes[rec.Outcome] = make([]float64, n)
			}
			outcomes[rec.Outcome][b]++
		}
	}
	var ends []Series
	for _, o := range []string{streamServed, streamAbandoned, streamRefused, streamFailed, streamError, outcomeDropped} {
		if ys, ok := outcomes[o]; ok {
			ends = append(ends, Series{Name: o, X: xs, Y: ys})
		}
	}
	shaded := [][2]float64{{0, res.Config.Warmup.Seconds()}, {res.MeasureEnd.Sub(res.Start).Seconds(), float64(n)}}
	charts := []interface{ String() string }{
		LineChart{Title: "Tokens received per second", YLabel: "tokens/s", XMax: float64(n), Shaded: shaded,
			Series: []Series{{Name: "all", X: xs, Y: all}, {Name: "streams served whole", X: xs, Y: good}}, Empty: "no token received"},
		LineChart{Title: "Streams ending per second, by outcome", YLabel: "streams/s", XMax: float64(n), Shaded: shaded,
			Series: ends, Empty: "no stream ended"},
	}
	out := make([]template.HTML, len(charts))
	for i, c := range charts {
		out[i] = template.HTML(c.String()) // svg.go escapes every label it writes
	}
	return out
}

// WriteGenHTML writes the generation report.
func WriteGenHTML(w io.Writer, res *GenResult, s GenSummary) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return genTemplate.Execute(w, struct {
		S       GenSummary
		Charts  []template.HTML
		JSON    string
		Started string
	}{s, genCharts(res), string(js), res.Start.UTC().Format(time.RFC3339)})
}

var genTemplate = template.Must(template.New("gen").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice generation load report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f4f4f4;text-align:left}figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:12px;font-size:12px}
.legend span{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.empty{color:#888;font-style:italic}pre{background:#f8f8f8;padding:8px;overflow:auto;font-size:12px}
</style></head><body>
<h1>Sluice generation load report</h1>
<p>{{.S.Mode}} loop against {{.S.URL}}, started {{.Started}}, {{.S.DurationS}} s measured;
streams of {{.S.MaxTokens}} tokens (greedy, ignore_eos), {{.S.Abandon}} of clients hang up at half.</p>
<table>
<tr><th>streams started in the window</th><td>{{.S.Streams}}</td></tr>
<tr><th>tokens received per second (all / of streams served whole)</th><td>{{.S.TokensPerSecond}} / {{.S.GoodTokensPerSecond}}</td></tr>
<tr><th>streams served whole per second</th><td>{{.S.GoodStreamsPerSecond}}</td></tr>
<tr><th>time to first token, ms (p50 / p95 / p99)</th><td>{{.S.TimeToFirstToken.P50}} / {{.S.TimeToFirstToken.P95}} / {{.S.TimeToFirstToken.P99}}</td></tr>
<tr><th>inter-token time, ms (p50 / p95 / p99)</th><td>{{.S.InterToken.P50}} / {{.S.InterToken.P95}} / {{.S.InterToken.P99}}</td></tr>
<tr><th>served stream, ms (p50 / p99)</th><td>{{.S.StreamLatency.P50}} / {{.S.StreamLatency.P99}}</td></tr>
<tr><th>server: tokens generated / after a client left</th><td>{{.S.ServerTokens}} / {{.S.ServerTokensAfterGone}}</td></tr>
</table>
{{range .Charts}}{{.}}
{{end}}
<h2>Summary</h2>
<pre>{{.JSON}}</pre>
</body></html>
`))
