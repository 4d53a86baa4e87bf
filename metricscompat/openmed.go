package metricscompat

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// DurationBounds are OpenMed's request-duration bucket bounds. Sluice's request histogram has
// every one of them, so OpenMed's counts are read off it exactly.
var DurationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Collector is OpenMed's families, read from a Gatherer at each scrape.
type Collector struct {
	from   prometheus.Gatherer
	models func() Models
	descs  map[string]*prometheus.Desc
	labels map[string]int // how many labels each family has
}

// Models is what the server says of its models for OpenMed's openmed_service_model_* families.
type Models struct {
	Resident      int
	ResidentBytes int64
	// Loads and Evictions count the models loaded on demand, and unloaded, so far.
	Loads, Evictions int
}

// OpenMed returns the collector of OpenMed's families computed from from's Sluice families;
// models, when not nil, says what is resident and how many loads and unloads there were.
func OpenMed(from prometheus.Gatherer, models func() Models) *Collector {
	c := &Collector{from: from, models: models, descs: map[string]*prometheus.Desc{}, labels: map[string]int{}}
	add := func(name, help string, labels ...string) {
		c.descs[name] = prometheus.NewDesc(name, help, labels, nil)
		c.labels[name] = len(labels)
	}
	add("openmed_service_request_total", "HTTP requests by route and status code (OpenMed's name for sluice_http_requests_total).", "route", "status_code")
	add("openmed_service_request_duration_seconds", "HTTP request duration by route (sluice_http_request_duration_seconds).", "route")
	add("openmed_service_inflight_requests", "HTTP requests being served (sluice_http_inflight_requests).")
	add("openmed_service_batch_queue_depth", "Requests waiting for dispatch, by priority (sluice_batcher_queue_depth).", "priority")
	add("openmed_service_batch_queue_wait_seconds", "Time a dispatched request waited, by priority (sluice_batcher_queue_wait_seconds).", "priority")
	add("openmed_service_batch_shed_total", "Requests refused because their priority's queue was full (sluice_admission_shed_total{reason=\"saturated\"}).", "priority")
	add("openmed_service_admission_queue_depth", "Admitted work outstanding per endpoint (sluice_admission_queue_depth).", "queue")
	add("openmed_service_admission_queue_shedding", "1 while the endpoint sheds (sluice_admission_shedding).", "queue")
	add("openmed_service_admission_queue_wait_seconds", "Mean time a dispatched request waited (from sluice_batcher_queue_wait_seconds).", "queue")
	add("openmed_service_admission_shed_total", "Refusals at the high watermark or past the max queue wait (sluice_admission_shed_total).", "queue")
	add("openmed_service_circuit_breaker_closed", "Models whose circuit breaker is closed (sluice_circuit_breakers{state=\"closed\"}).")
	add("openmed_service_circuit_breaker_open", "Models whose circuit breaker is open (sluice_circuit_breakers{state=\"open\"}).")
	add("openmed_service_circuit_breaker_half_open", "Models whose circuit breaker lets a probe through (sluice_circuit_breakers{state=\"half_open\"}).")
	if models != nil {
		add("openmed_service_model_resident_total", "Models resident.")
		add("openmed_service_model_resident_bytes", "Footprint of the resident models (their ONNX files).")
		add("openmed_service_model_load_total", "Models loaded on demand.")
		add("openmed_service_model_eviction_total", "Models unloaded: idle past their keep-alive, for the room, or on request.")
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	families, err := c.from.Gather()
	if err != nil && len(families) == 0 {
		ch <- prometheus.NewInvalidMetric(c.descs["openmed_service_request_total"], err)
		return
	}
	byName := make(map[string]*dto.MetricFamily, len(families))
	for _, f := range families {
		byName[f.GetName()] = f
	}
	emit := func(name string, kind prometheus.ValueType, sums map[string]float64) {
		for _, key := range slices.Sorted(maps.Keys(sums)) {
			ch <- prometheus.MustNewConstMetric(c.descs[name], kind, sums[key], splitKey(key, c.labels[name])...)
		}
	}
	emit("openmed_service_request_total", prometheus.CounterValue,
		sum(byName["sluice_http_requests_total"], nil, func(m *dto.Metric) []string {
			return []string{route(label(m, "route")), label(m, "status")}
		}))
	c.histograms(ch, "openmed_service_request_duration_seconds", byName["sluice_http_request_duration_seconds"], DurationBounds,
		func(m *dto.Metric) []string { return []string{route(label(m, "route"))} })
	emit("openmed_service_inflight_requests", prometheus.GaugeValue,
		sum(byName["sluice_http_inflight_requests"], nil, func(*dto.Metric) []string { return nil }))
	emit("openmed_service_batch_queue_depth", prometheus.GaugeValue,
		sum(byName["sluice_batcher_queue_depth"], nil, func(m *dto.Metric) []string { return []string{label(m, "priority")} }))
	c.histograms(ch, "openmed_service_batch_queue_wait_seconds", byName["sluice_batcher_queue_wait_seconds"], nil,
		func(m *dto.Metric) []string { return []string{label(m, "priority")} })
	shed := byName["sluice_admission_shed_total"]
	emit("openmed_service_batch_shed_total", prometheus.CounterValue,
		sum(shed, func(m *dto.Metric) bool { return label(m, "reason") == "saturated" },
			func(m *dto.Metric) []string { return []string{label(m, "priority")} }))
	emit("openmed_service_admission_shed_total", prometheus.CounterValue,
		sum(shed, func(m *dto.Metric) bool { r := label(m, "reason"); return r == "high_watermark" || r == "max_wait" },
			func(m *dto.Metric) []string { return []string{label(m, "queue")} }))
	byQueue := func(m *dto.Metric) []string { return []string{label(m, "queue")} }
	emit("openmed_service_admission_queue_depth", prometheus.GaugeValue, sum(byName["sluice_admission_queue_depth"], nil, byQueue))
	emit("openmed_service_admission_queue_shedding", prometheus.GaugeValue, sum(byName["sluice_admission_shedding"], nil, byQueue))
	waits := map[string][2]float64{} // queue -> sum, count
	if f := byName["sluice_batcher_queue_wait_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			w := waits[label(m, "queue")]
			w[0] += m.GetHistogram().GetSampleSum()
			w[1] += float64(m.GetHistogram().GetSampleCount())
			waits[label(m, "queue")] = w
		}
	}
	means := map[string]float64{}
	for q, w := range waits {
		if w[1] > 0 {
			means[q] = w[0] / w[1]
		} else {
			means[q] = 0
		}
	}
	emit("openmed_service_admission_queue_wait_seconds", prometheus.GaugeValue, means)
	if f := byName["sluice_circuit_breakers"]; f != nil {
		for _, state := range []string{"closed", "open", "half_open"} {
			emit("openmed_service_circuit_breaker_"+state, prometheus.GaugeValue,
				sum(f, func(m *dto.Metric) bool { return label(m, "state") == state }, func(*dto.Metric) []string { return nil }))
		}
	}
	if c.models != nil {
		m := c.models()
		ch <- prometheus.MustNewConstMetric(c.descs["openmed_service_model_resident_total"], prometheus.GaugeValue, float64(m.Resident))
		ch <- prometheus.MustNewConstMetric(c.descs["openmed_service_model_resident_bytes"], prometheus.GaugeValue, float64(m.ResidentBytes))
		ch <- prometheus.MustNewConstMetric(c.descs["openmed_service_model_load_total"], prometheus.CounterValue, float64(m.Loads))
		ch <- prometheus.MustNewConstMetric(c.descs["openmed_service_model_eviction_total"], prometheus.CounterValue, float64(m.Evictions))
	}
}

