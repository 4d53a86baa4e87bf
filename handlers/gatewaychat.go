package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/chat"
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
	r := Route{Path: "/gateway/v1/chat/completions", Gate: gw.PII.Gate, Models: gw.PII.models(), wire: chatDialect{},
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

// WithDefaults is gw with its generation endpoints' bounds filled as the generation routes
// fill them (Options.GatewayFace takes it so): the in-process model's, and the external chat
// model's as a generation endpoint of its own. Behind the gateway, the gateway chooses the
// model, whatever a request names.
func (gw GatewayEndpoint) WithDefaults() GatewayEndpoint {
	if gw.Generation != nil {
		ep := gw.Generation.withDefaults()
		ep.anyModel = true
		gw.Generation = &ep
	}
	if gw.ChatUpstream != nil {
		ep := GenerationEndpoint{Model: upstreamModel{up: gw.ChatUpstream, defaultNew: gw.maxNewTokens()},
			Gate: gw.PII.Gate, MaxChoices: 1, anyModel: true}
		if gw.Generation != nil {
			ep.KeepAlive, ep.StallTimeout, ep.Timeout = gw.Generation.KeepAlive, gw.Generation.StallTimeout, gw.Generation.Timeout
		}
		ep = ep.withDefaults()
		gw.upstreamChat = &ep
	}
	return gw
}

func (s *server) serveGatewayChat(c *fiber.Ctx, x *exchange, gw *GatewayEndpoint) (err error) {
	var sess *gateway.Session
	defer func() {
		if !streaming(c, err) { // a stream keeps its record as it ends
			err = s.audited(c, x, gatewayRecord(c, sess, err), err)
		}
	}()
	d := chatDialect{}
	ep, completion := gw.Generation, "local"
	if gw.upstreamChat != nil {
		ep, completion = gw.upstreamChat, gw.ChatUpstream.Kind()
	}
	if ep == nil || (ep.Chat == nil && gw.upstreamChat == nil) {
		return s.writeGenError(c, d, gatewayNotConfigured("The privacy gateway has no chat model to complete with"))
	}
	invalid := func(param, msg string) error {
		return s.writeGenError(c, d, &apiError{Status: fiber.StatusBadRequest, Code: CodeValidation, Message: msg,
			Outcome: OutcomeFailed, param: param})
	}
	// The messages as the chat dialect itself reads them, so that what is redacted is what
	// would be rendered.
	var req chatRequest
	if param, msg := decodeObject(c.Body(), &req); msg != "" {
		return invalid(param, msg)
	}
	if req.Logprobs != nil && *req.Logprobs {
		return invalid("logprobs", "`logprobs` is not available through the privacy gateway: its tokens would be placeholders")
	}
	if gw.upstreamChat != nil && req.N != nil && *req.N != 1 {
		return invalid("n", "`n` must be 1 when the gateway answers from an external model")
	}
	msgs, param, msg := chatMessages(req.Messages)
	if msg != "" {
		return invalid(param, msg)
	}
	if msg := conversationText(msgs, s.opts.Limits); msg != "" {
		return invalid("messages", msg)
	}
	// Every span the model finds is redacted, whatever its score: the chat policy refuses
	// nothing by confidence or category.
	sess = gateway.Begin(completion, gateway.Policy{Name: "chat"}, s.residual)
	ctx, done := s.workContext(c, x)
	defer done()
	ex, _, _, _ := gw.PII.resolve(nil, false)
	opts := s.piiDefaults
	opts.ConfidenceThreshold = 0
	found, err := conversationPII(ctx, x, ex, msgs, opts)
	if err != nil {
		if ref, ok := gw.PII.Gate.Refuse(x.prio, err); ok {
			sess.End(gateway.Failed, gateway.DetectionRefused)
			return s.writeGenError(c, d, queueRefusal(ref))
		}
		sess.End(gateway.Failed, gateway.DetectionFailed)
		return s.writeGenError(c, d, s.failure(x, ctx, err))
	}
	texts := make([]string, 0, len(msgs))
	for i, msg := range msgs {
		if msg.Content == "" {
			continue
		}
		ents, _ := entities.SafetySweep(msg.Content, found[i], opts.SmartMerge)
		sess.Screen(ents) // counts them; the chat policy refuses none
		msgs[i].Content = sess.Redact(msg.Content, ents)
		texts = append(texts, msgs[i].Content)
	}
	redacted, ok := rebuildChat(c.Body(), msgs)
	if !ok {
		return s.writeGenError(c, d, gatewayRefusal(sessRefuse(sess, gateway.Ambiguous)))
	}
	if ref := sess.Send(string(redacted), texts...); ref != nil {
		return s.writeGenError(c, d, gatewayRefusal(ref))
	}
	return s.serveGeneration(c, x, ep, gatewayDialect{chatDialect: d, body: redacted, sess: sess})
}

// sessRefuse ends sess blocked for reason, for a refusal the handler itself finds.
func sessRefuse(sess *gateway.Session, reason gateway.Reason) *gateway.Refusal {
	sess.End(gateway.Blocked, reason)
	return &gateway.Refusal{Status: gateway.Blocked, Reason: reason}
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
		if !sameMessage(got[i], msgs[i]) {
			return nil, false
		}
	}
	return rebuilt, true
}

