package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/generate"
)

// fakeGenerator plays every generation from a script of events, whatever the prompt, so that
// each dialect's answers can be checked exactly. After the script a stream ends (io.EOF), or,
// when endless, goes on with tokens forever, or, when block, waits for its context.
type fakeGenerator struct {
	script  []generate.Event
	endless bool
	block   bool
	err     error // Generate's error
	// scored is every stream's scored prompt (PromptLogprobs).
	scored []generate.Token

	mu      sync.Mutex
	params  []generate.Params
	ctxs    []context.Context
	prompts []string
}

func (f *fakeGenerator) Generate(ctx context.Context, _ admission.Priority, prompt string, params generate.Params) (TokenStream, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.params = append(f.params, params)
	f.ctxs = append(f.ctxs, ctx)
	f.prompts = append(f.prompts, prompt)
	return &fakeTokens{f: f, prompt: len(strings.Fields(prompt))}, nil
}

func (f *fakeGenerator) Name() string      { return "fake-lm" }
func (f *fakeGenerator) MaxPositions() int { return 64 }

// DefaultMaxNewTokens is 32, so that a request naming no length is told from one of 16.
func (f *fakeGenerator) DefaultMaxNewTokens() int { return 32 }

// stopped counts the generations whose context has ended.
func (f *fakeGenerator) stopped() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ctx := range f.ctxs {
		if ctx.Err() != nil {
			n++
		}
	}
	return n
}

type fakeTokens struct {
	f      *fakeGenerator
	i      int
	prompt int
}

func (s *fakeTokens) Next(ctx context.Context) (generate.Event, error) {
	if err := ctx.Err(); err != nil {
		return generate.Event{}, err
	}
	s.i++
	switch {
	case s.i <= len(s.f.script):
		ev := s.f.script[s.i-1]
		ev.Index = s.i
		return ev, nil
	case s.f.endless:
		return generate.Event{Token: generate.Token{ID: 9, Text: "x"}, Trimmed: "x", HasToken: true, Index: s.i}, nil
	case s.f.block:
		<-ctx.Done()
		return generate.Event{}, ctx.Err()
	}
	return generate.Event{}, io.EOF
}

// NextOrWake makes the fake an awaiter, as *generate.Stream is, so that a call of one choice
// reads it as it reads a real model's stream: with no goroutine between.
func (s *fakeTokens) NextOrWake(ctx context.Context, wake <-chan time.Time) (generate.Event, bool, error) {
	if s.i >= len(s.f.script) && !s.f.endless && s.f.block {
		select {
		case <-wake:
			return generate.Event{}, true, nil
		case <-ctx.Done():
			return generate.Event{}, false, ctx.Err()
		}
	}
	ev, err := s.Next(ctx)
	return ev, false, err
}

func (s *fakeTokens) PromptTokens() int                 { return s.prompt }
func (s *fakeTokens) PromptLogprobs() []generate.Token  { return s.f.scored }
func (s *fakeTokens) Seed() (seed uint64, sampled bool) { return 7, true }

// token is a script's token event; last ends the script with finish, trimmed being what the
// token adds once stop sequences are left out.
func token(id int64, text string) generate.Event {
	return generate.Event{Token: generate.Token{ID: id, Text: text, Logprob: -0.5}, Trimmed: text, HasToken: true}
}

func last(id int64, text, trimmed string, finish generate.Finish) generate.Event {
	ev := token(id, text)
	ev.Trimmed, ev.Done, ev.Finish = trimmed, true, finish
	return ev
}

// stopScript generates " Hello world" and stops on the stop sequence " world".
var stopScript = []generate.Event{token(1, " Hel"), token(2, "lo"), last(3, " world", "", generate.FinishStopSequence)}

// generationFixture serves the generation routes over gen.
func generationFixture(t *testing.T, gen *fakeGenerator, timeout time.Duration) *fixture {
	t.Helper()
	return newFixture(t, func(o *fixtureOptions) {
		o.extra = Generation(GenerationEndpoint{Model: gen, Timeout: timeout,
			Gate: newTestGate(t, "generate", newFakeLoad(16), 2*time.Second)})
	})
}

