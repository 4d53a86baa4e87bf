package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/models"
)

// TestEcosystemClients runs the clients users of these wire formats already have, from npm,
// against the live server: OpenAI's `openai` (completions and chat completions, answered and
// streamed, and the model list) and HuggingFace's `@huggingface/inference`, both its current
// release (which sends text generation to /v1/completions and chat to /v1/chat/completions)
// and 4.13.16 (TGI's POST /, answered and streamed). Every client must get torch's greedy
// continuation of the golden prompt (tiny-lm's chat template is the messages' text).
// `make test` installs the pinned packages (cmd/serve/testdata/js/package-lock.json).
func TestEcosystemClients(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	g := readLMGoldens(t)[0]
	m, err := models.Load(models.Embedded(), "tiny-lm")
	if err != nil {
		t.Fatal(err)
	}
	ids := untilEOS(g.Greedy)
	want := m.Tokenizer.Decode(append(append([]int64{}, g.PromptIDs...), ids...), true)[len(m.Tokenizer.Decode(g.PromptIDs, true)):]

	// From a server that writes each event as it comes, and from one that writes three at a
	// time: a client reads the same stream whatever its chunks.
	for _, interval := range []int{1, 3} {
		t.Run(fmt.Sprintf("interval=%d", interval), func(t *testing.T) {
			srv := startServer(t, fmt.Sprintf("SLUICE_GENERATE_STREAM_INTERVAL=%d", interval))
			got := runClients(t, node, srv, g.Prompt, strconv.Itoa(len(g.Greedy)))
			usage := map[string]int{"prompt_tokens": len(g.PromptIDs), "completion_tokens": len(ids), "total_tokens": len(g.PromptIDs) + len(ids)}
			// TGI's POST / answers a text-generation model with the prompt in front, and its token
			// events spell out the end-of-sequence token.
			texts := map[string]string{"tgi": g.Prompt + want, "tgi-stream": want + "[SEP]"}
			for _, check := range []string{"openai", "openai-stream", "hf", "hf-stream", "tgi", "tgi-stream",
				"openai-chat", "openai-chat-stream", "hf-chat", "hf-chat-stream"} {
				r, ok := got[check]
				wantText, own := texts[check]
				if !own {
					wantText = want
				}
				switch {
				case !ok:
					t.Errorf("%s: no result", check)
				case r.Error != "":
					t.Errorf("%s: %s", check, r.Error)
				case r.Text != wantText:
					t.Errorf("%s: text %q, want torch's %q", check, r.Text, wantText)
				}
			}
			for _, check := range []string{"openai", "openai-stream", "openai-chat", "openai-chat-stream"} {
				if r := got[check]; r.Finish != "stop" || !equalUsage(r.Usage, usage) {
					t.Errorf("%s: finish %q usage %v, want stop and %v", check, r.Finish, r.Usage, usage)
				}
			}
			for _, check := range []string{"openai-chat", "openai-chat-stream"} {
				if r := got[check]; r.Role != "assistant" {
					t.Errorf("%s: role %q, want assistant", check, r.Role)
				}
			}
			// The log probabilities as the openai client reads them: one per token, their tokens
			// spelling the text, each <= 0, with the alternatives asked for.
			for _, check := range []string{"openai-logprobs", "openai-chat-logprobs"} {
				if r := got[check]; r.Error != "" || r.Text != want || r.Final != want || r.Tokens == 0 || r.Finish != "true" {
					t.Errorf("%s: %+v, want the text %q spelled by its tokens, each logprob <= 0 with its alternatives", check, r, want)
				}
			}
			if r := got["openai-models"]; r.Text != "tiny-lm" || r.Error != "" {
				t.Errorf("openai-models: %+v, want tiny-lm", r)
			}
			if r := got["tgi"]; r.Finish != "eos_token" || r.Tokens != len(ids) {
				t.Errorf("tgi: finish %q, %d tokens; want eos_token, %d", r.Finish, r.Tokens, len(ids))
			}
			if r := got["tgi-stream"]; r.Final != g.Prompt+want {
				t.Errorf("tgi-stream: generated_text %q, want %q", r.Final, g.Prompt+want)
			}
			if r := got["openai-invalid"]; r.Status != 400 || r.Error == "" {
				t.Errorf("openai-invalid: %+v, want the client to throw a 400", r)
			}

		})
	}
}

