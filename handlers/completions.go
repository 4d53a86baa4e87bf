package handlers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/generate"
)

// OpenAI's legacy completions API, POST /v1/completions: a prompt (or several) in, choices
// out, with usage; streamed as server-sent chunks that end with "data: [DONE]". Any model name
// is accepted while one generation model is served (HuggingFace's client sends its endpoint
// URL there). Stop sequences are not part of the returned text, as OpenAI's are not.
type completionRequest struct {
	Model            *string            `json:"model"`
	Prompt           json.RawMessage    `json:"prompt"`
	MaxTokens        *int               `json:"max_tokens"`
	Temperature      *float64           `json:"temperature"`
	TopP             *float64           `json:"top_p"`
	N                *int               `json:"n"`
	Stream           *bool              `json:"stream"`
	StreamOptions    *streamOptions     `json:"stream_options"`
	Stop             json.RawMessage    `json:"stop"`
	Seed             *uint64            `json:"seed"`
	Logprobs         *int               `json:"logprobs"`
	Echo             *bool              `json:"echo"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	BestOf           *int               `json:"best_of"`
	LogitBias        map[string]float64 `json:"logit_bias"`
	Suffix           *string            `json:"suffix"`
	// TGI's parameters, which HuggingFace's client sends here too.
	TopK              *int     `json:"top_k"`
	RepetitionPenalty *float64 `json:"repetition_penalty"`
	// IgnoreEOS is vLLM's extension: generate max_tokens whatever the model says, as load
	// generators do for outputs of a known length.
	IgnoreEOS *bool `json:"ignore_eos"`
}

type streamOptions struct {
	IncludeUsage *bool `json:"include_usage"`
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
	Text         string  `json:"text"`
	Index        int     `json:"index"`
	Logprobs     *string `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type completionUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// completionParams is a parsed completions request.
type completionParams struct {
	model   string
	prompts []string
	n       int
	echo    bool
	stream  bool
	usage   bool // include_usage
	params  generate.Params
}

func (s *server) serveCompletions(c *fiber.Ctx, x *exchange, ep *GenerationEndpoint) error {
	p, param, msg := parseCompletion(c.Body(), ep)
	if msg != "" {
		c.Locals(localOutcome, OutcomeFailed)
		return writeOpenAIError(c, fiber.StatusBadRequest, "invalid_request_error", param, CodeValidation, msg)
	}
	g, err := s.beginGeneration(c, x, ep, p.prompts, p.n, p.params)
	if err != nil {
		return s.startError(c, x, ep, err, func(c *fiber.Ctx, f genFailure, err error) error {
			msg := f.message
			var long *generate.TooLongError
			if errors.As(err, &long) {
				msg = "This model's maximum context length is " + strconv.Itoa(long.MaxPositions) + " tokens, however you requested " +
					strconv.Itoa(long.Prompt+long.MaxNewTokens) + " tokens (" + strconv.Itoa(long.Prompt) + " in your prompt; " +
					strconv.Itoa(long.MaxNewTokens) + " for the completion). Please reduce your prompt or completion length."
			}
			return writeOpenAIError(c, fiber.StatusBadRequest, "invalid_request_error", "max_tokens", f.code, msg)
		})
	}
	head := completion{ID: "cmpl-" + requestIDOf(c), Object: "text_completion", Created: s.opts.Clock.Now().Unix(),
		Model: p.model, SystemFingerprint: "sluice-" + s.opts.Version}
	if p.stream {
		return s.sse(c, g, func(w *bufio.Writer) (string, logStats) { return completionChunks(w, g, p, head) })
	}
	defer g.done()
	choices := make([]choiceState, len(g.streams))
	for i := range choices {
		choices[i] = newChoiceState(p, i, p.params.Stop)
	}
	var failed error
	for it := range g.events() {
		ch := &choices[it.i]
		if it.ev.Err != nil || (it.ev.Done && !it.ev.HasToken) {
			failed = it.ev.Err
			continue
		}
		ch.add(it.ev)
	}
	generated := 0
	for _, ch := range choices {
		generated += ch.tokens
		if !ch.done && failed == nil {
			failed = g.ctx.Err()
		}
	}
	c.Locals(localStats, g.stats(generated))
	if failed != nil {
		f := s.classify(failed, ep.Timeout)
		c.Locals(localOutcome, f.outcome)
		return writeOpenAIError(c, f.status, "server_error", "", f.code, f.message)
	}
	out := head
	out.Usage = g.usage(generated)
	for i := range choices {
		out.Choices = append(out.Choices, choices[i].choice(i))
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(out)
}

// completionChunks streams one chunk per token of each choice (text held back only while it
// may be the start of a stop sequence), the finish reason on each choice's last, the usage
// chunk when asked, and [DONE].
func completionChunks(w *bufio.Writer, g *genCall, p completionParams, head completion) (string, logStats) {
	choices := make([]choiceState, len(g.streams))
	for i := range choices {
		choices[i] = newChoiceState(p, i, p.params.Stop)
	}
	generated := 0
	send := func(i int, text string, finish *string) bool {
		chunk := streamChunk{completion: head}
		chunk.Choices = []completionChoice{{Text: text, Index: i, FinishReason: finish}}
		var data []byte
		if p.usage {
			data, _ = marshal(chunk)
		} else {
			data, _ = marshal(chunk.completion)
		}
		return sseEvent(w, data)
	}
	events := g.events()
	for it := range events {
		ev := it.ev
		ch := &choices[it.i]
		if ev.Err != nil || (ev.Done && !ev.HasToken) {
			f := g.s.classify(ev.Err, g.ep.Timeout)
			data, _ := marshal(map[string]openAIError{"error": {Message: f.message, Type: "server_error", Code: f.code}})
			sseEvent(w, data)
			return f.outcome, g.stats(generated)
		}
		generated++
		text := ch.push(ev)
		var finish *string
		if ch.done {
			reason := ch.finishReason()
			finish = &reason
		}
		if (text != "" || finish != nil) && !send(it.i, text, finish) {
			g.gone(events)
			return OutcomeAborted, g.stats(generated)
		}
	}
	if err := g.ctx.Err(); err != nil {
		f := g.s.classify(err, g.ep.Timeout)
		return f.outcome, g.stats(generated)
	}
	if p.usage {
		chunk := streamChunk{completion: head, Usage: g.usage(generated)}
		chunk.Choices = []completionChoice{}
		data, _ := marshal(chunk)
		sseEvent(w, data)
	}
	sseEvent(w, []byte("[DONE]"))
	return OutcomeServed, g.stats(generated)
}

func (g *genCall) usage(generated int) *completionUsage {
	u := &completionUsage{CompletionTokens: generated}
	for _, s := range g.streams {
		u.PromptTokens += s.PromptTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// choiceState is one choice's text as it is generated: what has been released and what is
// held back because it may begin a stop sequence.
type choiceState struct {
	prompt  string // echoed before the text when asked
	stops   []string
	maxStop int
	text    strings.Builder // released text, for a non-streaming answer
	held    string
	tokens  int
	done    bool
	finish  generate.Finish
	echoed  bool
}

func newChoiceState(p completionParams, i int, stops []string) choiceState {
	c := choiceState{stops: stops}
	if p.echo {
		c.prompt = p.prompts[i/p.n]
	}
	for _, s := range stops {
		c.maxStop = max(c.maxStop, len(s))
	}
	return c
}

// push takes one token event and returns the text that may be released now.
func (c *choiceState) push(ev generate.Event) string {
	c.tokens++
	out := ""
	if !c.echoed {
		out, c.echoed = c.prompt, true
	}
	c.held += ev.Text
	if ev.Done {
		c.done, c.finish = true, ev.Finish
	}
	if cut := c.stopAt(); cut >= 0 {
		out += c.held[:cut]
		c.held = ""
		c.text.WriteString(out)
		return out
	}
	keep := 0
	if !c.done && c.maxStop > 1 {
		keep = min(len(c.held), c.maxStop-1)
		for keep < len(c.held) && !utf8.RuneStart(c.held[len(c.held)-keep]) {
			keep++ // never split a character
		}
	}
	out += c.held[:len(c.held)-keep]
	c.held = c.held[len(c.held)-keep:]
	c.text.WriteString(out)
	return out
}

// add is push for a non-streaming answer.
func (c *choiceState) add(ev generate.Event) { c.push(ev) }

// stopAt is where the earliest stop sequence begins in the held text, or -1.
func (c *choiceState) stopAt() int {
	cut := -1
	for _, s := range c.stops {
		if i := strings.Index(c.held, s); s != "" && i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	return cut
}

func (c *choiceState) finishReason() string {
	if c.finish == generate.FinishLength {
		return "length"
	}
	return "stop"
}

func (c *choiceState) choice(i int) completionChoice {
	reason := c.finishReason()
	return completionChoice{Text: c.text.String(), Index: i, FinishReason: &reason}
}

// openAIError is OpenAI's error object, with Sluice's request id and code beside its fields.
type openAIError struct {
	Message   string  `json:"message"`
	Type      string  `json:"type"`
	Param     *string `json:"param"`
	Code      string  `json:"code"`
	RequestID string  `json:"request_id,omitempty"`
}

func writeOpenAIError(c *fiber.Ctx, status int, kind, param, code, message string) error {
	e := openAIError{Message: message, Type: kind, Code: code, RequestID: requestID(c)}
	if param != "" {
		e.Param = &param
	}
	return c.Status(status).JSON(map[string]openAIError{"error": e})
}

// parseCompletion reads and checks a completions request. A non-empty msg is the validation
// error, about the parameter param.
func parseCompletion(body []byte, ep *GenerationEndpoint) (p completionParams, param, msg string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return p, "", "The body must be a JSON object"
	}
	var req completionRequest
	if err := json.Unmarshal(trimmed, &req); err != nil {
		fe := jsonFieldError(err)
		return p, strings.TrimPrefix(fe.Field, "body."), "Invalid request body: " + fe.Message
	}
	if req.Model == nil {
		return p, "model", "You must provide a model parameter"
	}
	p.model = *req.Model
	prompts, ok := promptList(req.Prompt)
	if !ok {
		return p, "prompt", "`prompt` must be a string or a non-empty list of strings (token id prompts are not supported)"
	}
	p.prompts, p.n = prompts, 1
	if req.N != nil {
		p.n = *req.N
	}
	stops, ok := stopList(req.Stop)
	pp := &p.params
	pp.MaxNewTokens = 16
	pp.Temperature = 1
	switch {
	case !ok:
		return p, "stop", "`stop` must be a string or a list of strings"
	case len(stops) > ep.MaxStopSequences:
		return p, "stop", "`stop` supports up to " + strconv.Itoa(ep.MaxStopSequences) + " sequences"
	case p.n < 1 || p.n*len(prompts) > ep.MaxChoices:
		return p, "n", "`n` times the number of prompts must be between 1 and " + strconv.Itoa(ep.MaxChoices)
	case req.MaxTokens != nil && *req.MaxTokens < 1:
		return p, "max_tokens", "`max_tokens` must be at least 1"
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2):
		return p, "temperature", "`temperature` must be between 0 and 2"
	case req.TopP != nil && (*req.TopP <= 0 || *req.TopP > 1):
		return p, "top_p", "`top_p` must be greater than 0 and at most 1"
	case req.TopK != nil && *req.TopK < 0:
		return p, "top_k", "`top_k` must not be negative"
	case req.PresencePenalty != nil && (*req.PresencePenalty < -2 || *req.PresencePenalty > 2):
		return p, "presence_penalty", "`presence_penalty` must be between -2 and 2"
	case req.FrequencyPenalty != nil && (*req.FrequencyPenalty < -2 || *req.FrequencyPenalty > 2):
		return p, "frequency_penalty", "`frequency_penalty` must be between -2 and 2"
	case req.RepetitionPenalty != nil && *req.RepetitionPenalty <= 0:
		return p, "repetition_penalty", "`repetition_penalty` must be strictly positive"
	case req.BestOf != nil && *req.BestOf != 1 && *req.BestOf != p.n:
		return p, "best_of", "`best_of` other than n is not supported by this server"
	case req.Logprobs != nil:
		return p, "logprobs", "`logprobs` is not supported by this server"
	case req.Suffix != nil && *req.Suffix != "":
		return p, "suffix", "`suffix` is not supported by this server"
	case len(req.LogitBias) > 0:
		return p, "logit_bias", "`logit_bias` is not supported by this server"
	case req.StreamOptions != nil && (req.Stream == nil || !*req.Stream):
		return p, "stream_options", "`stream_options` is only allowed when `stream` is true"
	}
	if req.MaxTokens != nil {
		pp.MaxNewTokens = *req.MaxTokens
	}
	if req.Temperature != nil {
		pp.Temperature = *req.Temperature
	}
	pp.DoSample = pp.Temperature > 0 // OpenAI's temperature 0 is greedy decoding
	if req.TopP != nil {
		pp.TopP = *req.TopP
	}
	if req.TopK != nil {
		pp.TopK = *req.TopK
	}
	if req.PresencePenalty != nil {
		pp.PresencePenalty = *req.PresencePenalty
	}
	if req.FrequencyPenalty != nil {
		pp.FrequencyPenalty = *req.FrequencyPenalty
	}
	if req.RepetitionPenalty != nil {
		pp.RepetitionPenalty = *req.RepetitionPenalty
	}
	if req.Seed != nil {
		pp.Seed, pp.SeedSet = *req.Seed, true
	}
	pp.Stop = stops
	pp.IgnoreEOS = req.IgnoreEOS != nil && *req.IgnoreEOS
	pp.NoLogprobs = true // this route returns none
	p.echo = req.Echo != nil && *req.Echo
	p.stream = req.Stream != nil && *req.Stream
	p.usage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage != nil && *req.StreamOptions.IncludeUsage
	return p, "", ""
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
