package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
)

// TestAModelThatCanNeverFitIsNotARetry: a pooled model larger than the memory budget's room is
// a 507 model_too_large that says both sizes and sends no Retry-After, where a model with no
// room while others are in use is a 503 service_busy to retry; neither tells the request.
func TestAModelThatCanNeverFitIsNotARetry(t *testing.T) {
	pool := &fakePool{errs: map[string]error{
		"big":  &ModelTooLargeError{Footprint: 61 << 20, Room: 60 << 20},
		"busy": ErrModelBusy,
	}}
	f := newFixture(t, func(o *fixtureOptions) { o.Pool, o.ModelLoadWait = pool, time.Second })
	const canary = "Zebulon Quark"
	r := f.do(t, "POST", "/pii/extract", `{"text":"`+canary+`","model_name":"big"}`)
	e := errorOf(t, r)
	msg, _ := e["message"].(string)
	if r.status != 507 || e["code"] != CodeModelTooLarge || r.header.Get("Retry-After") != "" ||
		!strings.Contains(msg, "63963136 bytes") || !strings.Contains(msg, "62914560 bytes") {
		t.Fatalf("a model that can never fit: %d %q %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
	if d, _ := e["details"].(map[string]any); d["footprint_bytes"] != float64(61<<20) || d["room_bytes"] != float64(60<<20) {
		t.Errorf("details: %v", e["details"])
	}
	if strings.Contains(r.raw, canary) || strings.Contains(r.raw, "big") {
		t.Errorf("the answer tells the request: %s", r.raw)
	}
	r = f.do(t, "POST", "/pii/extract", `{"text":"`+canary+`","model_name":"busy"}`)
	if r.status != 503 || errorOf(t, r)["code"] != CodeServiceBusy || r.header.Get("Retry-After") == "" {
		t.Fatalf("no room while the resident models are in use: %d %q %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
}

// TestAPoolThatStopsAnswersTheShutdown: a pool refusing a model because the server stops
// (ModelPool's admission.ErrClosed, as cmd/serve maps warmpool's) is the shutdown's 503
// not_ready with reason shutting_down, as a configured model's closed queue, not a 500. It
// broke when the pool's own closed error reached the handlers unrecognised.
func TestAPoolThatStopsAnswersTheShutdown(t *testing.T) {
	pool := &fakePool{errs: map[string]error{"pii-b": fmt.Errorf("%w: the pool is closed", admission.ErrClosed)}}
	f := newFixture(t, func(o *fixtureOptions) { o.Pool, o.ModelLoadWait = pool, time.Second })
	r := f.do(t, "POST", "/pii/extract", `{"text":"Alice","model_name":"pii-b"}`)
	e := errorOf(t, r)
	if d, _ := e["details"].(map[string]any); r.status != 503 || e["code"] != CodeNotReady || d["reason"] != "shutting_down" {
		t.Fatalf("a model asked for while the server stops: %d %s", r.status, r.raw)
	}
}
