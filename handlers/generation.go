package handlers

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/generate"
)

// Generator is the work behind the generation routes; cmd/serve adapts generate.Generator to
// it, and tests drive every dialect with a fake. Its errors wrap generate's (ErrEmptyPrompt,
// ErrTooLong) and admission's (ErrQueueFull, ErrClosed); its streams end with generate's
// stream errors, admission.ErrExpired or the request context's.
type Generator interface {
	Generate(ctx context.Context, p admission.Priority, prompt string, params generate.Params) (TokenStream, error)
	Name() string
	MaxPositions() int
	// DefaultMaxNewTokens is what a request that sets no limit may generate, at most.
	DefaultMaxNewTokens() int
}

// TokenStream is one generation's events as they come; *generate.Stream is the real one.
type TokenStream interface {
	// Next returns the next event, waiting until ctx ends; io.EOF after the last.
	Next(ctx context.Context) (generate.Event, error)
	PromptTokens() int
	Seed() (seed uint64, sampled bool)
}

// GenerationEndpoint is what the generation routes serve.
type GenerationEndpoint struct {
	Model Generator
	// Gate is the endpoint's admission control (required).
	Gate *admission.Gate
	// Timeout bounds a whole generation, queueing and streaming included (0:
	// Limits.RequestTimeout).
	Timeout time.Duration
	// MaxStopSequences bounds a request's stop sequences (TGI's default is 4).
	MaxStopSequences int
	// MaxChoices bounds prompts x n of one completions request.
	MaxChoices int
	// StallTimeout ends a stream whose write makes no progress for this long (its reader
	// stopped reading); 0 means Limits.WriteTimeout. A reader that keeps reading, however
	// slowly, is never cut by it.
	StallTimeout time.Duration
	// KeepAlive is how long a stream may go without a write before it sends an SSE comment
	// (0: DefaultKeepAlive).
	KeepAlive time.Duration
	// StreamInterval is how many events a stream writes at a time after its first, which goes
	// at once (0 or 1: each as it comes). Fewer writes cost the server less a token, and each
	// stream's tokens come up to StreamInterval-1 steps late, and never more than 100 ms.
	StreamInterval int
	// Chat renders /v1/chat/completions' messages; nil: the model has no chat template, and
	// the route says so (400).
	Chat ChatTemplate
	// Footprint is what the model's weights take resident, in bytes, for /models/loaded.
	Footprint int64
	// anyModel is the privacy gateway's: it chooses the model, whatever a request names. The
	// OpenAI routes answer 404 to a model they do not serve.
	anyModel bool
}

// withDefaults fills the bounds left at 0.
func (ep GenerationEndpoint) withDefaults() GenerationEndpoint {
	if ep.MaxStopSequences == 0 {
		ep.MaxStopSequences = 4
	}
	if ep.MaxChoices == 0 {
		ep.MaxChoices = 8
	}
	return ep
}

// DefaultKeepAlive is GenerationEndpoint.KeepAlive's default, the interval TGI's server uses.
const DefaultKeepAlive = 15 * time.Second

