package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/warmpool"
)

// modelPool is handlers' ModelPool over a warmpool.Pool of the token-classification models
// under SLUICE_MODELS_DIR that no endpoint serves of its own: each loaded with its own session,
// classifier (batcher) and gate, under its own name in metrics (a directory's name: a label
// set the operator's listing bounds).
type modelPool struct {
	pool  *warmpool.Pool
	cfg   Config
	dir   string
	rt    *engine.Runtime
	quant *quantizer
	clk   clock.Clock
	bm    *batcher.Metrics
	am    *admission.Metrics
	// guard wraps every lent model's calls (resilience), as the configured models' are.
	guard  func(handlers.Extractor) handlers.Extractor
	work   context.Context // the classifiers' batch loops run until it ends
	keep   *time.Duration  // the default keep-alive; nil: for ever
	budget int64
	log    *slog.Logger
}

// pooledModel is one model the pool holds: loaded on demand, or configured (pinned: its
// endpoint owns it, so the pool only lends it to the other endpoint's requests).
type pooledModel struct {
	cls    *extract.Classifier
	gate   *admission.Gate
	sess   *engine.Session
	pinned bool
}

// Close drains the model's queue, then frees its gauges and its session; a pinned model is
// closed by the server's shutdown instead.
func (m *pooledModel) Close(ctx context.Context) error {
	if m.pinned {
		return nil
	}
	err := m.cls.Close(ctx)
	m.gate.Close()
	return errors.Join(err, m.sess.Close())
}

func newModelPool(cfg Config, rt *engine.Runtime, quant *quantizer, clk clock.Clock, bm *batcher.Metrics, am *admission.Metrics,
	guard func(handlers.Extractor) handlers.Extractor, work context.Context, log *slog.Logger) (*modelPool, error) {
	p := &modelPool{cfg: cfg, dir: cfg.ModelsDir, rt: rt, quant: quant, clk: clk, bm: bm, am: am, guard: guard, work: work,
		budget: cfg.ModelMemoryBudget, log: log}
	wcfg := warmpool.Config{MaxResident: cfg.MaxResidentModels, MemoryBudget: cfg.ModelMemoryBudget, Forever: true}
	if cfg.KeepAlive != "" {
		d, forever, err := handlers.ParseKeepAlive(cfg.KeepAlive)
		if err != nil {
			return nil, fmt.Errorf("SLUICE_KEEP_ALIVE: %w", err)
		}
		if !forever {
			wcfg.Forever, wcfg.KeepAlive, p.keep = false, d, &d
		}
	}
	pool, err := warmpool.New(wcfg, p.loadLogged, p.estimate, clk)
	if err != nil {
		return nil, err
	}
	p.pool = pool
	return p, nil
}

// estimate checks that name is a token-classification model directory and gives its
// footprint: its ONNX file's size, what its weights take resident. A model that an int8
// rewrite would make smaller is still judged by its file (the rewrite's size is known only
// once it is made, after the room for it was taken): the 507 and the start-up warning say so.
func (p *modelPool) estimate(name string) (int64, error) {
	dir := filepath.Join(p.dir, name)
	if filepath.Base(dir) != name || reservedQueues[name] {
		return 0, warmpool.ErrUnknown
	}
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return 0, warmpool.ErrUnknown
	}
	var c struct {
		ID2Label      map[string]string `json:"id2label"`
		Architectures []string          `json:"architectures"`
	}
	if json.Unmarshal(raw, &c) != nil || len(c.ID2Label) == 0 || !tokenClassifier(c.Architectures) {
		return 0, warmpool.ErrUnknown // not a token-classification model
	}
	st, err := os.Stat(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return 0, warmpool.ErrUnknown
	}
	return st.Size(), nil
}

// warnNeverFit logs each model of the directory larger than room, the budget less the
// configured models: none of them can ever load, and the operator should learn it at start
// rather than from its callers' 507s.
func (p *modelPool) warnNeverFit(logger *slog.Logger, room int64, configured map[string]int64) {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return // a load reports it
	}
	for _, e := range entries {
		if _, ok := configured[e.Name()]; ok || !e.IsDir() {
			continue
		}
		if size, err := p.estimate(e.Name()); err == nil && size > room {
			logger.Warn("a model in SLUICE_MODELS_DIR can never load: its file is larger than SLUICE_MODEL_MEMORY_BUDGET_BYTES leaves beside the configured models (an int8 rewrite is made after the room is found: quantize its file ahead to load it)",
				slog.String("model", e.Name()), slog.Int64("footprint_bytes", size), slog.Int64("room_bytes", room))
		}
	}
}

// reservedQueues are the configured endpoints' queue names, which a model's own queue (named
// after its directory) must not take: its batcher or gate could not be made, and in metrics
// two queues would be one.
var reservedQueues = map[string]bool{"analyze": true, "pii_extract": true, "generate": true, "embeddings": true, "rerank": true}

