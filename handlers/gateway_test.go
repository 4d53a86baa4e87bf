package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/gateway"
	"github.com/sluice-serving/sluice/generate"
	"github.com/sluice-serving/sluice/handlers/connwatch"
)

// gatewayFixture serves /privacy-gateway/complete over the fixture's PII fake (it finds
// "Alice", first_name, 0.9) and gen (nil: no completion model).
func gatewayFixture(t *testing.T, gen *fakeGenerator) (*fixture, *audit.Log) {
	t.Helper()
	trail := newAuditLog(t)
	f := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		gw := GatewayEndpoint{PII: o.pii}
		if gen != nil {
			gw.Generation = &GenerationEndpoint{Model: gen, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}
		}
		o.extra = append(o.extra, PrivacyGateway(gw))
	})
	return f, trail
}

// The model's answer names the placeholder in pieces cut inside it; the answer comes back
// restored, the model saw no name, and the audit holds hashes only.
func TestPrivacyGatewayRestoresTheAnswer(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{token(1, "Ask "), token(2, "[FIRS"), token(3, "T_NAME_1"),
		token(4, "]"), last(5, " now.", " now.", generate.FinishLength)}}
	f, trail := gatewayFixture(t, gen)
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice about Alice's results."}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r.body["redacted_prompt"] != "Call [FIRST_NAME_1] about [FIRST_NAME_1]'s results." ||
		r.body["external_response"] != "Ask [FIRST_NAME_1] now." || r.body["reidentified_text"] != "Ask Alice now." {
		t.Errorf("answer %s", r.raw)
	}
	if counts, _ := r.body["entity_counts"].(map[string]any); counts["FIRST_NAME"] != 2.0 {
		t.Errorf("entity_counts %v", r.body["entity_counts"])
	}
	recs := auditRecords(t, trail)
	if len(recs) != 1 || recs[0].Status != "forwarded" || recs[0].Route != "/privacy-gateway/complete" || recs[0].HTTPStatus != 200 ||
		recs[0].RequestID != r.header.Get("X-Request-ID") {
		t.Errorf("audit %+v", recs)
	}
	gen.mu.Lock()
	if len(gen.prompts) != 1 || strings.Contains(gen.prompts[0], "Alice") || !strings.Contains(gen.prompts[0], "[FIRST_NAME_1]") {
		t.Errorf("the model saw %q", gen.prompts)
	}
	gen.mu.Unlock()
	if a := r.body["audit"].(map[string]any); a["verified"] != true || a["record_hash"] != recs[0].RecordHash {
		t.Errorf("audit in the answer %v", a)
	}
	// A span under the detector floor is not judged by the threshold, and still never leaves.
	r = f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice.","detector_confidence_floor":0.95}`)
	if r.status != 200 || r.body["redacted_prompt"] != "Call [FIRST_NAME_1]." {
		t.Errorf("under the floor: %d %s", r.status, r.raw)
	}
}

func TestPrivacyGatewayRefusals(t *testing.T) {
	invented := &fakeGenerator{script: []generate.Event{last(1, "[FIRST_NAME_2]", "[FIRST_NAME_2]", generate.FinishLength)}}
	f, trail := gatewayFixture(t, invented)
	for _, tc := range []struct {
		body, code, reason string
		status             int
	}{
		{`{"text":"Call Alice."}`, codeGatewayReidentify, "unknown_placeholder", 400},
		{`{"text":"Call Alice.","disallowed_entity_categories":"first_name"}`, codeGatewayBlocked, "disallowed_entity_category", 400},
		{`{"text":"Call Alice.","confidence_threshold":0.95}`, codeGatewayBlocked, "redaction_confidence_below_threshold", 400},
	} {
		r := f.do(t, "POST", "/privacy-gateway/complete", tc.body)
		e := errorOf(t, r)
		if r.status != tc.status || e["code"] != tc.code || e["details"].(map[string]any)["reason"] != tc.reason {
			t.Errorf("%s: %d %s", tc.body, r.status, r.raw)
		}
		if strings.Contains(r.raw, "Alice") || strings.Contains(r.raw, "ALICE") {
			t.Errorf("%s: the refusal holds the text: %s", tc.body, r.raw)
		}
	}
	// A found name written again in another case is redacted there too, not forwarded and
	// not blocked (the sweep's recurrences): the answer's [FIRST_NAME_2] is then one this
	// request sent.
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice. ALICE called."}`)
	if r.status != 200 || r.body["redacted_prompt"] != "Call [FIRST_NAME_1]. [FIRST_NAME_2] called." || r.body["reidentified_text"] != "ALICE" {
		t.Errorf("a recurrence: %d %s", r.status, r.raw)
	}
	if recs := auditRecords(t, trail); len(recs) != 4 || recs[0].Status != "rejected" || recs[1].Status != "blocked" || recs[1].HTTPStatus != 400 || recs[3].Status != "forwarded" {
		t.Errorf("audit %+v", recs)
	}
	invented.mu.Lock()
	if len(invented.prompts) != 2 || strings.Contains(invented.prompts[1], "ALICE") { // the first and the last passed the checks
		t.Errorf("blocked requests, or the recurrence, reached the model: %q", invented.prompts)
	}
	invented.mu.Unlock()
	r = f.do(t, "POST", "/privacy-gateway/complete", `{"text":"x","confidence_threshold":2,"policy":" "}`)
	if r.status != 422 || !strings.Contains(r.raw, "confidence_threshold") || !strings.Contains(r.raw, "policy") {
		t.Errorf("bad fields: %d %s", r.status, r.raw)
	}
	if recs := auditRecords(t, trail); len(recs) != 5 || recs[4].Status != "rejected" || recs[4].Reason != "invalid_request" || recs[4].HTTPStatus != 422 {
		t.Errorf("a request refused before its session began: %+v", recs[len(recs)-1])
	}
	none, _ := gatewayFixture(t, nil)
	if r := none.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice."}`); r.status != 503 || errorOf(t, r)["code"] != codeGatewayNotConfigured {
		t.Errorf("without a model: %d %s", r.status, r.raw)
	}
}

