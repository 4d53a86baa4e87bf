package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-serving/sluice/admission"
)

func TestOpenInferenceProtocolInfersEveryText(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) { o.extra = []Route{KServeInfer(o.pii)} })
	body := `{"id":"r1","parameters":{"confidence_threshold":0.2,"binary_data_output":false},"inputs":[{"name":"text","shape":[2,1],"datatype":"BYTES","data":[["Alice saw Alice"],["nobody"]]}],` +
		`"outputs":[{"name":"entities","parameters":{"binary_data":false}}]}`
	r := f.do(t, "POST", "/v2/models/pii/infer", body)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	var out v2Response
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	if out.ModelName != "pii" || out.ID != "r1" || len(out.Outputs) != 1 || out.Outputs[0].Datatype != "BYTES" || len(out.Outputs[0].Data) != 2 ||
		len(out.Outputs[0].Shape) != 2 || out.Outputs[0].Shape[0] != 2 || out.Outputs[0].Shape[1] != 1 {
		t.Fatalf("response %+v", out)
	}
	var first, second []entityJSON
	if err := json.Unmarshal([]byte(out.Outputs[0].Data[0]), &first); err != nil || len(first) != 2 || first[1].Start != 10 || first[1].Label != "first_name" {
		t.Errorf("first text's entities %+v, %v", first, err)
	}
	if err := json.Unmarshal([]byte(out.Outputs[0].Data[1]), &second); err != nil || len(second) != 0 {
		t.Errorf("second text's entities %+v, %v", second, err)
	}
	if f.pii.callCount() != 2 || f.pii.opts().ConfidenceThreshold != 0.2 {
		t.Errorf("calls %d, threshold %v", f.pii.callCount(), f.pii.opts().ConfidenceThreshold)
	}
	if m := f.do(t, "GET", "/v2/models/pii", ""); m.status != 200 || m.body["name"] != "pii" {
		t.Errorf("metadata %d %s", m.status, m.raw)
	}
	if m := f.do(t, "GET", "/v2/models/pii/ready", ""); m.status != 200 || m.body["ready"] != true {
		t.Errorf("model ready %d %s", m.status, m.raw)
	}
	for _, p := range []string{"/v2/health/live", "/v2/health/ready", "/v2"} {
		if m := f.do(t, "GET", p, ""); m.status != 200 {
			t.Errorf("%s: %d %s", p, m.status, m.raw)
		}
	}
}

