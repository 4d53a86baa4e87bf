package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/models"
)

// The generation routes through the real binary's wiring: tiny-lm on ONNX Runtime, the paged
// KV cache and the runner, over real HTTP.

type lmGolden struct {
	Prompt    string  `json:"prompt"`
	PromptIDs []int64 `json:"prompt_ids"`
	Greedy    []int64 `json:"greedy_ids"`
}

func readLMGoldens(t *testing.T) []lmGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "models", "testdata", "golden", "tiny-lm.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []lmGolden
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var g lmGolden
		if err := json.Unmarshal(line, &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// untilEOS cuts greedy ids after the end-of-sequence token (id 3), where generation stops.
func untilEOS(ids []int64) []int64 {
	for i, id := range ids {
		if id == 3 {
			return ids[:i+1]
		}
	}
	return ids
}

type tgiDetails struct {
	FinishReason string `json:"finish_reason"`
	Tokens       []struct {
		ID      int64  `json:"id"`
		Text    string `json:"text"`
		Special bool   `json:"special"`
	} `json:"tokens"`
}

// TestGreedyGenerationOverHTTPMatchesTorch: /generate and /generate_stream, each prompt sent
// by several clients at once (so decoded in one batch with the others), give torch's greedy
// ids up to the end of sequence.
func TestGreedyGenerationOverHTTPMatchesTorch(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	goldens := readLMGoldens(t)
	var wg sync.WaitGroup
	for _, g := range goldens {
		want := untilEOS(g.Greedy)
		for _, path := range []string{"/generate", "/generate_stream", "/generate", "/generate_stream"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, ok := greedyIDs(t, srv.url+path, g.Prompt, len(g.Greedy))
				if ok && fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s %q: %v, torch %v", path, g.Prompt, got, want)
				}
			}()
		}
	}
	wg.Wait()
	srv.waitForMetric(t, `sluice_kvcache_blocks{queue="tiny-lm",state="used"} 0`)
}

// greedyIDs generates up to maxNew tokens after prompt at url (/generate or /generate_stream)
// and returns their ids; ok is false after an error it has reported.
func greedyIDs(t *testing.T, url, prompt string, maxNew int) (ids []int64, ok bool) {
	body, _ := json.Marshal(map[string]any{"inputs": prompt,
		"parameters": map[string]any{"max_new_tokens": maxNew, "details": true}})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return nil, false
	}
	defer resp.Body.Close()
	if strings.HasSuffix(url, "/generate_stream") {
		ids, _, _ = streamTexts(t, resp.Body)
		return ids, true
	}
	var out struct {
		Details tgiDetails `json:"details"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Error(err)
		return nil, false
	}
	for _, tok := range out.Details.Tokens {
		ids = append(ids, tok.ID)
	}
	return ids, true
}

// TestClientThatLeavesFreesItsBlocksWithinOneStep: a raw TCP client reads three events of a
// long stream and closes its socket. The server sees it go, its sequence leaves the running set
// at the next step boundary with its KV blocks back in the pool, at most one token is
// generated for it after its departure was seen, and the departure is counted on its route;
// so too when the server holds its events to write four at a time.
func TestClientThatLeavesFreesItsBlocksWithinOneStep(t *testing.T) {
	t.Parallel()
	for _, interval := range []int{1, 4} {
		t.Run(fmt.Sprintf("interval=%d", interval), func(t *testing.T) {
			srv := startServer(t, "SLUICE_GENERATE_STREAM_BUFFER=1", fmt.Sprintf("SLUICE_GENERATE_STREAM_INTERVAL=%d", interval))
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			body := `{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":240,"temperature":0,"ignore_eos":true,"stream":true}`
			fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			r := bufio.NewReader(conn)
			events := 0
			for events < 3 {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(line, "data:") {
					events++
				}
			}
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if t.Failed() {
					for _, l := range strings.Split(string(srv.metrics(t)), "\n") {
						if strings.Contains(l, "generate_") && !strings.Contains(l, "#") && !strings.Contains(l, "bucket") {
							t.Log(l)
						}
					}
					t.Log(srv.logs.String())
				}
			}()
			srv.waitForMetric(t, `sluice_generate_requests_aborted_total{queue="tiny-lm",reason="client_disconnect"} 1`)
			srv.waitForMetric(t, `sluice_kvcache_blocks{queue="tiny-lm",state="used"} 0`)
			// Blocks were free within one step of the departure being seen.
			srv.waitForMetric(t, `sluice_generate_abort_latency_steps_bucket{queue="tiny-lm",le="1"} 1`)
			m := srv.metrics(t)
			if n := metricValue(t, m, `sluice_generate_tokens_after_disconnect_total{queue="tiny-lm"}`); n > 1 {
				t.Fatalf("%v tokens generated after the disconnect was seen, want at most 1", n)
			}
			srv.logs.WaitFor(t, 30*time.Second, `"route":"/v1/completions"`, `"outcome":"aborted"`)
			// The server may see the close as a FIN or, when it writes first, as a reset: either is
			// the client's departure.
			departed := func() float64 {
				return scrapeSum(t, srv.url, "sluice_http_requests_aborted_total", `reason="client_closed"`, `route="/v1/completions"`) +
					scrapeSum(t, srv.url, "sluice_http_requests_aborted_total", `reason="client_reset"`, `route="/v1/completions"`)
			}
			for i := 0; departed() != 1; i++ {
				if i == 2000 { // each scrape is a request to the server: a hang guard, as waitForMetric's
					t.Fatal("the departure was never counted on /v1/completions")
				}
				runtime.Gosched()
			}
		})
	}
}

// TestSharedPromptHitsThePrefixCache: the second request with the same long prompt takes the
// first one's full KV blocks from the cache.
func TestSharedPromptHitsThePrefixCache(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	prompt := strings.Repeat("The patient was started on metformin and lisinopril. ", 4)
	for range 2 {
		status, out := srv.post(t, "/generate", map[string]any{"inputs": prompt, "parameters": map[string]any{"max_new_tokens": 2}})
		if status != 200 || out["generated_text"] == nil {
			t.Fatalf("status %d %v", status, out)
		}
	}
	if hits := metricValue(t, srv.metrics(t), `sluice_kvcache_prefix_hits_total{queue="tiny-lm"}`); hits < 1 {
		t.Fatalf("prefix cache hits %v, want the second request's full blocks", hits)
	}
}

