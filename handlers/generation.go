package handlers

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/generate"
)

// Generator is the work behind the generation routes; generate.Generator is the real one.
// Its errors wrap generate's (ErrEmptyPrompt, ErrTooLong) and admission's (ErrQueueFull,
// ErrClosed); its streams end with the engine's errors, admission.ErrExpired or the request
// context's.
type Generator interface {
	Generate(ctx context.Context, p admission.Priority, prompt string, params generate.Params) (*generate.Stream, error)
	Name() string
	MaxPositions() int
}

// GenerationEndpoint is what the generation routes serve.
type GenerationEndpoint struct {
	Model Generator
	// Gate is the endpoint's admission control (required).
	Gate *admission.Gate
	// Timeout bounds a whole generation, queueing and streaming included.
	Timeout time.Duration
	// MaxStopSequences bounds a request's stop sequences (TGI's default is 4).
	MaxStopSequences int
	// MaxChoices bounds prompts x n of one completions request.
	MaxChoices int
}

// Generation is every generation route, one table entry each: HuggingFace
// text-generation-inference's POST /generate, /generate_stream and / (stream chosen by the
// body), and OpenAI's POST /v1/completions.
func Generation(ep GenerationEndpoint) []Route {
	if ep.MaxStopSequences == 0 {
		ep.MaxStopSequences = 4
	}
	if ep.MaxChoices == 0 {
		ep.MaxChoices = 8
	}
	models := []ModelInfo{{Name: ep.Model.Name(), MaxLength: ep.Model.MaxPositions()}}
	route := func(path string, serve func(*server, *fiber.Ctx, *exchange, *GenerationEndpoint) error) Route {
		return Route{Path: path, Gate: ep.Gate, Models: models,
			serve: func(s *server, c *fiber.Ctx, x *exchange) error { return serve(s, c, x, &ep) }}
	}
	return []Route{
		route("/generate", func(s *server, c *fiber.Ctx, x *exchange, ep *GenerationEndpoint) error {
			return s.serveTGI(c, x, ep, tgiObject)
		}),
		route("/generate_stream", func(s *server, c *fiber.Ctx, x *exchange, ep *GenerationEndpoint) error {
			return s.serveTGI(c, x, ep, tgiStream)
		}),
		route("/", func(s *server, c *fiber.Ctx, x *exchange, ep *GenerationEndpoint) error {
			return s.serveTGI(c, x, ep, tgiCompat)
		}),
		route("/v1/completions", (*server).serveCompletions),
	}
}

// genCall is one admitted generation request on its way: its streams (several for a
// completions request with many prompts or n > 1), each one's first event, and the context
// they run under.
type genCall struct {
	s       *server
	x       *exchange
	ep      *GenerationEndpoint
	ctx     context.Context
	done    func() // cancels ctx and stops watching the connection
	streams []*generate.Stream
	first   []generate.Event
	start   time.Time
	// firstToken is how long the first events took to come.
	firstToken time.Duration
}

// begin submits every prompt (n times each) and waits for every stream's first event, so that
// a refusal or an early failure is still an HTTP status: nothing is committed before. On an
// error the streams started are cancelled and the error is returned for the caller to answer.
func (s *server) beginGeneration(c *fiber.Ctx, x *exchange, ep *GenerationEndpoint, prompts []string, n int, params generate.Params) (*genCall, error) {
	g := &genCall{s: s, x: x, ep: ep, start: s.opts.Clock.Now()}
	g.ctx, g.done = s.workContextFor(c, ep.Timeout)
	for _, prompt := range prompts {
		for range n {
			st, err := ep.Model.Generate(g.ctx, x.prio, prompt, params)
			if err != nil {
				g.done()
				return nil, err
			}
			g.streams = append(g.streams, st)
		}
	}
	g.first = make([]generate.Event, len(g.streams))
	for i, st := range g.streams {
		ev, err := st.Next(g.ctx)
		if err == nil && ev.Err != nil {
			err = ev.Err
		}
		if err != nil {
			g.done()
			return nil, err
		}
		g.first[i] = ev
	}
	g.firstToken = s.opts.Clock.Now().Sub(g.start)
	return g, nil
}

// indexed is one event of one of a call's streams.
type indexed struct {
	i  int
	ev generate.Event
}

// events replays each stream's first event and then delivers the rest as they come, across
// all streams, until every stream has ended or ctx ends.
func (g *genCall) events() <-chan indexed {
	out := make(chan indexed, len(g.streams))
	left := make(chan struct{}, len(g.streams))
	for i, st := range g.streams {
		go func() {
			defer func() { left <- struct{}{} }()
			ev := g.first[i]
			for {
				select {
				case out <- indexed{i, ev}:
				case <-g.ctx.Done():
					return
				}
				if ev.Done {
					return
				}
				var err error
				if ev, err = st.Next(g.ctx); err != nil {
					return
				}
			}
		}()
	}
	go func() {
		for range g.streams {
			<-left
		}
		close(out)
	}()
	return out
}

// gone handles a client that left mid-stream (a write failed): its generation stops, unless
// the server is set to ignore departures, when it runs to its end unread.
func (g *genCall) gone(events <-chan indexed) {
	if g.s.opts.IgnoreDisconnects {
		for range events {
		}
		return
	}
	g.done()
}

// genFailure is how an error that ended a generation is answered.
type genFailure struct {
	status  int
	code    string // Sluice's error code
	kind    string // TGI's error_type
	message string
	outcome string
}

