package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/gateway"
	"github.com/sluice-serving/sluice/generate"
)

// GatewayChat is OpenAI's chat completions with the privacy gateway in front, at
// /gateway/v1/chat/completions: every message's PII (every span the PII model finds, whatever
// its score, and the pattern sweep's) is replaced by a placeholder, one map for the
// whole request, before the conversation reaches the model; the answer's placeholders are
// restored, whole or as it streams (a placeholder cut across chunks waits until it is
// complete). A conversation whose redacted text still holds an identifier (the sweep again,
// or a redacted original found elsewhere) is refused before the model sees it. Any OpenAI
// client gets this by changing its base URL.
func GatewayChat(gw GatewayEndpoint) Route {
	gw = gw.WithDefaults()
	r := Route{Path: "/gateway/v1/chat/completions", Gate: gw.PII.Gate, Models: gw.PII.models(),
		serve: func(s *server, c *fiber.Ctx, x *exchange) error { return s.serveGatewayChat(c, x, &gw) },
		cost:  func(_ *server, c *fiber.Ctx) float64 { return gw.chatCost(c.Body()) }}
	if gen := gw.Generation; gen != nil {
		r.Gate, r.timeout, r.stall, r.gen = gen.Gate, gen.Timeout, gen.StallTimeout, gen
		r.Models = []ModelInfo{{Name: gen.Model.Name(), MaxLength: gen.Model.MaxPositions()}}
	}
	return r
}

// chatCost is what a conversation through the gateway's face costs: as the chat dialect counts
// it when the in-process model answers, or when the external one does (serveGatewayChat's
// choice), the tokens asked of it, or the gateway's bound where none are asked. An external
// answer's length is the caller's to ask, bounded only by what a budget can hold.
func (gw *GatewayEndpoint) chatCost(body []byte) float64 {
	if gw.ChatUpstream == nil && gw.Generation != nil {
		return chatDialect{}.cost(body, gw.Generation)
	}
	_, maxTokens := chatAsks(body)
	n := gw.maxNewTokens()
	if maxTokens != nil {
		n = min(max(*maxTokens, 0), 1<<20)
	}
	return textCost(body) + float64(n)
}

// WithDefaults is gw with its generation endpoint's bounds filled as the generation routes
// fill them (Options.GatewayFace takes it so).
func (gw GatewayEndpoint) WithDefaults() GatewayEndpoint {
	if gw.Generation != nil {
		ep := gw.Generation.withDefaults()
		ep.anyModel = true
		gw.Generation = &ep
	}
	return gw
}

func (s *server) serveGatewayChat(c *fiber.Ctx, x *exchange, gw *GatewayEndpoint) error {
	d := chatDialect{}
	if gw.ChatUpstream == nil && (gw.Generation == nil || gw.Generation.Chat == nil) {
		return s.writeGenError(c, d, gatewayNotConfigured("The privacy gateway has no chat model to complete with"))
	}
	invalid := func(param, msg string) error {
		return s.writeGenError(c, d, &apiError{Status: fiber.StatusBadRequest, Code: CodeValidation, Message: msg,
			Outcome: OutcomeFailed, param: param})
	}
	// The messages as the chat dialect itself reads them (its decoder matches keys in any
	// case), so that what is redacted is what would be rendered.
	var req chatRequest
	if param, msg := decodeObject(c.Body(), &req); msg != "" {
		return invalid(param, msg)
	}
	if req.Logprobs != nil && *req.Logprobs {
		return invalid("logprobs", "`logprobs` is not available through the privacy gateway: its tokens would be placeholders")
	}
	msgs, param, msg := chatMessages(req.Messages)
	if msg != "" {
		return invalid(param, msg)
	}
	if msg := conversationText(msgs, s.opts.Limits); msg != "" {
		return invalid("messages", msg)
	}
	m := gateway.NewMap()
	record := gateway.Record{RequestID: x.id, Policy: map[string]any{"name": "chat"}, Completion: "local"}
	fail := func(status, reason string, e *apiError) error {
		m.Wipe()
		record.Status, record.Reason = status, reason
		s.audit(gw.Audit, record)
		return s.writeGenError(c, d, e)
	}
	ctx, done := s.workContext(c, x)
	owned := false // a stream from the upstream takes the context over, and ends it
	defer func() {
		if !owned {
			done()
		}
	}()
	ex, _, _, _ := gw.PII.resolve(nil, false)
	opts := s.piiDefaults
	opts.ConfidenceThreshold = 0 // every span the model finds is redacted, whatever its score
	counts := map[string]int{}
	record.Entities = counts
	found, err := conversationPII(ctx, x, ex, msgs, opts)
	if err != nil {
		if ref, ok := gw.PII.Gate.Refuse(x.prio, err); ok {
			return fail("error", "detection_refused", queueRefusal(ref))
		}
		return fail("error", "detection_failed", s.failure(x, ctx, err))
	}
	for i, msg := range msgs {
		if msg.Content == "" {
			continue
		}
		ents, _ := entities.SafetySweep(msg.Content, found[i], opts.SmartMerge)
		spans := make([]entities.Entity, len(ents))
		for j, e := range ents {
			spans[j] = entities.Entity{Start: e.Start, End: e.End, Label: e.Label}
			counts[deid.Canonical(e.Label)]++
		}
		msgs[i].Content = m.Redact(msg.Content, spans)
	}
	blocked := &apiError{Status: fiber.StatusBadRequest, Code: codeGatewayBlocked, Outcome: OutcomeFailed,
		Message: "Outbound tripwire detected residual PHI", param: "messages"}
	for _, msg := range msgs {
		if s.leaks(m, msg.Content) {
			return fail("blocked", "outbound_tripwire_detected", blocked)
		}
	}
	redacted, ok := rebuildChat(c.Body(), msgs)
	if !ok {
		return fail("blocked", "ambiguous_messages", blocked)
	}
	record.OutboundHash = gateway.Hash(string(redacted))
	if gw.ChatUpstream != nil {
		if req.N != nil && *req.N != 1 {
			m.Wipe()
			return invalid("n", "`n` must be 1 when the gateway answers from an external model")
		}
		owned = req.Stream != nil && *req.Stream
		return s.serveUpstreamChat(c, x, gw, &req, msgs, m, record, ctx, done)
	}
	return s.serveGeneration(c, x, gw.Generation, gatewayDialect{chatDialect: d, body: redacted, m: m,
		audit: func(r gateway.Record) { s.audit(gw.Audit, r) }, record: record})
}