// The OpenAI face: every message redacted with one map, the model never sees the name, and
// the answer restored as a stream whose chunks never show half a placeholder. The gateway's
// one rule for a placeholder the model invented holds on this face as on the completion
// route: an answer judged whole is refused (OpenMed's reidentification error), a streamed one
// has it masked, and the record counts it.
func TestGatewayChatRedactsAndRestores(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{token(1, "Hi "), token(2, "[FIRST_"), token(3, "NAME_1"),
		token(4, "] and [FIRST_NAME_7"), last(5, "]!", "]!", generate.FinishLength)}}
	trail := newAuditLog(t)
	f := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Chat: fakeTemplate{}, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	body := `{"model":"fake-lm","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"I am Alice"},{"role":"user","content":[{"type":"text","text":"Alice again"}]}]%s}`
	r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, ""))
	if r.status != 400 || errorOf(t, r)["code"] != codeGatewayReidentify || strings.Contains(r.raw, "Alice") {
		t.Fatalf("a whole answer with an invented placeholder: %d %s", r.status, r.raw)
	}
	r = f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"stream":true`))
	var streamed strings.Builder
	for _, line := range strings.Split(r.raw, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		if strings.Contains(data, "[FIRST") || strings.Contains(data, "NAME_1") {
			t.Errorf("a chunk shows part of a placeholder: %s", data)
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err == nil && len(chunk.Choices) > 0 {
			streamed.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	if streamed.String() != "Hi Alice and "+gateway.Masked+"!" {
		t.Errorf("streamed %q", streamed.String())
	}
	gen.mu.Lock()
	for _, p := range gen.prompts {
		if strings.Contains(p, "Alice") || !strings.Contains(p, "[FIRST_NAME_1]") || !strings.Contains(p, "Be brief.") {
			t.Errorf("the model saw %q", p)
		}
	}
	gen.mu.Unlock()
	recs := auditRecords(t, trail)
	if len(recs) != 2 || recs[0].Status != "rejected" || recs[0].Reason != "unknown_placeholder" || recs[0].Invented != 1 ||
		recs[1].Status != "forwarded" || recs[1].Invented != 1 || recs[1].Entities["FIRST_NAME"] != 2 {
		t.Errorf("audit %+v", recs)
	}
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","logprobs":true,"messages":[{"role":"user","content":"x"}]}`); r.status != 400 {
		t.Errorf("logprobs: %d", r.status)
	}
}

// Keys in another case or spelling: a request's own are refused (they are not its fields); a
// message's, which the dialect's decoder also takes, are read and redacted as the dialect reads
// them. Nothing reaches the model unredacted through them.
func TestGatewayChatKeySpellings(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{last(1, "ok", "ok", generate.FinishLength)}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Chat: fakeTemplate{}, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","Content":"I am Alice"}]}`); r.status != 200 {
		t.Errorf("a message's key in another case: %d %s", r.status, r.raw)
	}
	for _, body := range []string{
		`{"model":"fake-lm","messages":[{"role":"user","content":"hi"}],"meſſages":[{"role":"user","content":"I am Alice"}]}`,
		`{"model":"fake-lm","MESSAGES":[{"ROLE":"user","CONTENT":"I am Alice"}]}`,
	} {
		if r := f.do(t, "POST", "/gateway/v1/chat/completions", body); r.status != 400 || strings.Contains(r.raw, "Alice") {
			t.Errorf("%s: %d %s", body, r.status, r.raw)
		}
	}
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","Logprobs":true,"messages":[{"role":"user","content":"x"}]}`); r.status != 400 {
		t.Errorf("Logprobs: %d", r.status)
	}
	gen.mu.Lock()
	defer gen.mu.Unlock()
	for _, p := range gen.prompts {
		if strings.Contains(p, "Alice") {
			t.Errorf("the model saw %q", p)
		}
	}
	if len(gen.prompts) != 1 {
		t.Errorf("%d prompts", len(gen.prompts))
	}
}

// fakeChatUpstream answers every conversation with pieces, recording what it was sent.
type fakeChatUpstream struct {
	mu     sync.Mutex
	seen   []chat.Message
	opts   chat.Options
	pieces []string
	// calls, when set, are the answer instead: tool-call deltas.
	calls  []chat.CallDelta
	finish string
	err    error
}

func (u *fakeChatUpstream) Chat(_ context.Context, msgs []chat.Message, opts chat.Options, onDelta func(chat.Delta) error) (string, error) {
	u.mu.Lock()
	u.seen, u.opts = append(u.seen, msgs...), opts
	u.mu.Unlock()
	if u.err != nil {
		return "", u.err
	}
	for _, p := range u.pieces {
		if err := onDelta(chat.Delta{Content: p}); err != nil {
			return "", err
		}
	}
	for _, c := range u.calls {
		if err := onDelta(chat.Delta{Call: &c}); err != nil {
			return "", err
		}
	}
	if u.finish != "" {
		return u.finish, nil
	}
	return "stop", nil
}

func (u *fakeChatUpstream) Kind() string { return "openai" }

