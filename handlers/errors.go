package handlers

import (
	"bytes"
	"encoding/json"

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
	// Headers are extra response headers (Retry-After on refusals).
	Headers map[string]string
	// cause is the error answered, for a wire format that words some causes its own way;
	// it is never written.
	cause error
	// param is the request field a validation failure is about, for wire formats that name
	// it (OpenAI's).
	param string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func validationError(fields ...FieldError) *apiError {
	return &apiError{Status: fiber.StatusUnprocessableEntity, Code: CodeValidation,
		Message: "Request validation failed", Details: fields, Outcome: OutcomeFailed}
}

func writeError(c *fiber.Ctx, e *apiError) error {
	for k, v := range e.Headers {
		c.Set(k, v)
	}
	return c.Status(e.Status).JSON(errorBody{Error: errorPayload{
		Code: e.Code, Message: e.Message, Details: e.Details, RequestID: requestID(c),
	}})
}

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
