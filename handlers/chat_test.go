package handlers

import (
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/generate"
)

// fakeTemplate renders a conversation as "role: content" lines and refuses one whose first
// message is the assistant's.
type fakeTemplate struct{}

func (fakeTemplate) Render(msgs []chat.Message, _ []json.RawMessage) (chat.Prompt, error) {
	if msgs[0].Role == "assistant" {
		return chat.Prompt{}, &chat.RefusedError{Reason: "the conversation must not begin with the assistant"}
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return chat.Prompt{Text: b.String()}, nil
}

func chatFixture(t *testing.T, gen *fakeGenerator, tpl ChatTemplate) *fixture {
	t.Helper()
	return newFixture(t, func(o *fixtureOptions) {
		o.extra = Generation(GenerationEndpoint{Model: gen, Timeout: time.Minute, Chat: tpl,
			Gate: newTestGate(t, "generate", newFakeLoad(16), 2*time.Second)})
	})
}

// TestChatCompletionsAnswerWholeAndStreamed: messages rendered by the template into one prompt
// encoded as it is, an assistant message without the stop sequence, usage counting the prompt
// once for n choices that sample apart, and chunks that say the role first and end with the
// finish reason, the usage and [DONE].
func TestChatCompletionsAnswerWholeAndStreamed(t *testing.T) {
	gen := &fakeGenerator{script: stopScript}
	f := chatFixture(t, gen, fakeTemplate{})
	r := f.do(t, "POST", "/v1/chat/completions", `{"model":"fake-lm","n":2,"seed":40,"stop":" world","max_completion_tokens":9,
		"messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Say"},{"type":"text","text":"it"}]}]}`)
	if r.status != 200 || r.body["object"] != "chat.completion" || !strings.HasPrefix(r.body["id"].(string), "chatcmpl-") {
		t.Fatalf("answer: %d %s", r.status, r.raw)
	}
	choices := r.body["choices"].([]any)
	msg := choices[1].(map[string]any)["message"].(map[string]any)
	if len(choices) != 2 || msg["role"] != "assistant" || msg["content"] != " Hello" || choices[1].(map[string]any)["finish_reason"] != "stop" {
		t.Fatalf("choices: %s", r.raw)
	}
	// The fake counts a prompt's words: "system: Be brief.\nuser: Say\nit\n" has 6.
	if u := r.body["usage"].(map[string]any); u["prompt_tokens"] != 6.0 || u["completion_tokens"] != 6.0 || u["total_tokens"] != 12.0 {
		t.Fatalf("usage %v: the prompt counts once", u)
	}
	p0, p1 := gen.params[0], gen.params[1]
	if !p0.Templated || p0.MaxNewTokens != 9 || !p0.SeedSet || p0.Seed != 40 || p1.Seed != 41 || p0.Stop[0] != " world" {
		t.Fatalf("params %+v %+v", p0, p1)
	}

	r = f.do(t, "GET", "/v1/models", "")
	if data, _ := r.body["data"].([]any); r.status != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != "fake-lm" {
		t.Fatalf("/v1/models: %d %s", r.status, r.raw)
	}

	r = f.do(t, "POST", "/v1/chat/completions", `{"model":"fake-lm","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"user","content":"Say"}],"stop":[" world"]}`)
	events := sseData(t, r.raw)
	if r.status != 200 || len(events) < 3 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("stream: %d %q", r.status, r.raw)
	}
	var text strings.Builder
	for i, e := range events[:len(events)-2] {
		var chunk chatCompletion
		if err := json.Unmarshal([]byte(e), &chunk); err != nil || chunk.Object != "chat.completion.chunk" || len(chunk.Choices) != 1 ||
			chunk.Choices[0].Delta == nil || chunk.Choices[0].Message != nil || !strings.Contains(e, `"usage":null`) {
			t.Fatalf("chunk %s", e)
		}
		d := chunk.Choices[0].Delta
		if (i == 0) != (d.Role == "assistant") {
			t.Fatalf("chunk %d %s: the role comes with the first chunk only", i, e)
		}
		if d.Content != nil {
			text.WriteString(*d.Content)
		}
		if done := chunk.Choices[0].FinishReason != nil; done != (i == len(events)-3) || (done && *chunk.Choices[0].FinishReason != "stop") {
			t.Fatalf("chunk %d %s: the finish reason comes with the last", i, e)
		}
	}
	if text.String() != " Hello" || !strings.Contains(events[len(events)-2], `"choices":[]`) || !strings.Contains(events[len(events)-2], `"prompt_tokens":2`) {
		t.Fatalf("streamed %q, usage %s", text.String(), events[len(events)-2])
	}
}

