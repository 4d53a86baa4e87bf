package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/handlers/connwatch"
	"github.com/sluice-serving/sluice/settings"
)

// Options wires the handlers to the rest of the server.
type Options struct {
	Logger   *slog.Logger
	Metrics  *Metrics
	Gatherer prometheus.Gatherer // served on /metrics
	Clock    clock.Clock

	// Routes are the endpoints that run models (Analyze, PIIExtract, ...), each registered
	// for POST on its Path.
	Routes []Route

	Limits Limits
	// RetryAfter is sent with not_ready answers (models loading, shutting down), rounded up
	// to whole seconds; 0 sends no header.
	RetryAfter time.Duration
	// Ready reports whether models are loaded and warmed; /readyz answers 503 until then.
	Ready   func() bool
	Version string
	// Device is where the models run ("cpu" or "cuda"), reported by /health and
	// /models/loaded.
	Device string
	// Watcher, when set, cancels a request's context as soon as its client disconnects.
	Watcher *connwatch.Watcher
	// IgnoreDisconnects keeps work going for clients that have left: no watcher, and a
	// generation goes on after a failed write. Only for measuring what noticing saves.
	IgnoreDisconnects bool
	// RefusalLogsPerSecond bounds the access-log lines of refused requests (503, 429) per
	// route and second; the rest are counted into the next line written. Served, failed and
	// every other line are always written. 0: no bound.
	RefusalLogsPerSecond int
}

// Limits bound what one request may ask of the server.
type Limits struct {
	MaxBodyBytes int
	MaxTextChars int
	MaxTextBytes int
	// RequestTimeout bounds the whole of a request's work; past it the client gets 504.
	RequestTimeout time.Duration
}

// Validate reports every limit that is out of range: the result joins one *settings.Problem
// per bad field (named "Limits.<field>").
func (l Limits) Validate() error {
	check := settings.For("handlers")
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxBodyBytes", l.MaxBodyBytes}, {"MaxTextChars", l.MaxTextChars}, {"MaxTextBytes", l.MaxTextBytes}} {
		if f.v < 1 {
			check.Addf("Limits."+f.name, "must be at least 1, got %d", f.v)
		}
	}
	if l.RequestTimeout <= 0 {
		check.Addf("Limits.RequestTimeout", "must be positive, got %s", l.RequestTimeout)
	}
	return check.Err()
}

// probes are the routes every server has besides Options.Routes.
var probes = [...]string{"/health", "/livez", "/readyz", "/models/loaded", "/metrics"}

// validate reports every option that is missing or out of range: one *settings.Problem per
// field.
func (o Options) validate() error {
	check := settings.For("handlers")
	check.Include(o.Limits.Validate())
	bad := check.Addf
	if o.RetryAfter < 0 {
		bad("RetryAfter", "must not be negative (0: no header), got %s", o.RetryAfter)
	}
	if o.RefusalLogsPerSecond < 0 {
		bad("RefusalLogsPerSecond", "must not be negative (0: no bound), got %d", o.RefusalLogsPerSecond)
	}
	if o.Logger == nil || o.Clock == nil || o.Gatherer == nil || o.Ready == nil {
		bad("Logger, Clock, Gatherer, Ready", "are required")
	}
	seen := map[string]bool{}
	for _, p := range probes {
		seen[p] = true
	}
	for i, r := range o.Routes {
		switch {
		case r.serve == nil || r.Gate == nil:
			bad(fmt.Sprintf("Routes[%d]", i), "must come from a route constructor and have a Gate")
		case seen[r.Path]:
			bad(fmt.Sprintf("Routes[%d]", i), "path %q is already taken", r.Path)
		}
		seen[r.Path] = true
	}
	return check.Err()
}

type server struct {
	opts Options
	// known maps every route path to itself, for telling a wrong method from an unknown path.
	known map[string]string
	// piiDefaults is built once: entities.PIIOptions compiles and copies the pattern list.
	piiDefaults entities.Options
	// refusalBufs holds *[]byte scratch space for refusal bodies.
	refusalBufs sync.Pool
	// refusalLogs samples refusal lines per route, when Options.RefusalLogsPerSecond bounds them.
	refusalLogs map[string]*refusalSampler
}

