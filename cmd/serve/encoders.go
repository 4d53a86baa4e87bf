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
)

// encoderLoop is an embedding or rerank model's batcher.
type encoderLoop interface {
	Start(ctx context.Context)
	Close(ctx context.Context) error
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
// and serves them on their routes, each behind its own admission gate over its batcher.
func (s *server) encoderRoutes(cfg Config, rt *engine.Runtime, clk clock.Clock, bm *batcher.Metrics, am *admission.Metrics) ([]handlers.Route, error) {
	var routes []handlers.Route
	if cfg.EmbedModel != "none" {
		m, err := loadEncoder(cfg.ModelsDir, cfg.EmbedModel)
		if err != nil {
			return nil, err
		}
		sess, err := rt.NewSession(m.Name, m.ONNX)
		if err != nil {
			return nil, err
		}
		e, err := embed.NewEmbedder("embeddings", m, sess, cfg.extract().Batch, clk, bm)
		if err != nil {
			return nil, err
		}
		gate, err := admission.NewGate("embeddings", cfg.gate(), e.Queue(), clk, am)
		if err != nil {
			return nil, err
		}
		s.encoders = append(s.encoders, e)
		s.served = append(s.served, servedModel{name: m.Name, kind: "sentence embedding"})
		ep := handlers.EmbedEndpoint{Model: e, Gate: gate}
		routes = append(routes, handlers.OpenAIEmbeddings(ep), handlers.TEIEmbed(ep))
	}
	if cfg.RerankModel != "none" {
		m, err := loadEncoder(cfg.ModelsDir, cfg.RerankModel)
		if err != nil {
			return nil, err
		}
		sess, err := rt.NewSession(m.Name, m.ONNX)
		if err != nil {
			return nil, err
		}
		r, err := embed.NewReranker("rerank", m, sess, cfg.extract().Batch, clk, bm)
		if err != nil {
			return nil, err
		}
		gate, err := admission.NewGate("rerank", cfg.gate(), r.Queue(), clk, am)
		if err != nil {
			return nil, err
		}
		s.encoders = append(s.encoders, r)
		s.served = append(s.served, servedModel{name: m.Name, kind: "reranking"})
		ep := handlers.RerankEndpoint{Model: r, Gate: gate}
		routes = append(routes, handlers.TEIRerank(ep), handlers.CohereRerank(ep))
	}
	return routes, nil
}
