package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Error codes are part of the API: clients switch on them, so they never change meaning. They
// are OpenMed's, so its clients keep working.
const (
	CodeValidation = "validation_error"
	CodeBadRequest = "bad_request"
	CodeTooLarge   = "request_size_exceeded"
	CodeNotReady   = "not_ready"
	CodeTimeout    = "timeout"
	CodeInternal   = "internal_error"
	// CodeServiceBusy: no room to load the model named (OpenMed's warm pool's code).
	CodeServiceBusy = "service_busy"
	// CodeModelLoading: the model named is loading; retry after the Retry-After.
	CodeModelLoading = "model_loading"
	// CodeModelTooLarge: the model named can never fit the memory budget beside the configured
	// models; unlike service_busy, not worth a retry (Sluice's own code).
	CodeModelTooLarge = "model_too_large"
	// CodeCircuitOpen: the model's circuit breaker is open after failures in a row; retry
	// after the Retry-After.
	CodeCircuitOpen = "circuit_breaker_open"
)

// errorBody is the envelope every error response uses:
// {"error": {"code", "message", "details", "request_id"}}.
type errorBody struct {
	Error errorPayload `json:"error"`
}

type errorPayload struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Details   any    `json:"details"`
	RequestID string `json:"request_id"`
}

// FieldError is one item of a validation_error's details, shaped like FastAPI's so OpenMed
// clients parse it unchanged: the field path, a message, and the kind of failure.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

// apiError is what handlers return to the error handler: a status, a stable code, a
// content-free message and optional details.
type apiError struct {
	Status  int
	Code    string
	Message string
	Details any
	// Outcome is the end state recorded in metrics and the access log.
	Outcome string
	// Headers are extra response headers.
	Headers map[string]string
	// retryAfter, when not 0, is sent as Retry-After: a wait an admission rule has rounded.
	retryAfter time.Duration
	// cause is the error answered, for a wire format that words some causes its own way;
	// it is never written.
	cause error
	// param is the request field a validation failure is about, for wire formats that name
	// it (OpenAI's).
	param string
	// aborted is the reason an aborted request was counted with (countAborted), which the
	// privacy gateway's record repeats.
	aborted string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func validationError(fields ...FieldError) *apiError {
	return &apiError{Status: fiber.StatusUnprocessableEntity, Code: CodeValidation,
		Message: "Request validation failed", Details: fields, Outcome: OutcomeFailed}
}

// writeError answers e in the wire format of the route the request was for: its own (TGI's,
// OpenAI's) where it has one, else the error envelope.
func (s *server) writeError(c *fiber.Ctx, e *apiError) error {
	if c.Locals(localUnparsed) != nil {
		return s.answerError(c, e, nil) // its route is not known: not "/"'s, TGI's
	}
	return s.answerError(c, e, s.wires[routeOf(c.Path())])
}

// answerError answers e in w's format (nil: the envelope), with its headers and outcome.
func (s *server) answerError(c *fiber.Ctx, e *apiError, w wire) error {
	c.Locals(localOutcome, e.Outcome)
	for k, v := range e.Headers {
		c.Set(k, v)
	}
	setRetryAfter(&c.Response().Header, e.retryAfter)
	if w != nil {
		status, body := w.reply(e, requestID(c))
		return c.Status(status).JSON(body)
	}
	return c.Status(e.Status).JSON(errorBody{Error: errorPayload{
		Code: e.Code, Message: e.Message, Details: e.Details, RequestID: requestID(c),
	}})
}

// eventJSON is a stream's event as marshal writes it. An event that is not JSON (a float that
// is not a number) is a bug that must not pass as an event left out: it panics, and the
// stream's reader ends the stream with the dialect's error event.
func eventJSON(v any) []byte {
	data, err := marshal(v)
	if err != nil {
		panic(errEventNotJSON)
	}
	return data
}

var errEventNotJSON = errors.New("handlers: a stream's event is not JSON")

// marshal is encoding/json without HTML escaping: Python's json (OpenMed's service) and serde
// (TGI's) write "<", ">" and "&" as they are, and so do we.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
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
		if len(c.Request().Header.RawHeaders()) == 0 {
			// fasthttp reset the request it could not read (its headers, or a chunked body
			// past the limit, read to the error): fiber's path and method are not its own. A
			// body refused for its Content-Length keeps them.
			c.Locals(localUnparsed, true)
		}
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
		return s.writeError(c, ae)
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
		case fiber.StatusRequestHeaderFieldsTooLarge:
			e.Message = "Request Header Fields Too Large"
		case fiber.StatusRequestEntityTooLarge:
			return s.writeError(c, s.bodyTooLarge())
		default:
			e.Message = "Bad Request"
			if fe.Code >= 500 {
				e.Code, e.Message = CodeInternal, "Internal server error"
			}
		}
		if e.Details == nil {
			e.Details = map[string]string{"reason": e.Message}
		}
		return s.writeError(c, e)
	}
	s.opts.Logger.Error("unhandled error", slog.String("request_id", requestID(c)), slog.String("error_type", errorType(err)))
	return s.writeError(c, &apiError{Status: fiber.StatusInternalServerError, Code: CodeInternal,
		Message: "Internal server error", Outcome: OutcomeFailed})
}
