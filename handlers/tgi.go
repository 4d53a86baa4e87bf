package handlers

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/generate"
)

// The wire format of HuggingFace's text-generation-inference (TGI): POST /generate answers one
// object, POST /generate_stream server-sent events, and POST / either, by its "stream" field
// (its non-streaming answer is a one-element array).
type tgiMode uint8

const (
	tgiObject tgiMode = iota
	tgiStream
	tgiCompat
)

type tgiRequest struct {
	Inputs     *string        `json:"inputs"`
	Parameters *tgiParameters `json:"parameters"`
	Stream     *bool          `json:"stream"`
}

type tgiParameters struct {
	BestOf              *int            `json:"best_of"`
	DecoderInputDetails *bool           `json:"decoder_input_details"`
	Details             *bool           `json:"details"`
	DoSample            *bool           `json:"do_sample"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	Grammar             json.RawMessage `json:"grammar"`
	MaxNewTokens        *int            `json:"max_new_tokens"`
	RepetitionPenalty   *float64        `json:"repetition_penalty"`
	ReturnFullText      *bool           `json:"return_full_text"`
	Seed                *uint64         `json:"seed"`
	Stop                []string        `json:"stop"`
	Temperature         *float64        `json:"temperature"`
	TopK                *int            `json:"top_k"`
	TopNTokens          *int            `json:"top_n_tokens"`
	TopP                *float64        `json:"top_p"`
	Truncate            *int            `json:"truncate"`
	TypicalP            *float64        `json:"typical_p"`
	Watermark           *bool           `json:"watermark"`
	AdapterID           *string         `json:"adapter_id"`
}

// tgiToken is one token as TGI reports it.
type tgiToken struct {
	ID      int64   `json:"id"`
	Text    string  `json:"text"`
	Logprob float32 `json:"logprob"`
	Special bool    `json:"special"`
}

type tgiDetails struct {
	FinishReason    generate.Finish   `json:"finish_reason"`
	GeneratedTokens int               `json:"generated_tokens"`
	Seed            *uint64           `json:"seed"`
	Prefill         []tgiPrefillToken `json:"prefill"`
	Tokens          []tgiToken        `json:"tokens"`
	TopTokens       [][]tgiToken      `json:"top_tokens,omitempty"`
}

// tgiPrefillToken is a prompt token as TGI's decoder_input_details lists it; the first has no
// log probability (null).
type tgiPrefillToken struct {
	ID      int64    `json:"id"`
	Text    string   `json:"text"`
	Logprob *float32 `json:"logprob"`
}

// maxTopNTokens bounds top_n_tokens (TGI's default --max-top-n-tokens).
const maxTopNTokens = 5

// tgiTopTokens is a token's alternatives as TGI lists them (top_n_tokens).
func tgiTopTokens(t generate.Token) []tgiToken {
	out := make([]tgiToken, len(t.Top))
	for i, a := range t.Top {
		out[i] = tgiToken{ID: a.ID, Text: a.Text, Logprob: a.Logprob, Special: a.Special}
	}
	return out
}

type tgiResponse struct {
	GeneratedText string      `json:"generated_text"`
	Details       *tgiDetails `json:"details,omitempty"`
}

type tgiStreamDetails struct {
	FinishReason    generate.Finish `json:"finish_reason"`
	GeneratedTokens int             `json:"generated_tokens"`
	Seed            *uint64         `json:"seed"`
	InputLength     int             `json:"input_length"`
}

type tgiStreamEvent struct {
	Index         int               `json:"index"`
	Token         tgiToken          `json:"token"`
	TopTokens     []tgiToken        `json:"top_tokens,omitempty"`
	GeneratedText *string           `json:"generated_text"`
	Details       *tgiStreamDetails `json:"details"`
}

// tgiError is TGI's error body and stream event, with Sluice's code and request id beside its
// own fields (its clients read "error" and "error_type" and ignore the rest).
type tgiError struct {
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
	Code      string `json:"code"`
	Details   any    `json:"details,omitempty"`
	RequestID string `json:"request_id"`
}

// tgiOptions is what a TGI request asks beyond its generation parameters.
type tgiOptions struct {
	stream, details, fullText bool
	fullTextSet               bool // return_full_text was given
	topN                      int  // top_n_tokens
	inputDetails              bool // decoder_input_details: the prompt's tokens, scored
}

// tgi is TGI's dialect; mode says how the route chooses between an answer and a stream.
type tgi struct{ mode tgiMode }

// cost counts one choice of max_new_tokens, or of the model's default length.
func (tgi) cost(body []byte, ep *GenerationEndpoint) float64 {
	var req struct {
		Parameters struct {
			MaxNewTokens *int `json:"max_new_tokens"`
		} `json:"parameters"`
	}
	_ = json.Unmarshal(body, &req) // as read decodes it; a body that does not parse is refused there
	return ep.generationCost(body, 1, req.Parameters.MaxNewTokens, ep.Model.DefaultMaxNewTokens())
}

func (t tgi) read(body []byte, ep *GenerationEndpoint, _ requestInfo) (genRequest, answer, *apiError) {
	prompt, params, opts, msg := parseTGI(body, ep)
	if t.mode == tgiCompat && !opts.fullTextSet {
		opts.fullText = true // TGI's POST / answers a text-generation model with the prompt too
	}
	if msg != "" {
		return genRequest{}, nil, &apiError{Status: fiber.StatusUnprocessableEntity, Code: CodeValidation,
			Message: msg, Outcome: OutcomeFailed}
	}
	switch t.mode {
	case tgiObject:
		opts.stream = false
	case tgiStream:
		opts.stream = true
	}
	if opts.stream && opts.inputDetails {
		return genRequest{}, nil, &apiError{Status: fiber.StatusUnprocessableEntity, Code: CodeValidation,
			Message: "`decoder_input_details` == true is not supported when streaming tokens", Outcome: OutcomeFailed}
	}
	req := genRequest{prompts: []string{prompt}, n: 1, params: params, stream: opts.stream}
	return req, &tgiAnswer{compat: t.mode == tgiCompat, opts: opts, prompt: prompt}, nil
}

// reply is TGI's error body, with Sluice's code, details and request id beside its fields.
// Validation failures are TGI's "validation" errors, worded as its router words them; a
// refusal is "overloaded" (huggingface_hub's OverloadedError); the rest are "generation"
// errors.
func (tgi) reply(e *apiError, requestID string) (int, any) {
	kind, msg := "generation", e.Message
	switch {
	case e.Code == CodeValidation:
		kind, msg = "validation", "Input validation error: "+msg
	case e.Code == CodeBackpressure || e.Status == fiber.StatusTooManyRequests:
		kind = "overloaded"
	case e.Status < 500 && e.Status != statusClientClosed:
		kind = "validation" // the request's fault: its credentials, size or shape
	}
	return e.Status, tgiError{Error: msg, ErrorType: kind, Code: e.Code, Details: e.Details, RequestID: requestID}
}

// tgiAnswer writes one TGI request's answers.
type tgiAnswer struct {
	compat bool // POST /: a whole answer is a one-element array
	opts   tgiOptions
	prompt string
}

func (a *tgiAnswer) whole(g *genCall) any {
	ch := &g.choices[0]
	out := tgiResponse{GeneratedText: a.generatedText(ch)}
	if a.opts.details {
		tokens := make([]tgiToken, len(ch.tokens))
		for i, t := range ch.tokens {
			tokens[i] = tgiTokenOf(t)
		}
		out.Details = &tgiDetails{FinishReason: ch.finish, GeneratedTokens: len(ch.tokens), Seed: seedOf(g.streams[0]),
			Prefill: []tgiPrefillToken{}, Tokens: tokens}
		if a.opts.inputDetails {
			for i, t := range promptLogprobs(g.streams[0]) {
				pt := tgiPrefillToken{ID: t.ID, Text: t.Piece}
				if i > 0 {
					lp := t.Logprob
					pt.Logprob = &lp
				}
				out.Details.Prefill = append(out.Details.Prefill, pt)
			}
		}
		if a.opts.topN > 0 {
			for _, t := range ch.tokens {
				out.Details.TopTokens = append(out.Details.TopTokens, tgiTopTokens(t))
			}
		}
	}
	if a.compat {
		return []tgiResponse{out}
	}
	return out
}

// event is one token; the last carries the whole text and, when asked, the details.
func (a *tgiAnswer) event(g *genCall, _ int, ev generate.Event) []byte {
	e := tgiStreamEvent{Index: ev.Index, Token: tgiTokenOf(ev.Token)}
	if a.opts.topN > 0 {
		e.TopTokens = tgiTopTokens(ev.Token)
	}
	if ev.Done {
		ch := &g.choices[0]
		full := a.generatedText(ch)
		e.GeneratedText = &full
		if a.opts.details {
			e.Details = &tgiStreamDetails{FinishReason: ev.Finish, GeneratedTokens: len(ch.tokens), Seed: seedOf(g.streams[0]),
				InputLength: g.streams[0].PromptTokens()}
		}
	}
	data := eventJSON(e)
	return data
}

func (a *tgiAnswer) end(*genCall) [][]byte { return nil }

// generatedText is the choice's text, after the prompt when the request asked for the full
// text. TGI keeps stop sequences in it.
func (a *tgiAnswer) generatedText(ch *genChoice) string {
	if a.opts.fullText {
		return a.prompt + ch.text.String()
	}
	return ch.text.String()
}

// tgiTokenOf is a token as TGI shows it: a special token spelled out, though the generated
// text leaves it out.
func tgiTokenOf(t generate.Token) tgiToken {
	text := t.Text
	if t.Special {
		text = t.SpecialText
	}
	return tgiToken{ID: t.ID, Text: text, Logprob: t.Logprob, Special: t.Special}
}

// seedOf is the seed TGI reports: the one sampling used, null for greedy decoding.
func seedOf(s TokenStream) *uint64 {
	seed, sampled := s.Seed()
	if !sampled {
		return nil
	}
	return &seed
}

// parseTGI reads a TGI request and checks it the way TGI's router does, in its order and with
// its words. A non-empty msg is the validation error.
func parseTGI(body []byte, ep *GenerationEndpoint) (prompt string, params generate.Params, opts tgiOptions, msg string) {
	var req tgiRequest
	// Keys TGI does not know are ignored, as its router ignores them.
	if fe := readObject(body, &req, false); fe != nil {
		if fe.Type == "model_attributes_type" {
			return "", params, opts, "the body must be a JSON object"
		}
		return "", params, opts, "the body is not a valid request: " + fieldMessage(fe)
	}
	if req.Inputs == nil {
		return "", params, opts, "`inputs` is required"
	}
	p := req.Parameters
	sampled := p == nil // TGI samples when no parameters are given at all
	if p == nil {
		p = &tgiParameters{}
	}
	if req.Stream != nil {
		opts.stream = *req.Stream
	}
	opts.inputDetails = p.DecoderInputDetails != nil && *p.DecoderInputDetails
	opts.details = p.Details != nil && *p.Details || opts.inputDetails
	opts.fullText, opts.fullTextSet = p.ReturnFullText != nil && *p.ReturnFullText, p.ReturnFullText != nil
	params.Temperature = 1
	if p.DoSample != nil {
		sampled = *p.DoSample
	}
	bestOf := 1
	if p.BestOf != nil {
		bestOf = *p.BestOf
	}
	switch {
	case bestOf != 1:
		return "", params, opts, "`best_of` != 1 is not allowed for this endpoint"
	case p.Temperature != nil && *p.Temperature <= 0:
		return "", params, opts, "`temperature` must be strictly positive"
	case p.RepetitionPenalty != nil && *p.RepetitionPenalty <= 0:
		return "", params, opts, "`repetition_penalty` must be strictly positive"
	case p.FrequencyPenalty != nil && (*p.FrequencyPenalty < -2 || *p.FrequencyPenalty > 2):
		return "", params, opts, "`frequency_penalty` must be >= -2.0 and <= 2.0"
	case p.TopP != nil && (*p.TopP <= 0 || *p.TopP >= 1):
		return "", params, opts, "`top_p` must be > 0.0 and < 1.0"
	case p.TypicalP != nil:
		return "", params, opts, "`typical_p` is not supported by this server"
	case p.TopK != nil && *p.TopK <= 0:
		return "", params, opts, "`top_k` must be strictly positive"
	case p.MaxNewTokens != nil && *p.MaxNewTokens <= 0:
		return "", params, opts, "`max_new_tokens` must be strictly positive"
	case len(p.Stop) > ep.MaxStopSequences:
		return "", params, opts, "`stop` supports up to " + strconv.Itoa(ep.MaxStopSequences) + " stop sequences"
	case p.TopNTokens != nil && (*p.TopNTokens < 0 || *p.TopNTokens > maxTopNTokens):
		return "", params, opts, "`top_n_tokens` must be >= 0 and <= " + strconv.Itoa(maxTopNTokens)
	case p.Watermark != nil && *p.Watermark:
		return "", params, opts, "`watermark` is not supported by this server"
	case p.AdapterID != nil && *p.AdapterID != "":
		return "", params, opts, "`adapter_id` is not supported by this server"
	case strings.TrimSpace(*req.Inputs) == "":
		return "", params, opts, "`inputs` cannot be empty"
	case p.Truncate != nil && (*p.Truncate <= 0 || *p.Truncate >= ep.Model.MaxPositions()):
		return "", params, opts, "`truncate` must be strictly positive and less than " + strconv.Itoa(ep.Model.MaxPositions())
	}
	if p.Temperature != nil {
		// A temperature of 1 changes no score: TGI samples for it only with do_sample.
		params.Temperature, sampled = *p.Temperature, sampled || *p.Temperature != 1
	}
	if p.TopK != nil {
		params.TopK, sampled = *p.TopK, true
	}
	if p.TopP != nil {
		params.TopP, sampled = *p.TopP, true
	}
	if p.RepetitionPenalty != nil {
		params.RepetitionPenalty = *p.RepetitionPenalty
	}
	if p.FrequencyPenalty != nil {
		params.FrequencyPenalty = *p.FrequencyPenalty
	}
	if p.MaxNewTokens != nil {
		params.MaxNewTokens = *p.MaxNewTokens
	}
	if p.Seed != nil {
		params.Seed, params.SeedSet = *p.Seed, true
	}
	if p.Truncate != nil {
		params.Truncate = *p.Truncate
	}
	if p.TopNTokens != nil {
		params.TopLogprobs, opts.topN = *p.TopNTokens, *p.TopNTokens
	}
	params.PromptLogprobs = opts.inputDetails
	params.DoSample = sampled
	params.Stop = p.Stop
	spec, msg := tgiGrammarSpec(p.Grammar)
	if msg == "" {
		msg = constrain(ep, spec, &params)
	}
	if msg != "" {
		return "", params, opts, msg
	}
	return *req.Inputs, params, opts, ""
}
