package handlers

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/generate"
	"github.com/sluice-serving/sluice/handlers/connwatch"
	"github.com/sluice-serving/sluice/resilience"
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
	// timeout bounds one request's work; 0 means Limits.RequestTimeout.
	timeout time.Duration
	// stall bounds each write of a stream; 0 means Limits.WriteTimeout.
	stall time.Duration
	// gen is the endpoint of a generation route (nil for the others): its models are what
	// OpenAI's GET /v1/models and TGI's GET /info describe.
	gen *GenerationEndpoint
	// v2 is the endpoint of an Open Inference Protocol route (nil for the others): its models
	// are what the protocol's metadata routes describe (kserve.go).
	v2 *Endpoint
	// wire is the route's own error format (nil: the error envelope).
	wire wire
	// cost estimates a request's tokens for the budgets before its body is read (it sees who
	// is calling: a key may send it elsewhere); nil: textCost.
	cost func(s *server, c *fiber.Ctx) float64
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
	// Footprint is what its weights take resident, in bytes.
	Footprint int64
}

// exchange is one admitted request on its way through its Route.
type exchange struct {
	route *Route
	// gate admits the request's model and turns its queue's refusals into answers: the
	// route's, or a model's from the pool.
	gate *admission.Gate
	prio admission.Priority
	// id is the request id, kept for work that outlives the handler (a stream).
	id string
	// tenant is the caller's tenant ("" without one), for the audit record.
	tenant string
	// kept: the request's audit record is stored (keepRecord).
	kept bool
	// gateway: the privacy gateway's request, whose record sluice_gateway_requests_total
	// counts, a refusal before any session began included.
	gateway bool
	// timeout bounds the request's work.
	timeout time.Duration
}

// handle is the flow every route shares: admission before anything is read, then the route's
// own work.
func (s *server) handle(r *Route) fiber.Handler {
	timeout := r.timeout
	if timeout == 0 {
		timeout = s.opts.Limits.RequestTimeout
	}
	return func(c *fiber.Ctx) (err error) {
		admitted := s.admissionSpan(c, r)
		defer admitted("failed") // ended already unless the way out was a panic
		ch, err := s.charge(c, r)
		if err != nil {
			admitted(admissionOutcome(err, "refused_by_budget"))
			return err
		}
		if ch.Charged() {
			c.Locals(localCharge, ch) // for a stream to settle; boxing it costs an allocation
		}
		// Deferred, so that a panic the chain recovers from still frees the caller's place; an
		// error the chain has not written yet settles by the status it will get, and a panic
		// by the 500 the chain will write (the response still says 200 while it unwinds).
		returned := false
		defer func() {
			if _, streaming := c.Locals(localDeferred).(*deferredRecord); streaming && returned && err == nil &&
				c.Response().StatusCode() == fiber.StatusOK {
				return // a stream settles when it ends (closeStream)
			}
			status := c.Response().StatusCode()
			if !returned {
				status = fiber.StatusInternalServerError
			} else if err != nil && !errors.Is(err, errRefused) {
				status = fiber.StatusInternalServerError
				if e := (*apiError)(nil); errors.As(err, &e) {
					status = e.Status
				}
			}
			stats, _ := c.Locals(localStats).(logStats)
			settle(ch, status, stats)
		}()
		prio, err := s.admit(c, r.Gate)
		if err != nil {
			admitted(admissionOutcome(err, "shed"))
			returned = true
			return err // shed by the server (503): settled as its failure, nothing charged
		}
		admitted("admitted")
		tenant, _ := c.Locals(localTenant).(string)
		err = r.serve(s, c, &exchange{route: r, gate: r.Gate, prio: prio, id: requestID(c), tenant: tenant, timeout: timeout})
		returned = true
		return err
	}
}

// workContext is the context a request's work runs under: cancelled when the client
// disconnects (fasthttp never tells a handler; the watcher does, so a queued request is
// dropped before it is computed) and bounded by the route's timeout. The caller must call
// done.
func (s *server) workContext(c *fiber.Ctx, x *exchange) (ctx context.Context, done func()) {
	ctx, stop := s.watched(c)
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	return ctx, func() { cancel(); stop() }
}

// watched is the request's context, cancelled when its client leaves: the watcher's on a
// socket; an in-process caller's own context already ends with its caller. The caller must
// call stop.
func (s *server) watched(c *fiber.Ctx) (ctx context.Context, stop func()) {
	ctx = c.UserContext()
	if _, inProcess := callerContext(c); s.opts.Watcher == nil || s.opts.IgnoreDisconnects || inProcess {
		return ctx, func() {}
	}
	return s.opts.Watcher.Watch(ctx, c.Context().Conn())
}

// workError answers, in the error envelope, a request whose work failed: the Queue's own
// refusals (class full, max wait) as refusals with a Retry-After, the rest as failure says.
func (s *server) workError(c *fiber.Ctx, x *exchange, ctx context.Context, err error) error {
	if ref, ok := x.gate.Refuse(x.prio, err); ok {
		return s.writeRefusal(c, ref)
	}
	return s.failure(x, ctx, err)
}

