package handlers

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/handlers/connwatch"
)

// A Route is one endpoint that runs a model: the path it answers POST on, the Gate that admits
// its requests before their bodies are read, the models it serves, and the work of one
// admitted request. The constructors in this package's route files build them (Analyze,
// PIIExtract); Options.Routes lists them once, and the router, the 404/405 logic,
// /models/loaded, the metrics' route label and the access log all read that list. A new kind
// of route is one file with its constructor and one entry in that list.
type Route struct {
	// Path is the route's path, also its label in metrics and the access log.
	Path string
	// Gate admits the route's requests; its queue name appears in refusals and metrics.
	Gate *admission.Gate
	// Models is what /models/loaded reports for this route.
	Models []ModelInfo
	// serve parses, validates and runs one admitted request and writes its answer.
	serve func(s *server, c *fiber.Ctx, x *exchange) error
}

// ModelInfo describes one model behind a route, for /models/loaded.
type ModelInfo struct {
	Name string
	// Aliases are the other names requests may use for it.
	Aliases []string
	// MaxLength is the model's maximum sequence length in tokens.
	MaxLength int
}

// exchange is one admitted request on its way through its Route.
type exchange struct {
	route *Route
	prio  admission.Priority
}

// handle is the flow every route shares: admission before anything is read, then the route's
// own work.
func (s *server) handle(r *Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		prio, err := s.admit(c, r.Gate)
		if err != nil {
			return err
		}
		return r.serve(s, c, &exchange{route: r, prio: prio})
	}
}

// workContext is the context a route's work runs under: cancelled when the client disconnects
// (fasthttp never tells a handler; the watcher does, so a queued request is dropped before it
// is computed) and bounded by the request timeout. The caller must call done.
func (s *server) workContext(c *fiber.Ctx) (ctx context.Context, done func()) {
	return s.workContextFor(c, s.opts.Limits.RequestTimeout)
}

// workContextFor is workContext with a route's own timeout.
func (s *server) workContextFor(c *fiber.Ctx, timeout time.Duration) (ctx context.Context, done func()) {
	ctx = c.UserContext()
	stop := func() {}
	if s.opts.Watcher != nil && !s.opts.IgnoreDisconnects {
		ctx, stop = s.opts.Watcher.Watch(ctx, c.Context().Conn())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel(); stop() }
}

// workError answers a request whose work failed: the Queue's own refusals (class full, max
// wait) as refusals with a Retry-After, a closed Queue as not_ready, the deadline as 504, a
// departed client as 499 (counted, never read), anything else as a 500 that says nothing of
// the request.
func (s *server) workError(c *fiber.Ctx, x *exchange, ctx context.Context, err error) error {
	if ref, ok := x.route.Gate.Refuse(x.prio, err); ok {
		return s.writeRefusal(c, ref)
	}
	switch {
	case errors.Is(err, admission.ErrClosed):
		return s.notReady("Service is shutting down and not accepting new requests", "shutting_down")
	case errors.Is(err, context.DeadlineExceeded):
		secs := s.opts.Limits.RequestTimeout.Seconds()
		return &apiError{Status: fiber.StatusGatewayTimeout, Code: CodeTimeout, Outcome: OutcomeTimedOut,
			Message: "Request exceeded configured timeout of " + strconv.FormatFloat(secs, 'g', -1, 64) + " seconds",
			Details: map[string]any{"timeout_seconds": secs}}
	case errors.Is(err, context.Canceled):
		s.countAborted(ctx, x.route)
		// The client has gone; nobody reads this answer, but the outcome must be counted.
		return &apiError{Status: statusClientClosed, Code: "client_closed_request", Outcome: OutcomeAborted,
			Message: "Client closed the request"}
	}
	s.opts.Logger.Error("work failed", slog.String("request_id", requestID(c)),
		slog.String("route", x.route.Path), slog.String("error_type", errorType(err)))
	return &apiError{Status: fiber.StatusInternalServerError, Code: CodeInternal, Outcome: OutcomeFailed,
		Message: "Internal server error"}
}

// countAborted records a request abandoned by its client, with how it left.
func (s *server) countAborted(ctx context.Context, r *Route) {
	if s.opts.Metrics == nil {
		return
	}
	reason := "cancelled"
	switch why, _ := connwatch.DisconnectReason(ctx); why {
	case connwatch.ReasonClosed:
		reason = "client_closed"
	case connwatch.ReasonReset:
		reason = "client_reset"
	}
	s.opts.Metrics.aborted.WithLabelValues(r.Path, reason).Inc()
}

// notReady is the 503 of a server that is not taking work: models still loading, or shutting
// down. Its Retry-After is the configured one (Options.RetryAfter).
func (s *server) notReady(message, reason string) *apiError {
	e := &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeNotReady, Outcome: OutcomeRefused,
		Message: message, Details: map[string]string{"reason": reason}}
	if secs := int((s.opts.RetryAfter + time.Second - 1) / time.Second); secs > 0 {
		e.Headers = map[string]string{fiber.HeaderRetryAfter: strconv.Itoa(secs)}
	}
	return e
}
