package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/audit"
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
			ep.StreamInterval = gw.Generation.StreamInterval
		}
		ep = ep.withDefaults()
		gw.upstreamChat = &ep
	}
	return gw
}

func (s *server) serveGatewayChat(c *fiber.Ctx, x *exchange, gw *GatewayEndpoint) (err error) {
	var sess *gateway.Session
	var unconfigured bool
	x.gateway = true
	defer s.auditAtExit(c, x, func(err error) audit.Record { return gatewayRecord(c, sess, unconfigured, err) }, &err)
	d := chatDialect{}
	if gw == nil { // a key's conversations for the gateway, on a server without its face
		unconfigured = true
		return s.writeGenError(c, d, gatewayNotConfigured("The privacy gateway this key's conversations go through is not running"))
	}
	ep, completion := gw.Generation, "local"
	if gw.upstreamChat != nil {
		ep, completion = gw.upstreamChat, gw.ChatUpstream.Kind()
	}
	if ep == nil || (ep.Chat == nil && gw.upstreamChat == nil) {
		unconfigured = true
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
	if gw.upstreamChat != nil {
		// Passed on: temperature, top_p, seed and the penalties. These the external model
		// would not be asked for, and an answer that ignored them would say nothing of it.
		for _, p := range []struct {
			name string
			set  bool
		}{{"stop", len(req.Stop) > 0 && string(req.Stop) != "null"}, {"logit_bias", req.LogitBias != nil}, {"top_k", req.TopK != nil},
			{"repetition_penalty", req.RepetitionPenalty != nil}, {"ignore_eos", req.IgnoreEOS != nil}, {"min_p", req.MinP != nil},
			{"min_tokens", req.MinTokens != nil}, {"stop_token_ids", req.StopTokenIDs != nil}} {
			if p.set {
				return invalid(p.name, "`"+p.name+"` is not available when the gateway answers from an external model")
			}
		}
	}
	msgs, param, msg := chatMessages(req.Messages)
	if msg != "" {
		return invalid(param, msg)
	}
	if param, msg := outboundCalls(msgs, req.Tools); msg != "" {
		return invalid(param, msg)
	}
	// JSON the conversation carries (calls' arguments, tools' JSON answers) is taken apart:
	// every key, string and number of it is a text of its own, found in the same pass as
	// the messages and redacted in place, so that the JSON stays JSON.
	docs := conversationJSON(msgs)
	texts := make([]chat.Message, 0, len(msgs))
	for i, m := range msgs {
		if docs.owns(i) {
			m.Content = ""
		}
		texts = append(texts, chat.Message{Content: m.Content})
	}
	for _, d := range docs {
		for _, leaf := range d.leaves {
			texts = append(texts, chat.Message{Content: leaf})
		}
	}
	// The request's own definitions (its tools, its response format) are read in the same
	// pass, each string as the model will read it (JSON's escapes undone: "Jos\u00e9" is
	// José), so that a placeholder written in them is reserved.
	defs := requestDefinitions(c.Body())
	firstDef := len(texts)
	for _, def := range defs {
		for j, leaf := range def.leaves {
			if !def.free[j] {
				leaf = identifierWords(leaf) // only refused, never redacted: read as words
			}
			texts = append(texts, chat.Message{Content: leaf})
		}
	}
	// So are the calls' names, which leave as they are, whether the request declares its tools
	// or not: a name is no free text to redact, so a span in one refuses the request, as one
	// in a function's declared name does.
	firstName := len(texts)
	for _, m := range msgs {
		for _, call := range m.ToolCalls {
			texts = append(texts, chat.Message{Content: identifierWords(call.Name)})
		}
	}
	if msg := conversationText(texts, s.opts.Limits); msg != "" {
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
	found, err := conversationPII(ctx, x, ex, texts, opts)
	if err != nil {
		refuse := gw.PII.Gate.RefuseUnbooked // a retry presents its token at the route's gate
		if gw.PII.Gate == x.gate {
			refuse = gw.PII.Gate.Refuse
		}
		if ref, ok := refuse(x.prio, err); ok {
			sess.End(gateway.Failed, gateway.DetectionRefused)
			return s.writeGenError(c, d, queueRefusal(ref))
		}
		e := s.failure(x, ctx, err)
		endFailed(sess, e, gateway.Failed, gateway.DetectionFailed)
		return s.writeGenError(c, d, e)
	}
	for _, t := range texts {
		sess.Reserve(t.Content)
	}
	// A name found in one message is looked for in every other, the earlier ones too: every
	// message's spans, the sweep's among them, are held before any is redacted.
	var recall entities.Recall
	swept := make([][]entities.Entity, len(texts))
	for i, t := range texts {
		swept[i], _ = recall.SafetySweep(t.Content, found[i], opts.SmartMerge)
	}
	at := firstDef
	for _, def := range defs {
		for j := range def.leaves {
			if spans := swept[at]; len(spans) > 0 && !def.free[j] {
				sess.Screen(spans)
				return s.writeGenError(c, d, gatewayRefusal(sessRefuse(sess, gateway.Tripwire)))
			}
			at++
		}
	}
	for _, spans := range swept[firstName:] {
		if len(spans) > 0 {
			sess.Screen(spans)
			return s.writeGenError(c, d, gatewayRefusal(sessRefuse(sess, gateway.Tripwire)))
		}
	}
	for i, t := range texts {
		recall.Hold(t.Content, swept[i])
	}
	redact := func(text string, spans []entities.Entity) string {
		ents, _ := recall.SafetySweep(text, spans, opts.SmartMerge)
		sess.Screen(ents) // counts them; the chat policy refuses none
		return sess.Redact(text, ents)
	}
	// What the tripwire reads: every text that leaves, the names of the calls and the
	// request's own definitions among them. tool_choice leaves as the mode and a declared
	// tool's name only (toolPlan.choiceJSON).
	var sent []string
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			sent = append(sent, c.Name, identifierWords(c.Name)) // "getSmithRecord" holds Smith
		}
		if m.Content == "" || docs.owns(i) {
			continue
		}
		msgs[i].Content = redact(m.Content, found[i])
		sent = append(sent, msgs[i].Content)
	}
	at = len(msgs)
	for _, doc := range docs {
		leaves := make([]string, len(doc.leaves))
		for j, leaf := range doc.leaves {
			spans := found[at]
			if doc.numbers[j] && len(spans) == 0 && identifierDigits(leaf) {
				// A number alone says nothing of what it is; one as long as an identifier is
				// taken for one.
				spans = []entities.Entity{{Label: "id_number", Start: 0, End: len(leaf), Score: 1}}
			}
			leaves[j] = redact(leaf, spans)
			sent = append(sent, leaves[j])
			at++
		}
		doc.set(msgs, leaves)
	}
	written := make(map[string]json.RawMessage, len(defs))
	for _, def := range defs {
		leaves := make([]string, len(def.leaves))
		for j, leaf := range def.leaves {
			leaves[j] = leaf
			if def.free[j] {
				leaves[j] = redact(leaf, found[at])
			}
			sent = append(sent, leaves[j])
			at++
		}
		written[def.key] = json.RawMessage(withLeaves(def.raw, def.leaves, leaves))
	}
	redacted, ok := rebuildChat(c.Body(), msgs, written)
	if !ok || ambiguousKeys(c.Body()) {
		return s.writeGenError(c, d, gatewayRefusal(sessRefuse(sess, gateway.Ambiguous)))
	}
	if ref := sess.Send(string(redacted), sent...); ref != nil {
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
		return "The messages' text (with the tools' and response format's strings) exceeds the privacy gateway's limit of " + strconv.Itoa(lim.MaxTextChars) +
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
// key "messages" that a case-insensitive decoder would also take removed, and the members
// named in written (by their keys as the body spells them) replaced by their values. It
// checks the result the way the chat dialect will read it: the messages it gets must be msgs
// exactly. Every other value leaves as the caller wrote it, which is what the tripwire read:
// a body with two keys one decoder could take for each other was refused before
// (ambiguousKeys).
func rebuildChat(body []byte, msgs []chat.Message, written map[string]json.RawMessage) ([]byte, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil, false
	}
	for k := range fields {
		if strings.EqualFold(k, "messages") {
			delete(fields, k)
		}
	}
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		out[i] = map[string]any{"role": m.Role, "content": m.Content}
		if len(m.ToolCalls) > 0 {
			calls := make([]map[string]any, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				calls[j] = map[string]any{"id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}}
			}
			out[i]["tool_calls"] = calls
		}
		if m.ToolCallID != "" {
			out[i]["tool_call_id"] = m.ToolCallID
		}
		if m.Name != "" {
			out[i]["name"] = m.Name
		}
	}
	fields["messages"], _ = json.Marshal(out)
	for k, v := range written {
		if _, ok := fields[k]; !ok {
			return nil, false
		}
		fields[k] = v
	}
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

// ambiguousKeys says whether an object in body holds two keys that a case-insensitive
// decoder (encoding/json's, whose folding takes "ſ" for "s") could take for one another,
// outside the top level's "messages" in any spelling, which rebuildChat replaces whole. Of
// two such keys one value is read and the other may be sent: the outbound check reads every
// string of the one it decodes (requestDefinitions), so it must be the only one. A body that is not
// JSON is not ambiguous here; the decoder refuses it.
func ambiguousKeys(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	ambiguous, err := ambiguousValue(dec, true, true)
	return err == nil && ambiguous
}

// ambiguousValue reads one value from dec and says whether an object in it holds two keys
// equal under case folding; check false reads the value only. top says the value is the body.
func ambiguousValue(dec *json.Decoder, check, top bool) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	d, ok := tok.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return false, nil
	}
	found := false
	keys := map[string]bool{}
	for dec.More() {
		checkNext := check
		if d == '{' {
			tok, err := dec.Token()
			if err != nil {
				return false, err
			}
			key, _ := tok.(string)
			if top && strings.EqualFold(key, "messages") {
				checkNext = false // replaced whole by rebuildChat
			} else if check {
				k := foldKey(key)
				found = found || keys[k]
				keys[k] = true
			}
		}
		inner, err := ambiguousValue(dec, checkNext, false)
		if err != nil {
			return false, err
		}
		found = found || inner
	}
	_, err = dec.Token() // the closing delimiter
	return found, err
}

