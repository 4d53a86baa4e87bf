package handlers

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/generate"
)

// ChatTemplate renders a conversation as the generation model's prompt; *chat.Template is the
// real one. Its errors are chat's: a *chat.RefusedError is the conversation's fault.
type ChatTemplate interface {
	Render(msgs []chat.Message, tools []json.RawMessage) (chat.Prompt, error)
}

// OpenAI's chat completions API, POST /v1/chat/completions: messages in, rendered with the
// model's chat template into one prompt, assistant messages out, with usage; streamed as
// chat.completion.chunk deltas that end with "data: [DONE]". Everything but the messages and
// the answer's shape is the completions route's (openAISampling).
type chatRequest struct {
	openAISampling
	Messages            json.RawMessage `json:"messages"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	// Tools, ToolChoice and ParallelToolCalls are function calling's (tools.go).
	Tools             json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	// Functions and FunctionCall are OpenAI's deprecated tools and tool_choice, refused by
	// name so that a caller learns what to send instead.
	Functions    json.RawMessage `json:"functions"`
	FunctionCall json.RawMessage `json:"function_call"`
	// Modalities and Audio ask for OpenAI's spoken answers: taken where they ask for text
	// only (["text"], null).
	Modalities []string        `json:"modalities"`
	Audio      json.RawMessage `json:"audio"`
}

// chatMessage is one message as OpenAI's clients send it: content as a string, or as a list
// of parts of which this server takes text.
type chatMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
	// An assistant's calls, and the call a tool's message answers (tools.go).
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID *string         `json:"tool_call_id"`
	Name       *string         `json:"name"`
}

// chatRoles are the roles a message may have; developer is OpenAI's newer name for system,
// which is what templates know it as.
var chatRoles = map[string]string{"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	// Usage: as completion's.
	Usage *completionUsage `json:"usage,omitempty"`
}

// chatChunk is a chat completion whose usage is written even when null.
type chatChunk struct {
	chatCompletion
	Usage *completionUsage `json:"usage"`
}

type chatChoice struct {
	Index int `json:"index"`
	// Message is the answer's; Delta a chunk's.
	Message      *chatMessageOut `json:"message,omitempty"`
	Delta        *chatOut        `json:"delta,omitempty"`
	Logprobs     *chatLogprobs   `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// chatLogprobs is chat's log probabilities: per generated token its text, its bytes, its log
// probability and the most likely tokens at its place.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
}

type chatTokenLogprob struct {
	Token       string            `json:"token"`
	Logprob     float32           `json:"logprob"`
	Bytes       []int             `json:"bytes"`
	TopLogprobs []chatAlternative `json:"top_logprobs"` // always written, empty or not
}

