package main

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

const exposition = `# HELP sluice_admission_queue_depth Requests waiting.
# TYPE sluice_admission_queue_depth gauge
sluice_admission_queue_depth{queue="analyze"} 3
sluice_admission_queue_depth{queue="pii"} 0
# TYPE sluice_admission_shed_total counter
sluice_admission_shed_total{queue="analyze",reason="saturated"} 12
# TYPE sluice_admission_retry_after_seconds histogram
sluice_admission_retry_after_seconds_bucket{le="1"} 4
sluice_admission_retry_after_seconds_bucket{le="+Inf"} 6
sluice_admission_retry_after_seconds_sum 9
sluice_admission_retry_after_seconds_count 6
# TYPE sluice_http_request_duration_seconds histogram
sluice_http_request_duration_seconds_bucket{le="+Inf"} 1
sluice_http_request_duration_seconds_sum 0.1
sluice_http_request_duration_seconds_count 1
# TYPE go_goroutines gauge
go_goroutines 12
`

func TestParseMetricsKeepsSluiceGaugesCountersAndRetryAfter(t *testing.T) {
	samples, fams, err := ParseMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, s := range samples {
		got[s.Name+"{"+s.Labels+"}"] = s.Value
	}
	want := map[string]float64{
		`sluice_admission_queue_depth{queue="analyze"}`:                   3,
		`sluice_admission_queue_depth{queue="pii"}`:                       0,
		`sluice_admission_shed_total{queue="analyze",reason="saturated"}`: 12,
		`sluice_admission_retry_after_seconds_count{}`:                    6,
		`sluice_admission_retry_after_seconds_sum{}`:                      9,
	}
	if len(got) != len(want) {
		t.Errorf("samples %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if strings.Join(fams, " ") != "sluice_admission_queue_depth sluice_admission_retry_after_seconds sluice_admission_shed_total" {
		t.Errorf("families %v", fams)
	}
	if _, _, err := ParseMetrics(strings.NewReader("sluice_x{ 1\n")); err == nil {
		t.Error("malformed exposition should fail")
	}
}

func TestScraperCountsFailuresAndKeepsGoing(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(exposition))
	}))
	defer srv.Close()
	s := NewScraper(srv.URL+"/metrics", srv.Client(), clock.Real(), time.Second)
	if err := s.ScrapeOnce(context.Background()); err == nil {
		t.Error("a 404 should be an error")
	}
	fail.Store(false)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	scrapes, failed, fams := s.Results()
	if len(scrapes) != 1 || failed != 1 || len(fams) != 3 {
		t.Errorf("%d scrapes, %d failed, families %v; want 1, 1, 3 families", len(scrapes), failed, fams)
	}
}

func TestMetricSeriesTurnsCountersIntoRates(t *testing.T) {
	sample := func(sec int, v float64) Scrape {
		return Scrape{At: epoch.Add(time.Duration(sec) * time.Second), Samples: []Sample{
			{Name: famAdmissionShed, Labels: `reason="saturated"`, Value: v},
			{Name: famAdmissionDepth, Labels: `queue="pii"`, Value: v / 2},
		}}
	}
	scrapes := []Scrape{sample(0, 10), sample(2, 30), sample(3, 5)} // the last one after a restart
	rates := metricSeries(scrapes, epoch, true, famAdmissionShed)
	if len(rates) != 1 {
		t.Fatalf("%d series, want 1", len(rates))
	}
	r := rates[0]
	if r.Name != `sluice_admission_shed_total{reason="saturated"}` || len(r.Y) != 2 || r.Y[0] != 10 || !math.IsNaN(r.Y[1]) || r.X[0] != 2 {
		t.Errorf("rate series %+v, want 10/s at 2s then a gap for the reset", r)
	}
	gauges := metricSeries(scrapes, epoch, false, famAdmissionDepth)
	if len(gauges) != 1 || len(gauges[0].Y) != 3 || gauges[0].Y[1] != 15 {
		t.Errorf("gauge series %+v", gauges)
	}
}
