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

// listedPool is a pool whose models are one resident and one still loading.
type listedPool struct{ fakePool }

func (p *listedPool) Models() []PooledModel {
	return []PooledModel{{Name: "pii-b", Loading: true, Active: 1, Footprint: 1000},
		{Name: "pii-c", Footprint: 300, MaxLength: 256}}
}

// TestALoadingModelIsPendingNotResident: /models/loaded shows a model still loading as
// OpenMed's pending one (its estimate pending, no footprint, no models, no max_length yet),
// and a resident pooled model with its footprint and max_length. It broke when a loading model
// was reported as resident (footprint, 1 model, counted in resident_memory_bytes) and pooled
// models left max_length out.
func TestALoadingModelIsPendingNotResident(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) { o.Pool, o.ModelLoadWait = &listedPool{}, time.Second })
	r := f.do(t, "GET", "/models/loaded", "")
	models, _ := r.body["models"].(map[string]any)
	b, _ := models["pii-b"].(map[string]any)
	c, _ := models["pii-c"].(map[string]any)
	if r.status != 200 || b == nil || c == nil || b["loading"] != true {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if b["pending_footprint_bytes"] != float64(1000) || b["footprint_bytes"] != float64(0) || b["models"] != float64(0) ||
		b["tokenizers"] != float64(0) || b["pipelines"] != float64(0) || b["resident"] != false || b["max_length"] != nil {
		t.Errorf("a loading model: %v", b)
	}
	if mx, ok := b["max_length"]; !ok || mx != nil {
		t.Errorf("a loading model's max_length: %v (present %v), want null", mx, ok)
	}
	if c["footprint_bytes"] != float64(300) || c["pending_footprint_bytes"] != float64(0) || c["models"] != float64(1) ||
		c["max_length"] != float64(256) {
		t.Errorf("a resident pooled model: %v", c)
	}
	var routes float64
	for name, m := range models {
		if name != "pii-b" && name != "pii-c" {
			routes += m.(map[string]any)["footprint_bytes"].(float64)
		}
	}
	if r.body["pending_memory_bytes"] != float64(1000) || r.body["resident_memory_bytes"] != routes+300 {
		t.Errorf("pending_memory_bytes %v, resident_memory_bytes %v (want %v)", r.body["pending_memory_bytes"],
			r.body["resident_memory_bytes"], routes+300)
	}
}

// TestResidentBytesKeepTheGenerationModel: resident_memory_bytes is the sum of the footprints
// of the models listed resident, the generation model's included, with a pool or without. It
// broke when, with a pool, the figure was the pool's alone: the generation model, which the
// pool does not hold, was left out though listed.
func TestResidentBytesKeepTheGenerationModel(t *testing.T) {
	const genBytes = 5000
	for _, pooled := range []bool{false, true} {
		f := newFixture(t, func(o *fixtureOptions) {
			o.extra = Generation(GenerationEndpoint{Model: &fakeGenerator{script: stopScript}, Timeout: time.Minute, Footprint: genBytes,
				Gate: newTestGate(t, "generate", newFakeLoad(16), 2*time.Second)})
			if pooled {
				// The pool also holds a configured model, pinned under its configured name
				// (a nested path), which its routes list by another: counted once, by them.
				o.Pool, o.ModelLoadWait = &pinnedPool{}, time.Second
			}
		})
		r := f.do(t, "GET", "/models/loaded", "")
		var listed float64
		for _, m := range r.body["models"].(map[string]any) {
			if m := m.(map[string]any); m["resident"] == true {
				listed += m["footprint_bytes"].(float64)
			}
		}
		if listed != genBytes || r.body["resident_memory_bytes"] != listed {
			t.Errorf("pool %v: resident_memory_bytes %v, the resident models' footprints add to %v", pooled, r.body["resident_memory_bytes"], listed)
		}
	}
}

// pinnedPool holds a configured model under a nested name.
type pinnedPool struct{ fakePool }

func (p *pinnedPool) Models() []PooledModel {
	return []PooledModel{{Name: "org/pii", Pinned: true, Footprint: 700, MaxLength: 128}}
}

// TestUnloadingAModelNotLoadedIsNotAnError: with a pool, unloading a model directory that is
// not loaded now is OpenMed's 200 "unloaded": false with nothing released, so a second unload
// is harmless; a name that cannot be a directory is still a 422. It broke as a 422 "not a
// loaded model".
func TestUnloadingAModelNotLoadedIsNotAnError(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) { o.Pool, o.ModelLoadWait = &fakePool{}, time.Second })
	r := f.do(t, "POST", "/models/unload", `{"model_name":"pii-b"}`)
	released, _ := r.body["released"].(map[string]any)
	if r.status != 200 || r.body["unloaded"] != false || r.body["model_name"] != "pii-b" || r.body["active_requests"] != float64(0) ||
		r.body["loading"] != false || released["models"] != float64(0) {
		t.Fatalf("unloading a model directory not loaded now: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "POST", "/models/unload", `{"model_name":"../pii-b"}`); r.status != 422 {
		t.Errorf("unloading a path: %d %s", r.status, r.raw)
	}
}
