package handlers

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/sluice-serving/sluice/admission"
)

// record counts a finished request in the metrics and writes its access-log line. A negative
// elapsed means the time is not known: no duration is observed or logged.
func (s *server) record(c *fiber.Ctx, id, route string, elapsed time.Duration) {
	e := accessEntry{id: id, method: c.Method(), route: route, status: c.Response().StatusCode(), elapsed: elapsed}
	if c.Locals(localUnparsed) != nil {
		e.method = "OTHER" // fiber's GET for a request line it could not read
	}
	e.outcome, _ = c.Locals(localOutcome).(string)
	e.stats, _ = c.Locals(localStats).(logStats)
	e.tenant, _ = c.Locals(localTenant).(string)
	e.label, _ = c.Locals(localTenantLabel).(string)
	s.log(c.UserContext(), e)
}

// accessEntry is one access-log line: what a request was and how it ended, never content.
type accessEntry struct {
	id, method, route string
	status            int
	outcome           string
	elapsed           time.Duration // negative: not known
	stats             logStats      // nil: none
	// tenant is who the request was authenticated as ("" without authentication), and label
	// the same as the metrics name it.
	tenant, label string
	// streamed marks the line of a response that outlived its handler: the request leaves
	// sluice_http_inflight_requests when it is written.
	streamed bool
}

// log counts the request in the metrics and writes its access-log line.
func (s *server) log(ctx context.Context, e accessEntry) {
	if e.outcome == "" {
		e.outcome = outcomeForStatus(e.status)
	}
	code := strconv.Itoa(e.status)
	if e.streamed {
		s.opts.Metrics.finished()
	}
	if m := s.opts.Metrics; m != nil {
		m.requests.WithLabelValues(e.route, code, e.outcome).Inc()
		if e.label != "" {
			m.tenants.WithLabelValues(e.label, e.route, e.outcome).Inc()
		}
		if e.elapsed >= 0 {
			m.duration.WithLabelValues(e.route, code).Observe(e.elapsed.Seconds())
		}
	}
	attrs := []slog.Attr{
		slog.String("request_id", e.id),
		slog.String("method", e.method),
		slog.String("route", e.route),
		slog.Int("status", e.status),
		slog.String("outcome", e.outcome),
		slog.Float64("duration_ms", float64(e.elapsed.Microseconds())/1000),
	}
	if e.elapsed < 0 {
		attrs = attrs[:len(attrs)-1] // cut, not appended: appending would allocate on every refusal
	}
	if smp := s.refusalLogs[e.route]; smp != nil {
		var skipped uint64
		if e.outcome == OutcomeRefused {
			var ok bool
			if skipped, ok = smp.admit(s.opts.Clock.Now()); !ok {
				return
			}
		} else {
			skipped = smp.takeSkipped()
		}
		if skipped > 0 {
			attrs = append(attrs, slog.Uint64("refusals_not_logged", skipped))
		}
	}
	if e.tenant != "" {
		attrs = append(attrs, slog.String("tenant", e.tenant))
	}
	if e.stats != nil {
		attrs = append(attrs, e.stats.attrs()...)
	}
	s.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// deferredRecord is the access-log line of a response that is still streaming when its
// handler returns: observe fills in what it knows and closes ready; the stream completes the
// line (outcome, timings) and logs it when it ends.
type deferredRecord struct {
	ready  chan struct{}
	entry  accessEntry
	start  time.Time
	charge admission.Charge // the caller's budget, settled with what the stream used
}

// logStats is what a route leaves in localStats for its access-log line: sizes and timings,
// never content.
type logStats interface{ attrs() []slog.Attr }

func outcomeForStatus(status int) string {
	switch {
	case status < 400:
		return OutcomeServed
	case status == fiber.StatusServiceUnavailable || status == fiber.StatusTooManyRequests:
		return OutcomeRefused
	case status == fiber.StatusGatewayTimeout:
		return OutcomeTimedOut
	default:
		return OutcomeFailed
	}
}