// foldKey is s with every letter its case-folding orbit's smallest member: two keys are
// equal under strings.EqualFold exactly when their foldKeys are.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// identifierWords is an identifier ("calculate_bmi", "getPatientByMrn") as the words it is made
// of, which is how the PII pass reads a text it only refuses: read whole, the model takes most
// snake_case words for e-mail addresses, and refused agent conversations that called
// calculate_bmi; read as words, "chart_for_John_Smith" still names John Smith. Anything else is
// returned as it is.
func identifierWords(s string) string {
	if !identifier.MatchString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '_':
			b.WriteByte(' ')
			continue
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(rune(s[i-1])):
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

var identifier = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// definition is a JSON value of the request beside its messages (its tools, its response
// format), taken apart into its leaves (keys, strings and numbers, in document order) as it
// will be sent. Its free text, the strings of `description` and `title` written for the model
// to read, is redacted in place; a span anywhere else (a function's name, an enum's value, a
// key) refuses the request, since the model or the constraint would read a placeholder there
// as the value itself.
type definition struct {
	key    string // the body's key, as the caller spelt it
	raw    string
	leaves []string
	free   []bool // which leaves are free text
}

// requestDefinitions are body's tools and response format, in its keys' order (the same
// leaves in the same order for the same body, so that the PII pass over them answers the
// same each time). A body that is not a JSON object has none; the decoder refuses it.
func requestDefinitions(body []byte) []definition {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	var out []definition
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !(strings.EqualFold(k, "tools") || strings.EqualFold(k, "response_format")) || !present(fields[k]) {
			continue
		}
		def := definition{key: k, raw: string(fields[k])}
		mapLeaves(def.raw, func(leaf jsonLeaf) (string, bool) {
			def.leaves = append(def.leaves, leaf.text)
			def.free = append(def.free, !leaf.number && (leaf.member == "description" || leaf.member == "title"))
			return leaf.text, false
		})
		out = append(out, def)
	}
	return out
}