// classify names an error that ended a generation, in words that quote nothing of the request.
func (s *server) classify(err error, timeout time.Duration) genFailure {
	switch {
	case errors.Is(err, generate.ErrEmptyPrompt), errors.Is(err, generate.ErrTooLong), errors.Is(err, generate.ErrNoRoom):
		return genFailure{fiber.StatusUnprocessableEntity, CodeValidation, "validation", validationMessage(err), OutcomeFailed}
	case errors.Is(err, context.DeadlineExceeded):
		return genFailure{fiber.StatusGatewayTimeout, CodeTimeout, "generation",
			"Request exceeded configured timeout of " + strconv.FormatFloat(timeout.Seconds(), 'g', -1, 64) + " seconds", OutcomeTimedOut}
	case errors.Is(err, generate.ErrFirstTokenTimeout):
		return genFailure{fiber.StatusGatewayTimeout, CodeTimeout, "generation", "No token was generated within the first-token timeout", OutcomeTimedOut}
	case errors.Is(err, context.Canceled), errors.Is(err, generate.ErrClientStalled):
		return genFailure{statusClientClosed, "client_closed_request", "generation", "Client closed the request or stopped reading", OutcomeAborted}
	case errors.Is(err, generate.ErrShutdown), errors.Is(err, admission.ErrClosed):
		return genFailure{fiber.StatusServiceUnavailable, CodeNotReady, "generation", "Service is shutting down", OutcomeFailed}
	case errors.Is(err, generate.ErrEngineStalled):
		return genFailure{fiber.StatusInternalServerError, CodeInternal, "generation", "Request failed during generation: the model stalled", OutcomeFailed}
	}
	return genFailure{fiber.StatusInternalServerError, CodeInternal, "generation", "Request failed during generation", OutcomeFailed}
}

// validationMessage words a request generate refused, naming sizes only.
func validationMessage(err error) string {
	var long *generate.TooLongError
	switch {
	case errors.As(err, &long):
		return "`inputs` tokens + `max_new_tokens` must be <= " + strconv.Itoa(long.MaxPositions) + ". Given: " +
			strconv.Itoa(long.Prompt) + " `inputs` tokens and " + strconv.Itoa(long.MaxNewTokens) + " `max_new_tokens`"
	case errors.Is(err, generate.ErrEmptyPrompt):
		return "`inputs` cannot be empty"
	}
	return "the sequence does not fit in the KV cache"
}

// startError answers a generation that could not start or ended before its first byte. The
// Queue's refusals and shutdown are the same answers as on every route; validation errors
// are the route's (format decides their shape).
func (s *server) startError(c *fiber.Ctx, x *exchange, ep *GenerationEndpoint, err error, format func(*fiber.Ctx, genFailure, error) error) error {
	if ref, ok := x.route.Gate.Refuse(x.prio, err); ok {
		return s.writeRefusal(c, ref)
	}
	f := s.classify(err, ep.Timeout)
	switch {
	case f.code == CodeValidation:
		c.Locals(localOutcome, f.outcome)
		return format(c, f, err)
	case errors.Is(err, admission.ErrClosed), errors.Is(err, generate.ErrShutdown):
		return s.notReady("Service is shutting down and not accepting new requests", "shutting_down")
	case f.status == fiber.StatusInternalServerError:
		s.opts.Logger.Error("generation failed", slog.String("request_id", requestID(c)),
			slog.String("route", x.route.Path), slog.String("error_type", errorType(err)))
	}
	return &apiError{Status: f.status, Code: f.code, Message: f.message, Outcome: f.outcome}
}

// sse commits a 200 text/event-stream response and runs write on the stream writer: write
// sends the events and returns how the request ended. The access-log line is written when the
// stream ends, and the generation's context is released then.
func (s *server) sse(c *fiber.Ctx, g *genCall, write func(w *bufio.Writer) (outcome string, stats logStats)) error {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	c.Status(fiber.StatusOK)
	d := &deferredRecord{ready: make(chan struct{})}
	c.Locals(localDeferred, d)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer g.done()
		outcome, stats := write(w)
		<-d.ready
		e := d.entry
		e.outcome, e.stats = outcome, stats
		e.elapsed = s.opts.Clock.Now().Sub(d.start)
		s.log(context.Background(), e)
	})
	return nil
}

// sseEvent writes one server-sent event and flushes it; false means the client has gone.
func sseEvent(w *bufio.Writer, data []byte) bool {
	_, _ = w.WriteString("data: ")
	_, _ = w.Write(data)
	_, _ = w.WriteString("\n\n")
	return w.Flush() == nil
}

// genStats are what the access log records of a generation: sizes and timings only.
type genStats struct {
	model                   string
	prompt, generated, seqs int
	firstToken              time.Duration // 0: none
}

func (g *genStats) attrs() []slog.Attr {
	a := []slog.Attr{
		slog.String("model", g.model),
		slog.Int("prompt_tokens", g.prompt),
		slog.Int("generated_tokens", g.generated),
		slog.Int("sequences", g.seqs),
	}
	if g.firstToken > 0 {
		a = append(a, slog.Float64("first_token_ms", float64(g.firstToken.Microseconds())/1000))
	}
	return a
}

// stats summarises the call for the access log.
func (g *genCall) stats(generated int) *genStats {
	st := &genStats{model: g.ep.Model.Name(), generated: generated, seqs: len(g.streams), firstToken: g.firstToken}
	for _, s := range g.streams {
		st.prompt += s.PromptTokens
	}
	return st
}