// TestGenerationErrorsAreTheirWireFormatsAndContentFree: validation errors come in TGI's and
// OpenAI's shapes with the request id, and neither they nor the logs quote the prompt.
func TestGenerationErrorsAreTheirWireFormatsAndContentFree(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	status, out := srv.post(t, "/generate", map[string]any{"inputs": "Patient ZEBRA-CANARY-4417", "parameters": map[string]any{"temperature": 0}})
	if status != 422 || out["error_type"] != "validation" || !strings.Contains(out["error"].(string), "temperature") || out["request_id"] == "" {
		t.Fatalf("TGI validation: %d %v", status, out)
	}
	if strings.Contains(fmt.Sprint(out), "ZEBRA") {
		t.Fatalf("the prompt leaked into the error: %v", out)
	}
	status, out = srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": "Patient ZEBRA-CANARY-4417", "max_tokens": 400})
	e, _ := out["error"].(map[string]any)
	if status != 400 || e == nil || e["type"] != "invalid_request_error" || !strings.Contains(e["message"].(string), "maximum context length is 256") {
		t.Fatalf("OpenAI validation: %d %v", status, out)
	}
	if strings.Contains(fmt.Sprint(out), "ZEBRA") {
		t.Fatalf("the prompt leaked into the error: %v", out)
	}
	status, _ = srv.post(t, "/generate", map[string]any{"inputs": "Patient ZEBRA-CANARY-4417 is stable.", "parameters": map[string]any{"max_new_tokens": 4}})
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	for name, text := range map[string]string{"logs": srv.logs.String(), "metrics": string(srv.metrics(t))} {
		if strings.Contains(text, "ZEBRA") {
			t.Fatalf("the prompt leaked into the %s", name)
		}
	}
}

// TestCompletionsStopSequenceIsCut: OpenAI's API does not return the stop sequence; the
// generation stops there, streamed or not.
func TestCompletionsStopSequenceIsCut(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	// Greedy, "The patient was started on" continues " behalf of Dr. Silo, ...".
	status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": "The patient was started on",
		"max_tokens": 16, "temperature": 0, "stop": " Dr"})
	choice := out["choices"].([]any)[0].(map[string]any)
	if status != 200 || choice["text"] != " behalf of" || choice["finish_reason"] != "stop" {
		t.Fatalf("status %d %v", status, out)
	}
	body, _ := json.Marshal(map[string]any{"model": "tiny-lm", "prompt": "The patient was started on", "max_tokens": 16,
		"temperature": 0, "stop": []string{" Dr"}, "stream": true})
	resp, err := http.Post(srv.url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var text strings.Builder
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var chunk struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatal(err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Text)
		}
	}
	if !done || text.String() != " behalf of" {
		t.Fatalf("streamed %q (done %v), want \" behalf of\" then [DONE]", text.String(), done)
	}
}

// TestShutdownEndsStreamsAndGivesBlocksBack: SIGTERM while a stream runs: the stream either
// finishes or ends with an error event, the process exits cleanly, and no block is held.
func TestShutdownEndsStreamsAndGivesBlocksBack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	logs := &logtest.Buffer{}
	env := []string{"SLUICE_ADDR=127.0.0.1:0", "SLUICE_DEVICE=cpu", "SLUICE_SHUTDOWN_TIMEOUT_S=1",
		"SLUICE_GENERATE_STREAM_BUFFER=1", "SLUICE_INTRA_OP_THREADS=1", "SLUICE_QUANTIZE=off", "SLUICE_DATA_DIR=" + t.TempDir()}
	go func() { done <- run(ctx, env, logs, logs, ready) }()
	addr := <-ready
	resp, err := http.Post("http://"+addr.String()+"/v1/completions", "application/json",
		strings.NewReader(`{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":240,"temperature":0,"ignore_eos":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil { // the first event: the stream is running
		t.Fatal(err)
	}
	cancel() // what SIGTERM does in main
	rest, _ := io.ReadAll(r)
	lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
	last := lines[len(lines)-1]
	if last != "data: [DONE]" && !strings.Contains(last, `"error"`) {
		t.Fatalf("the stream ended with %q, neither its text nor an error event", last)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d:\n%s", code, logs.String())
	}
}

func (s *testServer) metrics(t *testing.T) []byte {
	t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return data
}

// metricValue finds a series line by its exact name and labels; 0 when absent.
func metricValue(t *testing.T, exposition []byte, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(exposition), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// TestReaderThatStopsIsPausedThenEnded: a client that takes the response headers and then
// reads nothing. Once the socket buffers fill, its sequences pause (nothing more is generated
// for them) and at the stall timeout they are ended as client_stall, their blocks freed: the
// server never buffers a stream without bound.
func TestReaderThatStopsIsPausedThenEnded(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_STREAM_BUFFER=2", "SLUICE_GENERATE_STALL_TIMEOUT_MS=300")
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048)
		})
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":240,"n":8,"temperature":0,"ignore_eos":true,"stream":true}`
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// Read nothing at all: the reader has stopped.
	defer func() {
		if t.Failed() {
			for _, l := range strings.Split(string(srv.metrics(t)), "\n") {
				if (strings.Contains(l, "generate_") || strings.Contains(l, "kvcache")) && !strings.Contains(l, "#") && !strings.Contains(l, "bucket") {
					t.Log(l)
				}
			}
		}
	}()
	srv.waitForMetric(t, `sluice_generate_requests_aborted_total{queue="tiny-lm",reason="client_stall"} 8`)
	srv.waitForMetric(t, `sluice_kvcache_blocks{queue="tiny-lm",state="used"} 0`)
	srv.waitForMetric(t, `sluice_http_requests_aborted_total{reason="client_stalled",route="/v1/completions"} 1`)
	if n := metricValue(t, srv.metrics(t), `sluice_generate_tokens_total{queue="tiny-lm"}`); n >= 8*240 {
		t.Fatalf("%v tokens generated: the stopped reader's sequences never paused", n)
	}
}

// TestStreamOutlivesTheHTTPWriteTimeout: a stream read steadily for longer than the HTTP
// write timeout gets every token and its end, in both dialects; the write timeout bounds
// answers, not a stream whose reader keeps reading (tiny-lm slowed to 50 ms a step, the write
// timeout at 300 ms; each stream takes well over twice that, which the test checks as its
// premise, not as a measure).
func TestStreamOutlivesTheHTTPWriteTimeout(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_BENCH_STEP_DELAY_MS=50", "SLUICE_HTTP_WRITE_TIMEOUT_MS=300")
	for route, body := range map[string]string{
		"/v1/completions":  `{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":40,"temperature":0,"ignore_eos":true,"stream":true}`,
		"/generate_stream": `{"inputs":"The patient was started on","parameters":{"max_new_tokens":40,"details":true}}`,
	} {
		start := time.Now()
		resp, err := http.Post(srv.url+route, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: the stream was cut after %s: %v", route, time.Since(start), err)
		}
		events := 0
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "data: ") {
				events++
			}
		}
		complete := strings.Contains(string(data), "data: [DONE]") || strings.Contains(string(data), `"generated_text":"`)
		if !complete || strings.Contains(string(data), `"error"`) {
			t.Fatalf("%s: %d events, no proper end:\n%s", route, events, data)
		}
		if took := time.Since(start); took < 600*time.Millisecond || events < 8 {
			t.Fatalf("%s: %d events in %s: not the long stream this test needs", route, events, took)
		}
	}
}

