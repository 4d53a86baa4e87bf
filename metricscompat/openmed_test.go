package metricscompat

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestOpenMedFamiliesComeFromSluices: OpenMed's families carry the sums of Sluice's series
// over the labels OpenMed does not have, its route names, and the request histogram at
// OpenMed's bounds.
func TestOpenMedFamiliesComeFromSluices(t *testing.T) {
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_http_requests_total"}, []string{"route", "status", "outcome"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sluice_http_request_duration_seconds",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}}, []string{"route", "status"})
	shed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_admission_shed_total"}, []string{"queue", "priority", "reason"})
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_admission_queue_depth"}, []string{"queue"})
	inflight := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_http_inflight_requests"})
	reg.MustRegister(requests, duration, shed, depth, inflight)
	requests.WithLabelValues("/pii/extract", "200", "served").Add(3)
	requests.WithLabelValues("/pii/extract", "499", "aborted").Add(1)
	requests.WithLabelValues("/pii/extract", "200", "aborted").Add(2) // a stream cut after its first line
	requests.WithLabelValues("unmatched", "404", "failed").Add(1)
	duration.WithLabelValues("/pii/extract", "200").Observe(0.002)
	duration.WithLabelValues("/pii/extract", "503").Observe(0.04)
	shed.WithLabelValues("pii_extract", "bulk", "saturated").Add(2)
	shed.WithLabelValues("pii_extract", "bulk", "high_watermark").Add(5)
	shed.WithLabelValues("pii_extract", "interactive", "max_wait").Add(1)
	depth.WithLabelValues("pii_extract").Set(7)
	inflight.Set(2)

	compat := prometheus.NewRegistry()
	compat.MustRegister(OpenMed(reg, func() Models { return Models{Resident: 3, ResidentBytes: 100, Loads: 4, Evictions: 1} }))
	want := `
# HELP openmed_service_admission_queue_depth Admitted work outstanding per endpoint (sluice_admission_queue_depth).
# TYPE openmed_service_admission_queue_depth gauge
openmed_service_admission_queue_depth{queue="pii_extract"} 7
# HELP openmed_service_admission_shed_total Refusals at the high watermark or past the max queue wait (sluice_admission_shed_total).
# TYPE openmed_service_admission_shed_total counter
openmed_service_admission_shed_total{queue="pii_extract"} 6
# HELP openmed_service_batch_shed_total Requests refused because their priority's queue was full (sluice_admission_shed_total{reason="saturated"}).
# TYPE openmed_service_batch_shed_total counter
openmed_service_batch_shed_total{priority="bulk"} 2
# HELP openmed_service_inflight_requests HTTP requests being served (sluice_http_inflight_requests).
# TYPE openmed_service_inflight_requests gauge
openmed_service_inflight_requests 2
# HELP openmed_service_model_eviction_total Models unloaded: idle past their keep-alive, for the room, or on request.
# TYPE openmed_service_model_eviction_total counter
openmed_service_model_eviction_total 1
# HELP openmed_service_model_resident_total Models resident.
# TYPE openmed_service_model_resident_total gauge
openmed_service_model_resident_total 3
# HELP openmed_service_request_total HTTP requests by route and status code (OpenMed's name for sluice_http_requests_total).
# TYPE openmed_service_request_total counter
openmed_service_request_total{route="/pii/extract",status_code="200"} 5
openmed_service_request_total{route="/pii/extract",status_code="499"} 1
openmed_service_request_total{route="unknown",status_code="404"} 1
`
	names := []string{"openmed_service_admission_queue_depth", "openmed_service_admission_shed_total", "openmed_service_batch_shed_total",
		"openmed_service_inflight_requests", "openmed_service_model_eviction_total", "openmed_service_model_resident_total", "openmed_service_request_total"}
	if err := testutil.GatherAndCompare(compat, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	families, err := compat.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "openmed_service_request_duration_seconds" {
			continue
		}
		h := f.GetMetric()[0].GetHistogram()
		var bounds []float64
		for _, b := range h.GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if h.GetSampleCount() != 2 || len(bounds) != len(DurationBounds) || bounds[0] != 0.005 || h.GetBucket()[0].GetCumulativeCount() != 1 {
			t.Fatalf("duration histogram: count %d, bounds %v", h.GetSampleCount(), bounds)
		}
		return
	}
	t.Fatal("no openmed_service_request_duration_seconds")
}
