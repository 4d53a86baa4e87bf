package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Live keeps the running counts that the progress line shows. The summary does not use it;
// it is rebuilt from the records at the end.
type Live struct {
	mu        sync.Mutex
	arrivals  int64
	dropped   int64
	served    int64
	refused   int64
	errors    int64
	retries   int64
	admitted  int64
	lastTotal int64           // arrivals at the previous line
	lastServe int64           // served at the previous line
	window    []time.Duration // latencies of attempts served since the previous line
}

// Arrival counts a request offered by the generator.
func (l *Live) Arrival() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.arrivals++
}

// Dropped counts an arrival the in-flight cap turned away.
func (l *Live) Dropped() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropped++
}

// Attempt counts a finished attempt; retry says whether it was a retry.
func (l *Live) Attempt(a Attempt, retry bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case a.Status == 200:
		l.served++
		l.window = append(l.window, a.Latency())
	case a.Refused():
		l.refused++
	case a.Err != errCanceled:
		l.errors++
	}
	if retry {
		l.retries++
		if a.Admitted() {
			l.admitted++
		}
	}
}

// Line renders one progress line and starts a new interval for the per-second figures.
func (l *Live) Line(elapsed, total, interval time.Duration, inFlight int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	secs := interval.Seconds()
	offered := float64(l.arrivals-l.lastTotal) / secs
	served := float64(l.served-l.lastServe) / secs
	p99 := "-"
	if len(l.window) > 0 {
		slices.Sort(l.window)
		p99 = fmt.Sprintf("%.0fms", float64(Percentile(l.window, 0.99))/float64(time.Millisecond))
	}
	l.lastTotal, l.lastServe, l.window = l.arrivals, l.served, l.window[:0]
	phase := ""
	if elapsed > total {
		phase = " draining"
	}
	return fmt.Sprintf("[%4.0fs/%.0fs%s] offered %.1f/s served %.1f/s p99 %s | served %d refused %d errors %d dropped %d | retries %d admitted %d | in-flight %d",
		elapsed.Seconds(), total.Seconds(), phase, offered, served, p99,
		l.served, l.refused, l.errors, l.dropped, l.retries, l.admitted, inFlight)
}

// RunProgress writes a progress line to w every second until ctx is done, then a final one.
// On a terminal the line is rewritten in place; elsewhere (a log file, CI) each line stands
// alone so that the output stays readable.
func RunProgress(ctx context.Context, clk clock.Clock, w io.Writer, tty bool, live *Live, inFlight *InFlight, start time.Time, total time.Duration) {
	const every = time.Second
	prev := start
	emit := func(final bool) {
		now := clk.Now()
		line := live.Line(now.Sub(start), total, max(now.Sub(prev), time.Millisecond), inFlight.Current())
		prev = now
		switch {
		case tty && final:
			fmt.Fprintf(w, "\r%s\x1b[K\n", line)
		case tty:
			fmt.Fprintf(w, "\r%s\x1b[K", line)
		default:
			fmt.Fprintln(w, line)
		}
	}
	for sleep(ctx, clk, every) {
		emit(false)
	}
	emit(true)
}