// TestGenerationWireDetails (issue 38, 9): a prompt past the model's positions with the
// default max_new_tokens says the prompt alone is too long, never a negative count; an empty prompt is blamed
// on the prompt, not on max_tokens; vLLM's top_k -1 means no top-k.
func TestGenerationWireDetails(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	long := strings.Repeat("The patient was started on metformin. ", 60) // well past 256 tokens
	status, out := srv.post(t, "/generate", map[string]any{"inputs": long})
	msg, _ := out["error"].(string)
	if status != 422 || !strings.Contains(msg, "context of 256 tokens: the prompt alone is too long") || strings.Contains(msg, "-") {
		t.Fatalf("long prompt, default max_new_tokens: %d %v", status, out)
	}
	status, out = srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": ""})
	e, _ := out["error"].(map[string]any)
	if status != 400 || e == nil || e["param"] != "prompt" {
		t.Fatalf("empty prompt: %d %v", status, out)
	}
	status, out = srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": "Follow up with", "top_k": -1, "max_tokens": 4})
	if status != 200 || out["choices"] == nil {
		t.Fatalf("top_k -1: %d %v", status, out)
	}

	// TGI's POST / answers a text-generation model with the prompt in front unless asked not to.
	for body, full := range map[string]bool{
		`{"inputs":"Follow up with","parameters":{"max_new_tokens":4}}`:                          true,
		`{"inputs":"Follow up with","parameters":{"max_new_tokens":4,"return_full_text":false}}`: false,
	} {
		var answers []struct {
			GeneratedText string `json:"generated_text"`
		}
		if data := postRaw(t, srv.url+"/", body); json.Unmarshal(data, &answers) != nil || len(answers) != 1 ||
			strings.HasPrefix(answers[0].GeneratedText, "Follow up with") != full {
			t.Fatalf("POST / %s: %s", body, data)
		}
	}

	// A TGI stream that ends at the end of sequence shows that token spelled out, as special;
	// the generated text leaves it out.
	data := postRaw(t, srv.url+"/generate_stream", `{"inputs":"The patient was started on","parameters":{"max_new_tokens":60,"details":true}}`)
	var last struct {
		Token struct {
			Text    string `json:"text"`
			Special bool   `json:"special"`
		} `json:"token"`
		GeneratedText string `json:"generated_text"`
		Details       struct {
			FinishReason string `json:"finish_reason"`
		} `json:"details"`
	}
	events := strings.Split(strings.TrimSpace(string(data)), "\n\n")
	if err := json.Unmarshal([]byte(strings.TrimPrefix(events[len(events)-1], "data:")), &last); err != nil ||
		last.Details.FinishReason != "eos_token" || !last.Token.Special || last.Token.Text != "[SEP]" || strings.Contains(last.GeneratedText, "[SEP]") {
		t.Fatalf("last event of a stream ended by EOS: %+v (%v)\n%s", last, err, data)
	}
}

// postRaw posts body as JSON and returns the response body, whatever its status.
func postRaw(t *testing.T, url, body string) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestChoicesSampleApart: n choices of one seeded request are different samples (each takes
// the next seed), the same again for the same seed, and usage counts the prompt once.
func TestChoicesSampleApart(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ask := func(path string, req map[string]any) ([]string, map[string]any) {
		t.Helper()
		req["model"], req["n"], req["seed"], req["temperature"], req["max_tokens"], req["ignore_eos"] = "tiny-lm", 3, 5, 1.0, 12, true
		status, out := srv.post(t, path, req)
		choices, _ := out["choices"].([]any)
		if status != 200 || len(choices) != 3 {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		var texts []string
		for _, c := range choices {
			c := c.(map[string]any)
			if m, ok := c["message"].(map[string]any); ok {
				texts = append(texts, m["content"].(string))
			} else {
				texts = append(texts, c["text"].(string))
			}
		}
		return texts, out["usage"].(map[string]any)
	}
	first, usage := ask("/v1/completions", map[string]any{"prompt": "Follow up with"})
	if first[0] == first[1] && first[1] == first[2] {
		t.Fatalf("three choices, one text: %q", first)
	}
	again, _ := ask("/v1/completions", map[string]any{"prompt": "Follow up with"})
	if !slices.Equal(first, again) {
		t.Fatalf("the same seed sampled %q, then %q", first, again)
	}
	if usage["prompt_tokens"] != 3.0 || usage["completion_tokens"] != 36.0 {
		t.Fatalf("usage %v: the prompt's 3 tokens count once, 3 x 12 generated", usage)
	}
	chat, usage := ask("/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": "Follow up with"}}})
	if !slices.Equal(chat, first) || usage["prompt_tokens"] != 3.0 {
		t.Fatalf("chat (tiny-lm's template is the message's text): %q %v, want %q", chat, usage, first)
	}
}