type chatAlternative struct {
	Token   string  `json:"token"`
	Logprob float32 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

func (l *chatLogprobs) add(tok generate.Token) {
	e := chatTokenLogprob{Token: tok.Piece, Logprob: tok.Logprob, Bytes: byteList(tok.Piece, tok.Bytes), TopLogprobs: []chatAlternative{}}
	for _, a := range tok.Top {
		e.TopLogprobs = append(e.TopLogprobs, chatAlternative{Token: a.Text, Logprob: a.Logprob, Bytes: byteList(a.Text, a.Bytes)})
	}
	l.Content = append(l.Content, e)
}

// byteList is a piece's bytes as OpenAI lists them (numbers, so that a token that is part of a
// character can be put back together): raw where the piece holds part of one, else the
// piece's UTF-8.
func byteList(piece string, raw []byte) []int {
	if raw == nil {
		raw = []byte(piece)
	}
	out := make([]int, len(raw))
	for i, b := range raw {
		out[i] = int(b)
	}
	return out
}

// maxChatTopLogprobs bounds chat's top_logprobs (OpenAI's limit).
const maxChatTopLogprobs = 20

// chatOut is a stream chunk's delta.
type chatOut struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

// chatMessageOut is a whole answer's message: content null when it calls tools instead.
type chatMessageOut struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

// chatDialect is OpenAI's chat completions dialect; errors are written as completions' are.
type chatDialect struct{ completions }

// cost counts n choices of max_completion_tokens (or max_tokens) each, or of the model's
// default length, which is what a chat request that names none generates.
func (chatDialect) cost(body []byte, ep *GenerationEndpoint) float64 {
	n, maxTokens := chatAsks(body)
	return ep.generationCost(body, n, maxTokens, ep.Model.DefaultMaxNewTokens())
}

// chatAsks is what a chat body asks to generate: how many choices, each of how many tokens
// (nil: the default), read as the dialect reads them.
func chatAsks(body []byte) (n int, maxTokens *int) {
	var req struct {
		N                   *int `json:"n"`
		MaxTokens           *int `json:"max_tokens"`
		MaxCompletionTokens *int `json:"max_completion_tokens"`
	}
	_ = json.Unmarshal(body, &req) // a body that does not parse is refused when it is read
	if req.MaxCompletionTokens != nil {
		req.MaxTokens = req.MaxCompletionTokens
	}
	n = 1
	if req.N != nil {
		n = *req.N
	}
	return n, req.MaxTokens
}

func (chatDialect) read(body []byte, ep *GenerationEndpoint, info requestInfo) (genRequest, answer, *apiError) {
	p, tools, prompt, param, msg := parseChat(body, ep)
	if msg != "" {
		return genRequest{}, nil, openAIInvalid(param, msg)
	}
	head := chatCompletion{ID: "chatcmpl-" + info.id, Object: "chat.completion", Created: info.now.Unix(),
		Model: p.model, SystemFingerprint: "sluice-" + info.version}
	req := genRequest{prompts: []string{prompt}, messages: p.messages, options: p.options, n: p.n, params: p.params, stream: p.stream}
	return req, &chatAnswer{p: p, tools: tools, head: head, requestID: info.id}, nil
}

// parseChat reads and checks a chat request and renders its messages with its tools. A
// non-empty msg is the validation error, about the parameter param; it never quotes a
// message.
func parseChat(body []byte, ep *GenerationEndpoint) (p openAIParams, tools *toolPlan, prompt, param, msg string) {
	var req chatRequest
	if param, msg = decodeObject(body, &req); msg != "" {
		return p, nil, "", param, msg
	}
	msgs, param, msg := chatMessages(req.Messages)
	if msg != "" {
		return p, nil, "", param, msg
	}
	switch {
	case present(req.Functions):
		return p, nil, "", "functions", "`functions` is deprecated by OpenAI and not supported by this server; use `tools`"
	case present(req.FunctionCall):
		return p, nil, "", "function_call", "`function_call` is deprecated by OpenAI and not supported by this server; use `tool_choice`"
	case req.Modalities != nil && (len(req.Modalities) == 0 || slices.ContainsFunc(req.Modalities, func(m string) bool { return m != "text" })):
		return p, nil, "", "modalities", "this server answers text only: `modalities` may only be [\"text\"]"
	case present(req.Audio):
		return p, nil, "", "audio", "this server answers text only: `audio` output is not supported"
	case req.MaxTokens != nil && req.MaxCompletionTokens != nil && *req.MaxTokens != *req.MaxCompletionTokens:
		return p, nil, "", "max_completion_tokens", "`max_tokens` and `max_completion_tokens` differ; send one"
	case req.TopLogprobs != nil && (*req.TopLogprobs < 0 || *req.TopLogprobs > maxChatTopLogprobs):
		return p, nil, "", "top_logprobs", "`top_logprobs` must be between 0 and " + strconv.Itoa(maxChatTopLogprobs)
	case req.TopLogprobs != nil && (req.Logprobs == nil || !*req.Logprobs):
		return p, nil, "", "top_logprobs", "`top_logprobs` needs `logprobs` set to true"
	}
	if tools, param, msg = readTools(req.Tools, req.ToolChoice, req.ParallelToolCalls); msg != "" {
		return p, nil, "", param, msg
	}
	if req.MaxCompletionTokens != nil {
		req.MaxTokens = req.MaxCompletionTokens
	}
	if param, msg = req.read(ep, 1, 0, &p); msg != "" {
		if param == "max_tokens" && req.MaxCompletionTokens != nil {
			param, msg = "max_completion_tokens", "`max_completion_tokens` must be at least 1"
		}
		return p, nil, "", param, msg
	}
	if spec := tools.constraint(); spec != nil {
		if p.jsonAnswer {
			return p, nil, "", "response_format", "`response_format` cannot be held beside a `tool_choice` that forces a call"
		}
		if msg = constrain(ep, spec, &p.params); msg != "" {
			return p, nil, "", "tools", msg
		}
	}
	// A strict tool's calls under auto: held here where the answer is this server's, and not
	// beside a response_format, which holds the text (a call is then checked to be an object).
	if _, external := ep.Model.(conversational); !external && !p.jsonAnswer {
		spec, err := tools.autoConstraint()
		if err != nil {
			return p, nil, "", "tools", constraintProblem(err)
		}
		if msg = constrain(ep, spec, &p.params); msg != "" {
			return p, nil, "", "tools", msg
		}
	}
	if req.Logprobs != nil && *req.Logprobs {
		p.params.Logprobs, p.params.NoLogprobs = true, false
		if req.TopLogprobs != nil {
			p.params.TopLogprobs = *req.TopLogprobs
		}
	}
	if _, ok := ep.Model.(conversational); ok {
		p.messages = msgs
		if tools != nil {
			tools.listed = true
			p.options.Tools, p.options.ToolChoice, p.options.ParallelToolCalls = req.Tools, tools.choiceJSON(), req.ParallelToolCalls
		}
		return p, tools, "", "", ""
	}
	if ep.Chat == nil {
		return p, nil, "", "messages", "this model has no chat template (tokenizer_config.json's chat_template); use /v1/completions"
	}
	var defs []json.RawMessage
	if tools != nil {
		defs = tools.defs
	}
	rendered, err := ep.Chat.Render(msgs, defs)
	var refused *chat.RefusedError
	switch {
	case errors.As(err, &refused):
		return p, nil, "", "messages", refused.Reason
	case errors.Is(err, chat.ErrSpecialText):
		return p, nil, "", "messages", "a message or a tool spells one of the model's special tokens, which its chat template changes; it cannot be kept apart as text"
	case err != nil:
		return p, nil, "", "messages", "the model's chat template could not render these messages"
	}
	p.params.Templated, p.params.Quoted = true, rendered.Quoted
	return p, tools, rendered.Text, "", ""
}

// maxChatMessages bounds a conversation: its work (the privacy gateway's pass over every
// message, the template's rendering) grows with the messages, not only with their text.
const maxChatMessages = 1000

// chatMessages reads the messages: a non-empty list of at most maxChatMessages {role,
// content}.
func chatMessages(raw json.RawMessage) ([]chat.Message, string, string) {
	var in []chatMessage
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil || len(in) == 0 {
		return nil, "messages", "`messages` must be a non-empty list of {role, content}"
	}
	if len(in) > maxChatMessages {
		return nil, "messages", "`messages` may hold at most " + strconv.Itoa(maxChatMessages) + " messages"
	}
	out := make([]chat.Message, len(in))
	for i, m := range in {
		if m.Role == nil {
			return nil, "messages", "every message needs a `role`"
		}
		role, ok := chatRoles[*m.Role]
		if !ok {
			return nil, "messages", "a message's `role` must be system, developer, user, assistant or tool"
		}
		content, ok := messageText(m.Content)
		param := "messages[" + strconv.Itoa(i) + "].content"
		switch {
		case !ok:
			return nil, param, "a message's `content` must be a string or a list of text parts"
		case content == "" && role != "assistant" && role != "tool": // an assistant's may be empty: it called tools
			return nil, param, "message " + strconv.Itoa(i) + " has no content"
		}
		out[i] = chat.Message{Role: role, Content: content}
		if msg := chatToolMessage(m, &out[i]); msg != "" {
			return nil, "messages[" + strconv.Itoa(i) + "]", msg
		}
	}
	return out, "", ""
}

// messageText is a message's content as one string: a string, null (an assistant message
// with tool calls) or the text parts of a list, joined as OpenAI's servers join them.
func messageText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	// One builder: a body of many short parts must cost its length, not its length squared.
	var text strings.Builder
	for i, part := range parts {
		if part.Type != "text" || part.Text == nil {
			return "", false
		}
		if i > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(*part.Text)
	}
	return text.String(), true
}

