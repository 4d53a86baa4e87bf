package handlers

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/mtls"
	"github.com/sluice-serving/sluice/signing"
)

// This file answers every refusal: a queue's (admission.Refusal, 503), a caller's budget's
// (admission.BudgetRefusal, 429), the credentials' (identity.Refusal, 401, 403, 429), a client
// certificate's (mtls, 401) and a signature's (signing.Failure, 401, 503). The packages decide; the wire words, statuses and
// headers are here. A route with a wire format of its own (TGI's, OpenAI's) gets each in that format, through its reply; the entity routes'
// envelope is written without encoding/json into a reused buffer, so that a flood of refusals
// costs microseconds and no garbage.

// CodeBackpressure is the code of a request the server is too busy to queue.
const CodeBackpressure = "backpressure"

// setRetryAfter writes the Retry-After header, d in whole seconds (an admission rule has
// rounded it); 0 writes none.
func setRetryAfter(h *fasthttp.ResponseHeader, d time.Duration) {
	if d <= 0 {
		return
	}
	var num [20]byte
	h.SetBytesV(fiber.HeaderRetryAfter, admission.AppendRetryAfter(num[:0], d))
}

// writeRefusal answers a request a queue's gate shed.
func (s *server) writeRefusal(c *fiber.Ctx, ref admission.Refusal) error {
	if s.wires[routeOf(c.Path())] != nil {
		_ = s.writeError(c, queueRefusal(ref))
		return errRefused
	}
	outcome := OutcomeRefused
	if ref.Reason == admission.ReasonMaxWait {
		outcome = OutcomeExpired
	}
	c.Locals(localOutcome, outcome)
	h := &c.Response().Header
	setRetryAfter(h, ref.RetryAfter)
	if v, ok := ref.Token.Value(); ok {
		h.SetBytesV(admission.RetryTokenHeader, v)
	}
	c.Status(fiber.StatusServiceUnavailable)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	buf := s.refusalBufs.Get().(*[]byte)
	*buf = appendQueueRefusal((*buf)[:0], ref, requestID(c))
	c.Response().SetBody(*buf) // copies into the response's own pooled buffer
	s.refusalBufs.Put(buf)
	return errRefused
}

// queueRefusal is a gate's refusal as a failure any wire format can word.
func queueRefusal(ref admission.Refusal) *apiError {
	e := &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeBackpressure, Message: queueMessage(ref),
		Details: queueDetails(ref), Outcome: OutcomeRefused, retryAfter: ref.RetryAfter}
	if ref.Reason == admission.ReasonMaxWait {
		e.Outcome = OutcomeExpired
	}
	if v, ok := ref.Token.Value(); ok {
		e.Headers = map[string]string{admission.RetryTokenHeader: string(v)}
	}
	return e
}

// queueMessage is OpenMed's message for a saturated queue.
func queueMessage(ref admission.Refusal) string {
	if ref.Priority == admission.Bulk {
		return "bulk inference queue is saturated; retry later"
	}
	return "interactive inference queue is saturated; retry later"
}

// queueDetails are a queue refusal's details: aggregate queue state and configuration only.
// retry_after_seconds is null when no header is sent. They write themselves (MarshalJSON):
// a storm of refusals on a route with its own wire format (OpenAI's, TGI's) then costs no
// reflection over a map, and every format words the same details.
func queueDetails(ref admission.Refusal) queueDetail { return queueDetail{ref} }

type queueDetail struct{ ref admission.Refusal }

// MarshalJSON writes the details object.
func (d queueDetail) MarshalJSON() ([]byte, error) {
	return d.appendJSON(make([]byte, 0, 192)), nil
}