// TestServedContextFollowsTheKVPool: with a pool of 96 tokens the served context is lowered
// to 96 and said so at start-up, and a request past it is refused at once (422) instead of
// waiting for room that never comes; a SLUICE_GENERATE_MAX_MODEL_LEN the pool or the model
// cannot hold is a start-up error.
func TestServedContextFollowsTheKVPool(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_KV_BLOCKS=6")
	if !strings.Contains(srv.logs.String(), `"model_positions":256,"served":96`) {
		t.Fatalf("no start-up line about the lowered context:\n%s", srv.logs.String())
	}
	long := strings.Repeat("The patient was started on metformin. ", 12)
	status, out := srv.post(t, "/generate", map[string]any{"inputs": long, "parameters": map[string]any{"max_new_tokens": 8}})
	if msg, _ := out["error"].(string); status != 422 || !strings.Contains(msg, "context of 96 tokens") {
		t.Fatalf("a request past the served context: %d %v", status, out)
	}
	for _, env := range [][]string{{"SLUICE_KV_BLOCKS=6", "SLUICE_GENERATE_MAX_MODEL_LEN=128"}, {"SLUICE_GENERATE_MAX_MODEL_LEN=300"}} {
		var stdout, stderr logtest.Buffer
		env = append([]string{"SLUICE_DEVICE=cpu", "SLUICE_INTRA_OP_THREADS=1", "SLUICE_ADDR=127.0.0.1:0", "SLUICE_DATA_DIR=" + t.TempDir()}, env...)
		if code := run(context.Background(), env, &stdout, &stderr, nil); code == 0 || !strings.Contains(stderr.String(), "SLUICE_GENERATE_MAX_MODEL_LEN") {
			t.Fatalf("%v: exit %d, stderr:\n%s", env, code, stderr.String())
		}
	}
}

// TestChunkedPrefillServesTheSameTokens: with a step budget of 32 positions a 150-token prompt
// is prefilled in chunks through ONNX Runtime and continues exactly as one prefill does.
func TestChunkedPrefillServesTheSameTokens(t *testing.T) {
	t.Parallel()
	prompt := strings.Repeat("Blood pressure was stable and the wound was clean. ", 15)
	ids := func(srv *testServer) []any {
		t.Helper()
		status, out := srv.post(t, "/generate", map[string]any{"inputs": prompt,
			"parameters": map[string]any{"max_new_tokens": 12, "details": true, "decoder_input_details": false}})
		details, _ := out["details"].(map[string]any)
		if status != 200 || details == nil {
			t.Fatalf("%d %v", status, out)
		}
		var got []any
		for _, tok := range details["tokens"].([]any) {
			got = append(got, tok.(map[string]any)["id"])
		}
		return got
	}
	whole := ids(startServer(t))
	chunked := startServer(t, "SLUICE_GENERATE_MAX_STEP_TOKENS=32")
	if got := ids(chunked); !slices.Equal(got, whole) {
		t.Fatalf("chunked prefill generated %v, one prefill %v", got, whole)
	}
	for _, line := range strings.Split(string(chunked.metrics(t)), "\n") {
		if rest, ok := strings.CutPrefix(line, `sluice_generate_step_seconds_count{kind="prefill"`); ok {
			n, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
			if err != nil || n < 5 {
				t.Fatalf("%s: want at least 5 prefill steps (chunks of 32 positions)", line)
			}
			return
		}
	}
	t.Fatal("no prefill step counted")
}

// TestInteractiveRequestDoesNotWaitForBulkStreams (issue 38, 6): with the running set full of
// long bulk streams on a slowed model, an interactive request is answered while they go on
// (one of them preempted for it and later resumed), not after they finish.
func TestInteractiveRequestDoesNotWaitForBulkStreams(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MAX_RUNNING=2", "SLUICE_BENCH_STEP_DELAY_MS=20")
	var bulkDone []<-chan string
	for range 2 {
		started, body := bulkStream(srv.url)
		<-started
		bulkDone = append(bulkDone, body)
	}
	srv.waitForMetric(t, `sluice_generate_running_sequences{queue="tiny-lm"} 2`)
	// The inference gateway's three gauges: running, queued, and the KV cache's share in use.
	srv.waitForMetric(t, `sluice_generate_queued_requests{queue="tiny-lm"} 0`)
	resp, err := http.Get(srv.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`sluice_kvcache_utilization\{queue="tiny-lm"\} 0\.0*[1-9]`).Match(m) {
		t.Errorf("KV cache utilization with two streams running is not above 0 and below 1")
	}
	status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": "Follow up with", "max_tokens": 1})
	if status != 200 {
		t.Fatalf("interactive: %d %v", status, out)
	}
	for _, done := range bulkDone {
		select {
		case <-done:
			t.Fatal("the interactive request was answered only after a bulk stream ended")
		default:
		}
	}
	for _, done := range bulkDone {
		if data := <-done; !strings.Contains(data, "data: [DONE]") || strings.Contains(data, `"error"`) {
			t.Fatalf("a bulk stream did not finish whole:\n%s", data)
		}
	}
	if n := metricValue(t, srv.metrics(t), `sluice_generate_preemptions_total{queue="tiny-lm",reason="priority"}`); n != 1 {
		t.Fatalf("%v preemptions for priority, want 1", n)
	}
}