// Generation is every generation route, one table entry each: HuggingFace
// text-generation-inference's POST /generate, /generate_stream and / (stream chosen by the
// body), and OpenAI's POST /v1/completions and /v1/chat/completions. Each is a dialect over the one driver,
// serveGeneration.
func Generation(ep GenerationEndpoint) []Route {
	ep = ep.withDefaults()
	models := []ModelInfo{{Name: ep.Model.Name(), MaxLength: ep.Model.MaxPositions(), Footprint: ep.Footprint}}
	shared := &ep
	route := func(path string, d dialect) Route {
		return Route{Path: path, Gate: ep.Gate, Models: models, timeout: ep.Timeout, stall: ep.StallTimeout, gen: shared, wire: d,
			cost:  func(_ *server, c *fiber.Ctx) float64 { return d.cost(c.Body(), shared) },
			serve: func(s *server, c *fiber.Ctx, x *exchange) error { return s.serveGeneration(c, x, shared, d) }}
	}
	routes := []Route{
		route("/generate", tgi{mode: tgiObject}),
		route("/generate_stream", tgi{mode: tgiStream}),
		route("/", tgi{mode: tgiCompat}),
		route("/v1/completions", completions{}),
		{Path: "/v1/chat/completions", Gate: ep.Gate, Models: models, timeout: ep.Timeout, stall: ep.StallTimeout, gen: shared,
			wire: chatDialect{},
			cost: func(s *server, c *fiber.Ctx) float64 {
				if gw := s.opts.GatewayFace; gw != nil && c.Locals(localGateway) == true {
					return gw.chatCost(c.Body())
				}
				return chatDialect{}.cost(c.Body(), shared)
			},
			serve: func(s *server, c *fiber.Ctx, x *exchange) error {
				if c.Locals(localGateway) == true {
					// The key's conversations go through the privacy gateway, and it was
					// authorized as the gateway's face: never to the model without it (a
					// server without the face refuses them, audited as the face's requests).
					return s.serveGatewayChat(c, x, s.opts.GatewayFace)
				}
				return s.serveGeneration(c, x, shared, chatDialect{})
			}},
	}
	if tok, ok := ep.Model.(promptTokenizer); ok {
		// Tokenizing is work on the caller's text: admitted and charged as a route is.
		routes = append(routes, Route{Path: "/tokenize", Gate: ep.Gate, Models: models, timeout: ep.Timeout, gen: shared, wire: tgi{},
			serve: func(s *server, c *fiber.Ctx, _ *exchange) error { return s.tgiTokenize(c, tok) }})
	}
	return routes
}

// A dialect is one wire format of generation: how its requests read and how its answers and
// errors are written. Everything between (admission, submission, streaming, flow control,
// timeouts, the end of a stream, the access log and the outcome) is the driver's, the same
// for every dialect.
type dialect interface {
	// read parses and checks a body: what to generate and the writer of this request's
	// answers, or the validation failure to answer with.
	read(body []byte, ep *GenerationEndpoint, info requestInfo) (genRequest, answer, *apiError)
	// cost is what a body will cost in tokens, estimated before it is read (the budgets
	// charge it): every prompt, and every choice's new tokens, as read would ask for them.
	cost(body []byte, ep *GenerationEndpoint) float64
	wire
}

// A wire is a route's own error format: reply is a failure in its shape, the status and body
// of an error response (and, the body, the data of the event that ends a stream early).
// Every failure and refusal on the route goes through it, 401 to 503; routes without one
// answer in the error envelope.
type wire interface {
	reply(e *apiError, requestID string) (status int, body any)
}

// answer writes one request's results in its dialect. The driver has added each event to its
// choice (genCall.choices) before it asks for the event's data.
type answer interface {
	// whole is the body of an answer that is not streamed, or the *apiError to answer instead.
	whole(g *genCall) any
	// event is the data of the stream event for ev of choice i; nil sends none.
	event(g *genCall, i int, ev generate.Event) []byte
	// end is the events after every choice has finished.
	end(g *genCall) [][]byte
}

// requestInfo is what a dialect may put in its answers about the request itself.
type requestInfo struct {
	id      string
	now     time.Time
	version string
}

// genRequest is a parsed generation request: what to generate.
type genRequest struct {
	// prompts are each generated n times; choice i continues prompts[i/n].
	prompts []string
	// messages, when not nil, go to a conversational model instead of the one prompt.
	messages []chat.Message
	// options go with messages to a conversational model: what the request asked of its
	// answer, passed on.
	options chat.Options
	n       int
	params  generate.Params
	stream  bool
}

