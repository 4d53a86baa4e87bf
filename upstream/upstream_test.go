package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/client"
	"github.com/sluice-serving/sluice/clock"
)

func TestTextOfEveryShape(t *testing.T) {
	for body, want := range map[string]string{
		`{"text":"a"}`: "a", `{"response":"b"}`: "b", `{"content":"c"}`: "c", `{"completion":"d"}`: "d", `{"output":"e"}`: "e",
		`{"choices":[{"message":{"role":"assistant","content":"f"}}]}`: "f", `{"choices":[{"text":"g"}]}`: "g",
		`{"text":null,"response":"h"}`: "h", `{"output":null,"choices":[{"message":{"content":"i"}}]}`: "i",
	} {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			t.Fatal(err)
		}
		if got, err := textOf(raw); got != want || err != nil {
			t.Errorf("%s: %q %v", body, got, err)
		}
	}
	if _, err := textOf(map[string]json.RawMessage{"text": json.RawMessage(`null`)}); err != ErrInvalidAnswer {
		t.Errorf("a null text: %v", err)
	}
	if _, err := textOf(map[string]json.RawMessage{"choices": json.RawMessage(`[]`)}); err != ErrInvalidAnswer {
		t.Errorf("no text: %v", err)
	}
	u, err := NewOpenMed(Config{URL: "http://127.0.0.1:1/x"})
	if err != nil || u.Kind() != "openmed" {
		t.Errorf("%v %v", u, err)
	}
	if _, err := NewOpenAI(Config{URL: "not a url"}); err == nil {
		t.Error("a bad URL was taken")
	}
}

// answers is a server that plays one scripted answer per request and counts them.
type answers struct {
	mu     sync.Mutex
	script []func(http.ResponseWriter)
	hits   int
}

func (a *answers) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	i := a.hits
	a.hits++
	a.mu.Unlock()
	a.script[min(i, len(a.script)-1)](w)
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits
}

func refusal(status int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"message":"busy","type":"server_error"}}`))
	}
}

func answered(w http.ResponseWriter) {
	_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"All well."}}]}`))
}

func streamed(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"All well.\"}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
}

// cutShort begins an answer and breaks off: a stream that has begun is never retried.
func cutShort(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"All\"}}]}\n\n"))
}