// failure is the answer to work that ended with err, on every route and whatever its wire
// format: a closed Queue or a shutdown as not_ready, the deadline or a first token that never
// came as 504, a departed or stalled client as 499 (counted, never read), a request the model
// cannot take as 422, anything else as a 500 that says nothing of the request (logged by the
// error's type). ctx is the work's context, which knows how a client left.
func (s *server) failure(x *exchange, ctx context.Context, err error) *apiError {
	e := &apiError{cause: err}
	switch {
	case errors.Is(err, admission.ErrClosed):
		e = s.notReady("Service is shutting down and not accepting new requests", "shutting_down")
	case errors.Is(err, generate.ErrShutdown):
		// Cut at the end of the shutdown grace after it began: not a refusal, it had started.
		e = s.notReady("Service shut down before the generation finished", "shutting_down")
		e.Outcome = OutcomeFailed
	case errors.Is(err, context.DeadlineExceeded):
		secs := x.timeout.Seconds()
		e.Status, e.Code, e.Outcome = fiber.StatusGatewayTimeout, CodeTimeout, OutcomeTimedOut
		e.Message = "Request exceeded configured timeout of " + strconv.FormatFloat(secs, 'g', -1, 64) + " seconds"
		e.Details = map[string]any{"timeout_seconds": secs}
	case errors.Is(err, generate.ErrFirstTokenTimeout):
		e.Status, e.Code, e.Outcome = fiber.StatusGatewayTimeout, CodeTimeout, OutcomeTimedOut
		e.Message = "No token was generated within the first-token timeout"
	case errors.Is(err, context.Canceled), errors.Is(err, generate.ErrClientStalled):
		reason := "cancelled"
		if errors.Is(err, generate.ErrClientStalled) {
			reason = "client_stalled"
		}
		e.aborted = s.countAborted(ctx, x.route, reason)
		// The client has gone or stopped reading; nobody reads this answer, but the outcome
		// must be counted.
		e.Status, e.Code, e.Outcome = statusClientClosed, "client_closed_request", OutcomeAborted
		e.Message = "Client closed the request or stopped reading"
	case errors.Is(err, generate.ErrEmptyPrompt), errors.Is(err, generate.ErrTooLong), errors.Is(err, generate.ErrNoRoom),
		errors.Is(err, generate.ErrUnknownToken):
		e.Status, e.Code, e.Outcome = fiber.StatusUnprocessableEntity, CodeValidation, OutcomeFailed
		e.Message = generationLimitMessage(err)
	case errors.Is(err, generate.ErrConstraint):
		e.Status, e.Code, e.Outcome = fiber.StatusUnprocessableEntity, CodeValidation, OutcomeFailed
		e.Message = "the answer's constraint (`grammar`, `response_format` or a forced tool call) cannot be continued: " +
			"no token of the model's vocabulary writes what it allows next, or it grew past its bound"
	case errors.Is(err, errUpstream):
		return s.upstreamFailed(x, ctx, err)
	case errors.As(err, new(*resilience.OpenError)):
		var open *resilience.OpenError
		errors.As(err, &open)
		e.Status, e.Code, e.Outcome = fiber.StatusServiceUnavailable, CodeCircuitOpen, OutcomeRefused
		e.Message = "Model backend is temporarily unavailable"
		e.retryAfter = admission.ServerRetryAfter.Wait(open.RetryAfter)
		e.Details = map[string]any{"state": resilience.Open, "retry_after_seconds": int64(e.retryAfter / time.Second)}
	case errors.Is(err, generate.ErrStarved):
		e.Status, e.Code, e.Outcome = fiber.StatusServiceUnavailable, CodeBackpressure, OutcomeFailed
		e.Message = "the server was too busy to go on with this generation; retry later"
	default:
		e.Status, e.Code, e.Outcome, e.Message = fiber.StatusInternalServerError, CodeInternal, OutcomeFailed, "Internal server error"
		if errors.Is(err, generate.ErrStalled) {
			e.Message = "Internal server error: the model stalled"
		}
		s.opts.Logger.Error("work failed", slog.String("request_id", x.id),
			slog.String("route", x.route.Path), slog.String("error_type", errorType(err)))
	}
	return e
}

// countAborted records a request abandoned by its client: how it left, as the disconnect
// watcher saw it, or else as the caller knows it (cancelled, client_stalled, or client_closed
// for a stream whose write failed), which it returns.
func (s *server) countAborted(ctx context.Context, r *Route, otherwise string) string {
	reason := otherwise
	switch why, _ := connwatch.DisconnectReason(ctx); why {
	case connwatch.ReasonClosed:
		reason = "client_closed"
	case connwatch.ReasonReset:
		reason = "client_reset"
	}
	if s.opts.Metrics != nil {
		s.opts.Metrics.aborted.WithLabelValues(r.Path, reason).Inc()
	}
	return reason
}

// notReady is the 503 of a server that is not taking work: models still loading, or shutting
// down. Its Retry-After is the configured one (Options.RetryAfter).
func (s *server) notReady(message, reason string) *apiError {
	e := &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeNotReady, Outcome: OutcomeRefused,
		Message: message, Details: map[string]string{"reason": reason}}
	if s.opts.RetryAfter > 0 {
		e.retryAfter = admission.ServerRetryAfter.Wait(s.opts.RetryAfter)
	}
	return e
}