// TestIdentifiersAreReadAsTheirWords: a function's name or a key is read by the PII pass as the
// words it is made of (read whole, the shipped model took most snake_case names for e-mail
// addresses, and refused an agent conversation that called calculate_bmi); what is not an
// identifier is read as it is.
func TestIdentifiersAreReadAsTheirWords(t *testing.T) {
	for in, want := range map[string]string{"calculate_bmi": "calculate bmi", "getPatientByMrn": "get Patient By Mrn",
		"chart_for_John_Smith": "chart for John Smith", "Alice": "Alice", "get-vitals": "get-vitals", "HTTPServer": "HTTPServer",
		"ask Alice": "ask Alice", "1962_03_04": "1962_03_04", "a.b": "a.b"} {
		if got := identifierWords(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestGatewayChatTextBeforeCallsIsOneAnswer: an external model's text that ends, before its
// calls, in what might begin a placeholder is the same streamed as whole (streamed, the
// text's restorer was never told the text had ended, and what it held was dropped).
func TestGatewayChatTextBeforeCallsIsOneAnswer(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{"Looking up [FIRST_NAME_1] [A"}, finish: "tool_calls",
		calls: []chat.CallDelta{{Index: 0, ID: "call_up", Name: "flag"}, {Index: 0, Arguments: `{}`}}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1000, 1000
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	body := `{"model":"gpt-x","tools":[{"type":"function","function":{"name":"flag","parameters":{"type":"object"}}}],` +
		`"messages":[{"role":"user","content":"I am Alice"}]%s}`
	var whole struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, "")); json.Unmarshal([]byte(r.raw), &whole) != nil || len(whole.Choices) != 1 {
		t.Fatalf("whole: %d %s", r.status, r.raw)
	}
	r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"stream":true`))
	var streamed strings.Builder
	for _, line := range strings.Split(r.raw, "\n") {
		var ch struct {
			Choices []struct{ Delta struct{ Content *string } }
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &ch) == nil {
			for _, c := range ch.Choices {
				if c.Delta.Content != nil {
					streamed.WriteString(*c.Delta.Content)
				}
			}
		}
	}
	if got := whole.Choices[0].Message.Content; !strings.HasPrefix(got, "Looking up Alice ") || streamed.String() != got {
		t.Fatalf("whole %q, streamed %q", got, streamed.String())
	}
}

// The OpenAI face with an external model: it receives the redacted conversation, and its
// answer, cut inside a placeholder, comes back restored whole and streamed; a failing
// upstream is a 502 (an error event once streaming).
func TestGatewayChatUpstream(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{"Hello ", "[FIRST_NA", "ME_1", "], bye."}}
	trail := newAuditLog(t)
	f := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	body := `{"model":"gpt-x","messages":[{"role":"user","content":"I am Alice"}]%s}`
	r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, ""))
	if r.status != 200 || r.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] != "Hello Alice, bye." {
		t.Fatalf("whole: %d %s\n%s", r.status, r.raw, f.logs)
	}
	r = f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"stream":true`))
	var text strings.Builder
	for _, line := range strings.Split(r.raw, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		if strings.Contains(data, "[FIRST") {
			t.Errorf("half a placeholder: %s", data)
		}
		var ch struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		_ = json.Unmarshal([]byte(data), &ch)
		if len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if text.String() != "Hello Alice, bye." || !strings.HasSuffix(strings.TrimSpace(r.raw), "data: [DONE]") {
		t.Errorf("streamed %q\n%s", text.String(), r.raw)
	}
	up.mu.Lock()
	for _, m := range up.seen {
		if strings.Contains(m.Content, "Alice") {
			t.Errorf("the upstream saw %q", m.Content)
		}
	}
	up.err = errors.New("down")
	up.mu.Unlock()
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, "")); r.status != 502 {
		t.Errorf("failing upstream: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"stream":true`)); !strings.Contains(r.raw, "privacy_gateway_transport_error") {
		t.Errorf("failing upstream, streamed: %s", r.raw)
	}
	recs := auditRecords(t, trail)
	if len(recs) != 4 || recs[0].Completion != "openai" || recs[3].Status != "transport_error" || recs[1].Status != "forwarded" ||
		recs[1].HTTPStatus != 200 || recs[2].HTTPStatus != 502 || recs[3].HTTPStatus != 200 {
		t.Errorf("audit %+v", recs)
	}
	up.mu.Lock()
	up.err = nil
	up.mu.Unlock()
	// Sampling is passed on, the seed as the caller sent it; what the external model would
	// not be asked for is refused.
	for _, seed := range []int64{7, -1} {
		if r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"temperature":0.5,"top_p":0.9,"seed":`+strconv.FormatInt(seed, 10)+`,"frequency_penalty":0.5`)); r.status != 200 {
			t.Fatalf("with sampling: %d %s", r.status, r.raw)
		}
		up.mu.Lock()
		if o := up.opts; o.Temperature != 0.5 || o.TopP != 0.9 || o.Seed == nil || *o.Seed != seed || o.FrequencyPenalty != 0.5 {
			t.Errorf("the upstream was asked %+v", o)
		}
		up.mu.Unlock()
	}
	for _, extra := range []string{`,"stop":["\n"]`, `,"min_tokens":3`, `,"logit_bias":{"5":1}`} {
		if r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, extra)); r.status != 400 {
			t.Errorf("%s: %d %s", extra, r.status, r.raw)
		}
	}
}

// A slow upstream's silence is filled with keep-alive comments, and a client that leaves
// mid-stream stops the upstream call.
func TestGatewayChatUpstreamKeepsAliveAndStops(t *testing.T) {
	up := &blockingChatUpstream{stopped: make(chan struct{})}
	f := newFixture(t, func(o *fixtureOptions) {
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up,
			Generation: &GenerationEndpoint{Model: &fakeGenerator{}, Chat: fakeTemplate{}, KeepAlive: 5 * time.Millisecond,
				Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	req, _ := http.NewRequest("POST", f.srv.URL+"/gateway/v1/chat/completions",
		strings.NewReader(`{"model":"fake-lm","stream":true,"messages":[{"role":"user","content":"I am Alice"}]}`))
	req.Header.Set("Content-Type", "application/json")
	// A hang guard: without keep-alives nothing would come until the request's deadline.
	resp, err := (&http.Client{Timeout: hangGuard}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The headers came with the first chunk, before the upstream said anything; now its
	// silence, on the server's clock, is filled with comments.
	lines, quit := make(chan string), make(chan struct{})
	read := make(chan struct{})
	defer func() { close(quit); <-read }()
	go func() {
		defer close(read)
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-quit:
				return
			}
		}
	}()
	kept := false
	for !kept {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended without a keep-alive")
			}
			kept = line == ": keep-alive"
		default:
			f.clock.Advance(5 * time.Millisecond)
			runtime.Gosched()
		}
	}
	resp.Body.Close()                     // the client leaves while the upstream is still thinking
	guard := time.After(30 * time.Second) // a hang guard, not a wait for state
	for stopped := false; !stopped; {
		select {
		case <-up.stopped:
			stopped = true
		case <-guard:
			t.Fatal("the upstream call went on after the client left")
		default:
			f.clock.Advance(5 * time.Millisecond) // the next keep-alive finds the client gone
			runtime.Gosched()
		}
	}
}

// blockingChatUpstream answers nothing until its context ends.
type blockingChatUpstream struct{ stopped chan struct{} }

func (u *blockingChatUpstream) Chat(ctx context.Context, _ []chat.Message, _ chat.Options, _ func(chat.Delta) error) (string, error) {
	<-ctx.Done()
	close(u.stopped)
	return "", ctx.Err()
}

func (u *blockingChatUpstream) Kind() string { return "openai" }

// What the model misses does not go out (issue 53): the sweep's second look redacts a
// surname written after the first name the model found, a name after a relation, and a phone
// beside its context word, on both faces, before the model sees the text.
func TestGatewayRedactsWhatTheFirstPassMissed(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{last(1, "Noted.", "Noted.", generate.FinishLength)}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1000, 1000
		o.extra = append(o.extra, PrivacyGateway(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	text := "Pt Alice Doe, cell 555 303 2211, seen today. Daughter (Linda) at bedside."
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"`+text+`"}`)
	out, _ := r.body["redacted_prompt"].(string)
	if r.status != 200 || strings.Contains(out, "Doe") || strings.Contains(out, "Linda") || strings.Contains(out, "2211") {
		t.Fatalf("complete: %d %s", r.status, r.raw)
	}
	chatGen := &fakeGenerator{script: []generate.Event{last(1, "Noted.", "Noted.", generate.FinishLength)}}
	c := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1000, 1000
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: chatGen, Chat: fakeTemplate{}, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	if r := c.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":"`+text+`"}]}`); r.status != 200 {
		t.Fatalf("chat: %d %s", r.status, r.raw)
	}
	for _, p := range append(gen.prompts, chatGen.prompts...) {
		if strings.Contains(p, "Doe") || strings.Contains(p, "Linda") || strings.Contains(p, "2211") {
			t.Errorf("the model saw %q", p)
		}
	}
}