// The external model's refusals are retried as the Go client's rules say: a 429 or a 503 at
// its Retry-After (not a moment before), a 500 never; a stream that has begun is never retried.
// The waits run on a fake clock.
func TestTheExternalModelIsRetriedAtItsRetryAfterAndNeverAfterA500(t *testing.T) {
	for _, c := range []struct {
		name   string
		script []func(http.ResponseWriter)
		chat   bool
		wait   time.Duration // the wait before the retry; 0: none
		hits   int
		ok     bool
	}{
		{"429 then served", []func(http.ResponseWriter){refusal(429, "3"), answered}, false, 3 * time.Second, 2, true},
		{"503 then served", []func(http.ResponseWriter){refusal(503, "2"), answered}, false, 2 * time.Second, 2, true},
		{"500", []func(http.ResponseWriter){refusal(500, ""), answered}, false, 0, 1, false},
		{"streamed: 503 then served", []func(http.ResponseWriter){refusal(503, "1"), streamed}, true, time.Second, 2, true},
		{"streamed: 500", []func(http.ResponseWriter){refusal(500, ""), streamed}, true, 0, 1, false},
		{"streamed: cut short", []func(http.ResponseWriter){cutShort, streamed}, true, 0, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &answers{script: c.script}
			srv := httptest.NewServer(a)
			defer srv.Close()
			clk := clock.NewFake(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
			u, err := NewOpenAI(Config{URL: srv.URL, Key: "k", Model: "m", Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			armed := clk.TimerCreated()
			done := make(chan error, 1)
			go func() {
				var err error
				if c.chat {
					_, err = u.Chat(context.Background(), []chat.Message{{Role: "user", Content: "hi"}}, chat.Options{MaxTokens: 8}, func(chat.Delta) error { return nil })
				} else {
					_, err = u.Complete(context.Background(), "id", "hi", nil)
				}
				done <- err
			}()
			if c.wait > 0 {
				select {
				case <-armed:
				case err := <-done:
					t.Fatalf("the call ended instead of waiting: %v", err)
				}
				clk.Advance(c.wait - time.Millisecond)
				if a.count() != 1 {
					t.Fatalf("retried before its Retry-After")
				}
				clk.Advance(time.Millisecond)
			}
			if err := <-done; (err == nil) != c.ok {
				t.Fatalf("error %v", err)
			}
			if a.count() != c.hits {
				t.Fatalf("%d attempts, want %d", a.count(), c.hits)
			}
		})
	}
}

// TestChatPassesToolsOnAndReadsCalls: the conversation's calls and tool answers, and what the
// request asked of the answer, reach the server as OpenAI's API spells them; the answer's
// tool-call deltas come back as such.
func TestChatPassesToolsOnAndReadsCalls(t *testing.T) {
	var got map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, line := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"flag","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", line)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	u, err := NewOpenAI(Config{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []chat.Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "flag", Arguments: `{"a":0}`}}},
		{Role: "tool", Content: "done", ToolCallID: "call_1"},
	}
	var deltas []chat.CallDelta
	seed := int64(7)
	finish, err := u.Chat(context.Background(), msgs, chat.Options{Tools: json.RawMessage(`[{"type":"function","function":{"name":"flag"}}]`),
		ToolChoice: json.RawMessage(`"required"`), ResponseFormat: json.RawMessage(`null`), Temperature: 0.5, TopP: 1, PresencePenalty: 0.25, Seed: &seed}, func(d chat.Delta) error {
		if d.Call != nil {
			deltas = append(deltas, *d.Call)
		}
		return nil
	})
	if err != nil || finish != "tool_calls" {
		t.Fatalf("%q, %v", finish, err)
	}
	if len(deltas) != 3 || deltas[0].ID != "call_9" || deltas[0].Name != "flag" || deltas[1].Arguments+deltas[2].Arguments != `{"a":1}` {
		t.Fatalf("deltas %+v", deltas)
	}
	want := `[{"content":"hi","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":0}","name":"flag"},"id":"call_1","type":"function"}]},{"content":"done","role":"tool","tool_call_id":"call_1"}]`
	if string(got["messages"]) != want || string(got["tool_choice"]) != `"required"` || got["tools"] == nil || got["response_format"] != nil {
		t.Fatalf("sent messages %s, tool_choice %s, tools %s, response_format %s", got["messages"], got["tool_choice"], got["tools"], got["response_format"])
	}
	if string(got["temperature"]) != "0.5" || string(got["presence_penalty"]) != "0.25" || string(got["seed"]) != "7" ||
		got["top_p"] != nil || got["frequency_penalty"] != nil {
		t.Fatalf("sampling sent: temperature %s, top_p %s, presence %s, frequency %s, seed %s", got["temperature"], got["top_p"],
			got["presence_penalty"], got["frequency_penalty"], got["seed"])
	}
}

// TestRedirectsAreNotFollowed: an external model that answers with a redirect is a failure;
// the prompt and the key never reach where it points (another port of the same host keeps
// the Authorization header in Go's client).
func TestRedirectsAreNotFollowed(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		fmt.Fprint(w, `{"choices":[{"message":{"content":"from elsewhere"}}]}`)
	}))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusPermanentRedirect)
	}))
	defer srv.Close()
	u, err := NewOpenAI(Config{URL: srv.URL, Model: "m", Key: "sk-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if text, err := u.Complete(context.Background(), "r1", "PROMPT [NAME_1]", nil); err == nil {
		t.Fatalf("a redirect was followed: %q", text)
	}
	if _, err := u.Chat(context.Background(), []chat.Message{{Role: "user", Content: "PROMPT"}}, chat.Options{}, func(chat.Delta) error { return nil }); err == nil {
		t.Fatal("a streamed redirect was followed")
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect's target got %d requests", n)
	}
}

// TestAStreamedAnswerIsBounded: an external model that streams past client.MaxAnswer (here
// tool-call arguments, never text) is cut off with ErrInvalidAnswer.
func TestAStreamedAnswerIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		piece := strings.Repeat("x", 64<<10)
		for range client.MaxAnswer/len(piece) + 2 {
			if _, err := fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"%s\"}}]}}]}\n\n", piece); err != nil {
				return
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	u, err := NewOpenAI(Config{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	_, err = u.Chat(context.Background(), []chat.Message{{Role: "user", Content: "hi"}}, chat.Options{}, func(d chat.Delta) error {
		if d.Call != nil {
			got += len(d.Call.Arguments)
		}
		return nil
	})
	if !errors.Is(err, ErrInvalidAnswer) || got > client.MaxAnswer {
		t.Fatalf("%v after %d bytes of arguments", err, got)
	}
}
