package handlers

import (
	"strconv"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/generate"
)

// generation is the endpoint of the first generation route, nil when the server generates
// nothing: TGI's /info and /tokenize describe the one model TGI serves.
func (s *server) generation() *GenerationEndpoint {
	for _, r := range s.opts.Routes {
		if r.gen != nil {
			return r.gen
		}
	}
	return nil
}

// tgiInfo is TGI's GET /info: the model and the limits its clients read (max_input_tokens,
// max_total_tokens, max_stop_sequences, max_best_of, max_client_batch_size), with the legacy
// max_input_length beside max_input_tokens. What Sluice does not know of its model (the hub
// revision, the dtype) is null.
func (s *server) tgiInfo(ep *GenerationEndpoint) fiber.Handler {
	positions := ep.Model.MaxPositions()
	info := fiber.Map{
		"model_id":                ep.Model.Name(),
		"model_sha":               nil,
		"model_dtype":             nil,
		"model_device_type":       nil,
		"model_pipeline_tag":      "text-generation",
		"max_concurrent_requests": ep.Gate.Config().HighWatermark,
		"max_best_of":             1,
		"max_stop_sequences":      ep.MaxStopSequences,
		"max_input_tokens":        positions - 1,
		"max_input_length":        positions - 1,
		"max_total_tokens":        positions,
		"validation_workers":      1,
		"max_client_batch_size":   ep.MaxChoices,
		"router":                  "sluice",
		"version":                 s.opts.Version,
		"sha":                     nil,
		"docker_label":            nil,
	}
	return func(c *fiber.Ctx) error { return c.JSON(info) }
}

// promptTokenizer is a Generator that can show how it reads a prompt (*generate.Generator).
type promptTokenizer interface {
	Tokenize(prompt string) []generate.Piece
}

// tgiTokenize is TGI's POST /tokenize: the body of a generate request, answered with the
// prompt's tokens ({id, text, start, stop}, offsets in characters).
func (s *server) tgiTokenize(c *fiber.Ctx, tok promptTokenizer) error {
	type token struct {
		ID    int64  `json:"id"`
		Text  string `json:"text"`
		Start int    `json:"start"`
		Stop  int    `json:"stop"`
	}
	var req struct {
		Inputs *string `json:"inputs"`
	}
	if fe := readObject(c.Body(), &req, false); fe != nil || req.Inputs == nil {
		msg := "`inputs` is required"
		if fe != nil {
			msg = "the body is not a valid request: " + fieldMessage(fe)
		}
		c.Locals(localOutcome, OutcomeFailed)
		return c.Status(fiber.StatusUnprocessableEntity).JSON(tgiError{Error: "Input validation error: " + msg,
			ErrorType: "validation", Code: CodeValidation, RequestID: requestID(c)})
	}
	if limit := s.opts.Limits.MaxTextChars; limit > 0 && utf8.RuneCountInString(*req.Inputs) > limit {
		c.Locals(localOutcome, OutcomeFailed)
		return c.Status(fiber.StatusRequestEntityTooLarge).JSON(tgiError{
			Error:     "Input validation error: `inputs` must have at most " + strconv.Itoa(limit) + " characters",
			ErrorType: "validation", Code: CodeTooLarge, RequestID: requestID(c)})
	}
	pieces := tok.Tokenize(*req.Inputs)
	out := make([]token, len(pieces))
	for i, p := range pieces {
		out[i] = token{ID: p.ID, Text: p.Text, Start: p.Start, Stop: p.Stop}
	}
	return c.JSON(out)
}
