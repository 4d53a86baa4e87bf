package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/generate"
)

// conversational is a model that takes a conversation's messages as they are rather than a
// prompt rendered from them: the privacy gateway's external chat model. The chat dialect hands
// it the messages, and the one generation driver does the rest (streaming, keep-alives, the
// end of a stream, the outcome), as for the in-process model.
type conversational interface {
	Converse(ctx context.Context, p admission.Priority, msgs []chat.Message, params generate.Params, opts chat.Options) (TokenStream, error)
}

// errUpstream marks an external model's failure: the gateway's transport error, not a fault of
// the server's own.
var errUpstream = errors.New("the external model failed")

// upstreamModel is a ChatUpstream as a Generator: each piece of its answer is an event.
type upstreamModel struct {
	up ChatUpstream
	// defaultNew is what an answer may be when the request sets no length (the gateway's bound).
	defaultNew int
}

func (u upstreamModel) Name() string { return u.up.Kind() }

// MaxPositions: the external model's context is its own to enforce.
func (u upstreamModel) MaxPositions() int        { return math.MaxInt32 }
func (u upstreamModel) DefaultMaxNewTokens() int { return u.defaultNew }

// Generate sends prompt as one user message.
func (u upstreamModel) Generate(ctx context.Context, p admission.Priority, prompt string, params generate.Params) (TokenStream, error) {
	return u.Converse(ctx, p, []chat.Message{{Role: "user", Content: prompt}}, params, chat.Options{})
}

// Converse starts the external call; its pieces come through the stream as they arrive, one
// at a time (the call waits while the reader is behind), until ctx ends. Tool calls come as
// the text the chat answer reads calls from (callText).
func (u upstreamModel) Converse(ctx context.Context, _ admission.Priority, msgs []chat.Message, params generate.Params, opts chat.Options) (TokenStream, error) {
	st := &upstreamStream{pieces: make(chan string), ended: make(chan upstreamEnd, 1)}
	opts.MaxTokens = params.MaxNewTokens
	send := func(piece string) error {
		if piece == "" {
			return nil
		}
		select {
		case st.pieces <- piece:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	go func() {
		calls := callText{named: namedChoice(opts.ToolChoice)}
		finish, err := u.up.Chat(ctx, msgs, opts, func(d chat.Delta) error {
			if d.Call != nil {
				return send(calls.add(*d.Call))
			}
			return send(d.Content)
		})
		if err == nil {
			err = send(calls.close())
		}
		st.ended <- upstreamEnd{finish, err}
	}()
	return st, nil
}

// namedChoice reports whether a tool_choice names one function.
func namedChoice(raw json.RawMessage) bool {
	var named struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(raw, &named) == nil && named.Type == "function"
}

// callText writes an external answer's tool calls as the text the chat answer reads calls
// from (toolPlan.calls): with one named function, its arguments alone; otherwise the list
// [{"name": ..., "arguments": ...}, ...], its arguments' pieces passed on as they come.
type callText struct {
	named   bool
	calls   int  // calls begun
	written bool // the current call has arguments text
}

func (c *callText) add(d chat.CallDelta) string {
	if c.named {
		return d.Arguments
	}
	var b strings.Builder
	if d.Index >= c.calls { // a new call
		switch {
		case c.calls == 0:
			b.WriteString("[")
		case !c.written:
			b.WriteString("{}},")
		default:
			b.WriteString("},")
		}
		name, _ := json.Marshal(d.Name)
		b.WriteString(`{"name":` + string(name) + `,"arguments":`)
		c.calls, c.written = d.Index+1, false
	}
	if d.Arguments != "" {
		c.written = true
		b.WriteString(d.Arguments)
	}
	return b.String()
}

func (c *callText) close() string {
	switch {
	case c.named || c.calls == 0:
		return ""
	case !c.written:
		return "{}}]"
	}
	return "}]"
}

type upstreamEnd struct {
	finish string
	err    error
}

// upstreamStream is an external answer's pieces as a TokenStream: an event without a token
// says the call has started, one per piece follows, and one without a token says how it
// finished.
type upstreamStream struct {
	pieces  chan string
	ended   chan upstreamEnd
	n       int
	started bool
	done    bool
}

func (s *upstreamStream) Next(ctx context.Context) (generate.Event, error) {
	if s.done {
		return generate.Event{}, io.EOF
	}
	if !s.started {
		s.started = true
		return generate.Event{}, nil
	}
	select {
	case piece := <-s.pieces:
		s.n++
		return generate.Event{Token: generate.Token{Text: piece}, Index: s.n, HasToken: true, Trimmed: piece}, nil
	case end := <-s.ended:
		s.done = true
		ev := generate.Event{Index: s.n, Done: true, Finish: generate.FinishEOS}
		switch {
		case end.err != nil && ctx.Err() != nil:
			ev.Finish, ev.Err = generate.FinishError, ctx.Err()
		case end.err != nil:
			ev.Finish, ev.Err = generate.FinishError, fmt.Errorf("%w: %w", errUpstream, end.err)
		case end.finish != "" && end.finish != "stop":
			ev.Finish = generate.Finish(end.finish) // "length", or the model's own reason, passed on
		}
		return ev, nil
	case <-ctx.Done():
		return generate.Event{}, ctx.Err()
	}
}

// PromptTokens: the external model does not say.
func (s *upstreamStream) PromptTokens() int                 { return 0 }
func (s *upstreamStream) Seed() (seed uint64, sampled bool) { return 0, false }
