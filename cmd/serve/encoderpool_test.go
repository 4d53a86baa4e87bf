package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/warmpool"
)

// TestAnEncoderThatFailsToLoadLeavesNothingOpen: an embedder directory that fails after its
// session was made (a max length with no room for text) closes that session, and is answered
// from its remembered failure until a minute has passed, then loaded again; each failed load
// is logged with its cause.
func TestAnEncoderThatFailsToLoadLeavesNothingOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyEncoder(t, "embed-mini", filepath.Join(dir, "broken"), func(data []byte) []byte {
		return []byte(strings.Replace(string(data), `"max_position_embeddings": 128`, `"max_position_embeddings": 3`, 1))
	})
	rt, cfg := poolRuntime(t)
	clk := clock.NewFake(time.Now())
	var logs logtest.Buffer
	p := &encoderPool{dir: dir, rt: rt, cfg: cfg, clk: clk, loaded: map[string]*onDemand{}, log: slog.New(slog.NewJSONHandler(&logs, nil)),
		failed: warmpool.Failures{After: warmpool.DefaultRetryFailedAfter}}
	_, _, first := p.embedders(context.Background(), "broken")
	if first == nil || rt.OpenSessions() != 0 {
		t.Fatalf("the first load: %v, %d sessions open", first, rt.OpenSessions())
	}
	if _, _, err := p.embedders(context.Background(), "broken"); err != first {
		t.Fatalf("within the minute: %v, not the remembered failure", err)
	}
	clk.Advance(time.Minute)
	if _, _, err := p.embedders(context.Background(), "broken"); err == nil || err == first || rt.OpenSessions() != 0 {
		t.Fatalf("after the minute: %v (loaded again?), %d sessions open", err, rt.OpenSessions())
	}
	// The request answers a 500 that names no cause: the log must, once a load.
	if n := logs.Count(`"msg":"an encoder on demand failed to load","model":"broken","error":`); n != 2 {
		t.Errorf("%d load failures logged, want 2: %s", n, logs.String())
	}
}

// TestAnEncoderLoadOutlivesTheRequestThatStartedIt: a request that stops waiting is told the
// model is loading (how long it has left, at least a second); the load goes on without it, once,
// and the next requests are served the loaded model, those with no wait left too.
func TestAnEncoderLoadOutlivesTheRequestThatStartedIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyEncoder(t, "embed-mini", filepath.Join(dir, "notes"), nil)
	rt, cfg := poolRuntime(t)
	p := &encoderPool{dir: dir, rt: rt, cfg: cfg, clk: clock.NewFake(time.Now()), loaded: map[string]*onDemand{},
		log: slog.New(slog.DiscardHandler), failed: warmpool.Failures{After: warmpool.DefaultRetryFailedAfter}}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := p.embedders(gone, "notes")
	var loading *handlers.ModelLoadingError
	if !errors.As(err, &loading) || loading.Remaining < time.Second {
		t.Fatalf("a request that stopped waiting: %v", err)
	}
	emb, gate, err := p.embedders(context.Background(), "notes")
	if err != nil || emb == nil || gate == nil || rt.OpenSessions() != 1 {
		t.Fatalf("after the load: %v, %d sessions open", err, rt.OpenSessions())
	}
	for range 100 { // loaded: a request that has no wait left is served (the two were raced)
		if _, _, err := p.embedders(gone, "notes"); err != nil {
			t.Fatalf("a loaded model, asked with no wait left: %v", err)
		}
	}
	p.close(context.Background())
}

// copyEncoder copies the shipped encoder from into the directory to, its config.json through
// edit when edit is not nil (a cross-encoder has no pooling: those files are skipped).
func copyEncoder(t *testing.T, from, to string, edit func(config []byte) []byte) {
	t.Helper()
	for _, f := range []string{"config.json", "model.onnx", "tokenizer.json", "modules.json", "1_Pooling/config.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "models", from, f))
		if err != nil {
			continue
		}
		if f == "config.json" && edit != nil {
			data = edit(data)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// poolRuntime is a one-thread runtime, closed with the test, and the default configuration.
func poolRuntime(t *testing.T) (*engine.Runtime, Config) {
	t.Helper()
	rt, err := engine.NewRuntime(engine.RuntimeOptions{Device: engine.DeviceCPU, IntraOpThreads: 1, InterOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	cfg, err := loadConfig(nil, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	return rt, cfg
}
