package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	dir := filepath.Join("testdata", "js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Skip("the JS clients are not installed: run make test (or npm ci in cmd/serve/testdata/js)")
	}
	g := readLMGoldens(t)[0]
	m, err := models.Load(models.Embedded(), "tiny-lm")
	if err != nil {
		t.Fatal(err)
	}
	ids := untilEOS(g.Greedy)
	want := m.Tokenizer.Decode(append(append([]int64{}, g.PromptIDs...), ids...), true)[len(m.Tokenizer.Decode(g.PromptIDs, true)):]

	srv := startServer(t)
	cmd := exec.Command(node, "clients.mjs", srv.url, g.Prompt, strconv.Itoa(len(g.Greedy)))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	type result struct {
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
	got := map[string]result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got[r.Check] = r
	}
	usage := map[string]int{"prompt_tokens": len(g.PromptIDs), "completion_tokens": len(ids), "total_tokens": len(g.PromptIDs) + len(ids)}
	for _, check := range []string{"openai", "openai-stream", "hf", "hf-stream", "tgi", "tgi-stream",
		"openai-chat", "openai-chat-stream", "hf-chat", "hf-chat-stream"} {
		r, ok := got[check]
		switch {
		case !ok:
			t.Errorf("%s: no result", check)
		case r.Error != "":
			t.Errorf("%s: %s", check, r.Error)
		case r.Text != want:
			t.Errorf("%s: text %q, want torch's %q", check, r.Text, want)
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
	if r := got["openai-models"]; r.Text != "tiny-lm" || r.Error != "" {
		t.Errorf("openai-models: %+v, want tiny-lm", r)
	}
	if r := got["tgi"]; r.Finish != "eos_token" || r.Tokens != len(ids) {
		t.Errorf("tgi: finish %q, %d tokens; want eos_token, %d", r.Finish, r.Tokens, len(ids))
	}
	if r := got["tgi-stream"]; r.Final != want {
		t.Errorf("tgi-stream: generated_text %q, want %q", r.Final, want)
	}
	if r := got["openai-invalid"]; r.Status != 400 || r.Error == "" {
		t.Errorf("openai-invalid: %+v, want the client to throw a 400", r)
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