// chatAnswer writes one chat request's answers.
type chatAnswer struct {
	p         openAIParams
	tools     *toolPlan
	head      chatCompletion
	requestID string
	// held is, per choice, a streamed answer's text held back while it may be tool calls;
	// pointers, since a choice's builder must not move when a later choice's is added.
	held []*toolHold
	// restore, when set, puts a gateway request's originals back into a streamed answer's
	// texts (gateway.Session.Piece): key is textKey's, json says the text is JSON.
	restore func(key int, text string, last, json bool) string
	chunks  lazyChunkHead
}

// textKey numbers the texts of a streamed answer: choice i's content (call -1) or its call's
// arguments.
func textKey(i, call int) int { return i<<20 | (call + 1) }

func (a *chatAnswer) restored(key int, text string, last, json bool) string {
	if a.restore == nil {
		return text
	}
	return a.restore(key, text, last, json)
}

// toolHold is a streamed choice's state when the request has tools.
type toolHold struct {
	text   strings.Builder
	isText bool // the answer turned out to be text, streamed as it comes from then on
	opened bool // the role has been sent
	// tokens are the held tokens, for logprobs: their entries go with the chunk that
	// releases their text or calls, so that the stream lists every token as the whole
	// answer does.
	tokens []generate.Token
}

func (a *chatAnswer) whole(g *genCall) any {
	out := a.head
	out.Usage = openAIUsage(g)
	for i := range g.choices {
		ch := &g.choices[i]
		reason := finishReason(ch.finish)
		content := ch.trimmed.String()
		msg := &chatMessageOut{Role: "assistant", Content: &content}
		calls, text, ok := a.tools.calls(content)
		content = text
		if ok {
			msg.ToolCalls = wireCalls(calls, a.requestID, i, false)
			if content == "" {
				msg.Content = nil
			}
			if ch.finish != generate.FinishLength {
				reason = "tool_calls"
			}
		}
		c := chatChoice{Index: i, Message: msg, FinishReason: &reason}
		if a.p.params.Logprobs {
			c.Logprobs = &chatLogprobs{Content: []chatTokenLogprob{}}
			for _, tok := range ch.tokens {
				c.Logprobs.add(tok)
			}
		}
		out.Choices = append(out.Choices, c)
	}
	return out
}