// A block names the labels and scores it was for (never the text); a caller's own mistake is
// audited as rejected, not as the model's transport error.
func TestGatewayBlocksSayWhyAndMistakesAreRejected(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{last(1, "Noted.", "Noted.", generate.FinishLength)}}
	f, trail := gatewayFixture(t, gen)
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice.","confidence_threshold":0.95}`)
	spans, _ := errorOf(t, r)["details"].(map[string]any)["spans"].([]any)
	if r.status != 400 || len(spans) != 1 || spans[0].(map[string]any)["label"] != "first_name" ||
		spans[0].(map[string]any)["score"] != 0.9 || strings.Contains(r.raw, "Alice") {
		t.Fatalf("a block by confidence: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice."}`); r.status != 200 {
		t.Fatalf("the default threshold blocks a span the model scored 0.9: %d %s", r.status, r.raw)
	}
	c := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Chat: fakeTemplate{}, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	if r := c.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`); r.status != 400 {
		t.Fatalf("a caller's mistake: %d %s", r.status, r.raw)
	}
	recs := auditRecords(t, trail)
	if last := recs[len(recs)-1]; last.Status != "rejected" || last.Reason != "invalid_request" {
		t.Fatalf("the mistake's record: %+v", last)
	}
}

// What the sweep finds beside the model is judged by the policy's categories and counted, and
// a placeholder after a context word ("account [FIRST_NAME_1]") is not taken for a number.
func TestGatewaySecondLookIsJudgedAndPlaceholdersAreNotNumbers(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{last(1, "Noted.", "Noted.", generate.FinishLength)}}
	f, _ := gatewayFixture(t, gen)
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Bob, cell 555 303 2211.","disallowed_entity_categories":"phone"}`)
	if r.status != 400 || errorOf(t, r)["details"].(map[string]any)["reason"] != "disallowed_entity_category" {
		t.Fatalf("a disallowed phone only the sweep found: %d %s", r.status, r.raw)
	}
	r = f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Update the account Alice opened."}`)
	if r.status != 200 || r.body["redacted_prompt"] != "Update the account [FIRST_NAME_1] opened." {
		t.Fatalf("a placeholder after a context word: %d %s", r.status, r.raw)
	}
}