// messageSeparator joins a conversation's messages for one pass of the PII model: a line
// break ends an entity, so none runs from one message into the next.
const messageSeparator = "\n\n"

// conversationText checks that a conversation's text, joined for its PII pass, is within the
// text limits every text route keeps; a non-empty answer says what is over.
func conversationText(msgs []chat.Message, lim Limits) string {
	seps := (len(msgs) - 1) * len(messageSeparator)
	chars, size := seps, seps
	for _, m := range msgs {
		chars += utf8.RuneCountInString(m.Content)
		size += len(m.Content)
	}
	if chars > lim.MaxTextChars || size > lim.MaxTextBytes {
		return "The messages' text exceeds the privacy gateway's limit of " + strconv.Itoa(lim.MaxTextChars) +
			" characters (" + strconv.Itoa(lim.MaxTextBytes) + " bytes)"
	}
	return ""
}

// conversationPII finds the PII of every message in one pass of the model over the whole
// conversation (its windows batched as one long text's are), not one pass per message: the
// spans of message i, with offsets into its own content.
func conversationPII(ctx context.Context, x *exchange, ex Extractor, msgs []chat.Message, opts entities.Options) ([][]entities.Entity, error) {
	var b strings.Builder
	starts := make([]int, len(msgs))
	for i, m := range msgs {
		if i > 0 {
			b.WriteString(messageSeparator)
		}
		starts[i] = b.Len()
		b.WriteString(m.Content)
	}
	found := make([][]entities.Entity, len(msgs))
	if strings.TrimSpace(b.String()) == "" {
		return found, nil
	}
	ents, _, err := ex.Extract(ctx, x.prio, b.String(), opts)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		// The first message the span ends after its start, then each it overlaps (a span
		// across a separator is cut in two, each part redacted in its own message).
		i := sort.Search(len(msgs), func(i int) bool { return starts[i]+len(msgs[i].Content) > e.Start })
		for ; i < len(msgs) && starts[i] < e.End; i++ {
			lo, hi := max(e.Start, starts[i]), min(e.End, starts[i]+len(msgs[i].Content))
			if lo < hi {
				found[i] = append(found[i], entities.Entity{Label: e.Label, Start: lo - starts[i], End: hi - starts[i], Score: e.Score})
			}
		}
	}
	return found, nil
}