// outboundCalls makes a conversation's calls safe to send: each call names one of the
// request's tools (or, without tools, a function name, never free text), ids are replaced by
// opaque ones (the same for a call and the tool message that answers it), and no message keeps
// a `name` (free text the caller chose). A non-empty msg is the validation error.
func outboundCalls(msgs []chat.Message, rawTools json.RawMessage) (param, msg string) {
	plan, _, _ := readTools(rawTools, nil, nil)
	ids := map[string]string{}
	opaque := func(id string) string {
		if o, ok := ids[id]; ok {
			return o
		}
		o := "call_" + strconv.Itoa(len(ids))
		ids[id] = o
		return o
	}
	for i := range msgs {
		m := &msgs[i]
		for k := range m.ToolCalls {
			c := &m.ToolCalls[k]
			_, known := plan.paramsOf(c.Name)
			if !toolName.MatchString(c.Name) || (plan != nil && !known) {
				return "messages[" + strconv.Itoa(i) + "]", "a call names a function that is not among `tools`"
			}
			c.ID = opaque(c.ID)
		}
		if m.ToolCallID != "" {
			m.ToolCallID = opaque(m.ToolCallID)
		}
		m.Name = ""
	}
	return "", ""
}

// jsonDoc is a JSON text of a conversation (a call's arguments, a tool's answer that is
// JSON) taken apart into its leaves: keys, strings and numbers, in document order.
type jsonDoc struct {
	msg, call int // call -1: the message's content
	raw       string
	leaves    []string
	numbers   []bool // which leaves are numbers
}