func equalUsage(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// clientResult is one line of clients.mjs: a check's outcome.
type clientResult struct {
	Check  string         `json:"check"`
	Text   string         `json:"text"`
	Final  string         `json:"final"`
	Finish string         `json:"finish"`
	Usage  map[string]int `json:"usage"`
	Tokens int            `json:"tokens"`
	Role   string         `json:"role"`
	Error  string         `json:"error"`
	Status int            `json:"status"`
}

// jsClients is node, or a skip when node or the pinned clients are missing.
func jsClients(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	if _, err := os.Stat(filepath.Join("testdata", "js", "node_modules", "openai")); err != nil {
		t.Skip("the JS clients are not installed: run make test (or npm ci in cmd/serve/testdata/js)")
	}
	return node
}

// runClients runs clients.mjs against srv with args and returns its results by check.
// TestEcosystemClientsWithAnAPIKey: with authentication on, OpenAI's and HuggingFace's clients
// work given an API key as they send one ("Authorization: Bearer <key>", which was tried only
// as a JWT: 401 for every OpenAI client), and a wrong key is refused on every check.
func TestEcosystemClientsWithAnAPIKey(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path, keyEntry("sk-clinic-generator-1", "clinic", "generate:write models:read"))
	srv := startServer(t, "SLUICE_API_KEYS_FILE="+path)
	checks := []string{"openai", "openai-stream", "hf", "hf-stream", "tgi", "tgi-stream", "openai-chat", "openai-chat-stream",
		"hf-chat", "hf-chat-stream"}
	got := runClientsWithKey(t, node, srv, "sk-clinic-generator-1", "The patient", "4")
	for _, check := range checks {
		if r, ok := got[check]; !ok || r.Error != "" || r.Text == "" {
			t.Errorf("%s with the key: %+v", check, r)
		}
	}
	got = runClientsWithKey(t, node, srv, "sk-wrong", "The patient", "4")
	for _, check := range checks {
		if r := got[check]; r.Error == "" {
			t.Errorf("%s with a wrong key was answered: %+v", check, r)
		}
	}
}

func runClients(t *testing.T, node string, srv *testServer, args ...string) map[string]clientResult {
	t.Helper()
	return runClientsWithKey(t, node, srv, "", args...)
}

// runClientsWithKey is runClients with every client sending key as its API key ("": none).
func runClientsWithKey(t *testing.T, node string, srv *testServer, key string, args ...string) map[string]clientResult {
	t.Helper()
	cmd := exec.Command(node, append([]string{"clients.mjs", srv.url}, args...)...)
	cmd.Dir = filepath.Join("testdata", "js")
	cmd.Env = append(os.Environ(), "SLUICE_TEST_API_KEY="+key)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	got := map[string]clientResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r clientResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got[r.Check] = r
	}
	return got
}

// TestStreamsCutByTheirDeadlineEndWithAnError (issue 38, 4): on a slowed model, a stream whose
// generation deadline passes after some tokens ends with the dialect's error event (code
// timeout), never a bare close, and each ecosystem client raises instead of taking the cut
// stream for a finished answer.
func TestStreamsCutByTheirDeadlineEndWithAnError(t *testing.T) {
	// Not parallel: the first token must come before a 400 ms deadline.
	// Keep-alive comments between the slow tokens too: the clients must skip them.
	srv := startServer(t, "SLUICE_BENCH_STEP_DELAY_MS=40", "SLUICE_GENERATE_TIMEOUT_MS=400", "SLUICE_GENERATE_KEEPALIVE_MS=15")
	for route, body := range map[string]string{
		"/v1/completions":      `{"model":"tiny-lm","prompt":"The patient was started on","max_tokens":60,"ignore_eos":true,"stream":true}`,
		"/v1/chat/completions": `{"model":"tiny-lm","messages":[{"role":"user","content":"The patient was started on"}],"max_tokens":60,"ignore_eos":true,"stream":true}`,
		"/generate_stream":     `{"inputs":"The patient was started on","parameters":{"max_new_tokens":60}}`,
	} {
		events := strings.Split(strings.TrimSpace(string(postRaw(t, srv.url+route, body))), "\n\n")
		last := events[len(events)-1]
		if len(events) < 3 || !strings.Contains(last, `"code":"timeout"`) || strings.Contains(last, "[DONE]") {
			t.Fatalf("%s cut by its deadline: %d events, last %q", route, len(events), last)
		}
	}
	got := runClients(t, jsClients(t), srv, "The patient was started on", "60", "cut")
	for _, check := range []string{"cut-openai", "cut-openai-chat", "cut-tgi"} {
		if r, ok := got[check]; !ok || !strings.Contains(r.Error, "exceeded configured timeout") {
			t.Errorf("%s: %+v, want the client to raise the server's timeout", check, r)
		}
	}
}