// TestGatewayChatToolCallsThroughTheUpstream (issue 58, 3): with tools, the external model gets
// the tools and a conversation whose calls' arguments and tool answers are redacted too (the
// arguments still JSON); its tool-call deltas, a placeholder cut across them, come back as
// OpenAI's tool_calls with the original restored inside the arguments' JSON, whole and
// streamed, never half a placeholder.
func TestGatewayChatToolCallsThroughTheUpstream(t *testing.T) {
	up := &fakeChatUpstream{finish: "tool_calls", calls: []chat.CallDelta{
		{Index: 0, ID: "call_up", Name: "flag"}, {Index: 0, Arguments: `{"who":"[FIRST_NA`}, {Index: 0, Arguments: `ME_1]","n":1}`}}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1000, 1000
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	body := `{"model":"gpt-x","tools":[{"type":"function","function":{"name":"flag","parameters":{"type":"object"}}}],"messages":[` +
		`{"role":"user","content":"I am Alice"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"flag","arguments":"{\"who\":\"Alice\",\"n\":0}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"flagged Alice"},{"role":"user","content":"again"}]%s}`
	args := func(raw string) string {
		var a struct{ Who string }
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatalf("arguments %q: %v", raw, err)
		}
		return a.Who
	}
	r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, ""))
	var whole struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal([]byte(r.raw), &whole); err != nil || r.status != 200 || len(whole.Choices) != 1 {
		t.Fatalf("whole: %d %s", r.status, r.raw)
	}
	c := whole.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.Content != nil || len(c.Message.ToolCalls) != 1 ||
		c.Message.ToolCalls[0].Function.Name != "flag" || args(c.Message.ToolCalls[0].Function.Arguments) != "Alice" {
		t.Fatalf("whole: %s", r.raw)
	}
	r = f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"stream":true`))
	var streamed strings.Builder
	for _, line := range strings.Split(r.raw, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		if strings.Contains(data, "[FIRST") {
			t.Errorf("half a placeholder: %s", data)
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct{ Function struct{ Arguments string } } `json:"tool_calls"`
				}
			}
		}
		_ = json.Unmarshal([]byte(data), &ch)
		for _, c := range ch.Choices {
			for _, tc := range c.Delta.ToolCalls {
				streamed.WriteString(tc.Function.Arguments)
			}
		}
	}
	if args(streamed.String()) != "Alice" {
		t.Errorf("streamed arguments %q", streamed.String())
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.opts.Tools) == 0 {
		t.Error("the tools did not reach the upstream")
	}
	for _, m := range up.seen {
		for _, tc := range m.ToolCalls {
			if strings.Contains(tc.Arguments, "Alice") || args(tc.Arguments) == "" {
				t.Errorf("the upstream saw the arguments %q", tc.Arguments)
			}
		}
		if strings.Contains(m.Content, "Alice") {
			t.Errorf("the upstream saw %q", m.Content)
		}
	}
}

// TestGatewayChatJSONAnswerThroughTheUpstream: response_format reaches the external model, and
// its JSON answer comes back with the original inside the JSON string, whole and streamed.
func TestGatewayChatJSONAnswerThroughTheUpstream(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{`{"who":"[FIRST_NA`, `ME_1]"}`}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	body := `{"model":"gpt-x","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"I am Alice"}]%s}`
	r := f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, ""))
	content, _ := r.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	if content != `{"who":"Alice"}` {
		t.Fatalf("whole: %d %s", r.status, r.raw)
	}
	up.mu.Lock()
	if !strings.Contains(string(up.opts.ResponseFormat), "json_object") {
		t.Errorf("response_format sent %s", up.opts.ResponseFormat)
	}
	up.mu.Unlock()
	r = f.do(t, "POST", "/gateway/v1/chat/completions", fmt.Sprintf(body, `,"stream":true`))
	if !strings.Contains(r.raw, `Alice`) || strings.Contains(r.raw, "[FIRST") {
		t.Errorf("streamed: %s", r.raw)
	}
}

// TestGatewayChatSendsNoFreeTextOfCalls: what a conversation's calls carry besides their
// arguments' strings does not reach the external model as written: ids become opaque (a call
// and its answer still paired), messages lose their free-text names, the keys and numbers of
// arguments and a tool's JSON answer are redacted as texts (escapes read first), and a call
// of a function the request does not have is refused; without tools, a function's name that
// holds a name is refused; calls of no arguments and empty answers go as they are.
func TestGatewayChatSendsNoFreeTextOfCalls(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{"ok"}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 2000, 2000
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	tools := `"tools":[{"type":"function","function":{"name":"flag","parameters":{"type":"object"}}}]`
	body := `{"model":"gpt-x",` + tools + `,"messages":[` +
		`{"role":"user","name":"Alice","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"Alice","type":"function","function":{"name":"flag","arguments":"{\"Alice\":1,\"phone\":4155550132}"}}]},` +
		`{"role":"tool","tool_call_id":"Alice","name":"Alice","content":"{\"who\":\"\\u0041lice\"}"}]}`
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", body); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	up.mu.Lock()
	seen, _ := json.Marshal(up.seen)
	up.mu.Unlock()
	for _, leak := range []string{"Alice", "lice", "4155550132"} {
		if strings.Contains(string(seen), leak) {
			t.Errorf("the upstream saw %q: %s", leak, seen)
		}
	}
	if up.seen[1].ToolCalls[0].ID != up.seen[2].ToolCallID || up.seen[2].ToolCallID == "" {
		t.Errorf("the call and its answer are no longer paired: %s", seen)
	}
	bad := strings.Replace(body, `"name":"flag","arguments"`, `"name":"Alice","arguments"`, 1)
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", bad); r.status != 400 || strings.Contains(r.raw, "Alice") {
		t.Errorf("a call of no tool: %d %s", r.status, r.raw)
	}
	// Without tools declared, any function's name goes: one that holds a name is refused
	// (it reached the model as written).
	calls := len(up.seen)
	bare := `{"model":"gpt-x","messages":[{"role":"user","content":"look it up"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Alice","arguments":"{\"x\":\"y\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"done"}]}`
	if r := f.do(t, "POST", "/gateway/v1/chat/completions", bare); r.status == 200 || strings.Contains(r.raw, "Alice") {
		t.Errorf("a call named with a name, no tools declared: %d %s", r.status, r.raw)
	}
	if up.mu.Lock(); len(up.seen) != calls {
		t.Errorf("the upstream was called: %s", bare)
	}
	up.mu.Unlock()
	// A function without parameters is called with {}; a tool may answer [] (a 500: the
	// documents of no leaves were read as one of a single leaf).
	for _, doc := range []string{`"arguments":"{}"}}]}`, `"arguments":"null"}}]}`} {
		empty := strings.Replace(body, `"arguments":"{\"Alice\":1,\"phone\":4155550132}"}}]}`, doc, 1)
		empty = strings.Replace(empty, `"content":"{\"who\":\"\\u0041lice\"}"`, `"content":"[]"`, 1)
		if r := f.do(t, "POST", "/gateway/v1/chat/completions", empty); r.status != 200 {
			t.Errorf("%s, and a tool's answer []: %d %s", doc, r.status, r.raw)
		}
	}
}