// identifierDigits reports whether a JSON number has as many digits as an identifier (a
// phone number, a record number) does: six or more.
func identifierDigits(number string) bool {
	n := 0
	for _, r := range number {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n >= 6
}

// jsonDocs are a conversation's JSON texts.
type jsonDocs []jsonDoc

// owns reports whether message i's content is one of the documents.
func (d jsonDocs) owns(i int) bool {
	for _, doc := range d {
		if doc.msg == i && doc.call < 0 {
			return true
		}
	}
	return false
}

// conversationJSON finds the JSON texts of msgs: every call's arguments, and the content of a
// tool message that is a JSON object or list. Arguments that are not JSON are one leaf.
func conversationJSON(msgs []chat.Message) jsonDocs {
	var out jsonDocs
	take := func(msg, call int, raw string, always bool) {
		doc := jsonDoc{msg: msg, call: call, raw: raw}
		if _, ok := mapLeaves(raw, func(leaf jsonLeaf) (string, bool) {
			doc.leaves, doc.numbers = append(doc.leaves, leaf.text), append(doc.numbers, leaf.number)
			return leaf.text, false
		}); ok {
			out = append(out, doc)
		} else if always {
			doc.leaves, doc.numbers = []string{raw}, []bool{false}
			out = append(out, doc)
		}
	}
	for i, m := range msgs {
		for k, c := range m.ToolCalls {
			take(i, k, c.Arguments, true)
		}
		if t := strings.TrimSpace(m.Content); m.Role == "tool" && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
			take(i, -1, m.Content, false)
		}
	}
	return out
}

// set writes the document back into msgs with its leaves replaced by leaves (a number that
// changed becomes a string).
func (d jsonDoc) set(msgs []chat.Message, leaves []string) {
	var out string
	if len(d.leaves) == 1 && d.leaves[0] == d.raw {
		out = leaves[0]
	} else {
		out = withLeaves(d.raw, d.leaves, leaves) // a document of no leaves ({}, [], null) as it is
	}
	if d.call < 0 {
		msgs[d.msg].Content = out
	} else {
		msgs[d.msg].ToolCalls[d.call].Arguments = out
	}
}

// withLeaves is the JSON document raw, whose leaves (mapLeaves') are old, compact, with
// them replaced by leaves.
func withLeaves(raw string, old, leaves []string) string {
	if slices.Equal(old, leaves) {
		return raw
	}
	n := 0
	out, _ := mapLeaves(raw, func(leaf jsonLeaf) (string, bool) {
		n++
		return leaves[n-1], leaves[n-1] != leaf.text
	})
	return out
}

// jsonLeaf is a key, string value or number of a JSON document.
type jsonLeaf struct {
	text   string
	number bool
	member string // the key whose value the leaf is ("" for a key, a list's element, the top)
}