// tokenClassifier reports whether a config's architectures name a token classifier (a config
// without any is taken at its id2label's word, as the recipe's exports have none).
func tokenClassifier(architectures []string) bool {
	if len(architectures) == 0 {
		return true
	}
	for _, a := range architectures {
		if strings.HasSuffix(a, "ForTokenClassification") {
			return true
		}
	}
	return false
}

// loadLogged is load, its failure logged: the request that asked answers a 500 that names no
// cause, and the operator must learn why the model cannot load (its name and the error, which
// holds paths and ONNX Runtime's words, never a request's text).
func (p *modelPool) loadLogged(ctx context.Context, name string) (warmpool.Model, int64, error) {
	m, size, err := p.load(ctx, name)
	if err != nil && !errors.Is(err, warmpool.ErrUnknown) && ctx.Err() == nil {
		p.log.Error("a model on demand failed to load", slog.String("model", name), slog.String("error", err.Error()))
	}
	return m, size, err
}

// load builds the model, warms it (its first requests should not pay for ONNX Runtime's lazy
// start) and gives it a gate.
func (p *modelPool) load(ctx context.Context, name string) (warmpool.Model, int64, error) {
	m, err := loadModel(p.dir, name)
	if err != nil {
		return nil, 0, err
	}
	if len(m.Config.Labels) == 0 {
		return nil, 0, warmpool.ErrUnknown
	}
	if _, err := p.quant.prepare(ctx, m); err != nil {
		return nil, 0, err
	}
	sess, err := p.rt.NewSession(m.Name, m.ONNX)
	if err != nil {
		return nil, 0, err
	}
	cls, err := extract.New(name, m, sess, p.cfg.extract(), p.clk, p.bm)
	if err != nil {
		_ = sess.Close()
		return nil, 0, err
	}
	cls.Start(p.work)
	gate, err := admission.NewGate(name, p.cfg.gate(), cls.Queue(), p.clk, p.am)
	if err == nil {
		err = cls.Warm(ctx)
	}
	if err != nil {
		_ = cls.Close(ctx)
		if gate != nil {
			gate.Close()
		}
		_ = sess.Close()
		return nil, 0, err
	}
	return &pooledModel{cls: cls, gate: gate, sess: sess}, int64(len(m.ONNX)), nil
}

// Lend implements handlers.ModelPool.
func (p *modelPool) Lend(ctx context.Context, name string, keep handlers.KeepAlive) (handlers.Extractor, *admission.Gate, func(), error) {
	m, release, err := p.pool.Acquire(ctx, name, warmpool.KeepAlive{Set: keep.Set, Forever: keep.Forever, For: keep.For})
	var loading *warmpool.LoadingError
	var tooLarge *warmpool.TooLargeError
	switch {
	case err == nil:
	case errors.Is(err, warmpool.ErrUnknown):
		return nil, nil, nil, handlers.ErrModelUnknown
	case errors.As(err, &tooLarge):
		return nil, nil, nil, &handlers.ModelTooLargeError{Footprint: tooLarge.Footprint, Room: tooLarge.Room}
	case errors.Is(err, warmpool.ErrBusy):
		return nil, nil, nil, handlers.ErrModelBusy
	case errors.As(err, &loading):
		return nil, nil, nil, &handlers.ModelLoadingError{Remaining: loading.Remaining}
	case errors.Is(err, warmpool.ErrClosed):
		// The server stops: the shutdown's 503, as a configured model's closed queue answers,
		// not a 500.
		return nil, nil, nil, fmt.Errorf("%w: %w", admission.ErrClosed, err)
	default:
		return nil, nil, nil, err
	}
	pm := m.(*pooledModel)
	return p.guard(pm.cls), pm.gate, release, nil
}

// Models implements handlers.ModelPool.
func (p *modelPool) Models() []handlers.PooledModel {
	var out []handlers.PooledModel
	for _, s := range p.pool.Snapshot() {
		m := handlers.PooledModel{Name: s.Name, Loading: s.Loading, Pinned: s.Pinned, Active: s.Active, Footprint: s.Footprint}
		if pm, ok := s.Model.(*pooledModel); ok {
			m.MaxLength = pm.cls.MaxLength()
		}
		if s.HasDeadline {
			left := s.KeepAliveRemaining
			m.KeepAliveLeft = &left
		}
		out = append(out, m)
	}
	return out
}

// Unload implements handlers.ModelPool.
func (p *modelPool) Unload(name string) handlers.Unloaded {
	u := p.pool.Unload(name)
	return handlers.Unloaded{Unloaded: u.Unloaded, Loading: u.Loading, Active: u.Active}
}

// UnloadAll implements handlers.ModelPool.
func (p *modelPool) UnloadAll() (int, map[string]int) { return p.pool.UnloadAll() }

// Settings implements handlers.ModelPool.
func (p *modelPool) Settings() handlers.PoolSettings {
	return handlers.PoolSettings{DefaultKeepAlive: p.keep, MaxResident: p.cfg.MaxResidentModels, MemoryBudget: p.budget}
}