// TestGatewayChatSendsNoFreeTextBesideTheConversation: what leaves beside the messages is
// read as the model will read it. tool_choice goes on as its mode and a declared tool's name
// only; a name in a tool's description is found through JSON's escapes (and redacted); and a
// body whose tools are spelled twice, one spelling read by the tripwire and another by the
// dialect, is refused.
func TestGatewayChatSendsNoFreeTextBesideTheConversation(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{"ok"}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1000, 4000 // the definitions are read too
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	tool := func(description string) string {
		return `[{"type":"function","function":{"name":"flag","description":"` + description + `","parameters":{"type":"object"}}}]`
	}
	post := func(fields string) response {
		return f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"gpt-x",`+fields+`,"messages":[{"role":"user","content":"I am Alice"}]}`)
	}
	r := post(`"tools":` + tool("flags a note") + `,"tool_choice":{"type":"function","function":{"name":"flag"},"note":"Alice 415-555-0132"}`)
	up.mu.Lock()
	choice := string(up.opts.ToolChoice)
	up.mu.Unlock()
	if r.status != 200 || choice != `{"function":{"name":"flag"},"type":"function"}` {
		t.Fatalf("tool_choice with a note: %d, the upstream got tool_choice %s", r.status, choice)
	}
	spaced := `"tools": [ {"type": "function", "function": {"name": "flag", "description": "labs & vitals <today>",` +
		` "parameters": {"type": "object"}}} ], "tool_choice": {"type": "function", "function": {"name": "flag"}}`
	if r := post(spaced); r.status != 200 {
		t.Fatalf("tools written with spaces and escapable characters: %d %s", r.status, r.raw)
	}
	r = post(`"tools":` + tool(`ask \u0041lice`))
	up.mu.Lock()
	tools := string(up.opts.Tools)
	calls := len(up.seen)
	up.mu.Unlock()
	if r.status != 200 || strings.Contains(tools, "lice") || !strings.Contains(tools, "ask [FIRST_NAME_1]") {
		t.Fatalf("an escaped name in a description: %d, the upstream got tools %s", r.status, tools)
	}
	for name, fields := range map[string]string{
		"a name in a key given twice": `"tools":[{"type":"function","function":{"name":"flag","description":"ask Alice",` +
			`"description":"flags a note","parameters":{"type":"object"}}}]`,
		"tools spelled twice":                `"tools":` + tool("ask Alice") + `,"TOOLS":` + tool("flags a note"),
		"tools spelled twice, the other way": `"TOOLS":` + tool("flags a note") + `,"tools":` + tool("ask Alice"),
	} {
		if r := post(fields); r.status == 200 || strings.Contains(r.raw, "Alice") {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.seen) != calls {
		t.Errorf("the upstream was called %d more times", len(up.seen)-calls)
	}
}

// TestGatewayChatReadsTheRequestsDefinitions: the strings of the request's tools and response
// format are read in the PII pass. A name in their free text (a description, a title) is
// redacted in place and restored in the answer; one anywhere else (an enum's value) refuses
// the request; a placeholder written in them is reserved.
func TestGatewayChatReadsTheRequestsDefinitions(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{"see [FIRST_NAME_1]"}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1000, 4000 // the definitions are read too
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, ChatUpstream: up}))
	})
	post := func(fields, message string) response {
		return f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"gpt-x",`+fields+`,"messages":[{"role":"user","content":"`+message+`"}]}`)
	}
	sent := func() chat.Options {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.opts
	}
	tool := `"tools":[{"type":"function","function":{"name":"flag","description":"ask Alice","parameters":{"type":"object"}}}]`
	schema := `"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","title":"about Alice"}}}`
	for _, c := range []struct {
		fields string
		got    func(chat.Options) string
	}{{tool, func(o chat.Options) string { return string(o.Tools) }}, {schema, func(o chat.Options) string { return string(o.ResponseFormat) }}} {
		r := post(c.fields, "hello")
		if r.status != 200 || !strings.Contains(r.raw, "see Alice") {
			t.Errorf("%s: %d %s", c.fields, r.status, r.raw)
		}
		if got := c.got(sent()); strings.Contains(got, "Alice") || !strings.Contains(got, "[FIRST_NAME_1]") {
			t.Errorf("%s: the upstream got %s", c.fields, got)
		}
	}
	up.mu.Lock()
	calls := len(up.seen)
	up.mu.Unlock()
	for _, fields := range []string{
		`"tools":[{"type":"function","function":{"name":"flag","parameters":{"type":"object","properties":{"who":{"enum":["Alice"]}}}}}]`,
		`"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"Alice":{"type":"string"}}}}}`,
	} {
		if r := post(fields, "hello"); r.status != 400 || !strings.Contains(r.raw, "outbound_tripwire_detected") {
			t.Errorf("%s: %d %s", fields, r.status, r.raw)
		}
	}
	up.mu.Lock()
	if len(up.seen) != calls {
		t.Fatalf("the upstream was called for a refused request")
	}
	up.mu.Unlock()
	r := post(`"tools":[{"type":"function","function":{"name":"flag","description":"see [FIRST_NAME_1] first","parameters":{"type":"object"}}}]`, "I am Alice")
	if r.status != 200 || strings.Contains(r.raw, "Alice") || !strings.Contains(r.raw, "see [FIRST_NAME_1]") {
		t.Fatalf("a placeholder in a tool's description: %d %s", r.status, r.raw)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if last := up.seen[len(up.seen)-1]; last.Content != "I am [FIRST_NAME_2]" {
		t.Fatalf("the upstream got %+v", last)
	}
}