// histograms sums f's histograms by the labels key gives, at bounds (nil: f's own bounds;
// bounds f lacks are left out), and emits them as name.
func (c *Collector) histograms(ch chan<- prometheus.Metric, name string, f *dto.MetricFamily, bounds []float64, key func(*dto.Metric) []string) {
	if f == nil {
		return
	}
	type acc struct {
		count   uint64
		sum     float64
		buckets map[float64]uint64
	}
	accs := map[string]*acc{}
	for _, m := range f.GetMetric() {
		k := strings.Join(key(m), "\x00")
		a := accs[k]
		if a == nil {
			a = &acc{buckets: map[float64]uint64{}}
			accs[k] = a
		}
		h := m.GetHistogram()
		a.count += h.GetSampleCount()
		a.sum += h.GetSampleSum()
		for _, b := range h.GetBucket() {
			ub := b.GetUpperBound()
			if math.IsInf(ub, 1) || (bounds != nil && !slices.Contains(bounds, ub)) {
				continue
			}
			a.buckets[ub] += b.GetCumulativeCount()
		}
	}
	for _, k := range slices.Sorted(maps.Keys(accs)) {
		a := accs[k]
		ch <- prometheus.MustNewConstHistogram(c.descs[name], a.count, a.sum, a.buckets, splitKey(k, c.labels[name])...)
	}
}

// sum adds the values of f's series that keep accepts (nil: all), by the labels key gives.
func sum(f *dto.MetricFamily, keep func(*dto.Metric) bool, key func(*dto.Metric) []string) map[string]float64 {
	out := map[string]float64{}
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		if keep != nil && !keep(m) {
			continue
		}
		out[strings.Join(key(m), "\x00")] += value(m)
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// route is OpenMed's route label: "unknown" when no route matched.
func route(r string) string {
	if r == "unmatched" || r == "unrouted" {
		return "unknown"
	}
	return r
}

// splitKey is the n label values a key joined.
func splitKey(k string, n int) []string {
	if n == 0 {
		return nil
	}
	return strings.Split(k, "\x00")
}
