package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/client"
	"github.com/sluice-serving/sluice/clock"
)

// Config names an upstream server.
type Config struct {
	// URL is the OpenAI-compatible server's base (without /v1), or OpenMed's endpoint as is.
	URL string
	// Key is the bearer key (OpenAI-compatible only; "" sends none).
	Key string
	// Model is the model asked for (OpenAI-compatible only).
	Model string
	// MaxTokens bounds the answer (OpenAI-compatible only; 0: 256).
	MaxTokens int
	// HTTPClient sends the requests; nil: one with a 60 s timeout per attempt.
	HTTPClient *http.Client
	// Clock times the waits between attempts (nil: the real one).
	Clock clock.Clock
}

// Upstream completes redacted prompts.
type Upstream struct {
	c      *client.Client
	openai bool
	model  string
	max    int
}

// ErrInvalidAnswer is an answer that is not one: no text where text was expected, a stream
// that ends without its end, or one past client.MaxAnswer.
var ErrInvalidAnswer = errors.New("upstream: the answer holds no text")

func newUpstream(cfg Config, openai bool) (*Upstream, error) {
	hc := cfg.HTTPClient
	if hc == nil {
		// No overall timeout, which would cut a long streamed answer: the request's deadline
		// bounds the call; the answer's headers must come within a minute. (The client follows
		// no redirect, which would send the prompt, and the key, where the configuration does
		// not say.)
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 60 * time.Second}}
	}
	c, err := client.New(client.Config{BaseURL: cfg.URL, BearerToken: cfg.Key, HTTPClient: hc, MaxAttempts: 3, Clock: cfg.Clock})
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 256
	}
	return &Upstream{c: c, openai: openai, model: cfg.Model, max: cfg.MaxTokens}, nil
}

// NewOpenAI is an OpenAI-compatible chat completions server.
func NewOpenAI(cfg Config) (*Upstream, error) { return newUpstream(cfg, true) }

// NewOpenMed is OpenMed's privacy-gateway endpoint.
func NewOpenMed(cfg Config) (*Upstream, error) { return newUpstream(cfg, false) }

// Kind names the upstream for the audit: "openai" or "openmed".
func (u *Upstream) Kind() string {
	if u.openai {
		return "openai"
	}
	return "openmed"
}

// Complete sends the redacted prompt and returns the answer's text.
func (u *Upstream) Complete(ctx context.Context, requestID, prompt string, metadata map[string]any) (string, error) {
	var raw map[string]json.RawMessage
	if u.openai {
		body := map[string]any{"model": u.model, "max_tokens": u.max, "temperature": 0,
			"messages": []map[string]string{{"role": "user", "content": prompt}}}
		if err := u.c.Post(ctx, "/v1/chat/completions", body, &raw); err != nil {
			return "", err
		}
	} else {
		body := map[string]any{"prompt": prompt, "request_id": requestID, "metadata": metadata}
		if err := u.c.Post(ctx, "", body, &raw); err != nil {
			return "", err
		}
	}
	return textOf(raw)
}

// textOf finds an answer's text: a top-level string field, or an OpenAI choice's. A field
// that is null says nothing (a server that writes its unset fields): the search goes on.
func textOf(raw map[string]json.RawMessage) (string, error) {
	for _, k := range []string{"text", "response", "content", "completion", "output"} {
		var s *string
		if v, ok := raw[k]; ok && json.Unmarshal(v, &s) == nil && s != nil {
			return *s, nil
		}
	}
	var choices []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw["choices"], &choices) == nil && len(choices) > 0 {
		if m := choices[0].Message; m != nil && m.Content != nil {
			return *m.Content, nil
		}
		if choices[0].Text != nil {
			return *choices[0].Text, nil
		}
	}
	return "", ErrInvalidAnswer
}

// ErrNoChat is a chat asked of OpenMed's endpoint, which takes a prompt only.
var ErrNoChat = errors.New("upstream: OpenMed's endpoint takes no conversations")

// Chat sends a redacted conversation to an OpenAI-compatible server with stream set, with
// what opts asks of the answer (response_format, tools, tool_choice, parallel_tool_calls and
// the sampling passed on), and hands each piece of the answer, text or a piece of a tool call, to onDelta
// as it comes (an error from onDelta stops the call). It returns the finish reason. Nothing
// is retried once the answer has begun.
func (u *Upstream) Chat(ctx context.Context, msgs []chat.Message, opts chat.Options, onDelta func(chat.Delta) error) (string, error) {
	if !u.openai {
		return "", ErrNoChat
	}
	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = u.max
	}
	body := map[string]any{"model": u.model, "max_tokens": maxTokens, "temperature": opts.Temperature, "stream": true, "messages": wireMessages(msgs)}
	for k, v := range map[string]float64{"top_p": opts.TopP, "presence_penalty": opts.PresencePenalty, "frequency_penalty": opts.FrequencyPenalty} {
		if v != 0 && !(k == "top_p" && v == 1) {
			body[k] = v
		}
	}
	if opts.Seed != nil {
		body["seed"] = *opts.Seed
	}
	for k, v := range map[string]json.RawMessage{"response_format": opts.ResponseFormat, "tools": opts.Tools, "tool_choice": opts.ToolChoice} {
		if len(v) > 0 && string(v) != "null" {
			body[k] = v
		}
	}
	if opts.ParallelToolCalls != nil {
		body["parallel_tool_calls"] = *opts.ParallelToolCalls
	}
	resp, err := u.c.PostStream(ctx, "/v1/chat/completions", body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	finish := ""
	read := 0
	for sc.Scan() {
		if read += len(sc.Bytes()); read > client.MaxAnswer {
			return "", fmt.Errorf("%w: the streamed answer is over %d bytes", ErrInvalidAnswer, client.MaxAnswer)
		}
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimPrefix(data, " ")
		if data == "[DONE]" {
			if finish == "" {
				finish = "stop"
			}
			return finish, nil
		}
		var ev struct {
			Choices []struct {
				Delta struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil || (len(ev.Error) > 0 && string(ev.Error) != "null") {
			return "", ErrInvalidAnswer
		}
		for _, ch := range ev.Choices {
			if ch.Delta.Content != nil && *ch.Delta.Content != "" {
				if err := onDelta(chat.Delta{Content: *ch.Delta.Content}); err != nil {
					return "", err
				}
			}
			for _, c := range ch.Delta.ToolCalls {
				d := chat.Delta{Call: &chat.CallDelta{Index: c.Index, ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}}
				if err := onDelta(d); err != nil {
					return "", err
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", ErrInvalidAnswer // the stream ended without [DONE]
}

// wireMessages is a conversation as OpenAI's API takes it: an assistant's calls with their
// ids and arguments (its content null when it has none), a tool's answer with its call's id.
func wireMessages(msgs []chat.Message) []map[string]any {
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		w := map[string]any{"role": m.Role, "content": m.Content}
		if len(m.ToolCalls) > 0 {
			calls := make([]map[string]any, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				calls[j] = map[string]any{"id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}}
			}
			w["tool_calls"] = calls
			if m.Content == "" {
				w["content"] = nil
			}
		}
		if m.ToolCallID != "" {
			w["tool_call_id"] = m.ToolCallID
		}
		if m.Name != "" {
			w["name"] = m.Name
		}
		out[i] = w
	}
	return out
}
