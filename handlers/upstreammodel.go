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
	if sp := params.Sampling; sp.DoSample {
		opts.Temperature, opts.TopP = sp.Temperature, sp.TopP
	}
	opts.PresencePenalty, opts.FrequencyPenalty = params.PresencePenalty, params.FrequencyPenalty
	if params.SeedSet {
		seed := int64(params.Seed) // the caller's own, whose bits the sampler's seed is (openAISampling)
		opts.Seed = &seed
	}
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
		var calls callText
		finish, err := u.up.Chat(ctx, msgs, opts, func(d chat.Delta) error {
			if d.Call != nil {
				calls.add(*d.Call)
				return nil
			}
			return send(d.Content)
		})
		if err == nil {
			err = send(calls.text())
		}
		st.ended <- upstreamEnd{finish, err}
	}()
	return st, nil
}

// callText gathers an external answer's tool calls from their deltas, by index, and writes
// them after its text as the chat answer reads them (toolPlan.listed): callSeparator, then
// [{"name": ..., "arguments": ...}, ...] in index order.
type callText struct {
	calls []*gatheredCall
}

type gatheredCall struct {
	name string
	args strings.Builder
}

// maxCallIndex bounds the index of an external model's call.
const maxCallIndex = 1023

func (c *callText) add(d chat.CallDelta) {
	if d.Index < 0 || d.Index > maxCallIndex {
		return
	}
	for len(c.calls) <= d.Index {
		c.calls = append(c.calls, &gatheredCall{})
	}
	call := c.calls[d.Index]
	if call.name == "" {
		call.name = d.Name
	}
	call.args.WriteString(d.Arguments)
}

func (c *callText) text() string {
	if len(c.calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(callSeparator + "[")
	for i := range c.calls {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(c.calls[i].name)
		args := c.calls[i].args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		b.WriteString(`{"name":` + string(name) + `,"arguments":` + args + `}`)
	}
	b.WriteString("]")
	return b.String()
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