// serveGeneration is the driver of every generation route: the dialect reads the request,
// every choice is submitted and its first event awaited (so that a refusal or an early failure
// is still an HTTP status), then the answer is written whole or streamed.
func (s *server) serveGeneration(c *fiber.Ctx, x *exchange, ep *GenerationEndpoint, d dialect) error {
	info := requestInfo{id: x.id, now: s.opts.Clock.Now(), version: s.opts.Version}
	req, ans, bad := d.read(c.Body(), ep, info)
	if bad != nil {
		return s.writeGenError(c, d, bad)
	}
	g := &genCall{s: s, x: x, d: d, ep: ep, model: ep.Model, start: info.now}
	_, g.uncounted = ep.Model.(conversational) // an external model's pieces are not its tokens
	ctx, done := s.workContext(c, x)
	ctx, traced := s.generationSpan(ctx, g)
	g.ctx, g.stalled = context.WithCancelCause(ctx)
	g.done = func() { traced(); g.stalled(nil); done() }
	if r, ok := ans.(interface{ release(g *genCall) }); ok {
		// An answer that holds request state (the privacy gateway's map) lets go of it when
		// the call ends, however it ends, the stream's end included.
		g.done = func() { traced(); g.stalled(nil); done(); r.release(g) }
	}
	if err := g.begin(req); err != nil {
		g.failed = err
		defer g.done()
		if ref, ok := x.route.Gate.Refuse(x.prio, err); ok {
			return s.writeGenError(c, d, queueRefusal(ref))
		}
		e := s.failure(x, g.ctx, err)
		g.outcome, g.aborted = e.Outcome, e.aborted
		return s.writeGenError(c, d, e)
	}
	if req.stream {
		return s.stream(c, g, ans)
	}
	defer g.done()
	err := g.collect()
	c.Locals(localStats, g.stats())
	if err != nil {
		e := s.failure(x, g.ctx, err)
		g.failed, g.outcome, g.aborted = err, e.Outcome, e.aborted
		return s.writeGenError(c, d, e)
	}
	body := ans.whole(g)
	if e, refused := body.(*apiError); refused { // the answer, judged whole, is not to be sent
		return s.writeGenError(c, d, e)
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(body)
}

// writeGenError answers a failure in the dialect's shape, before anything was committed.
func (s *server) writeGenError(c *fiber.Ctx, d dialect, e *apiError) error {
	return s.answerError(c, e, d)
}

// genCall is one admitted generation request on its way: its streams (several for a
// completions request with many prompts or n > 1), each one's first event and what its
// choices have generated so far.
type genCall struct {
	s     *server
	x     *exchange
	d     dialect
	ep    *GenerationEndpoint
	model Generator
	ctx   context.Context
	done  func() // cancels ctx and stops watching the connection
	// stalled cancels ctx with the reason its reader gave up (generate.ErrClientStalled).
	stalled context.CancelCauseFunc

	streams []TokenStream
	n       int // choices per prompt: streams[i] continues prompt i/n
	first   []generate.Event
	choices []genChoice
	start   time.Time
	// firstToken is how long the first events took to come.
	firstToken time.Duration
	// uncounted: the model does not say what it counted (an external model: its pieces are
	// not tokens), so usage is not reported and the caller's budget keeps its estimate.
	uncounted bool
	// streaming: the answer is a stream, written after the handler returned.
	streaming bool
	// outcome is how the call ended (aborted: its client left or stopped reading), and
	// aborted the reason that abort was counted with; both set before done is called, and
	// before a stream's error event is written.
	outcome, aborted string
	// failed is why the call failed before its answer (begin's, collect's error), for its span.
	failed error
}

// genChoice is what one choice has generated so far.
type genChoice struct {
	prompt  string
	text    strings.Builder // every token's text, stop sequences included (TGI's)
	trimmed strings.Builder // without stop sequences (OpenAI's)
	tokens  []generate.Token
	events  int
	finish  generate.Finish
	done    bool
}

func (c *genChoice) add(ev generate.Event) {
	c.text.WriteString(ev.Text)
	c.trimmed.WriteString(ev.Trimmed)
	c.events++
	if ev.HasToken {
		c.tokens = append(c.tokens, ev.Token)
	}
	if ev.Done {
		c.done, c.finish = true, ev.Finish
	}
}

// begin submits every prompt n times and waits for every stream's first event. On an error
// the streams started are left to the context, which the caller cancels. The choices of a
// prompt sample apart: a given seed is the first choice's, and each next one takes the next
// seed (without one, each draws its own).
func (g *genCall) begin(req genRequest) error {
	g.n = req.n
	for _, prompt := range req.prompts {
		for j := range req.n {
			params := req.params
			params.CacheScope = g.x.tenant
			if params.SeedSet {
				params.Seed += uint64(j)
			}
			var st TokenStream
			var err error
			if conv, ok := g.model.(conversational); ok && req.messages != nil {
				st, err = conv.Converse(g.ctx, g.x.prio, req.messages, params, req.options)
			} else {
				st, err = g.model.Generate(g.ctx, g.x.prio, prompt, params)
			}
			if err != nil {
				return err
			}
			g.streams = append(g.streams, st)
			g.choices = append(g.choices, genChoice{prompt: prompt})
		}
	}
	g.first = make([]generate.Event, len(g.streams))
	for i, st := range g.streams {
		ev, err := st.Next(g.ctx)
		if err == nil && ev.Err != nil {
			err = ev.Err
		}
		if err != nil {
			return err
		}
		g.first[i] = ev
	}
	if !g.uncounted { // an external model's first event only says it has started
		g.firstToken = g.s.opts.Clock.Now().Sub(g.start)
	}
	return nil
}

// indexed is one event of one of a call's streams.
type indexed struct {
	i  int
	ev generate.Event
}

// events replays each stream's first event and then delivers the rest as they come, across
// all streams, until every stream has ended or the call's context ends.
func (g *genCall) events() <-chan indexed {
	out := make(chan indexed, len(g.streams))
	left := make(chan struct{}, len(g.streams))
	for i, st := range g.streams {
		go func() {
			defer func() { left <- struct{}{} }()
			defer func() {
				// A panic reading the stream (a detokenizer's bug) ends it with an error, as
				// one while building its event does (genBody.fill), not the process.
				if p := recover(); p != nil {
					g.panicked(p)
					select {
					case out <- indexed{i, generate.Event{Err: errStreamPanicked}}:
					case <-g.ctx.Done():
					}
				}
			}()
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

// errNoToken stands for a stream that ended without its last event and without saying why,
// which the streams never do.
var errNoToken = errors.New("handlers: a generation ended without a token or an error")

// endedEarly is the error of an event that ends its stream without a token or a finish, or
// nil. An event may carry no token: an external model's stream says it has started before its
// first piece comes (so that the answer's headers, and keep-alives, go out while it thinks),
// and says how it finished after its last.
func endedEarly(ev generate.Event) error {
	switch {
	case ev.HasToken:
		return nil
	case ev.Err != nil:
		return ev.Err
	case !ev.Done || ev.Finish != "" && ev.Finish != generate.FinishError:
		return nil
	}
	return errNoToken
}

// collect reads every event of a call that is answered whole. It returns why the call
// failed: a stream's error, or the context's when it ended first.
func (g *genCall) collect() error {
	for it := range g.events() {
		if err := endedEarly(it.ev); err != nil {
			return err
		}
		g.choices[it.i].add(it.ev)
	}
	return g.unfinished()
}

// unfinished is why the events stopped before every choice finished (the call's context
// ended), or nil when they all did: a deadline or a departure right after the last token
// does not undo an answer already complete.
func (g *genCall) unfinished() error {
	for _, ch := range g.choices {
		if !ch.done {
			if err := g.ctx.Err(); err != nil {
				return err
			}
			return errNoToken
		}
	}
	return nil
}

// stream commits a 200 text/event-stream response whose body is the call's events, read by
// the connection's own goroutine (genBody). The access-log line is written when the stream
// ends, and the call's context is released then.
func (s *server) stream(c *fiber.Ctx, g *genCall, ans answer) error {
	g.streaming = true
	d := s.openStream(c, "text/event-stream")
	stall := g.x.route.stall
	if stall == 0 {
		stall = s.opts.Limits.WriteTimeout
	}
	p := pace{stall: stall, keepAlive: g.ep.KeepAlive, interval: max(g.ep.StreamInterval, 1)}
	if p.keepAlive <= 0 {
		p.keepAlive = DefaultKeepAlive
	}
	closed := func(outcome string) {
		select {
		case <-d.ready:
			s.closeStream(d, outcome, g.stats())
		default:
			// The response was replaced before it was written (a failure after the handler
			// chose to stream): the request's own access-log line is the one written.
		}
		g.outcome = outcome
		g.done()
	}
	conn := c.Context().Conn()
	if _, inProcess := callerContext(c); inProcess {
		// Its writes never wait, so it cannot stall, and cost no socket write to hold for.
		conn, p.interval = nil, 1
	}
	c.Context().SetBodyStream(newGenBody(g, ans, conn, p, closed), -1)
	return nil
}

// openStream commits a 200 response of contentType whose body is written after the handler
// returns, and returns the record of its access-log line, which closeStream completes.
func (s *server) openStream(c *fiber.Ctx, contentType string) *deferredRecord {
	c.Set(fiber.HeaderContentType, contentType)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	c.Status(fiber.StatusOK)
	d := &deferredRecord{ready: make(chan struct{})}
	d.charge, _ = c.Locals(localCharge).(admission.Charge)
	c.Locals(localDeferred, d)
	return d
}

// closeStream writes the access-log line (and counts the request) of a stream that ended.
func (s *server) closeStream(d *deferredRecord, outcome string, stats logStats) {
	<-d.ready
	settle(d.charge, fiber.StatusOK, stats)
	e := d.entry
	e.outcome, e.stats = outcome, stats
	e.elapsed = s.opts.Clock.Now().Sub(d.start)
	s.log(context.Background(), e)
}

// promptTokens counts the prompt tokens of every prompt, once however many choices continue
// it.
func (g *genCall) promptTokens() int {
	n := 0
	for i, st := range g.streams {
		if i%max(g.n, 1) == 0 {
			n += st.PromptTokens()
		}
	}
	return n
}

// generated counts the tokens every choice has generated.
func (g *genCall) generated() int {
	n := 0
	for i := range g.choices {
		n += len(g.choices[i].tokens)
	}
	return n
}

// stats summarises the call for the access log.
func (g *genCall) stats() *genStats {
	return &genStats{model: g.model.Name(), prompt: g.promptTokens(), generated: g.generated(),
		seqs: len(g.streams), firstToken: g.firstToken, uncounted: g.uncounted}
}

// genStats are what the access log records of a generation: sizes and timings only.
type genStats struct {
	model                   string
	prompt, generated, seqs int
	firstToken              time.Duration // 0: none
	uncounted               bool          // the counts are not the model's tokens
}

// roomLeft says how many new tokens fit after a prompt too long for its request.
func roomLeft(long *generate.TooLongError) string {
	if room := long.MaxPositions - long.Prompt; room >= 1 {
		return "at most " + strconv.Itoa(room) + " new tokens fit after this prompt"
	}
	return "the prompt alone is too long"
}

// spentInFailing is what the call used once it generated a token: a call refused before that
// (a prompt too long) spent nothing the caller should pay for.
func (g *genStats) spentInFailing() int {
	if g.generated == 0 {
		return 0
	}
	return g.tokensUsed()
}

// tokensUsed is what the call used, or -1 when the model does not say (the estimate stands).
func (g *genStats) tokensUsed() int {
	if g.uncounted {
		return -1
	}
	return g.prompt + g.generated
}

func (g *genStats) attrs() []slog.Attr {
	a := []slog.Attr{slog.String("model", g.model)}
	if !g.uncounted {
		a = append(a, slog.Int("prompt_tokens", g.prompt), slog.Int("generated_tokens", g.generated))
	}
	a = append(a, slog.Int("sequences", g.seqs))
	if g.firstToken > 0 {
		a = append(a, slog.Float64("first_token_ms", float64(g.firstToken.Microseconds())/1000))
	}
	return a
}

// generationLimitMessage words a request the model cannot take, naming sizes only: the
// model's and what the server counted, never a number the client chose.
func generationLimitMessage(err error) string {
	var long *generate.TooLongError
	switch {
	case errors.As(err, &long):
		return "The prompt (" + strconv.Itoa(long.Prompt) + " tokens) and the tokens to generate must fit the model's context of " +
			strconv.Itoa(long.MaxPositions) + " tokens: " + roomLeft(long)
	case errors.Is(err, generate.ErrEmptyPrompt):
		return "`inputs` cannot be empty"
	case errors.Is(err, generate.ErrUnknownToken):
		return "a token id of the prompt, `logit_bias` or `stop_token_ids` is past the model's vocabulary"
	}
	return "the sequence does not fit in the KV cache"
}