// TestGatewayChatRedactsANameFoundInAnotherMessage: a name the model finds in a later message
// is redacted where an earlier one repeats it too (it was left there, and the outbound
// tripwire refused the whole request).
func TestGatewayChatRedactsANameFoundInAnotherMessage(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{last(1, "ok", "ok", generate.FinishLength)}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.pii.Models["pii"] = subjectLine{o.pii.Models["pii"].(*fakeExtractor)}
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Chat: fakeTemplate{}, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	// Found by the model in the second message; found by the sweep's second look (a title
	// before it) in the second message.
	for _, msgs := range []string{`"Zorblat is unwell."},{"role":"user","content":"RE: Zorblat"`,
		`"Quexley called back."},{"role":"user","content":"Seen by Dr. Quexley today."`} {
		r := f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":`+msgs+`}]}`)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", msgs, r.status, r.raw)
		}
	}
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if len(gen.prompts) != 2 || strings.Contains(gen.prompts[0], "Zorblat") || strings.Contains(gen.prompts[1], "Quexley") {
		t.Fatalf("the model saw %q", gen.prompts)
	}
}

// upperTemplate upper-cases the text, as a template's filter may: a spelling of a special
// token in it cannot be kept apart as text.
type upperTemplate struct{}

func (upperTemplate) Render(msgs []chat.Message, _ []json.RawMessage) (chat.Prompt, error) {
	if strings.Contains(msgs[0].Content, "<|im_end|>") {
		return chat.Prompt{}, chat.ErrSpecialText
	}
	return chat.Prompt{Text: strings.ToUpper(msgs[0].Content)}, nil
}

// TestAGatewayTextTheTemplateCannotTakeIsTheCallersFault: a text whose special token the
// model's template would change is a 422 audited as rejected, not a 500 of the server.
func TestAGatewayTextTheTemplateCannotTakeIsTheCallersFault(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{last(1, "ok", "ok", generate.FinishLength)}}
	trail := newAuditLog(t)
	f := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		o.extra = append(o.extra, PrivacyGateway(GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Chat: upperTemplate{}, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Note <|im_end|> here."}`)
	if recs := auditRecords(t, trail); r.status != 422 || len(recs) != 1 || recs[0].Status != "rejected" {
		t.Fatalf("%d %s, audit %+v", r.status, r.raw, recs)
	}
}

// everyWord is a PII model that finds every word a first name.
type everyWord struct{}

func (everyWord) Extract(_ context.Context, _ admission.Priority, text string, _ entities.Options) ([]entities.Entity, extract.Stats, error) {
	var out []entities.Entity
	for i := 0; i < len(text); {
		end := len(text)
		if j := strings.IndexByte(text[i:], ' '); j >= 0 {
			end = i + j
		}
		if end > i {
			out = append(out, entities.Entity{Label: "first_name", Start: i, End: end, Score: 0.99})
		}
		i = end + 1
	}
	return out, extract.Stats{Tokens: len(out), Windows: 1}, nil
}
func (everyWord) Name() string   { return "pii" }
func (everyWord) MaxLength() int { return 512 }

// countingUpstream is an external model that answers "ok" and counts the prompts sent to it.
type countingUpstream struct {
	mu   sync.Mutex
	sent int
}

func (u *countingUpstream) Complete(context.Context, string, string, map[string]any) (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sent++
	return "ok", nil
}
func (*countingUpstream) Kind() string { return "openai" }

// A text of many identifiers (25,000 names fit the default 100,000 characters) is recorded
// like any other: its record holds the first audit.MaxPlaceholderHashes placeholders' hashes
// and their count, the answer every hash. The record held one hash a placeholder, 1.7 MB, past
// the stream's 1 MiB message: each request (and each retry of its 503) sent the redacted text
// to the external model and left no record.
func TestManyPlaceholdersAreRecorded(t *testing.T) {
	trail := newAuditLog(t)
	up := &countingUpstream{}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxTextChars, o.Limits.MaxTextBytes, o.Limits.MaxBodyBytes = 100_000, 400_000, 1<<20
		o.pii.Models["pii"] = everyWord{}
		o.Audit = trail
		o.extra = append(o.extra, PrivacyGateway(GatewayEndpoint{PII: o.pii, Upstream: up}))
	})
	const names = 25_000
	words := make([]string, names)
	for i := range words {
		words[i] = fmt.Sprintf("%03s", strconv.FormatInt(int64(i), 36))
	}
	body, _ := json.Marshal(map[string]string{"text": strings.Join(words, " ")})
	for range 2 {
		r := f.do(t, "POST", "/privacy-gateway/complete", string(body))
		var out gatewayResponse
		if err := json.Unmarshal([]byte(r.raw), &out); r.status != 200 || err != nil {
			t.Fatalf("status %d %.300s", r.status, r.raw)
		}
		if len(out.PlaceholderHashes) != names || !out.Audit.Verified {
			t.Errorf("the answer holds %d placeholder hashes, verified %v", len(out.PlaceholderHashes), out.Audit.Verified)
		}
	}
	recs := auditRecords(t, trail)
	if len(recs) != up.sent {
		t.Fatalf("%d redacted prompts went to the external model; the audit holds %d records", up.sent, len(recs))
	}
	for _, r := range recs {
		if r.Status != string(gateway.Forwarded) || r.Placeholders != names || len(r.PlaceholderHashes) != audit.MaxPlaceholderHashes {
			t.Errorf("record %s %s: %d placeholders, %d hashes", r.Status, r.Reason, r.Placeholders, len(r.PlaceholderHashes))
		}
	}
}

