package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/warmpool"
)

// modelsDir is a SLUICE_MODELS_DIR with the two configured models and copies of the PII model
// under the names given, to be loaded on demand.
func modelsDir(t *testing.T, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	copyModel := func(from, to string) {
		if err := os.MkdirAll(filepath.Join(dir, to), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"config.json", "model.onnx", "tokenizer.json"} {
			data, err := os.ReadFile(filepath.Join("../../models", from, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, to, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyModel("pii", "pii")
	copyModel("clinical-ner", "clinical-ner")
	// A decoder's directory (its config says so) is no model for the entity routes.
	if err := os.MkdirAll(filepath.Join(dir, "decoder"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"architectures":["LlamaForCausalLM"],"id2label":{"0":"LABEL_0","1":"LABEL_1"}}`
	for f, data := range map[string]string{"config.json": cfg, "model.onnx": "x"} {
		if err := os.WriteFile(filepath.Join(dir, "decoder", f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range extra {
		copyModel("pii", name)
	}
	return dir
}

// loadedModels reads /models/loaded as OpenMed's client does.
func loadedModels(t *testing.T, srv *testServer) omLoadedModelsResponse {
	t.Helper()
	resp, err := http.Get(srv.url + "/models/loaded")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out omLoadedModelsResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitLoaded waits until /models/loaded says of name what want says (absent: nil).
func waitLoaded(t *testing.T, srv *testServer, name string, want func(m map[string]any) bool) {
	t.Helper()
	for range 20000 {
		if want(loadedModels(t, srv).Models[name]) {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("/models/loaded never showed %s as wanted: %v", name, loadedModels(t, srv).Models[name])
}

// TestModelsLoadOnDemand: a model_name that names a model directory is loaded on first use
// and served; keep_alive 0 unloads it once its request is done; the resident cap unloads the
// least recently used idle one for a new one; unload unloads; a name that is no model
// directory, or a path, is a 422.
func TestModelsLoadOnDemand(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_MODELS_DIR="+modelsDir(t, "pii-b", "pii-c"),
		"SLUICE_BATCH_MAX_QUEUE_WAIT_MS=120000", "SLUICE_MAX_RESIDENT_MODELS=3", "SLUICE_KEEP_ALIVE=1h", "SLUICE_METRICS_COMPAT=openmed")
	text := "Call Maria Gonzalez at (415) 555-0132."
	status, body := srv.post(t, "/pii/extract", map[string]any{"text": text, "model_name": "pii-b"})
	if status != 200 || body["model_name"] != "pii-b" || len(entitiesOf(t, body)) == 0 {
		t.Fatalf("%d %v", status, body)
	}
	loaded := loadedModels(t, srv)
	b := loaded.Models["pii-b"]
	if b["resident"] != true || b["pinned"] != false || b["footprint_bytes"] == nil || loaded.MaxResidentModels == nil ||
		*loaded.MaxResidentModels != 3 || loaded.DefaultKeepAliveSeconds == nil || *loaded.DefaultKeepAliveSeconds != 3600 {
		t.Fatalf("%+v", loaded)
	}
	srv.waitForMetric(t, `sluice_batcher_requests_total{outcome="served",queue="pii-b"} 1`)
	// The Open Inference Protocol sees it loaded (and pii-c, not loaded, not yet).
	for path, want := range map[string]int{"/v2/models/pii-b/ready": 200, "/v2/models/pii-b": 200, "/v2/models/pii-c/ready": 404} {
		resp, err := http.Get(srv.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}

	// The cap of 3 (pii, clinical-ner, pii-b): pii-c takes pii-b's place.
	if status, body := srv.post(t, "/pii/deidentify", map[string]any{"text": text, "model_name": "pii-c"}); status != 200 ||
		strings.Contains(body["deidentified_text"].(string), "Gonzalez") {
		t.Fatalf("%d %v", status, body)
	}
	waitLoaded(t, srv, "pii-b", func(m map[string]any) bool { return m == nil })
	if loadedModels(t, srv).Models["pii-c"]["resident"] != true {
		t.Fatal("pii-c not resident")
	}

	var out omUnloadResponse
	if apiErr := omDo(t, srv.url, "/models/unload", omUnloadRequest{ModelName: "pii-c"}, &out); apiErr != nil || out.Unloaded == nil || !*out.Unloaded {
		t.Fatalf("%+v %+v", apiErr, out)
	}
	waitLoaded(t, srv, "pii-c", func(m map[string]any) bool { return m == nil })

	// keep_alive 0: unloaded as soon as its request is done.
	if status, _ := srv.post(t, "/analyze", map[string]any{"text": text, "model_name": "pii-b", "keep_alive": 0}); status != 200 {
		t.Fatalf("analyze with pii-b: %d", status)
	}
	waitLoaded(t, srv, "pii-b", func(m map[string]any) bool { return m == nil })

	// A configured model is lent to the other endpoint's requests, through its own gate.
	if status, body := srv.post(t, "/pii/extract", map[string]any{"text": text, "model_name": "clinical-ner"}); status != 200 {
		t.Fatalf("clinical-ner on /pii/extract: %d %v", status, body)
	}
	// Three loads (pii-b, pii-c, pii-b again) and three unloads (for the cap, on request, at
	// keep_alive 0), in OpenMed's families.
	srv.waitForMetric(t, "openmed_service_model_load_total 3")
	srv.waitForMetric(t, "openmed_service_model_eviction_total 3")
	for _, name := range []string{"no-such-model", "../pii", "pii/../pii", "decoder", "analyze"} {
		if status, body := srv.post(t, "/pii/extract", map[string]any{"text": text, "model_name": name}); status != 422 {
			t.Fatalf("%s: %d %v", name, status, body)
		}
	}
}

// TestAModelStillLoadingIsA503WithItsRetryAfter: with no wait for loads (SLUICE_MODEL_LOAD_WAIT_MS=0), the first request for
// a model gets 503 with a Retry-After; the load goes on, and once it is done the model serves,
// at keep-alive 0 too (it was unloaded as its load ended, and each retry loaded it again).
func TestAModelStillLoadingIsA503WithItsRetryAfter(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_MODELS_DIR="+modelsDir(t, "pii-b"), "SLUICE_MODEL_LOAD_WAIT_MS=0",
		"SLUICE_KEEP_ALIVE=0")
	body := `{"text":"Call Maria at (415) 555-0132.","model_name":"pii-b"}`
	resp, err := http.Post(srv.url+"/pii/extract", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Error omErrorBody `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	if resp.StatusCode != 503 || env.Error.Code != "model_loading" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %+v %q", resp.StatusCode, env, resp.Header.Get("Retry-After"))
	}
	waitLoaded(t, srv, "pii-b", func(m map[string]any) bool { return m != nil && m["resident"] == true })
	if status, _ := srv.post(t, "/pii/extract", map[string]any{"text": "Call Maria.", "model_name": "pii-b"}); status != 200 {
		t.Fatalf("after the load: %d", status)
	}
}

// TestLendSaysAModelCanNeverFit: the pool's TooLargeError reaches the handlers as their
// ModelTooLargeError, with both sizes, and not as ErrModelBusy (a 503 to retry for ever).
func TestLendSaysAModelCanNeverFit(t *testing.T) {
	t.Parallel()
	wp, err := warmpool.New(warmpool.Config{MemoryBudget: 100, Forever: true},
		func(context.Context, string) (warmpool.Model, int64, error) { return nil, 0, errors.New("loaded") },
		func(string) (int64, error) { return 101, nil }, clock.NewFake(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wp.Close(context.Background()) })
	_, _, _, err = (&modelPool{pool: wp}).Lend(context.Background(), "big", handlers.KeepAlive{})
	var tl *handlers.ModelTooLargeError
	if !errors.As(err, &tl) || errors.Is(err, handlers.ErrModelBusy) || tl.Footprint != 101 || tl.Room != 100 {
		t.Fatalf("%v %+v", err, tl)
	}
}

// TestAModelThatCanNeverFitIsWarnedOfAtStart: each model of the directory larger than the
// budget's room beside the configured models is named in a warning with both sizes; one that
// fits, a configured one, and a directory that is no model are not.
func TestAModelThatCanNeverFitIsWarnedOfAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, size := range map[string]int{"big": 101, "fits": 50, "pii": 200} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"config.json": `{"id2label":{"0":"O"}}`, "model.onnx": strings.Repeat("x", size)}
		for f, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name, f), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	(&modelPool{dir: dir}).warnNeverFit(slog.New(slog.NewTextHandler(&logs, nil)), 50, map[string]int64{"pii": 200})
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 ||
		!strings.Contains(out, "model=big footprint_bytes=101 room_bytes=50") {
		t.Fatalf("%d warnings:\n%s", n, out)
	}
}

// TestLendWhileTheServerStopsIsTheShutdownAnswer: a closed pool's refusal reaches the handlers
// as a closed queue's, the shutdown's 503 shutting_down. It broke when warmpool.ErrClosed went
// through as it was: unrecognised, a 500 internal_error.
func TestLendWhileTheServerStopsIsTheShutdownAnswer(t *testing.T) {
	t.Parallel()
	wp, err := warmpool.New(warmpool.Config{Forever: true},
		func(context.Context, string) (warmpool.Model, int64, error) { return nil, 0, errors.New("loaded") },
		func(string) (int64, error) { return 1, nil }, clock.NewFake(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if err := wp.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = (&modelPool{pool: wp}).Lend(context.Background(), "pii-b", handlers.KeepAlive{})
	if !errors.Is(err, admission.ErrClosed) {
		t.Fatalf("a model lent while the server stops: %v", err)
	}
}

// TestOpenMedModelFamiliesCountWhatIsResident: openmed_service_model_resident_* count the
// routes' models (the generation model too) and the pool's resident ones, each once, and
// leave out a model still loading. It broke twice: a loading model counted as resident, and
// with a pool the generation model's footprint was left out of the bytes though counted.
func TestOpenMedModelFamiliesCountWhatIsResident(t *testing.T) {
	t.Parallel()
	wp, err := warmpool.New(warmpool.Config{Forever: true},
		func(ctx context.Context, _ string) (warmpool.Model, int64, error) {
			<-ctx.Done()
			return nil, 0, ctx.Err()
		},
		func(string) (int64, error) { return 700, nil }, clock.NewFake(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wp.Close(context.Background()) })
	wp.Pin("pii", &pooledModel{pinned: true}, 100)
	// A configured model named by a nested path is pinned under the path; its routes call it
	// by the path's base. It was counted twice, once by each name.
	wp.Pin("org/ner", &pooledModel{pinned: true}, 300)
	gone, cancel := context.WithCancel(context.Background())
	cancel() // the request gives up at once; the load goes on
	if _, _, err := wp.Acquire(gone, "pii-b", warmpool.KeepAlive{}); !errors.Is(err, warmpool.ErrLoading) {
		t.Fatalf("pii-b should be loading: %v", err)
	}
	routes := []handlers.Route{{Models: []handlers.ModelInfo{{Name: "pii", Footprint: 100}, {Name: "ner", Footprint: 300}}},
		{Models: []handlers.ModelInfo{{Name: "pii", Footprint: 100}, {Name: "tiny-lm", Footprint: 5000}}}}
	if m := residentModels(routes, wp); m.Resident != 3 || m.ResidentBytes != 5400 {
		t.Errorf("with a pool: %d models, %d bytes; want pii, ner and tiny-lm, 5400", m.Resident, m.ResidentBytes)
	}
	if m := residentModels(routes, nil); m.Resident != 3 || m.ResidentBytes != 5400 {
		t.Errorf("without a pool: %d models, %d bytes; want 3, 5400", m.Resident, m.ResidentBytes)
	}
}
