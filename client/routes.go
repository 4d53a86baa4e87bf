package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// EntityRequest is the body of /analyze and /pii/extract. Zero fields are left to the server.
type EntityRequest struct {
	Text                string   `json:"text"`
	ModelName           string   `json:"model_name,omitempty"`
	ConfidenceThreshold *float64 `json:"confidence_threshold,omitempty"`
}

// Entity is one span a model found.
type Entity struct {
	Text       string  `json:"text"`
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
	Start      int     `json:"start"`
	End        int     `json:"end"`
}

// EntityResponse is the answer of /analyze and /pii/extract.
type EntityResponse struct {
	Entities       []Entity `json:"entities"`
	ModelName      string   `json:"model_name"`
	ProcessingTime float64  `json:"processing_time"`
}

// Analyze finds clinical entities (POST /analyze).
func (c *Client) Analyze(ctx context.Context, req EntityRequest) (*EntityResponse, error) {
	var out EntityResponse
	return &out, c.call(ctx, "/analyze", req, &out)
}

// ExtractPII finds PII and PHI (POST /pii/extract).
func (c *Client) ExtractPII(ctx context.Context, req EntityRequest) (*EntityResponse, error) {
	var out EntityResponse
	return &out, c.call(ctx, "/pii/extract", req, &out)
}

// DeidentifyRequest is the body of /pii/deidentify: Method is mask, remove, replace, hash or
// shift_dates (empty: the server's default), Policy one of OpenMed's profiles.
type DeidentifyRequest struct {
	Text        string `json:"text"`
	Method      string `json:"method,omitempty"`
	Policy      string `json:"policy,omitempty"`
	ModelName   string `json:"model_name,omitempty"`
	KeepMapping bool   `json:"keep_mapping,omitempty"`
}

// DeidentifyResponse is the answer of /pii/deidentify.
type DeidentifyResponse struct {
	DeidentifiedText    string            `json:"deidentified_text"`
	NumEntitiesRedacted int               `json:"num_entities_redacted"`
	Method              string            `json:"method"`
	Mapping             map[string]string `json:"mapping,omitempty"`
}

// Deidentify redacts a text (POST /pii/deidentify).
func (c *Client) Deidentify(ctx context.Context, req DeidentifyRequest) (*DeidentifyResponse, error) {
	var out DeidentifyResponse
	return &out, c.call(ctx, "/pii/deidentify", req, &out)
}

// CompletionRequest is an OpenAI completions request with the fields Sluice's callers use.
type CompletionRequest struct {
	Model       string   `json:"model,omitempty"`
	Prompt      string   `json:"prompt"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	Stream      bool     `json:"stream,omitempty"`
}

// Completion is the answer of a completions request that was not streamed.
type Completion struct {
	Text         string
	FinishReason string
	Usage        Usage
}

// Usage is what a generation used, in tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type completionJSON struct {
	Choices []struct {
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// Complete generates a completion (POST /v1/completions, not streamed).
func (c *Client) Complete(ctx context.Context, req CompletionRequest) (*Completion, error) {
	req.Stream = false
	var out completionJSON
	if err := c.call(ctx, "/v1/completions", req, &out); err != nil {
		return nil, err
	}
	if len(out.Choices) == 0 {
		return nil, fmt.Errorf("client: the completion has no choices")
	}
	res := &Completion{Text: out.Choices[0].Text}
	if out.Choices[0].FinishReason != nil {
		res.FinishReason = *out.Choices[0].FinishReason
	}
	if out.Usage != nil {
		res.Usage = *out.Usage
	}
	return res, nil
}

// CompleteStream starts a streamed completion (POST /v1/completions with stream). Refusals
// before the stream begins are retried as any call's; once it has begun nothing is retried:
// the caller has part of the answer. Read it with Next and Text, then check Err, and Close it.
func (c *Client) CompleteStream(ctx context.Context, req CompletionRequest) (*CompletionStream, error) {
	req.Stream = true
	resp, err := c.do(ctx, "/v1/completions", req)
	if err != nil {
		return nil, err
	}
	return &CompletionStream{resp: resp, lines: bufio.NewScanner(resp.Body)}, nil
}

// CompletionStream is a streamed completion being read.
type CompletionStream struct {
	resp   *http.Response
	lines  *bufio.Scanner
	text   string
	finish string
	done   bool
	err    error
}

// Next reads the next piece of text; false at the end of the stream or on an error.
func (s *CompletionStream) Next() bool {
	for !s.done && s.err == nil && s.lines.Scan() {
		line := s.lines.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue // comments (keep-alives), event names, blank separators
		}
		if data == "[DONE]" {
			s.done = true
			return false
		}
		var ev struct {
			completionJSON
			Error *struct {
				Message string `json:"message"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			s.err = fmt.Errorf("client: a stream event is not JSON: %w", err)
			return false
		}
		if ev.Error != nil {
			s.err = fmt.Errorf("client: the stream ended with an error: %s", ev.Error.Message)
			return false
		}
		if len(ev.Choices) == 0 {
			continue // a usage-only event
		}
		s.text = ev.Choices[0].Text
		if ev.Choices[0].FinishReason != nil {
			s.finish = *ev.Choices[0].FinishReason
		}
		return true
	}
	if s.err == nil && !s.done {
		if err := s.lines.Err(); err != nil {
			s.err = err
		} else {
			s.err = io.ErrUnexpectedEOF // the stream ended without [DONE]
		}
	}
	return false
}

// Text is the piece Next read.
func (s *CompletionStream) Text() string { return s.text }

// FinishReason is why the generation ended, once the last piece is read.
func (s *CompletionStream) FinishReason() string { return s.finish }

// Err is what ended the stream early, nil after a complete one.
func (s *CompletionStream) Err() error { return s.err }

// Close releases the stream; a generation still running stops when the server sees it go.
func (s *CompletionStream) Close() error { return s.resp.Body.Close() }