// rebuildChat is body with its messages replaced by msgs, and every other spelling of the
// key "messages" that a case-insensitive decoder would also take removed. It checks the
// result the way the chat dialect will read it: the messages it gets must be msgs exactly.
func rebuildChat(body []byte, msgs []chat.Message) ([]byte, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil, false
	}
	for k := range fields {
		if strings.EqualFold(k, "messages") {
			delete(fields, k)
		}
	}
	out := make([]map[string]string, len(msgs))
	for i, m := range msgs {
		out[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	fields["messages"], _ = json.Marshal(out)
	rebuilt, err := json.Marshal(fields)
	if err != nil {
		return nil, false
	}
	var check chatRequest
	if _, msg := decodeObject(rebuilt, &check); msg != "" {
		return nil, false
	}
	got, _, msg := chatMessages(check.Messages)
	if msg != "" || len(got) != len(msgs) {
		return nil, false
	}
	for i := range got {
		if got[i] != msgs[i] {
			return nil, false
		}
	}
	return rebuilt, true
}

// gatewayDialect is the chat dialect over the redacted body, whose answers are restored.
type gatewayDialect struct {
	chatDialect
	body   []byte
	m      *gateway.Map
	audit  func(gateway.Record)
	record gateway.Record
}

func (g gatewayDialect) read(_ []byte, ep *GenerationEndpoint, info requestInfo) (genRequest, answer, *apiError) {
	req, ans, bad := g.chatDialect.read(g.body, ep, info)
	if bad != nil {
		g.m.Wipe()
		rec := g.record
		rec.Status, rec.Reason = "error", "invalid_request"
		g.audit(rec)
		return req, nil, bad
	}
	return req, &restoringAnswer{inner: ans.(*chatAnswer), m: g.m, restorers: map[int]*gateway.Restorer{},
		audit: g.audit, record: g.record}, nil
}

// restoringAnswer writes the chat answer with the request's placeholders restored.
type restoringAnswer struct {
	inner     *chatAnswer
	m         *gateway.Map
	restorers map[int]*gateway.Restorer // per choice, for streams
	// The request's audit record, appended when the call ends with what the model returned
	// (its hash) and the placeholders it invented.
	audit    func(gateway.Record)
	record   gateway.Record
	g        *genCall
	invented int
	released bool
}

func (a *restoringAnswer) whole(g *genCall) any {
	a.g = g
	out := a.inner.whole(g).(chatCompletion)
	for i := range out.Choices {
		if msg := out.Choices[i].Message; msg != nil && msg.Content != nil {
			restored, invented := a.m.Restore(*msg.Content)
			msg.Content = &restored
			a.invented += invented
		}
	}
	return out
}

func (a *restoringAnswer) event(g *genCall, i int, ev generate.Event) []byte {
	a.g = g
	r := a.restorers[i]
	if r == nil {
		r = a.m.Restorer()
		a.restorers[i] = r
	}
	text := r.Write(ev.Trimmed)
	if ev.Done {
		text += r.Flush()
	}
	ev.Trimmed = text
	return a.inner.event(g, i, ev)
}

func (a *restoringAnswer) end(g *genCall) [][]byte { return a.inner.end(g) }

// release wipes the map once the call has ended, and writes the audit record.
func (a *restoringAnswer) release() {
	if a.released {
		return
	}
	a.released = true
	a.m.Wipe()
	if a.audit == nil {
		return
	}
	rec := a.record
	rec.Status, rec.Reason = "forwarded", ""
	if a.g == nil || len(a.g.choices) == 0 {
		rec.Status, rec.Reason = "transport_error", "completion_failed"
	}
	if a.g != nil {
		for i := range a.g.choices {
			if a.g.choices[i].finish == generate.FinishError || a.g.choices[i].finish == "" {
				rec.Status, rec.Reason = "transport_error", "completion_failed"
			}
		}
		var returned strings.Builder
		for i := range a.g.choices {
			returned.WriteString(a.g.choices[i].trimmed.String())
		}
		rec.ReturnedHash = gateway.Hash(returned.String())
	}
	for _, r := range a.restorers {
		a.invented += r.Invented()
	}
	rec.Invented = a.invented
	a.audit(rec)
}

// serveUpstreamChat answers the OpenAI face from the external model: the redacted
// conversation goes out, the answer comes back restored, whole or as a stream of chunks (a
// placeholder cut across the upstream's pieces waits until it is complete; keep-alive
// comments fill the silences). When streaming, the call owns ctx and ends it with done.
func (s *server) serveUpstreamChat(c *fiber.Ctx, x *exchange, gw *GatewayEndpoint, req *chatRequest, msgs []chat.Message,
	m *gateway.Map, record gateway.Record, ctx context.Context, done func()) error {
	record.Completion = gw.ChatUpstream.Kind()
	maxTokens := 0
	if req.MaxCompletionTokens != nil {
		maxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	model := "upstream"
	if req.Model != nil {
		model = *req.Model
	}
	head := chatCompletion{ID: "chatcmpl-" + x.id, Object: "chat.completion", Created: s.opts.Clock.Now().Unix(),
		Model: model, SystemFingerprint: "sluice-" + s.opts.Version}
	// failed is the answer to a call that ended without an answer: the client leaving or the
	// deadline as any route says them, anything else as OpenMed's transport error.
	failed := func(err error) *apiError {
		if ctx.Err() != nil {
			return s.failure(x, ctx, ctx.Err())
		}
		s.opts.Logger.Warn("privacy gateway: the upstream failed", slog.String("request_id", x.id),
			slog.String("upstream", gw.ChatUpstream.Kind()), slog.String("error_type", errorType(err)))
		return &apiError{Status: fiber.StatusBadGateway, Code: codeGatewayTransport, Outcome: OutcomeFailed,
			Message: "External LLM transport failed", Details: map[string]string{"reason": "transport_failed"}}
	}
	finishRecord := func(e *apiError, returned string, invented int) {
		rec := record
		rec.Status, rec.ReturnedHash, rec.Invented = "forwarded", gateway.Hash(returned), invented
		if e != nil {
			rec.Status, rec.Reason = "transport_error", e.Code
		}
		s.audit(gw.Audit, rec)
	}
	if req.Stream == nil || !*req.Stream {
		defer m.Wipe()
		var b strings.Builder
		finish, err := gw.ChatUpstream.Chat(ctx, msgs, maxTokens, func(p string) error { b.WriteString(p); return nil })
		if err != nil {
			e := failed(err)
			finishRecord(e, b.String(), 0)
			return s.writeGenError(c, chatDialect{}, e)
		}
		restored, invented := m.Restore(b.String())
		finishRecord(nil, b.String(), invented)
		out := head
		out.Choices = []chatChoice{{Index: 0, Message: &chatOut{Role: "assistant", Content: &restored}, FinishReason: &finish}}
		c.Locals(localOutcome, OutcomeServed)
		return c.JSON(out)
	}
	d := s.openStream(c, "text/event-stream")
	conn := c.Context().Conn()
	stall := x.route.stall
	if stall == 0 {
		stall = s.opts.Limits.WriteTimeout
	}
	keepAlive := DefaultKeepAlive
	if gw.Generation != nil && gw.Generation.KeepAlive > 0 {
		keepAlive = gw.Generation.KeepAlive
	}
	c.Context().SetBodyStreamWriter(func(bw *bufio.Writer) {
		defer done()
		defer m.Wipe()
		w := &sseWriter{w: bw, conn: conn, stall: stall}
		// The upstream's pieces come on a channel, so that silences get keep-alive comments.
		pieces := make(chan string)
		type result struct {
			finish string
			err    error
		}
		ended := make(chan result, 1)
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			finish, err := gw.ChatUpstream.Chat(callCtx, msgs, maxTokens, func(p string) error {
				select {
				case pieces <- p:
					return nil
				case <-callCtx.Done():
					return callCtx.Err()
				}
			})
			ended <- result{finish, err}
		}()
		r := m.Restorer()
		var returned strings.Builder
		first := true
		chunk := func(text string, finish *string) error {
			delta := &chatOut{}
			if first {
				delta.Role, first = "assistant", false
			}
			if text != "" || delta.Role != "" {
				delta.Content = &text
			}
			ch := head
			ch.Object = "chat.completion.chunk"
			ch.Choices = []chatChoice{{Index: 0, Delta: delta, FinishReason: finish}}
			data, _ := marshal(ch)
			return w.send(data)
		}
		tick := time.NewTicker(keepAlive)
		defer tick.Stop()
		var writeErr error
		var res result
	loop:
		for {
			select {
			case p := <-pieces:
				returned.WriteString(p)
				if text := r.Write(p); text != "" {
					writeErr = chunk(text, nil)
				}
			case <-tick.C:
				writeErr = w.comment()
			case res = <-ended:
				break loop
			}
			if writeErr != nil {
				cancel() // the client has gone: the upstream call stops
				res = <-ended
				break
			}
		}
		outcome := OutcomeServed
		switch {
		case writeErr != nil:
			outcome = OutcomeAborted
			reason := "client_closed"
			if errors.Is(writeErr, errReaderStalled) {
				reason = "client_stalled"
			}
			s.countAborted(ctx, x.route, reason)
			finishRecord(nil, returned.String(), r.Invented())
		case res.err != nil:
			e := failed(res.err)
			outcome = e.Outcome
			finishRecord(e, returned.String(), r.Invented())
			_, body := chatDialect{}.reply(e, x.id)
			data, _ := marshal(body)
			_ = w.send(data)
		default:
			if err := chunk(r.Flush(), &res.finish); err == nil {
				err = w.send([]byte("[DONE]"))
				if err != nil {
					outcome = OutcomeAborted
				}
			} else {
				outcome = OutcomeAborted
			}
			finishRecord(nil, returned.String(), r.Invented())
		}
		s.closeStream(d, outcome, nil)
	})
	return nil
}