// sseData reads a stream's data lines.
func sseData(t *testing.T, raw string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(raw, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

// TestEveryDialectAnswersWholeAndStreamed: one script, answered by each dialect in its own
// shape: TGI keeps the stop sequence in its text, OpenAI leaves it out.
func TestEveryDialectAnswersWholeAndStreamed(t *testing.T) {
	gen := &fakeGenerator{script: stopScript}
	f := generationFixture(t, gen, time.Minute)

	r := f.do(t, "POST", "/generate", `{"inputs":"Say","parameters":{"details":true,"stop":[" world"]}}`)
	if r.status != 200 || r.body["generated_text"] != " Hello world" {
		t.Fatalf("/generate: %d %s", r.status, r.raw)
	}
	details := r.body["details"].(map[string]any)
	if details["finish_reason"] != "stop_sequence" || details["generated_tokens"] != 3.0 || details["seed"] != 7.0 ||
		len(details["tokens"].([]any)) != 3 {
		t.Fatalf("/generate details: %s", r.raw)
	}
	if gen.params[0].Stop[0] != " world" {
		t.Fatalf("stop sequences not passed on: %+v", gen.params[0])
	}

	r = f.do(t, "POST", "/", `{"inputs":"Say","parameters":{"return_full_text":true}}`)
	if r.status != 200 || !strings.HasPrefix(r.raw, `[{"generated_text":"Say Hello world"}]`) {
		t.Fatalf("POST /: %d %s", r.status, r.raw)
	}

	r = f.do(t, "POST", "/generate_stream", `{"inputs":"Say","parameters":{"details":true}}`)
	events := sseData(t, r.raw)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || len(events) != 3 {
		t.Fatalf("/generate_stream: %d %q", r.status, r.raw)
	}
	var final tgiStreamEvent
	if err := json.Unmarshal([]byte(events[2]), &final); err != nil || final.GeneratedText == nil ||
		*final.GeneratedText != " Hello world" || final.Details == nil || final.Details.InputLength != 1 || final.Index != 3 {
		t.Fatalf("last TGI event %s (%v)", events[2], err)
	}

	r = f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say","n":2,"echo":true,"stop":" world"}`)
	choices, _ := r.body["choices"].([]any)
	if r.status != 200 || len(choices) != 2 || r.body["usage"].(map[string]any)["completion_tokens"] != 6.0 {
		t.Fatalf("/v1/completions: %d %s", r.status, r.raw)
	}
	if c := choices[1].(map[string]any); c["text"] != "Say Hello" || c["finish_reason"] != "stop" || c["index"] != 1.0 {
		t.Fatalf("choice %v", c)
	}

	r = f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say","stream":true,"stream_options":{"include_usage":true}}`)
	events = sseData(t, r.raw)
	var text strings.Builder
	for _, e := range events[:len(events)-2] {
		var chunk streamChunk
		if err := json.Unmarshal([]byte(e), &chunk); err != nil || len(chunk.Choices) != 1 {
			t.Fatalf("chunk %s", e)
		}
		text.WriteString(chunk.Choices[0].Text)
	}
	if text.String() != " Hello" || !strings.Contains(events[len(events)-2], `"total_tokens":4`) || events[len(events)-1] != "[DONE]" {
		t.Fatalf("streamed completion %q: %q", text.String(), events)
	}
}

// TestDialectsAnswerFailuresInTheirShape: a request the model cannot take, a refusal from the
// queue and a failure mid-stream, on TGI's and OpenAI's routes.
func TestDialectsAnswerFailuresInTheirShape(t *testing.T) {
	long := &generate.TooLongError{Prompt: 60, MaxNewTokens: 99887766, MaxPositions: 64}
	f := generationFixture(t, &fakeGenerator{err: long}, time.Minute)
	r := f.do(t, "POST", "/generate", `{"inputs":"Say `+canary+`"}`)
	if r.status != 422 || r.body["error_type"] != "validation" || !strings.HasPrefix(r.body["error"].(string), "Input validation error: The prompt (60 tokens)") ||
		strings.Contains(r.raw, "99887766") {
		t.Fatalf("TGI too long: %d %s", r.status, r.raw)
	}
	r = f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say `+canary+`"}`)
	e, _ := r.body["error"].(map[string]any)
	if r.status != 400 || e["type"] != "invalid_request_error" || e["param"] != "max_tokens" ||
		!strings.Contains(e["message"].(string), "maximum context length is 64 tokens, and your prompt has 60: at most 4 new tokens fit") ||
		strings.Contains(r.raw, "99887766") {
		t.Fatalf("OpenAI too long: %d %s", r.status, r.raw)
	}
	for _, path := range []string{"/generate", "/v1/completions"} {
		if strings.Contains(f.do(t, "POST", path, `{"model":"fake-lm","prompt":"`+canary+`","inputs":"`+canary+`"}`).raw, canary) {
			t.Fatalf("%s quoted the request", path)
		}
	}

	f = generationFixture(t, &fakeGenerator{err: fmt.Errorf("scheduler: %w", admission.ErrQueueFull)}, time.Minute)
	r = f.do(t, "POST", "/generate", `{"inputs":"Say"}`)
	if r.status != 503 || r.header.Get("Retry-After") != "2" || r.body["error_type"] != "overloaded" || r.body["code"] != "backpressure" {
		t.Fatalf("TGI queue full: %d %s", r.status, r.raw)
	}
	r = f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say"}`)
	e, _ = r.body["error"].(map[string]any)
	if r.status != 503 || r.header.Get("Retry-After") != "2" || e["type"] != "server_error" || e["code"] != "backpressure" ||
		e["details"].(map[string]any)["reason"] != "saturated" {
		t.Fatalf("OpenAI queue full: %d %s", r.status, r.raw)
	}

	stalls := &fakeGenerator{script: []generate.Event{token(1, "a"),
		{Done: true, Finish: generate.FinishError, Err: generate.ErrStalled, Index: 1}}}
	f = generationFixture(t, stalls, time.Minute)
	r = f.do(t, "POST", "/generate_stream", `{"inputs":"Say"}`)
	events := sseData(t, r.raw)
	if r.status != 200 || len(events) != 2 || !strings.Contains(events[1], `"error_type":"generation"`) || !strings.Contains(events[1], `"code":"internal_error"`) {
		t.Fatalf("TGI stream that fails: %q", r.raw)
	}
	r = f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say","stream":true}`)
	events = sseData(t, r.raw)
	if len(events) != 2 || !strings.Contains(events[1], `"type":"server_error"`) || strings.Contains(r.raw, "[DONE]") {
		t.Fatalf("OpenAI stream that fails: %q", r.raw)
	}
	r = f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say"}`)
	if r.status != 500 || r.body["error"].(map[string]any)["type"] != "server_error" {
		t.Fatalf("OpenAI answer that fails: %d %s", r.status, r.raw)
	}
	metrics := f.do(t, "GET", "/metrics", "").raw
	for _, want := range []string{`sluice_http_requests_total{outcome="failed",route="/generate_stream",status="200"} 1`,
		`sluice_http_requests_total{outcome="failed",route="/v1/completions",status="500"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}

// TestAnEventThatIsNotJSONEndsTheStreamWithAnError: a token whose log probability is not a
// number (which the sampler no longer makes) cannot be written as JSON; each dialect's
// stream then ends with its error event, never with events silently left out.
func TestAnEventThatIsNotJSONEndsTheStreamWithAnError(t *testing.T) {
	bad := token(2, "b")
	bad.Logprob = float32(math.NaN())
	f := generationFixture(t, &fakeGenerator{script: []generate.Event{token(1, "a"), bad, last(3, "c", "c", generate.FinishLength)}}, time.Minute)
	for path, body := range map[string]string{
		"/generate_stream": `{"inputs":"Say"}`,
		"/v1/completions":  `{"model":"fake-lm","prompt":"Say","stream":true,"logprobs":1}`,
	} {
		r := f.do(t, "POST", path, body)
		events := sseData(t, r.raw)
		if len(events) < 2 || !strings.Contains(events[len(events)-1], `"internal_error"`) || strings.Contains(r.raw, "[DONE]") {
			t.Fatalf("%s with an event that is not JSON: %q", path, r.raw)
		}
	}
}

// TestStreamCutByItsDeadlineEndsWithAnErrorEvent: a stream whose generation deadline passes
// mid-stream ends with the dialect's timeout event, never a bare close, and is counted as
// timed out.
func TestStreamCutByItsDeadlineEndsWithAnErrorEvent(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{token(1, "a")}, block: true}
	f := generationFixture(t, gen, 50*time.Millisecond)
	for path, body := range map[string]string{
		"/generate_stream": `{"inputs":"Say"}`,
		"/v1/completions":  `{"model":"fake-lm","prompt":"Say","stream":true}`,
	} {
		r := f.do(t, "POST", path, body)
		events := sseData(t, r.raw)
		if len(events) != 2 || !strings.Contains(events[1], `"code":"timeout"`) {
			t.Fatalf("%s cut by its deadline: %q", path, r.raw)
		}
	}
	metrics := f.do(t, "GET", "/metrics", "").raw
	if !strings.Contains(metrics, `sluice_http_requests_total{outcome="timed_out",route="/generate_stream",status="200"} 1`) {
		t.Fatal("the cut stream was not counted as timed out")
	}
}

// TestClientLeavingAStreamIsCounted: a client that reads the first event of an endless stream
// and hangs up stops its generation and is counted in sluice_http_requests_aborted_total,
// on TGI's and OpenAI's stream routes.
func TestClientLeavingAStreamIsCounted(t *testing.T) {
	gen := &fakeGenerator{endless: true}
	f := generationFixture(t, gen, time.Minute)
	for i, route := range []string{"/generate_stream", "/v1/completions"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		body := `{"model":"fake-lm","prompt":"Say","stream":true}`
		if route == "/generate_stream" {
			body = `{"inputs":"Say"}`
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", route, len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", route, resp, err)
		}
		conn.Close()
		want := fmt.Sprintf(`sluice_http_requests_aborted_total{reason="client_closed",route=%q} 1`, route)
		waitFor(t, func() bool { return strings.Contains(f.do(t, "GET", "/metrics", "").raw, want) })
		waitFor(t, func() bool { return gen.stopped() == i+1 })
	}
}

// waitFor polls a condition the server makes true; it never sleeps for a fixed time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOpenAIRoutesAnswer404ForAModelNotServed: a model the server does not serve is OpenAI's
// and vLLM's 404 model_not_found about `model`, without the name sent; the one it serves
// answers.
func TestOpenAIRoutesAnswer404ForAModelNotServed(t *testing.T) {
	f := generationFixture(t, &fakeGenerator{script: stopScript}, time.Minute)
	for path, body := range map[string]string{
		"/v1/completions":      `{"model":"%s","prompt":"hi","max_tokens":2}`,
		"/v1/chat/completions": `{"model":"%s","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`,
	} {
		r := f.do(t, "POST", path, fmt.Sprintf(body, "gpt-unknown-7"))
		e, _ := r.body["error"].(map[string]any)
		if r.status != 404 || e["code"] != "model_not_found" || e["param"] != "model" || strings.Contains(r.raw, "gpt-unknown-7") {
			t.Errorf("%s, a model not served: %d %s", path, r.status, r.raw)
		}
		if r := f.do(t, "POST", path, fmt.Sprintf(body, "fake-lm")); r.status == 404 {
			t.Errorf("%s, the model served: %d %s", path, r.status, r.raw) // (this fixture has no chat template: 400)
		}
	}
}

// An external model's own finish reason is passed on; TGI's reasons are OpenAI's "stop" or
// "length".
func TestFinishReasonsInOpenAIsWords(t *testing.T) {
	for f, want := range map[generate.Finish]string{generate.FinishEOS: "stop", generate.FinishStopSequence: "stop",
		generate.FinishLength: "length", generate.FinishError: "stop", "content_filter": "content_filter"} {
		if got := finishReason(f); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", f, got, want)
		}
	}
}

// TestTGISamplesAsItsRouterDoes: without parameters TGI samples; with them, do_sample or a
// parameter that changes the scores does (a temperature of 1 changes none, so alone it is
// greedy decoding, as TGI's).
func TestTGISamplesAsItsRouterDoes(t *testing.T) {
	ep := &GenerationEndpoint{Model: positions(256), MaxStopSequences: 4, MaxChoices: 8}
	for body, want := range map[string]bool{
		`{"inputs":"x"}`: true, `{"inputs":"x","parameters":{}}`: false,
		`{"inputs":"x","parameters":{"temperature":1}}`:                  false,
		`{"inputs":"x","parameters":{"temperature":1,"do_sample":true}}`: true,
		`{"inputs":"x","parameters":{"temperature":0.7}}`:                true,
		`{"inputs":"x","parameters":{"top_k":5}}`:                        true,
		`{"inputs":"x","parameters":{"top_p":0.9,"do_sample":false}}`:    true,
	} {
		if _, params, _, msg := parseTGI([]byte(body), ep); msg != "" || params.DoSample != want {
			t.Errorf("%s: sampled %v (%q), want %v", body, params.DoSample, msg, want)
		}
	}
}

// TestEchoedTokensSpellTheTextAtTheirOffsets: with echo and logprobs, the legacy completions'
// tokens, the prompt's then the answer's, spell the choice's text, each at its text_offset
// (characters), whole and streamed: the prompt's are the text each adds to it, not the token
// alone ("it", which WordPiece's pieces would list without its space).
func TestEchoedTokensSpellTheTextAtTheirOffsets(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{token(1, " é"), last(2, "t", "t", generate.FinishLength)},
		scored: []generate.Token{{ID: 5, Text: "Dür", Piece: "Dür"}, {ID: 6, Text: "  it", Piece: "it", Logprob: -1}}}
	for i := range gen.script {
		gen.script[i].Piece = gen.script[i].Text
	}
	f := generationFixture(t, gen, time.Minute)
	check := func(how, text string, lp completionLogprobs) {
		t.Helper()
		runes := []rune(text)
		if strings.Join(lp.Tokens, "") != text || len(lp.TextOffset) != len(lp.Tokens) {
			t.Fatalf("%s: tokens %q, offsets %v, text %q", how, lp.Tokens, lp.TextOffset, text)
		}
		for i, tok := range lp.Tokens {
			if at := lp.TextOffset[i]; string(runes[at:at+utf8.RuneCountInString(tok)]) != tok {
				t.Fatalf("%s: token %d %q is not at its offset %d in %q", how, i, tok, at, text)
			}
		}
		if _, listed := lp.TopLogprobs[1]["  it"]; !listed {
			t.Fatalf("%s: the prompt's token is not among its alternatives: %v", how, lp.TopLogprobs)
		}
	}
	const body = `{"model":"fake-lm","prompt":"Dür  it","max_tokens":2,"logprobs":1,"echo":true`
	var whole completion
	r := f.do(t, "POST", "/v1/completions", body+`}`)
	if err := json.Unmarshal([]byte(r.raw), &whole); r.status != 200 || err != nil || len(whole.Choices) != 1 {
		t.Fatalf("echo with logprobs: %d %s", r.status, r.raw)
	}
	check("whole", whole.Choices[0].Text, *whole.Choices[0].Logprobs)

	r = f.do(t, "POST", "/v1/completions", body+`,"stream":true}`)
	var text strings.Builder
	var lp completionLogprobs
	for _, data := range sseData(t, r.raw) {
		var chunk completion
		if data == "[DONE]" || json.Unmarshal([]byte(data), &chunk) != nil || len(chunk.Choices) == 0 {
			continue
		}
		c := chunk.Choices[0]
		text.WriteString(c.Text)
		lp.Tokens = append(lp.Tokens, c.Logprobs.Tokens...)
		lp.TextOffset = append(lp.TextOffset, c.Logprobs.TextOffset...)
		lp.TopLogprobs = append(lp.TopLogprobs, c.Logprobs.TopLogprobs...)
	}
	check("streamed", text.String(), lp)
}