// event is one chunk per token of a choice: its first says the role, its last the finish
// reason; text that may be the start of a stop sequence waits (as completions' does). With
// tools, a named call's arguments stream as they come; an answer that may be calls is held
// until it is known to be text (then streamed) or ends (then sent as its calls), and its
// tokens' log probabilities with it.
func (a *chatAnswer) event(g *genCall, i int, ev generate.Event) []byte {
	delta := &chatOut{}
	var finish *string
	if ev.Done {
		reason := finishReason(ev.Finish)
		finish = &reason
	}
	logprobs := a.p.params.Logprobs && ev.HasToken
	var held []generate.Token
	if a.tools != nil && a.tools.mode != toolsNone {
		for len(a.held) <= i {
			a.held = append(a.held, &toolHold{})
		}
		h := a.held[i]
		if !a.toolDelta(h, i, ev, delta, finish) {
			if logprobs {
				h.tokens = append(h.tokens, ev.Token)
			}
			return nil
		}
		held, h.tokens = h.tokens, nil
	} else {
		if g.choices[i].events == 1 { // the first chunk says the role, as OpenAI's does
			delta.Role = "assistant"
		}
		if text := a.restored(textKey(i, -1), ev.Trimmed, ev.Done, a.p.jsonAnswer); text != "" || delta.Role != "" {
			delta.Content = &text
		}
	}
	logprobs = logprobs || len(held) > 0
	if delta.Content == nil && delta.ToolCalls == nil && delta.Role == "" && finish == nil && !logprobs {
		return nil
	}
	chunk := chatChunk{chatCompletion: a.head}
	chunk.Object = "chat.completion.chunk"
	if h := a.chunks.get(chunk.chatCompletion, a.p.usage); h != nil && !logprobs && delta.ToolCalls == nil {
		b := appendInt(append(h.open(64), `[{"index":`...), i)
		b = append(b, `,"delta":{`...)
		if delta.Role != "" {
			b = appendJSONString(append(b, `"role":`...), delta.Role)
		}
		if delta.Content != nil {
			if delta.Role != "" {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `"content":`...), *delta.Content)
		}
		b = appendFinish(append(b, `},"logprobs":null,"finish_reason":`...), finish)
		return h.close(append(b, "}]"...))
	}
	chunk.Choices = []chatChoice{{Index: i, Delta: delta, FinishReason: finish}}
	if logprobs {
		lp := &chatLogprobs{}
		for _, tok := range held {
			lp.add(tok)
		}
		if ev.HasToken {
			lp.add(ev.Token)
		}
		chunk.Choices[0].Logprobs = lp
	}
	var data []byte
	if a.p.usage {
		data = eventJSON(chunk)
	} else {
		data = eventJSON(chunk.chatCompletion)
	}
	return data
}

