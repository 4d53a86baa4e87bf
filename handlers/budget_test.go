package handlers

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// A request the server sheds (503) costs its caller nothing: with a budget of one request, a
// second request after a 503 is shed again, not refused as over budget.
func TestServerRefusalsAreRefunded(t *testing.T) {
	src := newFakeLoad(256)
	src.setWaiting(300)
	gate, err := admission.NewGate("analyze", admission.Config{HighWatermark: 256, Policy: admission.PolicyStatic,
		StaticRetryAfter: time.Second}, src, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	app := benchApp(t, gate, prometheus.NewRegistry(), withCallers(t, `{"requests_per_minute":1e-6,"request_burst":1,"tokens_per_minute":1e-6,"token_burst":100}`))
	for i, want := range []int{503, 503, 503} {
		req := httptest.NewRequest("POST", "/analyze", strings.NewReader(`{"text":"a note"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", "bench-key")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d; want %d (the shed ones must not use up the budget)", i+1, resp.StatusCode, want)
		}
	}
}
