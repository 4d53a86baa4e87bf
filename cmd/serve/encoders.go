package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/embed"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/warmpool"
)

// encoderLoop is an embedding or rerank model's batcher.
type encoderLoop interface {
	Start(ctx context.Context)
	Close(ctx context.Context) error
	Warm(ctx context.Context) error
	Name() string
}

// loadEncoder loads an embedding or rerank model: from dir when it holds it, else, for a
// shipped one, from the binary, so that a models directory of entity models alone still has
// the shipped encoders (the entity and generation models never fall back).
func loadEncoder(dir, name string) (*models.Model, error) {
	m, err := loadModel(dir, name)
	if err != nil && dir != "" && slices.Contains(models.EmbeddedNames(), name) {
		if _, statErr := os.Stat(filepath.Join(dir, name)); errors.Is(statErr, fs.ErrNotExist) {
			return models.Load(models.Embedded(), name)
		}
	}
	return m, err
}

// encoderRoutes loads SLUICE_EMBED_MODEL and SLUICE_RERANK_MODEL (each "none": not served)
// and serves them on their routes, each behind its own admission gate over its batcher; with
// SLUICE_MODELS_DIR, the other encoders there load when a request names one (encoderPool).
func (s *server) encoderRoutes(cfg Config, rt *engine.Runtime, clk clock.Clock, bm *batcher.Metrics, am *admission.Metrics) ([]handlers.Route, error) {
	var routes []handlers.Route
	if cfg.ModelsDir != "" {
		s.encPool = &encoderPool{dir: cfg.ModelsDir, rt: rt, cfg: cfg, clk: clk, bm: bm, am: am, log: s.logger, loaded: map[string]*onDemand{},
			failed: warmpool.Failures{After: warmpool.DefaultRetryFailedAfter}}
	}
	// serve loads one model and runs it on a batcher named queue, behind its gate.
	serve := func(name, queue, kind string, build func(*models.Model, *engine.Session) (encoderLoop, admission.Queue, error)) (*admission.Gate, encoderLoop, error) {
		m, err := loadEncoder(cfg.ModelsDir, name)
		if err != nil {
			return nil, nil, err
		}
		sess, err := rt.NewSession(m.Name, m.ONNX)
		if err != nil {
			return nil, nil, err
		}
		loop, q, err := build(m, sess)
		if err != nil {
			return nil, nil, err
		}
		gate, err := admission.NewGate(queue, cfg.gate(), q, clk, am)
		if err != nil {
			return nil, nil, err
		}
		s.encoders = append(s.encoders, loop)
		s.served = append(s.served, servedModel{name: m.Name, kind: kind, gate: gate})
		return gate, loop, nil
	}
	if cfg.EmbedModel != "none" {
		gate, loop, err := serve(cfg.EmbedModel, "embeddings", "sentence embedding", func(m *models.Model, sess *engine.Session) (encoderLoop, admission.Queue, error) {
			e, err := embed.NewEmbedder("embeddings", m, sess, cfg.extract().Batch, clk, bm)
			if err != nil {
				return nil, nil, err
			}
			return e, e.Queue(), nil
		})
		if err != nil {
			return nil, err
		}
		ep := handlers.EmbedEndpoint{Model: loop.(*embed.Embedder), Gate: gate}
		if s.encPool != nil {
			ep.Load = s.encPool.embedders
		}
		routes = append(routes, handlers.OpenAIEmbeddings(ep), handlers.TEIEmbed(ep))
	}
	if cfg.RerankModel != "none" {
		gate, loop, err := serve(cfg.RerankModel, "rerank", "reranking", func(m *models.Model, sess *engine.Session) (encoderLoop, admission.Queue, error) {
			r, err := embed.NewReranker("rerank", m, sess, cfg.extract().Batch, clk, bm)
			if err != nil {
				return nil, nil, err
			}
			return r, r.Queue(), nil
		})
		if err != nil {
			return nil, err
		}
		ep := handlers.RerankEndpoint{Model: loop.(*embed.Reranker), Gate: gate}
		if s.encPool != nil {
			ep.Load = s.encPool.rerankers
		}
		routes = append(routes, handlers.TEIRerank(ep), handlers.CohereRerank(ep))
	}
	return routes, nil
}