// New checks opts and builds the fiber app with the probes, /metrics and every route.
func New(opts Options) (*fiber.App, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &server{opts: opts, known: map[string]string{}, piiDefaults: entities.PIIOptions(), refusalLogs: map[string]*refusalSampler{}}
	s.refusalBufs.New = func() any { b := make([]byte, 0, 512); return &b }
	app := fiber.New(fiber.Config{
		AppName:               "sluice",
		BodyLimit:             opts.Limits.MaxBodyBytes,
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		JSONEncoder:           marshal,
		ReadTimeout:           30 * time.Second,
		// A client that stops reading must not hold a connection (and shutdown) forever.
		WriteTimeout: 30 * time.Second,
		IdleTimeout:  120 * time.Second,
	})
	app.Use(s.observe)

	app.Get("/health", s.health)
	app.Get("/livez", s.livez)
	app.Get("/readyz", s.readyz)
	app.Get("/models/loaded", s.modelsLoaded)
	metrics := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	app.Get("/metrics", func(c *fiber.Ctx) error {
		metrics(c.Context())
		return nil
	})
	for _, p := range probes {
		s.known[p] = p
	}
	for i := range s.opts.Routes {
		r := &s.opts.Routes[i]
		app.Post(r.Path, s.handle(r))
		s.known[r.Path] = r.Path
		opts.Metrics.attach(r.Path)
		if opts.RefusalLogsPerSecond > 0 {
			s.refusalLogs[r.Path] = &refusalSampler{perSecond: opts.RefusalLogsPerSecond}
		}
	}
	opts.Metrics.attach(routeUnrouted)
	(&edges{s: s, app: app}).install()
	return app, nil
}

// observe assigns the request id, then after the handler records metrics and the access log.
func (s *server) observe(c *fiber.Ctx) error {
	start := s.opts.Clock.Now()
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)

	err := s.next(c)
	if err != nil && !errors.Is(err, errRefused) {
		// Write the error now so the status below is the one the client sees.
		if herr := s.handleError(c, err); herr != nil {
			return herr
		}
	}
	route := c.Route().Path
	if st := c.Response().StatusCode(); st == fiber.StatusNotFound || st == fiber.StatusMethodNotAllowed {
		// No route matched: label a known path by itself (a wrong method), anything else
		// as "unmatched", so that no client-chosen path becomes a label.
		route = "unmatched"
		if known, ok := s.known[c.Path()]; ok {
			route = known // the table's string: c.Path() points into a buffer fasthttp reuses
		}
	}
	if d, ok := c.Locals(localDeferred).(*deferredRecord); ok && c.Response().StatusCode() == fiber.StatusOK {
		// A response still streaming: its line is written when the stream ends.
		d.entry = accessEntry{id: id, method: c.Method(), route: route, status: fiber.StatusOK}
		d.start = start
		close(d.ready)
		return nil
	}
	s.record(c, id, route, s.opts.Clock.Now().Sub(start))
	return nil
}

// record counts a finished request in the metrics and writes its access-log line. A negative
// elapsed means the time is not known: no duration is observed or logged.
func (s *server) record(c *fiber.Ctx, id, route string, elapsed time.Duration) {
	e := accessEntry{id: id, method: c.Method(), route: route, status: c.Response().StatusCode(), elapsed: elapsed}
	e.outcome, _ = c.Locals(localOutcome).(string)
	e.stats, _ = c.Locals(localStats).(logStats)
	s.log(c.UserContext(), e)
}

// accessEntry is one access-log line: what a request was and how it ended, never content.
type accessEntry struct {
	id, method, route string
	status            int
	outcome           string
	elapsed           time.Duration // negative: not known
	stats             logStats      // nil: none
}