// toolDelta fills a streamed choice's delta when the request has tools, and the finish
// reason (tool_calls when it made calls); false: nothing to send yet.
func (a *chatAnswer) toolDelta(h *toolHold, i int, ev generate.Event, delta *chatOut, finish *string) bool {
	if !h.opened {
		h.opened, delta.Role = true, "assistant"
	}
	called := func() {
		if finish != nil && ev.Finish != generate.FinishLength {
			*finish = "tool_calls"
		}
	}
	content := func(text string, last bool) {
		text = a.restored(textKey(i, -1), text, last, a.p.jsonAnswer)
		delta.Content = &text
	}
	switch {
	case a.tools.listed:
		// An external model's text streams; its calls, after callSeparator, wait for the end.
		if !h.isText {
			before, after, found := strings.Cut(ev.Trimmed, callSeparator)
			h.isText = found // from here on, everything is held
			h.text.WriteString(after)
			if before != "" || ev.Done || delta.Role != "" || found {
				// The text ends where the calls begin: what its restorer holds is let go.
				content(before, ev.Done || found)
			}
		} else {
			h.text.WriteString(ev.Trimmed)
		}
		if !ev.Done || !h.isText {
			return true
		}
		if calls, rest, ok := a.tools.calls(callSeparator + h.text.String()); ok {
			for k := range calls {
				calls[k].Arguments = a.restored(textKey(i, k), calls[k].Arguments, true, true)
			}
			delta.ToolCalls = wireCalls(calls, a.requestID, i, true)
			called()
		} else {
			content(rest, true)
		}
		return true
	case a.tools.mode == toolsNamed:
		args := a.restored(textKey(i, 0), ev.Trimmed, ev.Done, true)
		call := chatToolCall{Index: new(int), Function: chatToolFunction{Arguments: args}}
		if delta.Role != "" {
			call.ID, call.Type, call.Function.Name = callID(a.requestID, i, 0), "function", a.tools.named
		}
		if call.ID != "" || args != "" {
			delta.ToolCalls = []chatToolCall{call}
		}
		// Its finish is the whole answer's: a call only where the arguments came whole (a stop
		// sequence may have cut them).
		h.text.WriteString(ev.Trimmed)
		if ev.Done {
			if _, _, ok := a.tools.calls(h.text.String()); ok {
				called()
			}
		}
		return true
	case h.isText:
		content(ev.Trimmed, ev.Done)
		return true
	}
	h.text.WriteString(ev.Trimmed)
	held := h.text.String()
	if a.tools.mode == toolsAuto && !mayBeCall(held) {
		h.isText = true
		content(held, ev.Done)
		return true
	}
	if !ev.Done {
		return delta.Role != ""
	}
	if calls, _, ok := a.tools.calls(held); ok {
		for k := range calls {
			calls[k].Arguments = a.restored(textKey(i, k), calls[k].Arguments, true, true)
		}
		delta.ToolCalls = wireCalls(calls, a.requestID, i, true)
		called()
		return true
	}
	content(held, ev.Done)
	return true
}

// end is the usage chunk, when asked, and [DONE].
func (a *chatAnswer) end(g *genCall) [][]byte {
	out := make([][]byte, 0, 2)
	if a.p.usage {
		chunk := chatChunk{chatCompletion: a.head, Usage: openAIUsage(g)}
		chunk.Object = "chat.completion.chunk"
		chunk.Choices = []chatChoice{}
		data := eventJSON(chunk)
		out = append(out, data)
	}
	return append(out, []byte("[DONE]"))
}
