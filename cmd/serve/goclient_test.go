package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/client"
)

// TestGoClientAgainstTheServer drives the client package through the real server: an API key,
// a 429 from the tenant's budget waited out (its Retry-After) and then served, de-identification,
// and a streamed completion read to its end.
func TestGoClientAgainstTheServer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path, budgetKey("go-client-secret", "svc", `{"requests_per_minute":60,"request_burst":1}`))
	srv := startServer(t, "SLUICE_API_KEYS_FILE="+path)
	c, err := client.New(client.Config{BaseURL: srv.url, APIKey: "go-client-secret"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 2 { // the second is refused (one request a second) and retried after 1 s
		res, err := c.ExtractPII(ctx, client.EntityRequest{Text: "Call Maria Gonzalez at (415) 555-0132."})
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if len(res.Entities) == 0 {
			t.Errorf("request %d: no entities", i+1)
		}
	}
	srv.waitForMetric(t, `sluice_budget_refusals_total{reason="requests",tenant="svc"} 1`)
	deid, err := c.Deidentify(ctx, client.DeidentifyRequest{Text: "Call Maria Gonzalez at (415) 555-0132.", Method: "mask"})
	if err != nil || deid.NumEntitiesRedacted == 0 {
		t.Fatalf("deidentify: %+v %v", deid, err)
	}
	st, err := c.CompleteStream(ctx, client.CompletionRequest{Model: "tiny-lm", Prompt: "The patient", MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pieces := 0
	for st.Next() {
		pieces++
	}
	if st.Err() != nil || pieces == 0 || st.FinishReason() == "" {
		t.Errorf("stream: %d pieces, finish %q, err %v", pieces, st.FinishReason(), st.Err())
	}
}