// mapLeaves is the JSON document raw, compact, with fn applied to every key, string value
// and number, in document order: fn returns the leaf's replacement and whether it changed; a
// number that changed is written as a string. False when raw is not one JSON value.
func mapLeaves(raw string, fn func(jsonLeaf) (string, bool)) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	type frame struct {
		object bool
		n      int
		key    string // the last key read
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			b.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			continue
		}
		var f *frame
		if len(stack) > 0 {
			f = &stack[len(stack)-1]
			switch {
			case f.n > 0 && f.object && f.n%2 == 1:
				b.WriteByte(':')
			case f.n > 0:
				b.WriteByte(',')
			}
			f.n++
		} else if b.Len() > 0 {
			return "", false // a second value
		}
		member := ""
		if f != nil && f.object && f.n%2 == 0 {
			member = f.key
		}
		switch t := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(t))
			stack = append(stack, frame{object: t == '{'})
		case string:
			if f != nil && f.object && f.n%2 == 1 {
				f.key = t
			}
			t, _ = fn(jsonLeaf{text: t, member: member})
			enc, _ := json.Marshal(t)
			b.Write(enc)
		case json.Number:
			if out, changed := fn(jsonLeaf{text: string(t), number: true, member: member}); changed {
				enc, _ := json.Marshal(out)
				b.Write(enc)
			} else {
				b.WriteString(string(t))
			}
		case bool:
			b.WriteString(strconv.FormatBool(t))
		case nil:
			b.WriteString("null")
		}
	}
	return b.String(), b.Len() > 0 && len(stack) == 0
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
	inner := ans.(*chatAnswer)
	inner.restore = g.sess.Piece
	return req, &restoringAnswer{inner: inner, sess: g.sess}, nil
}

// restoringAnswer writes the chat answer with the request's placeholders restored by its
// session, which keeps the record when the call ends.
type restoringAnswer struct {
	inner *chatAnswer
	sess  *gateway.Session
}

// whole is the answer judged whole: one with a placeholder the request did not send is
// refused (the session's rule), before any of it leaves.
func (a *restoringAnswer) whole(g *genCall) any {
	out := a.inner.whole(g).(chatCompletion)
	// Every text of the answer, in order: each choice's content, then its calls' arguments
	// (JSON, where an original goes back escaped).
	var parts []gateway.Part
	var slots []*string
	for i := range out.Choices {
		msg := out.Choices[i].Message
		if msg == nil {
			continue
		}
		if msg.Content != nil {
			parts, slots = append(parts, gateway.Part{Text: *msg.Content, JSON: a.inner.p.jsonAnswer}), append(slots, msg.Content)
		}
		for k := range msg.ToolCalls {
			f := &msg.ToolCalls[k].Function
			parts, slots = append(parts, gateway.Part{Text: f.Arguments, JSON: true}), append(slots, &f.Arguments)
		}
	}
	restored, ref := a.sess.RestoreParts(parts...)
	if ref != nil {
		return gatewayRefusal(ref)
	}
	for k, slot := range slots {
		*slot = restored[k]
	}
	return out
}

// event restores as the chat answer writes each text (chatAnswer.restore).
func (a *restoringAnswer) event(g *genCall, i int, ev generate.Event) []byte {
	return a.inner.event(g, i, ev)
}

// end is a stream's last events, once its record is stored: a stream whose record cannot be
// stored ends with the error event instead.
func (a *restoringAnswer) end(g *genCall) [][]byte {
	if _, e := g.s.keepRecord(g.x, a.sess.Forward(), fiber.StatusOK); e != nil {
		_, body := g.d.reply(e, g.x.id)
		data := eventJSON(body)
		return [][]byte{data}
	}
	return a.inner.end(g)
}

// failing ends the session of a stream about to end with an error event, and stores its
// record before that event goes.
func (a *restoringAnswer) failing(g *genCall) {
	a.release(g)
}

// release ends the session when the call has ended, however it ended; a stream's record not
// stored yet (its client left) is stored now. A client that left, or stopped reading, is
// recorded as that (the abort's own reason), not the model's failure, streamed or not.
func (a *restoringAnswer) release(g *genCall) {
	ok := len(g.choices) > 0
	for i := range g.choices {
		if f := g.choices[i].finish; f == generate.FinishError || f == "" {
			ok = false
		}
	}
	switch {
	case g.outcome == OutcomeAborted:
		a.sess.End(gateway.Aborted, leftReason(g.aborted))
	case !ok:
		reason := gateway.CompletionFailed
		if g.uncounted { // the external model's call
			reason = gateway.TransportFailed
		}
		a.sess.End(gateway.TransportError, reason)
	default:
		a.sess.Forward()
	}
	if g.streaming {
		// The stream ends failed (or its client has left) whether or not this is stored.
		_, _ = g.s.keepRecord(g.x, a.sess.Record(), fiber.StatusOK)
	}
}

// leftReason is the gateway's reason for a request aborted with the abort reason counted
// (countAborted): a client that stopped reading, or one that left however it left.
func leftReason(aborted string) gateway.Reason {
	if aborted == "client_stalled" {
		return gateway.ClientStalled
	}
	return gateway.ClientClosed
}