// TestInfoAndTokenize: TGI's GET /info names the model and its limits; POST /tokenize gives
// the prompt's tokens as generation encodes them, each with its text and character offsets.
func TestInfoAndTokenize(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_MAX_TEXT_CHARS=200")
	resp, err := http.Get(srv.url + "/info")
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]any
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || info["model_id"] != "tiny-lm" || info["max_total_tokens"] != 256.0 || info["max_input_tokens"] != 255.0 ||
		info["max_stop_sequences"] != 4.0 || info["model_pipeline_tag"] != "text-generation" {
		t.Fatalf("/info: %v (%v)", info, err)
	}

	m, err := models.Load(models.Embedded(), "tiny-lm")
	if err != nil {
		t.Fatal(err)
	}
	prompt := "Née à Zürich, the patient"
	var tokens []struct {
		ID    int64  `json:"id"`
		Text  string `json:"text"`
		Start int    `json:"start"`
		Stop  int    `json:"stop"`
	}
	if data := postRaw(t, srv.url+"/tokenize", `{"inputs":"`+prompt+`"}`); json.Unmarshal(data, &tokens) != nil {
		t.Fatalf("/tokenize: %s", data)
	}
	want := m.Tokenizer.Encode(prompt, true).IDs
	runes := []rune(prompt)
	if len(tokens) != len(want) {
		t.Fatalf("/tokenize: %d tokens, want %d", len(tokens), len(want))
	}
	var covered strings.Builder
	for i, tok := range tokens {
		if tok.ID != want[i] || (tok.Text != "" && string(runes[tok.Start:tok.Stop]) != tok.Text) {
			t.Fatalf("token %d: %+v, want id %d and text at its offsets", i, tok, want[i])
		}
		covered.WriteString(tok.Text)
	}
	if strings.ReplaceAll(covered.String(), " ", "") != strings.ReplaceAll(prompt, " ", "") {
		t.Fatalf("the tokens' texts %q do not cover the prompt", covered.String())
	}
	if status, _ := srv.post(t, "/tokenize", map[string]any{"prompt": prompt}); status != 422 {
		t.Fatalf("/tokenize without inputs: %d", status)
	}
	if status, out := srv.post(t, "/tokenize", map[string]any{"inputs": strings.Repeat("é", 201)}); status != 413 || out["error_type"] != "validation" {
		t.Fatalf("/tokenize past the text limit: %d %v", status, out)
	}

	// A chat message that spells the tokenizer's [SEP] reaches the model as the text it
	// spells, as the same words apart do, where a completion's prompt (the client's own
	// template) keeps it the token.
	promptTokens := func(path string, body map[string]any) float64 {
		body["model"], body["max_tokens"] = "tiny-lm", 1
		status, out := srv.post(t, path, body)
		if status != 200 {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		return out["usage"].(map[string]any)["prompt_tokens"].(float64)
	}
	chat := promptTokens("/v1/chat/completions", map[string]any{"messages": []map[string]any{{"role": "user", "content": "pulse [SEP] normal"}}})
	apart := promptTokens("/v1/completions", map[string]any{"prompt": "pulse [ SEP ] normal"})
	token := promptTokens("/v1/completions", map[string]any{"prompt": "pulse [SEP] normal"})
	if chat != apart || token >= apart {
		t.Fatalf("prompt tokens: chat %v, the words apart %v, the token %v", chat, apart, token)
	}
}

// TestSamplingExtensions: through HTTP on tiny-lm, whose greedy answer to the prompt is
// " behalf of Dr. Silo, ..." ending at the end of sequence: stop_token_ids ends it at " of",
// which it leaves out,
// logit_bias -100 bans " behalf", min_tokens keeps it going past its end of sequence, and
// min_p 1 leaves sampling only the best token, which is the greedy answer.
func TestSamplingExtensions(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const prompt = "The patient was started on"
	complete := func(extra map[string]any) (text, finish string, tokens float64) {
		t.Helper()
		req := map[string]any{"model": "tiny-lm", "prompt": prompt, "max_tokens": 60, "temperature": 0}
		for k, v := range extra {
			req[k] = v
		}
		status, out := srv.post(t, "/v1/completions", req)
		choices, _ := out["choices"].([]any)
		if status != 200 || len(choices) != 1 {
			t.Fatalf("%v: %d %v", extra, status, out)
		}
		c := choices[0].(map[string]any)
		return c["text"].(string), c["finish_reason"].(string), out["usage"].(map[string]any)["completion_tokens"].(float64)
	}
	greedy, finish, n := complete(nil)
	if !strings.HasPrefix(greedy, " behalf of") || finish != "stop" || n >= 30 {
		t.Fatalf("greedy: %q %s %v tokens; the test assumes tiny-lm's answer", greedy, finish, n)
	}
	// As vLLM: the stop token ends the answer and, not being special, is left out of it.
	if text, finish, _ := complete(map[string]any{"stop_token_ids": []int{693}}); text != " behalf" || finish != "stop" {
		t.Fatalf("stop_token_ids: %q %s", text, finish)
	}
	if text, _, _ := complete(map[string]any{"stop": " of", "min_tokens": 3}); text != greedy {
		t.Fatalf("a stop sequence before min_tokens ended the answer: %q", text)
	}
	if text, _, _ := complete(map[string]any{"logit_bias": map[string]int{"3019": -100}}); strings.HasPrefix(text, " behalf") {
		t.Fatalf("logit_bias -100 on \" behalf\": %q", text)
	}
	if text, _, n := complete(map[string]any{"min_tokens": 30}); n < 30 || !strings.HasPrefix(text, greedy) {
		t.Fatalf("min_tokens 30: %v tokens %q", n, text)
	}
	if text, _, _ := complete(map[string]any{"temperature": 1.0, "seed": 7, "min_p": 1.0}); text != greedy {
		t.Fatalf("min_p 1 sampled %q, want the greedy %q", text, greedy)
	}
	for field, v := range map[string]any{"min_p": 1.5, "min_tokens": 61, "stop_token_ids": []int{-1},
		"logit_bias": map[string]int{"x": 1}} {
		status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": prompt, "max_tokens": 60, field: v})
		if e, _ := out["error"].(map[string]any); status != 400 || e["param"] != field {
			t.Fatalf("%s %v: %d %v", field, v, status, out)
		}
	}
	for field, v := range map[string]any{"stop_token_ids": []int{1 << 30}, "logit_bias": map[string]int{"1073741824": 5}} {
		status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": prompt, "max_tokens": 4, field: v})
		if e, _ := out["error"].(map[string]any); status != 400 || !strings.Contains(fmt.Sprint(e["message"]), "past the model's vocabulary") {
			t.Fatalf("%s past the vocabulary: %d %v", field, status, out)
		}
	}
	// A constraint no token of tiny-lm's vocabulary can write is the request's fault.
	status, out := srv.post(t, "/generate", map[string]any{"inputs": "Pain is",
		"parameters": map[string]any{"max_new_tokens": 4, "grammar": map[string]any{"type": "regex", "value": "ᚠ+"}}})
	if status != 422 || !strings.Contains(fmt.Sprint(out), "constraint") {
		t.Fatalf("an unwritable constraint: %d %v", status, out)
	}
	// A repetition penalty that takes every token the constraint allows to -Inf leaves the
	// answer within it.
	status, out = srv.post(t, "/generate", map[string]any{"inputs": "qq The patient has asked that future letters be sent to the",
		"parameters": map[string]any{"max_new_tokens": 3, "repetition_penalty": math.MaxFloat64, "grammar": map[string]any{"type": "regex", "value": "q"}}})
	if status != 200 || out["generated_text"] != "q" {
		t.Fatalf("a constraint beside an overflowing penalty: %d %v", status, out)
	}
}

