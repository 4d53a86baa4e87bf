package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestPrivacyGatewayThroughTheServer: the real PII model and tiny-lm behind
// /privacy-gateway/complete: nothing the PII route finds in the note reaches the model's
// prompt, the answer comes back with OpenMed's fields, and without a generation model the route
// says it is not configured.
func TestPrivacyGatewayThroughTheServer(t *testing.T) {
	srv := startServer(t)
	note := "Pt Maria Gonzalez, DOB 03/14/1962, seen 2024-01-05; call (415) 555-0132 or maria.g@example.org."
	post := func(path string, body any) (int, map[string]any) {
		data, _ := json.Marshal(body)
		resp, err := http.Post(srv.url+path, "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	status, found := post("/pii/extract", map[string]any{"text": note})
	if status != 200 {
		t.Fatalf("pii/extract: %d", status)
	}
	status, out := post("/privacy-gateway/complete", map[string]any{"text": note, "confidence_threshold": 0.0})
	if status != 200 {
		t.Fatalf("gateway: %d %v", status, out)
	}
	prompt, _ := out["redacted_prompt"].(string)
	spans, _ := found["entities"].([]any)
	if len(spans) == 0 {
		t.Fatal("the PII model found nothing in the note")
	}
	for _, s := range spans {
		if text := s.(map[string]any)["text"].(string); strings.Contains(prompt, text) {
			t.Errorf("%q reached the model: %q", text, prompt)
		}
	}
	for _, k := range []string{"request_id", "external_response", "reidentified_text", "entity_counts", "placeholder_hashes", "audit"} {
		if _, ok := out[k]; !ok {
			t.Errorf("answer lacks %s: %v", k, out)
		}
	}
	if a, _ := out["audit"].(map[string]any); a["verified"] != true {
		t.Errorf("audit %v", out["audit"])
	}
	bare := startServer(t, "SLUICE_GENERATE_MODEL=none")
	if status, _, code := call(t, bare, "/privacy-gateway/complete", `{"text":"Call Maria."}`); status != 503 || code != "privacy_gateway_not_configured" {
		t.Errorf("without a model: %d %q", status, code)
	}
}

// TestOpenAIClientThroughTheGateway: the npm openai client, pointed at /gateway/v1, gets the
// chat answer whole and streamed from the real server, as from /v1.
func TestOpenAIClientThroughTheGateway(t *testing.T) {
	node := jsClients(t)
	srv := startServer(t)
	got := runClients(t, node, srv, "Call Maria Gonzalez at (415) 555-0132 about her results.", "8", "gateway")
	for _, check := range []string{"gateway-chat", "gateway-chat-stream"} {
		r, ok := got[check]
		if !ok || r.Error != "" || r.Role != "assistant" || r.Finish == "" {
			t.Errorf("%s: %+v", check, r)
		}
	}
	if got["gateway-chat"].Text != got["gateway-chat-stream"].Text {
		t.Errorf("whole %q and streamed %q answers differ", got["gateway-chat"].Text, got["gateway-chat-stream"].Text)
	}
}