// log counts the request in the metrics and writes its access-log line.
func (s *server) log(ctx context.Context, e accessEntry) {
	if e.outcome == "" {
		e.outcome = outcomeForStatus(e.status)
	}
	code := strconv.Itoa(e.status)
	if m := s.opts.Metrics; m != nil {
		m.requests.WithLabelValues(e.route, code, e.outcome).Inc()
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
	if e.stats != nil {
		attrs = append(attrs, e.stats.attrs()...)
	}
	s.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// deferredRecord is the access-log line of a response that is still streaming when its
// handler returns: observe fills in what it knows and closes ready; the stream completes the
// line (outcome, timings) and logs it when it ends.
type deferredRecord struct {
	ready chan struct{}
	entry accessEntry
	start time.Time
}

// logStats is what a route leaves in localStats for its access-log line: sizes and timings,
// never content.
type logStats interface{ attrs() []slog.Attr }

// next runs the rest of the chain and turns a panic into a 500: a bug in one request must not
// take the process down. Only the panic's type is logged; its value may hold request content.
func (s *server) next(c *fiber.Ctx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("handler panicked", slog.String("request_id", requestID(c)),
				slog.String("panic_type", fmt.Sprintf("%T", p)))
			err = &apiError{Status: fiber.StatusInternalServerError, Code: CodeInternal,
				Message: "Internal server error", Outcome: OutcomeFailed}
		}
	}()
	return c.Next()
}

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

// handleError turns any error into the JSON envelope. fiber's own errors (404, 405, 413 from
// the body limit) get stable codes; anything unexpected is a 500 whose message says nothing
// about the request.
func (s *server) handleError(c *fiber.Ctx, err error) error {
	if requestID(c) == "" {
		// fasthttp rejects an oversized body before any middleware runs, so observe never
		// sees the request: answer it, then count and log it here, under the route
		// "unrouted" (the request never reached the router, and fiber's view of its path is
		// not reliable at this point) and with no duration (its start is not known).
		id := newRequestID()
		c.Locals(localRequestID, id)
		c.Set(fiber.HeaderXRequestID, id)
		if reason, gone := clientGone(err); gone {
			// The client left while sending its body: nobody reads an answer, and the
			// request is an abandoned one, not a bad one.
			c.Status(statusClientClosed)
			c.Locals(localOutcome, OutcomeAborted)
			if s.opts.Metrics != nil {
				s.opts.Metrics.aborted.WithLabelValues(routeUnrouted, reason).Inc()
			}
			s.record(c, id, routeUnrouted, -1)
			return nil
		}
		werr := s.writeHandled(c, err)
		s.record(c, id, routeUnrouted, -1)
		return werr
	}
	return s.writeHandled(c, err)
}

// routeUnrouted labels requests that failed before the router saw them.
const routeUnrouted = "unrouted"

// statusClientClosed is the status recorded for a request whose client left (nginx's 499).
const statusClientClosed = 499

// clientGone tells, from the error fiber reports for a request it could not read, whether the
// client went away mid-request (a reset, or the connection closed before the body was
// complete), and how.
func clientGone(err error) (reason string, gone bool) {
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return "", false
	}
	switch {
	case fe.Code == fiber.StatusBadGateway: // fiber's mapping of a network error while reading
		return "client_reset", true
	case fe.Code == fiber.StatusBadRequest && strings.Contains(fe.Message, io.ErrUnexpectedEOF.Error()):
		return "client_closed", true
	}
	return "", false
}

// writeHandled writes err as the JSON envelope.
func (s *server) writeHandled(c *fiber.Ctx, err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		c.Locals(localOutcome, ae.Outcome)
		return writeError(c, ae)
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		// OpenMed answers routing errors as bad_request with the reason phrase; keep that.
		e := &apiError{Status: fe.Code, Code: CodeBadRequest, Outcome: OutcomeFailed}
		switch fe.Code {
		case fiber.StatusNotFound:
			e.Message = "Not Found"
		case fiber.StatusMethodNotAllowed:
			e.Message = "Method Not Allowed"
		case fiber.StatusRequestEntityTooLarge:
			e.Code = CodeTooLarge
			e.Message = "Request rejected by an operational limit: the body exceeds " + strconv.Itoa(s.opts.Limits.MaxBodyBytes) + " bytes"
			e.Details = map[string]int{"max_body_bytes": s.opts.Limits.MaxBodyBytes}
		default:
			e.Message = "Bad Request"
			if fe.Code >= 500 {
				e.Code, e.Message = CodeInternal, "Internal server error"
			}
		}
		if e.Details == nil {
			e.Details = map[string]string{"reason": e.Message}
		}
		return writeError(c, e)
	}
	s.opts.Logger.Error("unhandled error", slog.String("request_id", requestID(c)), slog.String("error_type", errorType(err)))
	return writeError(c, &apiError{Status: fiber.StatusInternalServerError, Code: CodeInternal,
		Message: "Internal server error", Outcome: OutcomeFailed})
}