// TestQuietStreamSendsKeepAlives: on a model slowed past the keep-alive interval, a stream
// sends SSE comments between its tokens (TestStreamsCutByTheirDeadlineEndWithAnError has the
// ecosystem's clients read such a stream).
func TestQuietStreamSendsKeepAlives(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_BENCH_STEP_DELAY_MS=120", "SLUICE_GENERATE_KEEPALIVE_MS=50")
	data := string(postRaw(t, srv.url+"/v1/completions",
		`{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":4,"ignore_eos":true,"temperature":0,"stream":true}`))
	if !strings.Contains(data, "\n\n: keep-alive\n\n") || !strings.HasSuffix(data, "data: [DONE]\n\n") {
		t.Fatalf("a slow stream without keep-alives, or not whole:\n%s", data)
	}
}

// TestStreamIntervalWritesEventsTogether: with SLUICE_GENERATE_STREAM_INTERVAL=4 a stream's
// first token is a write (an HTTP chunk) of its own and the next go up to four to a chunk,
// where the default writes each token as a chunk; both give torch's greedy tokens.
func TestStreamIntervalWritesEventsTogether(t *testing.T) {
	t.Parallel()
	g := readLMGoldens(t)[0]
	want := fmt.Sprint(untilEOS(g.Greedy))
	for _, interval := range []int{1, 4} {
		srv := startServer(t, fmt.Sprintf("SLUICE_GENERATE_STREAM_INTERVAL=%d", interval))
		body, _ := json.Marshal(map[string]any{"inputs": g.Prompt, "parameters": map[string]any{"max_new_tokens": len(g.Greedy)}})
		chunks := streamChunks(t, srv.url, "/generate_stream", string(body))
		var whole strings.Builder
		sizes := make([]int, len(chunks))
		for i, c := range chunks {
			whole.WriteString(c)
			sizes[i] = strings.Count(c, "data:")
		}
		ids, _, _ := streamTexts(t, strings.NewReader(whole.String()))
		if fmt.Sprint(ids) != want {
			t.Fatalf("interval %d: tokens %v, torch %v", interval, ids, want)
		}
		// A chunk of fewer is an event that waited the hold's 100 ms, which a pause of the
		// machine under a test run can make; a chunk of more is never right.
		grouped := false
		for i, n := range sizes {
			if n < 1 || n > interval || (i == 0 && n != 1) {
				t.Fatalf("interval %d: events a chunk %v, want 1 and then up to %d a chunk", interval, sizes, interval)
			}
			grouped = grouped || n > 1
		}
		if interval > 1 && !grouped {
			t.Fatalf("interval %d: events a chunk %v, one each", interval, sizes)
		}
	}
}

// TestHeldEventsGoOutOnASlowModel: on a model slowed past the hold's 100 ms a step, a stream
// written four events at a time still sends each token alone, as it comes.
func TestHeldEventsGoOutOnASlowModel(t *testing.T) {
	// Not parallel: a held event must go out in the time the slowed step leaves after the hold.
	srv := startServer(t, "SLUICE_BENCH_STEP_DELAY_MS=300", "SLUICE_GENERATE_STREAM_INTERVAL=4")
	g := readLMGoldens(t)[0]
	body, _ := json.Marshal(map[string]any{"inputs": g.Prompt, "parameters": map[string]any{"max_new_tokens": 4}})
	chunks := streamChunks(t, srv.url, "/generate_stream", string(body))
	for _, c := range chunks {
		if n := strings.Count(c, "data:"); n != 1 || len(chunks) < 2 {
			t.Fatalf("%d chunks, one of %d events: want every token alone", len(chunks), n)
		}
	}
}

// streamChunks posts body to path on a raw connection and returns the answer's HTTP chunks,
// each a write of the server's, in order.
func streamChunks(t *testing.T, url, path, body string) []string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		path, len(body), body)
	r := bufio.NewReader(conn)
	chunked := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(strings.TrimSpace(line), "Transfer-Encoding: chunked") {
			chunked = true
		}
		if line == "\r\n" {
			break
		}
	}
	if !chunked {
		t.Fatal("the stream's answer is not chunked")
	}
	var chunks []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 32)
		if err != nil {
			t.Fatalf("chunk size %q: %v", line, err)
		}
		data := make([]byte, n+2) // the chunk and its CRLF
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return chunks
		}
		chunks = append(chunks, string(data[:n]))
	}
}