// gatewayLeft serves the chat face and /privacy-gateway/complete over gen (with the
// disconnect watcher when watched, as cmd/serve has it) and returns the record of a request to
// path (a chat request streamed or not), whose client leaves once the model has begun; or,
// with a PII model ex, once ex has begun reading.
func gatewayLeft(t *testing.T, gen *fakeGenerator, ex *waitingExtractor, path string, stream, watched bool) audit.Stored {
	t.Helper()
	trail := newAuditLog(t)
	f := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		if ex != nil {
			o.pii.Models = map[string]Extractor{"pii": ex}
		}
		if watched {
			w, err := connwatch.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.Close() })
			o.Watcher = w
		}
		gw := GatewayEndpoint{PII: o.pii, Generation: &GenerationEndpoint{Model: gen, Chat: fakeTemplate{},
			Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}
		o.extra = append(o.extra, GatewayChat(gw), PrivacyGateway(gw))
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"model":"fake-lm","stream":%v,"messages":[{"role":"user","content":"Call Alice."}]}`, stream)
	if path == "/privacy-gateway/complete" {
		body = `{"text":"Call Alice."}`
	}
	fmt.Fprintf(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	switch {
	case ex != nil:
		select {
		case <-ex.started:
		case <-time.After(hangGuard):
			t.Fatal("the PII model was never called")
		}
	case stream:
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
	default:
		waitFor(t, func() bool { gen.mu.Lock(); defer gen.mu.Unlock(); return len(gen.ctxs) > 0 })
	}
	conn.Close()
	var recs []audit.Stored
	waitFor(t, func() bool {
		page, err := trail.Read(context.Background(), audit.Query{})
		recs = page.Records
		return err == nil && len(recs) > 0
	})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	return recs[0]
}

// A client that leaves a gateway answer has its record say so (aborted, client_closed), as
// every other route's does: the chat face's streamed or whole, whether the stream notices (a
// write that fails) or the disconnect watcher does while the model is between tokens, and
// /privacy-gateway/complete's. It was recorded as the model's failure (transport_error,
// completion_failed): always for a whole answer, and for a stream the watcher ended (its
// error event came before the outcome reached the record).
func TestGatewayClientLeavingIsAborted(t *testing.T) {
	const chat = "/gateway/v1/chat/completions"
	waits := func() *fakeGenerator { return &fakeGenerator{script: []generate.Event{token(1, " Hel")}, block: true} }
	for _, c := range []struct {
		name            string
		gen             *fakeGenerator
		path            string
		stream, watched bool
		http            int
	}{
		{"a stream, its write failing", &fakeGenerator{endless: true}, chat, true, false, 200},
		{"a stream, the model waiting", waits(), chat, true, true, 200},
		{"a whole answer", waits(), chat, false, true, statusClientClosed},
		{"/privacy-gateway/complete", waits(), "/privacy-gateway/complete", false, true, statusClientClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := gatewayLeft(t, c.gen, nil, c.path, c.stream, c.watched)
			if r.Status != string(gateway.Aborted) || r.Reason != string(gateway.ClientClosed) || r.HTTPStatus != c.http {
				t.Errorf("a client that left is recorded %s %s, http %d", r.Status, r.Reason, r.HTTPStatus)
			}
			// The redacted prompt went out: the record says what it carried (only a forwarded
			// record did).
			if r.OutboundHash == "" || r.Placeholders != 1 || len(r.PlaceholderHashes) != 1 {
				t.Errorf("an aborted record of a prompt that went out: outbound %q, %d placeholders, hashes %v",
					r.OutboundHash, r.Placeholders, r.PlaceholderHashes)
			}
		})
	}
}

// A client that stops reading a chat stream is recorded aborted with the abort's own reason,
// client_stalled, as sluice_http_requests_aborted_total counts it: the record said
// client_closed (or, its error event first, transport_error).
func TestGatewayStalledClientIsRecordedStalled(t *testing.T) {
	trail := newAuditLog(t)
	gen := &fakeGenerator{script: []generate.Event{token(1, " Hel"),
		{Done: true, Finish: generate.FinishError, Err: generate.ErrClientStalled, Index: 2}}}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Audit = trail
		o.extra = append(o.extra, GatewayChat(GatewayEndpoint{PII: o.pii, Generation: &GenerationEndpoint{Model: gen, Chat: fakeTemplate{},
			Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}))
	})
	f.do(t, "POST", "/gateway/v1/chat/completions", `{"model":"fake-lm","stream":true,"messages":[{"role":"user","content":"Call Alice."}]}`)
	recs := auditRecords(t, trail)
	if len(recs) != 1 || recs[0].Status != string(gateway.Aborted) || recs[0].Reason != string(gateway.ClientStalled) {
		t.Fatalf("a stalled client's record: %+v", recs)
	}
	if m := f.do(t, "GET", "/metrics", "").raw; !strings.Contains(m, `sluice_http_requests_aborted_total{reason="client_stalled",route="/gateway/v1/chat/completions"} 1`) {
		t.Errorf("the abort is not counted client_stalled")
	}
}

// waitingExtractor says when it has started, and waits for its context.
type waitingExtractor struct{ started chan struct{} }

func (w *waitingExtractor) Extract(ctx context.Context, _ admission.Priority, _ string, _ entities.Options) ([]entities.Entity, extract.Stats, error) {
	select {
	case w.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, extract.Stats{}, ctx.Err()
}
func (w *waitingExtractor) Name() string   { return "pii" }
func (w *waitingExtractor) MaxLength() int { return 128 }

// TestAClientLeavingDuringDetectionIsAborted: a client that leaves while the gateway's PII
// model reads its text is recorded aborted (client_closed), as the answer is counted; the record
// blamed the detector (error, detection_failed): a second reader's find.
func TestAClientLeavingDuringDetectionIsAborted(t *testing.T) {
	for _, path := range []string{"/privacy-gateway/complete", "/gateway/v1/chat/completions"} {
		t.Run(path, func(t *testing.T) {
			ex := &waitingExtractor{started: make(chan struct{}, 1)}
			gen := &fakeGenerator{script: []generate.Event{token(1, " Hel")}, block: true}
			r := gatewayLeft(t, gen, ex, path, false, true)
			if r.Status != string(gateway.Aborted) || r.Reason != string(gateway.ClientClosed) {
				t.Errorf("a client that left during detection is recorded %s %s, http %d (API.md: aborted, client_closed)", r.Status, r.Reason, r.HTTPStatus)
			}
		})
	}
}