func sameMessage(a, b chat.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && a.Name == b.Name &&
		slices.Equal(a.ToolCalls, b.ToolCalls)
}

// gatewayDialect is the chat dialect over the redacted body, whose answers the session
// restores.
type gatewayDialect struct {
	chatDialect
	body []byte
	sess *gateway.Session
}

func (g gatewayDialect) read(_ []byte, ep *GenerationEndpoint, info requestInfo) (genRequest, answer, *apiError) {
	req, ans, bad := g.chatDialect.read(g.body, ep, info)
	if bad != nil {
		g.sess.End(gateway.Rejected, gateway.InvalidRequest) // the caller's mistake, not the model's
		return req, nil, bad
	}
	return req, &restoringAnswer{inner: ans.(*chatAnswer), sess: g.sess}, nil
}

// restoringAnswer writes the chat answer with the request's placeholders restored by its
// session, which keeps the record when the call ends.
type restoringAnswer struct {
	inner *chatAnswer
	sess  *gateway.Session
	g     *genCall
}

// whole is the answer judged whole: one with a placeholder the request did not send is
// refused (the session's rule), before any of it leaves.
func (a *restoringAnswer) whole(g *genCall) any {
	a.g = g
	out := a.inner.whole(g).(chatCompletion)
	choices := make([]string, len(out.Choices))
	for i := range out.Choices {
		if msg := out.Choices[i].Message; msg != nil && msg.Content != nil {
			choices[i] = *msg.Content
		}
	}
	restored, ref := a.sess.Restore(choices...)
	if ref != nil {
		return gatewayRefusal(ref)
	}
	for i := range out.Choices {
		if msg := out.Choices[i].Message; msg != nil && msg.Content != nil {
			msg.Content = &restored[i]
		}
	}
	return out
}

func (a *restoringAnswer) event(g *genCall, i int, ev generate.Event) []byte {
	a.g = g
	ev.Trimmed = a.sess.Piece(i, ev.Trimmed, ev.Done)
	return a.inner.event(g, i, ev)
}

// end is a stream's last events, once its record is stored: a stream whose record cannot be
// stored ends with the error event instead.
func (a *restoringAnswer) end(g *genCall) [][]byte {
	if _, e := g.s.keepRecord(g.x, a.sess.Forward(), fiber.StatusOK); e != nil {
		_, body := g.d.reply(e, g.x.id)
		data, _ := marshal(body)
		return [][]byte{data}
	}
	return a.inner.end(g)
}

// failing ends the session of a stream about to end with an error event, and stores its
// record before that event goes.
func (a *restoringAnswer) failing(g *genCall) {
	a.g = g
	a.release()
}

// release ends the session when the call has ended, however it ended; a stream's record not
// stored yet (its client left) is stored now.
func (a *restoringAnswer) release() {
	ok := a.g != nil && len(a.g.choices) > 0
	if ok {
		for i := range a.g.choices {
			if f := a.g.choices[i].finish; f == generate.FinishError || f == "" {
				ok = false
			}
		}
	}
	if !ok {
		reason := gateway.CompletionFailed
		if a.g != nil && a.g.uncounted { // the external model's call
			reason = gateway.TransportFailed
		}
		a.sess.End(gateway.TransportError, reason)
	} else {
		a.sess.Forward()
	}
	if a.g != nil && a.g.streaming {
		// The stream ends failed (or its client has left) whether or not this is stored.
		_, _ = a.g.s.keepRecord(a.g.x, a.sess.Record(), fiber.StatusOK)
	}
}