// TestChoicesShareTheirPromptsKV (issue 38, 5): the four choices of an n = 4 request compute
// their prompt once: the others take its full blocks from the prefix cache and compute only
// the tokens after them.
func TestChoicesShareTheirPromptsKV(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	prompt := strings.Repeat("The patient was started on metformin and followed up in clinic. ", 5)
	var tokens []json.RawMessage
	if err := json.Unmarshal(postRaw(t, srv.url+"/tokenize", `{"inputs":"`+prompt+`"}`), &tokens); err != nil {
		t.Fatal(err)
	}
	p := len(tokens)
	const computed = `sluice_generate_prompt_tokens_total{queue="tiny-lm",source="computed"}`
	before := metricValue(t, srv.metrics(t), computed) // the start-up warm-up's
	status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": prompt, "n": 4, "max_tokens": 3, "temperature": 1.0, "seed": 3})
	if status != 200 || out["usage"].(map[string]any)["prompt_tokens"] != float64(p) {
		t.Fatalf("n = 4: %d %v", status, out)
	}
	tail := p - (p-1)/16*16 // what Match leaves to compute after the full blocks (16 tokens each)
	if got := metricValue(t, srv.metrics(t), computed) - before; got != float64(p+3*tail) {
		t.Fatalf("%v prompt tokens computed for n = 4 of a %d-token prompt, want %d", got, p, p+3*tail)
	}
}

// TestTenantsDoNotShareThePrefixCache: a tenant's prompt is never computed from another
// tenant's cached blocks (a hit shows in /metrics, which needs no key, and in the time to the
// first token: one tenant could confirm another's guessed prompt); its own later prompts are.
func TestTenantsDoNotShareThePrefixCache(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path, keyEntry("a-secret", "clinic-a", "*"), keyEntry("b-secret", "clinic-b", "*"))
	srv := startServer(t, "SLUICE_API_KEYS_FILE="+path)
	prompt := strings.Repeat("Patient Quentin Zabriskie, MRN 4471923, was seen in clinic today. ", 3)
	body, _ := json.Marshal(map[string]any{"inputs": prompt, "parameters": map[string]any{"max_new_tokens": 1}})
	generate := func(key string) {
		resp := postWithKey(t, srv, "/generate", string(body), key)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", key, resp.StatusCode)
		}
	}
	const cached = `sluice_generate_prompt_tokens_total{queue="tiny-lm",source="cached"}`
	hits := func(key string) float64 {
		before := metricValue(t, srv.metrics(t), cached)
		generate(key)
		return metricValue(t, srv.metrics(t), cached) - before
	}
	if got := hits("a-secret"); got != 0 {
		t.Fatalf("a first prompt took %v tokens from the cache", got)
	}
	if got := hits("b-secret"); got != 0 {
		t.Errorf("another tenant's prompt took %v tokens from the first's cache", got)
	}
	if got := hits("a-secret"); got == 0 {
		t.Errorf("a tenant's own prompt, again, took nothing from its cache")
	}
}