func (d queueDetail) appendJSON(dst []byte) []byte {
	ref := d.ref
	dst = append(dst, `{"priority":`...)
	dst = appendJSONString(dst, ref.Priority.String())
	dst = append(dst, `,"queue":`...)
	dst = appendJSONString(dst, ref.Queue)
	dst = append(dst, `,"queue_depth":`...)
	dst = strconv.AppendInt(dst, int64(ref.Depth), 10)
	dst = append(dst, `,"queue_capacity":`...)
	dst = strconv.AppendInt(dst, int64(ref.Capacity), 10)
	dst = append(dst, `,"retry_after_seconds":`...)
	if s := int64(ref.RetryAfter / time.Second); s > 0 {
		dst = strconv.AppendInt(dst, s, 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"reason":`...)
	dst = appendJSONString(dst, string(ref.Reason))
	dst = append(dst, `,"low_watermark":`...)
	dst = strconv.AppendInt(dst, int64(ref.LowWatermark), 10)
	dst = append(dst, `,"max_wait_ms":`...)
	dst = strconv.AppendInt(dst, ref.MaxWait.Milliseconds(), 10)
	return append(dst, '}')
}

// appendQueueRefusal appends the envelope of a queue refusal to dst, the same JSON as
// queueRefusal's in the envelope; it does not allocate when dst has room.
func appendQueueRefusal(dst []byte, ref admission.Refusal, requestID string) []byte {
	dst = append(dst, `{"error":{"code":"`+CodeBackpressure+`","message":`...)
	dst = appendJSONString(dst, queueMessage(ref))
	dst = append(dst, `,"details":`...)
	dst = queueDetail{ref}.appendJSON(dst)
	dst = append(dst, `,"request_id":`...)
	dst = appendJSONString(dst, requestID)
	return append(dst, "}}"...)
}

// writeBudgetRefusal answers 429 rate_limited, with Retry-After and both dimensions'
// x-ratelimit-* headers.
func (s *server) writeBudgetRefusal(c *fiber.Ctx, ref *admission.BudgetRefusal) error {
	h := &c.Response().Header
	setRateLimitHeaders(h, ref)
	if s.wires[routeOf(c.Path())] != nil {
		_ = s.writeError(c, budgetRefusal(ref))
		return errRefused
	}
	c.Locals(localOutcome, OutcomeRefused)
	setRetryAfter(h, ref.RetryAfter)
	c.Status(fiber.StatusTooManyRequests)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	secs := int64(ref.RetryAfter / time.Second)
	buf := s.refusalBufs.Get().(*[]byte)
	b := append((*buf)[:0], `{"error":{"code":"`+CodeRateLimited+`","message":"`...)
	b = appendBudgetMessage(b, ref)
	b = append(b, `","details":{"reason":"`...)
	b = append(b, ref.Reason...) // one of admission's fixed reasons
	b = append(b, `","retry_after_seconds":`...)
	b = strconv.AppendInt(b, secs, 10)
	b = append(b, `},"request_id":"`...)
	b = append(b, requestID(c)...) // our own hex, or a client's checked to be plain
	b = append(b, `"}}`...)
	c.Response().SetBody(b)
	*buf = b
	s.refusalBufs.Put(buf)
	return errRefused
}

// budgetRefusal is a budget's refusal as a failure any wire format can word.
func budgetRefusal(ref *admission.BudgetRefusal) *apiError {
	secs := int64(ref.RetryAfter / time.Second)
	return &apiError{Status: fiber.StatusTooManyRequests, Code: CodeRateLimited, Message: string(appendBudgetMessage(nil, ref)),
		Details: map[string]any{"reason": ref.Reason, "retry_after_seconds": secs}, Outcome: OutcomeRefused, retryAfter: ref.RetryAfter}
}

func appendBudgetMessage(b []byte, ref *admission.BudgetRefusal) []byte {
	if ref.Reason == admission.BudgetTooLarge {
		return append(b, "This request is larger than the caller's whole token budget; it cannot be served as it is"...)
	}
	if ref.Reason == admission.BudgetUnavailable {
		b = append(b, "The caller's budget cannot be checked now; retry after "...)
	} else {
		b = append(b, "Rate limit exceeded for this caller; retry after "...)
	}
	b = strconv.AppendInt(b, int64(ref.RetryAfter/time.Second), 10)
	return append(b, " seconds"...)
}

// acceptedForms is what a 401 says a credential may be.
var acceptedForms = map[string]any{"accepted_credentials": []string{"X-API-Key: <key>", "Authorization: ApiKey <key>",
	"Authorization: Bearer <key>", "Authorization: Bearer <JWT>"}}

// authRefusal is the answer to a request its credentials do not let through, in OpenMed's
// words.
func authRefusal(ref *identity.Refusal) *apiError {
	e := &apiError{Code: string(ref.Reason), Outcome: OutcomeFailed}
	switch ref.Reason {
	case identity.NoCredential:
		e.Status, e.Details = fiber.StatusUnauthorized, acceptedForms
		e.Message = "Authentication credentials were not provided: send an API key (X-API-Key, or Authorization: ApiKey or Bearer) or a bearer JWT"
		e.Headers = map[string]string{fiber.HeaderWWWAuthenticate: "Bearer, ApiKey"}
	case identity.Forbidden:
		e.Status, e.Message = fiber.StatusForbidden, "Authenticated principal does not have the required scope"
		e.Details = map[string]any{"required_scopes": ref.RequiredScopes}
		e.Headers = map[string]string{fiber.HeaderWWWAuthenticate: `Bearer error="insufficient_scope", scope="` + strings.Join(ref.RequiredScopes, " ") + `"`}
	case identity.TooManyFailures:
		e.Status, e.Message, e.Outcome = fiber.StatusTooManyRequests, "Too many failed authentication attempts", OutcomeRefused
		e.retryAfter = admission.CallerRetryAfter.Wait(ref.Wait)
		e.Details = map[string]any{"retry_after_seconds": int64(e.retryAfter / time.Second)}
	default: // identity.BadCredential
		e.Status, e.Details = fiber.StatusUnauthorized, acceptedForms
		e.Message = "Authentication credentials are invalid: send an API key (X-API-Key, or Authorization: ApiKey or Bearer) or a bearer JWT"
		e.Headers = map[string]string{fiber.HeaderWWWAuthenticate: `Bearer error="invalid_token", ApiKey`}
	}
	return e
}

// signatureRefusal words a request whose signature was refused (signing.Verifier): 401
// invalid_signature with the reason, or, when the nonce store had no room or did not answer,
// 503 with a Retry-After.
func signatureRefusal(err error) *apiError {
	var f *signing.Failure
	if !errors.As(err, &f) {
		return &apiError{Status: statusClientClosed, Code: "client_closed_request", Outcome: OutcomeAborted,
			Message: "Client closed the request while its signature was checked"}
	}
	e := &apiError{Status: fiber.StatusUnauthorized, Code: "invalid_signature", Outcome: OutcomeFailed,
		Message: "The request's X-OpenMed-Signature does not hold: " + f.Reason, Details: map[string]any{"reason": f.Reason}}
	if f.Reason == signing.ReasonNoncesFull || f.Reason == signing.ReasonUnavailable {
		e.Status, e.Code, e.Outcome = fiber.StatusServiceUnavailable, "signature_unverifiable", OutcomeRefused
		e.Message = "The request's nonce could not be recorded (" + f.Reason + "); retry later"
		e.retryAfter = admission.CallerRetryAfter.Wait(f.RetryAfter)
		e.Details = map[string]any{"reason": f.Reason, "retry_after_seconds": int64(e.retryAfter / time.Second)}
	}
	return e
}

// mtlsRefusal words a request without a verified client certificate, as OpenMed does: 401
// mtls_certificate_required, or mtls_certificate_invalid for one that does not verify or came
// from a peer not trusted to forward it.
func mtlsRefusal(err error) *apiError {
	e := &apiError{Status: fiber.StatusUnauthorized, Code: mtls.ErrInvalid.Error(), Outcome: OutcomeFailed,
		Message: "The client certificate is invalid or untrusted"}
	if errors.Is(err, mtls.ErrRequired) {
		e.Code, e.Message = mtls.ErrRequired.Error(), "A verified client certificate is required"
	}
	return e
}
