package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/generate"
)

// OpenAI's legacy completions API, POST /v1/completions: a prompt (or several) in, choices
// out, with usage; streamed as server-sent chunks that end with "data: [DONE]". Any model name
// is accepted while one generation model is served (HuggingFace's client sends its endpoint
// URL there). Stop sequences are not part of the returned text, as OpenAI's are not.
type completionRequest struct {
	openAISampling
	Prompt   json.RawMessage `json:"prompt"`
	Logprobs *int            `json:"logprobs"`
	Echo     *bool           `json:"echo"`
	BestOf   *int            `json:"best_of"`
	Suffix   *string         `json:"suffix"`
}

// openAISampling are the fields OpenAI's completions and chat completions requests share.
type openAISampling struct {
	Model         *string         `json:"model"`
	MaxTokens     *int            `json:"max_tokens"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	N             *int            `json:"n"`
	Stream        *bool           `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	Stop          json.RawMessage `json:"stop"`
	// Seed is any int64, as OpenAI's and vLLM's are (-1 among them).
	Seed             *int64             `json:"seed"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	LogitBias        map[string]float64 `json:"logit_bias"`
	// TGI's parameters, which HuggingFace's client sends here too.
	TopK              *int     `json:"top_k"`
	RepetitionPenalty *float64 `json:"repetition_penalty"`
	// IgnoreEOS is vLLM's extension: generate max_tokens whatever the model says, as load
	// generators do for outputs of a known length.
	IgnoreEOS *bool `json:"ignore_eos"`
	// vLLM's sampling extensions.
	MinP         *float64 `json:"min_p"`
	MinTokens    *int     `json:"min_tokens"`
	StopTokenIDs []int64  `json:"stop_token_ids"`
	// ResponseFormat holds the answer to JSON, or to a JSON schema (constraint.go).
	ResponseFormat *responseFormat `json:"response_format"`
	// OpenAI's arguments about the caller, the account and OpenAI's own prompt cache, which
	// change nothing of the answer: accepted and not acted on.
	User             *string         `json:"user"`
	Metadata         json.RawMessage `json:"metadata"`
	Store            *bool           `json:"store"`
	ServiceTier      *string         `json:"service_tier"`
	PromptCacheKey   *string         `json:"prompt_cache_key"`
	SafetyIdentifier *string         `json:"safety_identifier"`
}

// maxLogitBias is how many tokens one request may bias (OpenAI's limit).
const maxLogitBias = 300

type streamOptions struct {
	IncludeUsage *bool `json:"include_usage"`
	// ContinuousUsageStats is vLLM's; usage comes once, at the end, whatever it says.
	ContinuousUsageStats *bool `json:"continuous_usage_stats"`
}

type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	// Usage is always set on an answer; on a stream's chunks it is null, or absent unless
	// the client asked for usage (then the last chunk carries it).
	Usage *completionUsage `json:"usage,omitempty"`
}

// streamChunk is a completion whose usage is written even when null.
type streamChunk struct {
	completion
	Usage *completionUsage `json:"usage"`
}

type completionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

// completionLogprobs is the legacy completions API's log probabilities: per generated token
// its text, log probability, the most likely tokens at its place, and its character offset in
// the choice's text.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float32           `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// addPrompt appends the echoed prompt's tokens (the first has no log probability: null) and
// returns the character offset after them. Each is listed as the text it adds to the prompt
// (its Text), so that they spell the prompt the choice's text begins with and each offset is
// its token's place there.
func (l *completionLogprobs) addPrompt(prompt []generate.Token) int {
	at := 0
	for i, tok := range prompt {
		if i == 0 {
			l.Tokens = append(l.Tokens, tok.Text)
			l.TokenLogprobs = append(l.TokenLogprobs, nil)
			l.TopLogprobs = append(l.TopLogprobs, nil)
			l.TextOffset = append(l.TextOffset, at)
		} else {
			tok.Piece = tok.Text
			l.add(tok, at)
		}
		at += utf8.RuneCountInString(tok.Text)
	}
	return at
}

// add appends tok, whose text begins at character offset at.
func (l *completionLogprobs) add(tok generate.Token, at int) {
	lp := tok.Logprob
	l.Tokens = append(l.Tokens, tok.Piece)
	l.TokenLogprobs = append(l.TokenLogprobs, &lp)
	top := make(map[string]float32, len(tok.Top)+1)
	for _, a := range tok.Top {
		if _, seen := top[a.Text]; !seen { // two ids may spell the same text: the likelier stays
			top[a.Text] = a.Logprob
		}
	}
	if _, listed := top[tok.Piece]; !listed { // as OpenAI: the chosen token is always among them
		top[tok.Piece] = tok.Logprob
	}
	l.TopLogprobs = append(l.TopLogprobs, top)
	l.TextOffset = append(l.TextOffset, at)
}

// maxCompletionLogprobs bounds the legacy API's logprobs (OpenAI's limit).
const maxCompletionLogprobs = 5

type completionUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// openAIParams is what an OpenAI request asks for besides its prompts.
type openAIParams struct {
	model  string
	n      int
	stream bool
	usage  bool // include_usage
	params generate.Params
	// messages are a chat's, for a conversational model, which takes them instead of a prompt,
	// with options: what the request asks of the answer, passed on.
	messages []chat.Message
	options  chat.Options
	// jsonAnswer says response_format holds the answer to JSON.
	jsonAnswer bool
}

// completionParams is a parsed completions request.
type completionParams struct {
	openAIParams
	prompts []string
	echo    bool
}

// completions is OpenAI's completions dialect.
type completions struct{}

// completionsMaxTokens is OpenAI's default max_tokens for completions.
const completionsMaxTokens = 16

// cost counts every prompt of the list and every choice of each (n of them).
func (completions) cost(body []byte, ep *GenerationEndpoint) float64 {
	var req struct {
		Prompt    json.RawMessage `json:"prompt"`
		N         *int            `json:"n"`
		MaxTokens *int            `json:"max_tokens"`
	}
	_ = json.Unmarshal(body, &req) // as read decodes it; a body that does not parse is refused there
	prompts := 1
	var list []json.RawMessage
	if json.Unmarshal(req.Prompt, &list) == nil {
		prompts = len(list)
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	// Each bounded before the product, which a huge n would wrap.
	return ep.generationCost(body, min(max(n, 1), ep.MaxChoices)*min(prompts, ep.MaxChoices), req.MaxTokens, completionsMaxTokens)
}

func (completions) read(body []byte, ep *GenerationEndpoint, info requestInfo) (genRequest, answer, *apiError) {
	p, param, msg := parseCompletion(body, ep)
	if msg != "" {
		return genRequest{}, nil, openAIInvalid(param, msg)
	}
	head := completion{ID: "cmpl-" + info.id, Object: "text_completion", Created: info.now.Unix(),
		Model: p.model, SystemFingerprint: "sluice-" + info.version}
	req := genRequest{prompts: p.prompts, n: p.n, params: p.params, stream: p.stream}
	return req, &completionAnswer{p: p, head: head}, nil
}

// reply is OpenAI's error object. A request the model cannot take is the client's error
// (400 invalid_request_error, worded as OpenAI words a context overflow); every other
// failure is a server_error with its own status.
func (completions) reply(e *apiError, requestID string) (int, any) {
	out := openAIError{Message: e.Message, Type: openAIErrorType(e.Status), Code: e.Code, Details: e.Details, RequestID: requestID}
	status := e.Status
	if e.Code == CodeValidation {
		status, out.Type = fiber.StatusBadRequest, "invalid_request_error"
		param := e.param
		var long *generate.TooLongError
		switch {
		case errors.As(e.cause, &long):
			param = "max_tokens"
			out.Message = "This model's maximum context length is " + strconv.Itoa(long.MaxPositions) + " tokens, and your prompt has " +
				strconv.Itoa(long.Prompt) + ": " + roomLeft(long) + ". Please reduce your prompt or completion length."
		case errors.Is(e.cause, generate.ErrEmptyPrompt):
			param, out.Message = "prompt", "`prompt` has no tokens"
		}
		if param != "" {
			out.Param = &param
		}
	} else if e.param != "" {
		param := e.param
		out.Param = &param
	}
	return status, map[string]openAIError{"error": out}
}

// servesModel says whether a request naming model is for this endpoint: the model's name; or
// a URL, which is how HuggingFace's clients name the endpoint itself (its model is the
// endpoint's, as on TGI's server); or anything, behind the privacy gateway, which chooses.
func (ep *GenerationEndpoint) servesModel(model string) bool {
	return ep.anyModel || model == ep.Model.Name() || strings.HasPrefix(model, "http://") || strings.HasPrefix(model, "https://")
}

// msgModelNotFound answers a model this server does not serve; the name sent is not repeated.
const msgModelNotFound = "The model named in `model` is not served here; GET /v1/models lists the models that are"

// openAIInvalid is the answer to a request an OpenAI route cannot take: 400 about param, or
// the 404 OpenAI's and vLLM's servers answer a model they do not serve.
func openAIInvalid(param, msg string) *apiError {
	if msg == msgModelNotFound {
		return &apiError{Status: fiber.StatusNotFound, Code: "model_not_found", Message: msg, Outcome: OutcomeFailed, param: param}
	}
	return &apiError{Status: fiber.StatusBadRequest, Code: CodeValidation, Message: msg, Outcome: OutcomeFailed, param: param}
}

// openAIErrorType is the error's type as OpenAI's API names the class of its status.
func openAIErrorType(status int) string {
	switch {
	case status == fiber.StatusUnauthorized:
		return "authentication_error"
	case status == fiber.StatusForbidden:
		return "permission_error"
	case status == fiber.StatusTooManyRequests:
		return "rate_limit_error"
	case status < 500 && status != statusClientClosed:
		return "invalid_request_error"
	}
	return "server_error"
}

// completionAnswer writes one completions request's answers.
type completionAnswer struct {
	p    completionParams
	head completion
	// offsets are each choice's characters streamed so far, for logprobs' text_offset.
	offsets []int
	chunks  lazyChunkHead
}

func (a *completionAnswer) whole(g *genCall) any {
	out := a.head
	out.Usage = openAIUsage(g)
	for i := range g.choices {
		ch := &g.choices[i]
		reason := finishReason(ch.finish)
		c := completionChoice{Text: a.echo(ch) + ch.trimmed.String(), Index: i, FinishReason: &reason}
		if a.p.params.Logprobs {
			c.Logprobs = &completionLogprobs{}
			at := 0
			if a.p.echo {
				at = c.Logprobs.addPrompt(promptLogprobs(g.streams[i]))
			}
			for _, tok := range ch.tokens {
				c.Logprobs.add(tok, at)
				at += utf8.RuneCountInString(tok.Text)
			}
		}
		out.Choices = append(out.Choices, c)
	}
	return out
}

// event is one chunk per token of a choice, with the text released so far (none while it may
// be the start of a stop sequence) and the finish reason on the choice's last.
func (a *completionAnswer) event(g *genCall, i int, ev generate.Event) []byte {
	text := ev.Trimmed
	if len(g.choices[i].tokens) == 1 {
		text = a.echo(&g.choices[i]) + text
	}
	var finish *string
	if ev.Done {
		reason := finishReason(ev.Finish)
		finish = &reason
	}
	logprobs := a.p.params.Logprobs && ev.HasToken
	if text == "" && finish == nil && !logprobs {
		return nil
	}
	if h := a.chunks.get(a.head, a.p.usage); h != nil && !logprobs {
		b := h.open(len(text))
		b = appendJSONString(append(b, `[{"text":`...), text)
		b = appendInt(append(b, `,"index":`...), i)
		b = appendFinish(append(b, `,"logprobs":null,"finish_reason":`...), finish)
		return h.close(append(b, "}]"...))
	}
	chunk := streamChunk{completion: a.head}
	chunk.Choices = []completionChoice{{Text: text, Index: i, FinishReason: finish}}
	if logprobs {
		// This token's, at its place in the choice's text (the characters before it).
		if a.offsets == nil {
			a.offsets = make([]int, len(g.choices))
		}
		chunk.Choices[0].Logprobs = &completionLogprobs{}
		if a.p.echo && len(g.choices[i].tokens) == 1 { // the chunk that carries the prompt
			a.offsets[i] = chunk.Choices[0].Logprobs.addPrompt(promptLogprobs(g.streams[i]))
		}
		chunk.Choices[0].Logprobs.add(ev.Token, a.offsets[i])
		a.offsets[i] += utf8.RuneCountInString(ev.Text)
	}
	var data []byte
	if a.p.usage {
		data = eventJSON(chunk)
	} else {
		data = eventJSON(chunk.completion)
	}
	return data
}

// end is the usage chunk, when asked, and [DONE].
func (a *completionAnswer) end(g *genCall) [][]byte {
	out := make([][]byte, 0, 2)
	if a.p.usage {
		chunk := streamChunk{completion: a.head, Usage: openAIUsage(g)}
		chunk.Choices = []completionChoice{}
		data := eventJSON(chunk)
		out = append(out, data)
	}
	return append(out, []byte("[DONE]"))
}

// openAIUsage counts each prompt once, however many choices continue it.
func openAIUsage(g *genCall) *completionUsage {
	if g.uncounted {
		return nil // an external model's usage is its own, and not passed on
	}
	u := &completionUsage{PromptTokens: g.promptTokens(), CompletionTokens: g.generated()}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// echo is what a choice's text starts with: its prompt when the request asked for it back.
func (a *completionAnswer) echo(ch *genChoice) string {
	if a.p.echo {
		return ch.prompt
	}
	return ""
}

func finishReason(f generate.Finish) string {
	switch f {
	case generate.FinishLength:
		return "length"
	case generate.FinishEOS, generate.FinishStopSequence, generate.FinishError, "":
		return "stop"
	}
	return string(f) // an external model's own reason (content_filter, tool_calls), passed on
}

// openAIError is OpenAI's error object, with Sluice's request id and code beside its fields.
type openAIError struct {
	Message   string  `json:"message"`
	Type      string  `json:"type"`
	Param     *string `json:"param"`
	Code      string  `json:"code"`
	Details   any     `json:"details,omitempty"`
	RequestID string  `json:"request_id,omitempty"`
}

// parseCompletion reads and checks a completions request. A non-empty msg is the validation
// error, about the parameter param.
func parseCompletion(body []byte, ep *GenerationEndpoint) (p completionParams, param, msg string) {
	var req completionRequest
	if param, msg = decodeObject(body, &req); msg != "" {
		return p, param, msg
	}
	prompts, ok := promptList(req.Prompt)
	if !ok {
		return p, "prompt", "`prompt` must be a string or a non-empty list of strings (token id prompts are not supported)"
	}
	p.prompts = prompts
	switch {
	case req.BestOf != nil && *req.BestOf != 1 && (req.N == nil || *req.BestOf != *req.N):
		return p, "best_of", "`best_of` other than n is not supported by this server"
	case req.Logprobs != nil && (*req.Logprobs < 0 || *req.Logprobs > maxCompletionLogprobs):
		return p, "logprobs", "`logprobs` must be between 0 and " + strconv.Itoa(maxCompletionLogprobs)
	case req.Suffix != nil && *req.Suffix != "":
		return p, "suffix", "`suffix` is not supported by this server"
	}
	if param, msg = req.read(ep, len(prompts), completionsMaxTokens, &p.openAIParams); msg != "" {
		return p, param, msg
	}
	p.echo = req.Echo != nil && *req.Echo
	if req.Logprobs != nil {
		p.params.Logprobs, p.params.NoLogprobs, p.params.TopLogprobs = true, false, *req.Logprobs
		p.params.PromptLogprobs = p.echo // the echoed prompt's tokens are listed too
	}
	return p, "", ""
}

// decodeObject reads a JSON object body into req; a non-empty msg says what is wrong, about
// the parameter param.
//
// An argument OpenAI's API does not know is refused, as OpenAI refuses it ("Unrecognized
// request argument"): a misspelt max_tokens silently ignored would be a wrong answer with a
// 200. Its arguments this server does not act on are known and refused by name where acting
// on them matters (tools), accepted where it does not (user, metadata).
func decodeObject(body []byte, req any) (param, msg string) {
	fe := readObject(body, req, true)
	switch {
	case fe == nil:
		return "", ""
	case fe.Type == "model_attributes_type":
		return "", "The body must be a JSON object"
	case fe.Type == "extra_forbidden":
		return "", "Unrecognized request argument supplied" + strings.TrimPrefix(fe.Message, "Extra inputs are not permitted")
	}
	return strings.TrimPrefix(fe.Field, "body."), "Invalid request body: " + fieldMessage(fe)
}

// read checks the shared fields of a request with prompts prompts and fills p; maxTokens is
// the route's default for max_tokens (0: the model's).
func (r *openAISampling) read(ep *GenerationEndpoint, prompts, maxTokens int, p *openAIParams) (param, msg string) {
	if r.Model == nil {
		return "model", "You must provide a model parameter"
	}
	if !ep.servesModel(*r.Model) {
		return "model", msgModelNotFound
	}
	p.model, p.n = *r.Model, 1
	if r.N != nil {
		p.n = *r.N
	}
	stops, ok := stopList(r.Stop)
	switch {
	case !ok:
		return "stop", "`stop` must be a string or a list of strings"
	case len(stops) > ep.MaxStopSequences:
		return "stop", "`stop` supports up to " + strconv.Itoa(ep.MaxStopSequences) + " sequences"
	case p.n < 1 || p.n > ep.MaxChoices || p.n*prompts > ep.MaxChoices: // n alone first: n*prompts may wrap
		return "n", "`n` times the number of prompts must be between 1 and " + strconv.Itoa(ep.MaxChoices)
	case r.MaxTokens != nil && *r.MaxTokens < 1:
		return "max_tokens", "`max_tokens` must be at least 1"
	case r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 2):
		return "temperature", "`temperature` must be between 0 and 2"
	case r.TopP != nil && (*r.TopP <= 0 || *r.TopP > 1):
		return "top_p", "`top_p` must be greater than 0 and at most 1"
	case r.TopK != nil && *r.TopK < -1:
		return "top_k", "`top_k` must be -1 (off, as vLLM reads it), 0 (off) or positive"
	case r.PresencePenalty != nil && (*r.PresencePenalty < -2 || *r.PresencePenalty > 2):
		return "presence_penalty", "`presence_penalty` must be between -2 and 2"
	case r.FrequencyPenalty != nil && (*r.FrequencyPenalty < -2 || *r.FrequencyPenalty > 2):
		return "frequency_penalty", "`frequency_penalty` must be between -2 and 2"
	case r.RepetitionPenalty != nil && *r.RepetitionPenalty <= 0:
		return "repetition_penalty", "`repetition_penalty` must be strictly positive"
	case r.MinP != nil && (*r.MinP < 0 || *r.MinP > 1):
		return "min_p", "`min_p` must be between 0 and 1"
	case r.MinTokens != nil && (*r.MinTokens < 0 || (r.MaxTokens != nil && *r.MinTokens > *r.MaxTokens)):
		return "min_tokens", "`min_tokens` must be at least 0 and at most `max_tokens`"
	case len(r.StopTokenIDs) > maxLogitBias:
		return "stop_token_ids", "`stop_token_ids` supports up to " + strconv.Itoa(maxLogitBias) + " tokens"
	case slices.ContainsFunc(r.StopTokenIDs, func(id int64) bool { return id < 0 }):
		return "stop_token_ids", "`stop_token_ids` must be token ids (non-negative integers)"
	case len(r.LogitBias) > maxLogitBias:
		return "logit_bias", "`logit_bias` supports up to " + strconv.Itoa(maxLogitBias) + " tokens"
	case r.StreamOptions != nil && (r.Stream == nil || !*r.Stream):
		return "stream_options", "`stream_options` is only allowed when `stream` is true"
	}
	pp := &p.params
	pp.MaxNewTokens, pp.Temperature = maxTokens, 1
	if r.MaxTokens != nil {
		pp.MaxNewTokens = *r.MaxTokens
	}
	if r.Temperature != nil {
		pp.Temperature = *r.Temperature
	}
	pp.DoSample = pp.Temperature > 0 // OpenAI's temperature 0 is greedy decoding
	if r.TopP != nil {
		pp.TopP = *r.TopP
	}
	if r.TopK != nil && *r.TopK > 0 {
		pp.TopK = *r.TopK
	}
	if r.PresencePenalty != nil {
		pp.PresencePenalty = *r.PresencePenalty
	}
	if r.FrequencyPenalty != nil {
		pp.FrequencyPenalty = *r.FrequencyPenalty
	}
	if r.RepetitionPenalty != nil {
		pp.RepetitionPenalty = *r.RepetitionPenalty
	}
	if r.Seed != nil {
		// Its bits: a seed from 0 up is the sampler's seed itself, and a negative one its own.
		pp.Seed, pp.SeedSet = uint64(*r.Seed), true
	}
	bias, bad := logitBias(r.LogitBias)
	if bad != "" {
		return "logit_bias", bad
	}
	pp.LogitBias = bias
	if r.MinP != nil {
		pp.MinP = *r.MinP
	}
	if r.MinTokens != nil {
		pp.MinTokens = *r.MinTokens
	}
	pp.StopTokenIDs = r.StopTokenIDs
	pp.Stop = stops
	pp.IgnoreEOS = r.IgnoreEOS != nil && *r.IgnoreEOS
	pp.NoLogprobs = true // these routes return none
	p.stream = r.Stream != nil && *r.Stream
	p.usage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage != nil && *r.StreamOptions.IncludeUsage
	spec, msg := r.ResponseFormat.spec()
	if msg == "" {
		msg = constrain(ep, spec, pp)
	}
	if msg != "" {
		return "response_format", msg
	}
	p.jsonAnswer = spec != nil
	if spec != nil {
		p.options.ResponseFormat, _ = json.Marshal(r.ResponseFormat)
	}
	return "", ""
}

// logitBias reads OpenAI's logit_bias: token ids (as JSON object keys) to a bias in
// [-100, 100]. A non-empty msg says what is wrong; it names no key, which could be anything.
func logitBias(in map[string]float64) (map[int64]float64, string) {
	if len(in) == 0 {
		return nil, ""
	}
	out := make(map[int64]float64, len(in))
	for k, v := range in {
		id, err := strconv.ParseInt(k, 10, 64)
		switch {
		case err != nil || id < 0:
			return nil, "`logit_bias` keys must be token ids (non-negative integers)"
		case v < -100 || v > 100:
			return nil, "`logit_bias` values must be between -100 and 100"
		}
		out[id] = v
	}
	return out, ""
}

// promptList reads a prompt given as a string or a list of strings.
func promptList(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return many, true
	}
	return nil, false
}

// stopList reads stop as absent, null, a string or a list of strings.
func stopList(raw json.RawMessage) ([]string, bool) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

// promptScored is a TokenStream that scored its prompt (*generate.Stream).
type promptScored interface {
	PromptLogprobs() []generate.Token
}

// promptLogprobs is st's scored prompt, or nothing when st cannot say.
func promptLogprobs(st TokenStream) []generate.Token {
	if ps, ok := st.(promptScored); ok {
		return ps.PromptLogprobs()
	}
	return nil
}