// TestLogprobs: greedy answers on both OpenAI routes and TGI's with log probabilities (and
// TGI's top_n_tokens): one entry per generated token, each token the likeliest of its
// alternatives with the same log probability, offsets along the text; the streams carry the
// same per token.
func TestLogprobs(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const prompt = "The patient was started on"
	var tgi struct {
		Details struct {
			Tokens []struct {
				ID      int64   `json:"id"`
				Logprob float32 `json:"logprob"`
			} `json:"tokens"`
			TopTokens [][]struct {
				ID      int64   `json:"id"`
				Logprob float32 `json:"logprob"`
			} `json:"top_tokens"`
		} `json:"details"`
	}
	data := postRaw(t, srv.url+"/generate", `{"inputs":"`+prompt+`","parameters":{"max_new_tokens":5,"details":true,"top_n_tokens":3}}`)
	if err := json.Unmarshal(data, &tgi); err != nil || len(tgi.Details.Tokens) != 5 || len(tgi.Details.TopTokens) != 5 {
		t.Fatalf("TGI top_n_tokens: %s", data)
	}
	for i, top := range tgi.Details.TopTokens {
		if tok := tgi.Details.Tokens[i]; len(top) != 3 || top[0].ID != tok.ID || top[0].Logprob != tok.Logprob || top[1].Logprob > top[0].Logprob {
			t.Fatalf("TGI token %d %+v: top tokens %+v", i, tok, top)
		}
	}
	if stream := string(postRaw(t, srv.url+"/generate_stream", `{"inputs":"`+prompt+`","parameters":{"max_new_tokens":5,"top_n_tokens":2}}`)); strings.Count(stream, `"top_tokens":[{`) != 5 {
		t.Fatalf("TGI stream with top_n_tokens:\n%s", stream)
	}
	if status, _ := srv.post(t, "/generate", map[string]any{"inputs": prompt, "parameters": map[string]any{"top_n_tokens": 6}}); status != 422 {
		t.Fatalf("top_n_tokens 6: %d, want TGI's 422", status)
	}

	// decoder_input_details scores the prompt: the prompt and its greedy first token, scored
	// as input, give that token the log probability generation gave it.
	var first struct {
		GeneratedText string `json:"generated_text"`
	}
	_ = json.Unmarshal(postRaw(t, srv.url+"/generate", `{"inputs":"`+prompt+`","parameters":{"max_new_tokens":1}}`), &first)
	var scored struct {
		Details struct {
			Prefill []struct {
				ID      int64    `json:"id"`
				Logprob *float32 `json:"logprob"`
			} `json:"prefill"`
		} `json:"details"`
	}
	data = postRaw(t, srv.url+"/generate", `{"inputs":"`+prompt+first.GeneratedText+`","parameters":{"max_new_tokens":1,"decoder_input_details":true}}`)
	if err := json.Unmarshal(data, &scored); err != nil || len(scored.Details.Prefill) != 6 || scored.Details.Prefill[0].Logprob != nil {
		t.Fatalf("decoder_input_details: %s", data)
	}
	prefill := scored.Details.Prefill
	if last := prefill[len(prefill)-1]; last.ID != tgi.Details.Tokens[0].ID || math.Abs(float64(*last.Logprob-tgi.Details.Tokens[0].Logprob)) > 1e-4 {
		t.Fatalf("the prompt's last token scored %+v (%v), generation gave %+v", last, *last.Logprob, tgi.Details.Tokens[0])
	}
	if status, _ := srv.post(t, "/generate_stream", map[string]any{"inputs": prompt, "parameters": map[string]any{"decoder_input_details": true}}); status != 422 {
		t.Fatalf("decoder_input_details on a stream: %d, want TGI's 422", status)
	}

	// echo with logprobs lists the prompt's tokens first, the first without a log probability.
	status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": prompt, "max_tokens": 3, "temperature": 0, "logprobs": 1, "echo": true})
	elp, _ := out["choices"].([]any)[0].(map[string]any)["logprobs"].(map[string]any)
	if etoks, _ := elp["token_logprobs"].([]any); status != 200 || len(etoks) != 5+3 || etoks[0] != nil || etoks[1] == nil || elp["top_logprobs"].([]any)[0] != nil {
		t.Fatalf("echo with logprobs: %d %v", status, out)
	}

	status, out = srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": prompt, "max_tokens": 5, "temperature": 0, "logprobs": 2})
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	lp := choice["logprobs"].(map[string]any)
	tokens, logps, tops, offsets := lp["tokens"].([]any), lp["token_logprobs"].([]any), lp["top_logprobs"].([]any), lp["text_offset"].([]any)
	if len(tokens) != 5 || len(logps) != 5 || len(tops) != 5 || len(offsets) != 5 || offsets[0] != 0.0 {
		t.Fatalf("logprobs %v", lp)
	}
	for i := range tokens {
		top := tops[i].(map[string]any)
		best, bestLP := "", -1e9
		for tok, v := range top {
			if v.(float64) > bestLP {
				best, bestLP = tok, v.(float64)
			}
		}
		if len(top) == 0 || len(top) > 2 || best != tokens[i] || bestLP != logps[i].(float64) || logps[i].(float64) > 0 {
			t.Fatalf("token %d %q (%v): alternatives %v; greedy takes the likeliest", i, tokens[i], logps[i], top)
		}
		if i > 0 && offsets[i].(float64) < offsets[i-1].(float64) {
			t.Fatalf("offsets %v", offsets)
		}
	}

	streamed := string(postRaw(t, srv.url+"/v1/completions", `{"model":"tiny-lm","prompt":"`+prompt+`","max_tokens":5,"temperature":0,"logprobs":1,"stream":true}`))
	if n := strings.Count(streamed, `"token_logprobs":[`); n != 5 {
		t.Fatalf("%d streamed chunks with log probabilities, want 5:\n%s", n, streamed)
	}

	status, out = srv.post(t, "/v1/chat/completions", map[string]any{"model": "tiny-lm", "max_tokens": 5, "temperature": 0,
		"messages": []map[string]any{{"role": "user", "content": prompt}}, "logprobs": true, "top_logprobs": 2})
	if status != 200 {
		t.Fatalf("chat: %d %v", status, out)
	}
	content := out["choices"].([]any)[0].(map[string]any)["logprobs"].(map[string]any)["content"].([]any)
	if len(content) != 5 {
		t.Fatalf("chat logprobs %v", content)
	}
	// Without top_logprobs each entry still has the list, empty, as OpenAI's schema has it.
	_, plain := srv.post(t, "/v1/chat/completions", map[string]any{"model": "tiny-lm", "max_tokens": 2, "temperature": 0,
		"messages": []map[string]any{{"role": "user", "content": prompt}}, "logprobs": true})
	entry := plain["choices"].([]any)[0].(map[string]any)["logprobs"].(map[string]any)["content"].([]any)[0].(map[string]any)
	if top, ok := entry["top_logprobs"].([]any); !ok || len(top) != 0 {
		t.Fatalf("chat logprobs without top_logprobs: %v", entry)
	}
	for i, c := range content {
		c := c.(map[string]any)
		top := c["top_logprobs"].([]any)
		first := top[0].(map[string]any)
		if len(top) != 2 || first["token"] != c["token"] || first["logprob"] != c["logprob"] || len(c["bytes"].([]any)) != len(c["token"].(string)) {
			t.Fatalf("chat token %d: %v", i, c)
		}
	}
}

// TestStarvedStreamEndsWithAnErrorEvent: on a slowed model with one running slot, a bulk
// stream preempted for an interactive one of 40 tokens (2 s) gets no token for longer than
// the token stall limit (300 ms): it ends with an error event (503 backpressure), not a
// silent wait, and the interactive answer is whole.
func TestStarvedStreamEndsWithAnErrorEvent(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MAX_RUNNING=1", "SLUICE_BENCH_STEP_DELAY_MS=50", "SLUICE_GENERATE_TOKEN_STALL_MS=300")
	streaming, bulk := bulkStream(srv.url)
	<-streaming
	status, out := srv.post(t, "/v1/completions", map[string]any{"model": "tiny-lm", "prompt": "Follow up with", "max_tokens": 40, "ignore_eos": true})
	if status != 200 || out["usage"].(map[string]any)["completion_tokens"] != 40.0 {
		t.Fatalf("interactive: %d %v", status, out)
	}
	data := <-bulk
	events := strings.Split(strings.TrimSpace(data), "\n\n")
	if last := events[len(events)-1]; len(events) < 2 || !strings.Contains(last, `"code":"backpressure"`) || strings.Contains(data, "[DONE]") {
		t.Fatalf("the starved stream: %d events, last %q", len(events), last)
	}
	srv.waitForMetric(t, `sluice_generate_requests_aborted_total{queue="tiny-lm",reason="starved"} 1`)
}

// bulkStream starts a bulk-class stream of 150 greedy tokens on /v1/completions. started
// closes once its first event has arrived (or the request failed); body then gives everything
// it received, when it ends.
func bulkStream(url string) (started <-chan struct{}, body <-chan string) {
	first, all := make(chan struct{}), make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+"/v1/completions", strings.NewReader(
			`{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":150,"ignore_eos":true,"temperature":0,"stream":true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenMed-Priority", "bulk")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(first)
			all <- err.Error()
			return
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		line, _ := r.ReadString('\n') // a token event: the stream has started
		close(first)
		rest, _ := io.ReadAll(r)
		all <- line + string(rest)
	}()
	return first, all
}
