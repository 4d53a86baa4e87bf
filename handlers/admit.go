package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
)

// admit runs before the body is parsed: the priority header, then the route's gate with the
// request's retry token, if it sent one. A refusal here costs no parsing, tokenizing or model
// work.
func (s *server) admit(c *fiber.Ctx, gate *admission.Gate) (admission.Priority, error) {
	prio, err := admission.ParsePriority(c.Get(admission.PriorityHeader))
	if err != nil {
		return prio, &apiError{Status: fiber.StatusBadRequest, Code: CodeBadRequest, Outcome: OutcomeFailed,
			Message: "Request arguments are invalid. Correct the request and retry.",
			Details: map[string]string{"reason": "invalid_priority", "header": admission.PriorityHeader}}
	}
	if ref, ok := gate.AdmitRetry(prio, c.Request().Header.Peek(admission.RetryTokenHeader)); !ok {
		return prio, s.writeRefusal(c, ref)
	}
	return prio, nil
}

// errRefused tells the chain that the response is already written.
var errRefused = errors.New("refused")
