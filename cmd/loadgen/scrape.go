package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-serving/sluice/clock"
)

// Metric families the report plots. Any other sluice_ gauge or counter is kept as well, so
// that a family added later shows up in the JSON list and can be plotted without re-running.
const (
	famAdmissionDepth    = "sluice_admission_queue_depth"
	famAdmissionShedding = "sluice_admission_shedding"
	famAdmissionShed     = "sluice_admission_shed_total"
	famBatcherDepth      = "sluice_batcher_queue_depth"
	famBatcherRunning    = "sluice_batcher_running_requests"
	famRetryAfter        = "sluice_admission_retry_after_seconds"
)

// maxMetricsBody bounds one scrape; a Sluice exposition is a few tens of kilobytes.
const maxMetricsBody = 8 << 20

// Sample is one series' value in one scrape. Labels is the sorted label set as
// `k="v",k2="v2"`.
type Sample struct {
	Name   string
	Labels string
	Value  float64
}

// Scrape is one read of /metrics.
type Scrape struct {
	At      time.Time
	Samples []Sample
}

// Scraper reads the server's /metrics on an interval while the load runs.
type Scraper struct {
	url      string
	client   *http.Client
	clk      clock.Clock
	interval time.Duration

	mu       sync.Mutex
	scrapes  []Scrape
	failed   int
	families map[string]bool
}

// NewScraper scrapes metricsURL every interval.
func NewScraper(metricsURL string, client *http.Client, clk clock.Clock, interval time.Duration) *Scraper {
	return &Scraper{url: metricsURL, client: client, clk: clk, interval: interval, families: map[string]bool{}}
}

// Run scrapes at once and then every interval until ctx is done. Failures are counted, never
// fatal: the server may not expose every family, or may be too loaded to answer in time,
// which is itself worth seeing in the report.
func (s *Scraper) Run(ctx context.Context) {
	for {
		_ = s.ScrapeOnce(ctx)
		if !sleep(ctx, s.clk, s.interval) {
			return
		}
	}
}

// ScrapeOnce reads /metrics once and stores the result.
func (s *Scraper) ScrapeOnce(ctx context.Context) error {
	sctx, cancel := withClockTimeout(ctx, s.clk, max(s.interval, time.Second))
	defer cancel(nil)
	at := s.clk.Now()
	samples, fams, err := s.fetch(sctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed++
		return err
	}
	for _, f := range fams {
		s.families[f] = true
	}
	s.scrapes = append(s.scrapes, Scrape{At: at, Samples: samples})
	return nil
}

func (s *Scraper) fetch(ctx context.Context) ([]Sample, []string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, nil, err
	}
	// Ask for the classic text format: it is the one the parser reads.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetricsBody))
		return nil, nil, fmt.Errorf("metrics: status %d", resp.StatusCode)
	}
	return ParseMetrics(io.LimitReader(resp.Body, maxMetricsBody))
}

// Results returns the scrapes so far, the number that failed, and the sorted names of the
// families seen.
func (s *Scraper) Results() ([]Scrape, int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fams := make([]string, 0, len(s.families))
	for f := range s.families {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	return slices.Clone(s.scrapes), s.failed, fams
}

// ParseMetrics reads the Prometheus text format and keeps the sluice_ gauges, counters and
// untyped samples, plus the _count and _sum of the Retry-After histogram. It returns the names
// of the families it kept.
func ParseMetrics(r io.Reader) ([]Sample, []string, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: parse: %w", err)
	}
	var out []Sample
	var names []string
	for name, fam := range fams {
		if !strings.HasPrefix(name, "sluice_") {
			continue
		}
		kept := false
		for _, m := range fam.GetMetric() {
			labels := labelString(m.GetLabel())
			switch fam.GetType() {
			case dto.MetricType_GAUGE:
				out = append(out, Sample{name, labels, m.GetGauge().GetValue()})
			case dto.MetricType_COUNTER:
				out = append(out, Sample{name, labels, m.GetCounter().GetValue()})
			case dto.MetricType_UNTYPED:
				out = append(out, Sample{name, labels, m.GetUntyped().GetValue()})
			case dto.MetricType_HISTOGRAM:
				if name != famRetryAfter {
					continue
				}
				h := m.GetHistogram()
				out = append(out,
					Sample{name + "_count", labels, float64(h.GetSampleCount())},
					Sample{name + "_sum", labels, h.GetSampleSum()})
			default:
				continue
			}
			kept = true
		}
		if kept {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return out, names, nil
}

func labelString(pairs []*dto.LabelPair) string {
	parts := make([]string, 0, len(pairs))
	for _, p := range pairs {
		parts = append(parts, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