// TestChatCompletionsRefuseWhatTheyCannotServe: OpenAI's error object, about the parameter at
// fault, never quoting a message.
func TestChatCompletionsRefuseWhatTheyCannotServe(t *testing.T) {
	f := chatFixture(t, &fakeGenerator{script: stopScript}, fakeTemplate{})
	user := `"messages":[{"role":"user","content":"` + canary + `"}]`
	for _, c := range []struct{ body, param, says string }{
		{`{"model":"fake-lm"}`, "messages", "non-empty list"},
		{`{"model":"fake-lm","messages":[]}`, "messages", "non-empty list"},
		{`{"model":"fake-lm","messages":[{"content":"` + canary + `"}]}`, "messages", "`role`"},
		{`{"model":"fake-lm","messages":[{"role":"narrator","content":"` + canary + `"}]}`, "messages", "`role` must be"},
		{`{"model":"fake-lm","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, "messages[0].content", "text parts"},
		{`{"model":"fake-lm","messages":[{"role":"system","content":"` + canary + `"},{"role":"user","content":""}]}`, "messages[1].content", "message 1 has no content"},
		{`{"model":"fake-lm",` + user + `,"max_tokens":"` + canary + `"}`, "max_tokens", "`max_tokens`: Input should be a valid integer"},
		{`{"model":"fake-lm",` + user + `,"` + canary + `":1}`, "", "Unrecognized request argument supplied; the fields are model,"},
		{`{"model":"fake-lm","messages":[{"role":"assistant","content":"` + canary + `"}]}`, "messages", "must not begin with the assistant"},
		{`{` + user + `}`, "model", "model parameter"},
		{`{"model":"fake-lm",` + user + `,"top_logprobs":2}`, "top_logprobs", "needs `logprobs`"},
		{`{"model":"fake-lm",` + user + `,"logprobs":true,"top_logprobs":21}`, "top_logprobs", "between 0 and 20"},
		{`{"model":"fake-lm",` + user + `,"tools":[{"type":"function"}]}`, "tools[0]", "each tool must be"},
		{`{"model":"fake-lm",` + user + `,"tools":[{"type":"function","function":{"name":"a b"}}]}`, "tools[0].function.name", "letters, digits"},
		{`{"model":"fake-lm",` + user + `,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]}`, "tools[1].function.name", "same name"},
		{`{"model":"fake-lm",` + user + `,"tool_choice":"required"}`, "tool_choice", "has no `tools`"},
		{`{"model":"fake-lm",` + user + `,"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":{"type":"function","function":{"name":"b"}}}`, "tool_choice", "not among `tools`"},
		{`{"model":"fake-lm",` + user + `,"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":"sometimes"}`, "tool_choice", "must be none, auto, required"},
		{`{"model":"fake-lm",` + user + `,"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":"required"}`, "tools", "does not take a constrained answer"},
		{`{"model":"fake-lm","messages":[{"role":"tool","content":"` + canary + `"}]}`, "messages[0]", "`tool_call_id`"},
		{`{"model":"fake-lm","messages":[{"role":"user","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"a","arguments":"{}"}}]}]}`, "messages[0]", "only an assistant message"},
		{`{"model":"fake-lm",` + user + `,"response_format":{"type":"json_object"}}`, "response_format", "does not take a constrained answer"},
		{`{"model":"fake-lm",` + user + `,"response_format":{"type":"xml"}}`, "response_format", "must be `text`, `json_object` or `json_schema`"},
		{`{"model":"fake-lm",` + user + `,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`, "response_format", "is required"},
		{`{"model":"fake-lm",` + user + `,"max_completion_tokens":0}`, "max_completion_tokens", "at least 1"},
		{`{"model":"fake-lm",` + user + `,"max_tokens":3,"max_completion_tokens":4}`, "max_completion_tokens", "differ"},
		{`{"model":"fake-lm",` + user + `,"temperature":3}`, "temperature", "between 0 and 2"},
		{`{"model":"fake-lm",` + user + `,"functions":[{"name":"a"}]}`, "functions", "use `tools`"},
		{`{"model":"fake-lm",` + user + `,"function_call":"auto"}`, "function_call", "use `tool_choice`"},
		{`{"model":"fake-lm",` + user + `,"modalities":["text","audio"]}`, "modalities", "text only"},
		{`{"model":"fake-lm",` + user + `,"modalities":[]}`, "modalities", "text only"},
		{`{"model":"fake-lm",` + user + `,"audio":{"voice":"alloy","format":"wav"}}`, "audio", "text only"},
		{`{"model":"fake-lm",` + user + `,"seed":1.5}`, "seed", "valid integer"},
	} {
		r := f.do(t, "POST", "/v1/chat/completions", c.body)
		e, _ := r.body["error"].(map[string]any)
		param, _ := e["param"].(string) // null when the error is about no one argument
		if r.status != 400 || e["type"] != "invalid_request_error" || param != c.param || !strings.Contains(e["message"].(string), c.says) {
			t.Errorf("%s: %d %s", c.body, r.status, r.raw)
		}
		if strings.Contains(r.raw, canary) {
			t.Errorf("%s: the answer quotes a message", c.body)
		}
	}

	f = chatFixture(t, &fakeGenerator{script: stopScript}, nil)
	r := f.do(t, "POST", "/v1/chat/completions", `{"model":"fake-lm",`+user+`}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || !strings.Contains(e["message"].(string), "no chat template") {
		t.Fatalf("a model without a template: %d %s", r.status, r.raw)
	}

	long := &generate.TooLongError{Prompt: 60, MaxNewTokens: 10, MaxPositions: 64}
	f = chatFixture(t, &fakeGenerator{err: long}, fakeTemplate{})
	r = f.do(t, "POST", "/v1/chat/completions", `{"model":"fake-lm",`+user+`}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || !strings.Contains(e["message"].(string), "maximum context length is 64") {
		t.Fatalf("too long: %d %s", r.status, r.raw)
	}
}

// TestContentOfManyPartsCostsItsLength: a message's text parts are joined in one pass, so a
// body of thousands of short parts allocates in proportion to its size (joining by string
// concatenation copied what was built for every part: hundreds of megabytes for this one).
func TestContentOfManyPartsCostsItsLength(t *testing.T) {
	const part, parts = "twenty-four characters!!", 4000
	var b strings.Builder
	b.WriteByte('[')
	for i := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"text","text":"` + part + `"}`)
	}
	b.WriteByte(']')
	raw := json.RawMessage(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	text, ok := messageText(raw)
	runtime.ReadMemStats(&after)
	if want := parts*(len(part)+1) - 1; !ok || len(text) != want {
		t.Fatalf("joined %d bytes (ok %v), want %d", len(text), ok, want)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(raw)); got > limit {
		t.Fatalf("joining %d bytes of parts allocated %d bytes, more than %d", len(raw), got, limit)
	}
}

// TestAHeldAnswerStreamsEveryTokensLogprobs: a streamed answer held while it may be tool calls
// lists the held tokens' log probabilities with the chunk that releases their text or their
// calls: the stream lists every token, in order, as the whole answer does.
func TestAHeldAnswerStreamsEveryTokensLogprobs(t *testing.T) {
	for name, pieces := range map[string][]string{
		"calls": {`[`, `{"name":"note",`, `"arguments":{}}]`},
		"text":  {`[`, ` `, `1]`, ` ok`},
	} {
		var script []generate.Event
		for k, piece := range pieces {
			ev := token(int64(k), piece)
			ev.Piece = piece
			if k == len(pieces)-1 {
				ev.Done, ev.Finish = true, generate.FinishEOS
			}
			script = append(script, ev)
		}
		f := chatFixture(t, &fakeGenerator{script: script}, fakeTemplate{})
		const body = `{"model":"fake-lm","messages":[{"role":"user","content":"Say"}],"logprobs":true,` +
			`"tools":[{"type":"function","function":{"name":"note"}}]`
		listed := func(lp *chatLogprobs) (out []string) {
			if lp != nil {
				for _, e := range lp.Content {
					out = append(out, e.Token)
				}
			}
			return out
		}
		var whole chatCompletion
		r := f.do(t, "POST", "/v1/chat/completions", body+`}`)
		if err := json.Unmarshal([]byte(r.raw), &whole); err != nil || len(whole.Choices) != 1 ||
			strings.Join(listed(whole.Choices[0].Logprobs), "|") != strings.Join(pieces, "|") {
			t.Fatalf("%s, whole: %d %s", name, r.status, r.raw)
		}
		r = f.do(t, "POST", "/v1/chat/completions", body+`,"stream":true}`)
		var streamed []string
		for _, e := range sseData(t, r.raw) {
			var chunk chatCompletion
			if e != "[DONE]" && json.Unmarshal([]byte(e), &chunk) == nil && len(chunk.Choices) == 1 {
				streamed = append(streamed, listed(chunk.Choices[0].Logprobs)...)
			}
		}
		if strings.Join(streamed, "|") != strings.Join(pieces, "|") {
			t.Errorf("%s: streamed logprobs of %q, want %q:\n%s", name, streamed, pieces, r.raw)
		}
	}
}

// TestOpenAIsArgumentsThatChangeNothingAreTaken: a seed is any int64, as OpenAI's and vLLM's
// are (-1, the most negative), each its own sampler's seed, a seed from 0 up that seed itself;
// the arguments about the caller and OpenAI's prompt cache, and modalities and audio that ask
// for text only, are taken and change nothing, on both OpenAI routes.
func TestOpenAIsArgumentsThatChangeNothingAreTaken(t *testing.T) {
	gen := &fakeGenerator{script: stopScript}
	f := chatFixture(t, gen, fakeTemplate{})
	const asides = `,"user":"u","metadata":{"k":"v"},"store":false,"service_tier":"auto","prompt_cache_key":"k1","safety_identifier":"h"`
	for _, c := range []struct {
		path, body string
		seed       uint64
	}{
		{"/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":"Say"}],"seed":-1,"modalities":["text"],"audio":null` + asides + `}`, math.MaxUint64},
		{"/v1/completions", `{"model":"fake-lm","prompt":"Say","seed":-9223372036854775808` + asides + `}`, 1 << 63},
		{"/v1/completions", `{"model":"fake-lm","prompt":"Say","seed":9223372036854775807}`, math.MaxInt64},
	} {
		gen.params = nil
		r := f.do(t, "POST", c.path, c.body)
		if r.status != 200 || len(gen.params) != 1 || !gen.params[0].SeedSet || gen.params[0].Seed != c.seed {
			t.Errorf("%s: %d %s, params %+v", c.body, r.status, r.raw, gen.params)
		}
	}
	if r := f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"Say","seed":9223372036854775808}`); r.status != 400 {
		t.Errorf("a seed past int64: %d %s", r.status, r.raw)
	}
}