func TestOpenInferenceProtocolErrorsAreItsOwnAndContentFree(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) { o.extra = []Route{KServeInfer(o.pii)} })
	for name, c := range map[string]struct {
		path, body string
		status     int
		says       string
	}{
		"unknown model":          {"/v2/models/nope/infer", `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["Alice"]}]}`, 404, "No model"},
		"wrong type":             {"/v2/models/pii/infer", `{"inputs":[{"name":"text","shape":[1],"datatype":"FP32","data":[1.0]}]}`, 422, "datatype"},
		"shape":                  {"/v2/models/pii/infer", `{"inputs":[{"name":"text","shape":[3],"datatype":"BYTES","data":["Alice ` + canary + `","b"]}]}`, 422, "shape"},
		"empty text":             {"/v2/models/pii/infer", `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["  "]}]}`, 422, "data[0]"},
		"two inputs":             {"/v2/models/pii/infer", `{"inputs":[{"name":"a","shape":[1],"datatype":"BYTES","data":["x"]},{"name":"b","shape":[1],"datatype":"BYTES","data":["y"]}]}`, 422, "Exactly one"},
		"lang":                   {"/v2/models/pii/infer", `{"parameters":{"lang":"xx"},"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["x"]}]}`, 422, "lang"},
		"unknown model metadata": {"/v2/models/nope", "", 404, "No model"},
		// The protocol's versioned paths: the server keeps none, and says so in its shape.
		"a version's infer":    {"/v2/models/pii/versions/1/infer", `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["Alice ` + canary + `"]}]}`, 404, "no model versions"},
		"a version's metadata": {"/v2/models/pii/versions/1", "", 404, "no model versions"},
		"a version's ready":    {"/v2/models/pii/versions/1/ready", "", 404, "no model versions"},
		"threshold type":       {"/v2/models/pii/infer", `{"parameters":{"confidence_threshold":"high"},"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["x"]}]}`, 422, "body.parameters.confidence_threshold"},
		// An output the model has not, asked for: refused, not answered with the one it has.
		"an output it has not": {"/v2/models/pii/infer", `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["x"]}],"outputs":[{"name":"scores"}]}`, 422, "body.outputs.0.name"},
	} {
		method := "POST"
		if c.body == "" {
			method = "GET"
		}
		r := f.do(t, method, c.path, c.body)
		msg, _ := r.body["error"].(string)
		if r.status != c.status || !strings.Contains(msg, c.says) || strings.Contains(r.raw, canary) {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
}

// namePool lends the fixture's pii extractor under any name (only, when set, those of known),
// keeps each name it was given, and says a model lent is loaded.
type namePool struct {
	ex    Extractor
	gate  *admission.Gate
	known []string
	mu    sync.Mutex
	names []string
}

func (p *namePool) Lend(_ context.Context, name string, _ KeepAlive) (Extractor, *admission.Gate, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known != nil && !slices.Contains(p.known, name) {
		return nil, nil, nil, ErrModelUnknown
	}
	p.names = append(p.names, name)
	return p.ex, p.gate, func() {}, nil
}
func (p *namePool) Models() []PooledModel {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PooledModel
	for _, n := range p.names {
		out = append(out, PooledModel{Name: n, MaxLength: p.ex.MaxLength()})
	}
	return out
}
func (p *namePool) Unload(string) Unloaded           { return Unloaded{} }
func (p *namePool) UnloadAll() (int, map[string]int) { return 0, nil }
func (p *namePool) Settings() PoolSettings           { return PoolSettings{} }

// TestAPooledModelsNameOutlivesItsRequest: the name a /v2 infer path gives the model pool,
// which keeps it as the loaded model's, is the pool's own string, not a view of the request's
// path that the next request on the connection writes over.
func TestAPooledModelsNameOutlivesItsRequest(t *testing.T) {
	pool := &namePool{}
	f := newFixture(t, func(o *fixtureOptions) {
		pool.ex, pool.gate = o.pii.Models["pii"], o.pii.Gate
		o.Pool = pool
		o.extra = []Route{KServeInfer(o.pii)}
	})
	body := `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["Alice"]}]}`
	if r := f.do(t, "POST", "/v2/models/pool-model/infer", body); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	for range 20 { // later requests, on the same connection, write paths of the same length over its buffer
		f.do(t, "POST", "/v2/models/zzzz-zzzzz/infer", body)
		f.do(t, "GET", "/zzzzzzzzzzzzzzzzzzzzzzzzzz", "")
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.names[0] != "pool-model" {
		t.Fatalf("the pool's name for the first model is now %q", pool.names[0])
	}
}

// TestOpenInferenceProtocolSeesThePool: a model of the pool is ready, and has metadata, once it
// is loaded (an infer loads it; a read never does, nor uses it); a name the pool cannot load is the
// protocol's 404 on infer too, not another route's 422; a name with a "/" is sent escaped.
func TestOpenInferenceProtocolSeesThePool(t *testing.T) {
	pool := &namePool{known: []string{"ner2"}}
	f := newFixture(t, func(o *fixtureOptions) {
		pool.ex, pool.gate = o.pii.Models["pii"], o.pii.Gate
		o.pii.Models["Org/pii"] = o.pii.Models["pii"]
		o.Pool = pool
		o.extra = []Route{KServeInfer(o.pii)}
	})
	body := `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["Alice"]}]}`
	for path, want := range map[string]int{"/v2/models/ner2/ready": 404, "/v2/models/ner2": 404, "/v2/models/Org%2Fpii/ready": 200, "/v2/models/Org%2Fpii": 200} {
		if r := f.do(t, "GET", path, ""); r.status != want {
			t.Errorf("%s: %d %s", path, r.status, r.raw)
		}
	}
	if r := f.do(t, "POST", "/v2/models/nosuch/infer", body); r.status != 404 {
		t.Errorf("a model the pool cannot load: %d %s", r.status, r.raw)
	}
	for _, path := range []string{"/v2/models/ner2/infer", "/v2/models/Org%2Fpii/infer"} {
		if r := f.do(t, "POST", path, body); r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.raw)
		}
	}
	if r := f.do(t, "GET", "/v2/models/ner2/ready", ""); r.status != 200 || r.body["ready"] != true || r.body["name"] != "ner2" {
		t.Errorf("ready once loaded: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "GET", "/v2/models/ner2", ""); r.status != 200 || r.body["name"] != "ner2" ||
		r.body["parameters"].(map[string]any)["max_length"] != float64(pool.ex.MaxLength()) {
		t.Errorf("metadata once loaded: %d %s", r.status, r.raw)
	}
	// A read is no use of the model: a probe's would keep it loaded past its keep-alive.
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if len(pool.names) != 1 {
		t.Errorf("the pool lent %d times for one infer and two reads", len(pool.names))
	}
}
