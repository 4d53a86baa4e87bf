package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/quantize"
)

// defaultMinAgreement is SLUICE_QUANTIZE_MIN_AGREEMENT's default; a lower setting is logged
// as a warning at every start that serves an int8 model.
const defaultMinAgreement = 0.99

// quantizePlan is SLUICE_QUANTIZE read: a mode for every model, and modes per model name.
type quantizePlan struct {
	all  string
	each map[string]string
}

func parseQuantize(v string) (quantizePlan, error) {
	p := quantizePlan{each: map[string]string{}}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, mode, named := strings.Cut(part, "=")
		if !named {
			name, mode = "", part
		}
		if mode != "int8" && mode != "off" {
			return p, fmt.Errorf("takes int8, off, or name=int8|off pairs separated by commas (got %q)", part)
		}
		if named {
			if name = strings.TrimSpace(name); name == "" {
				return p, fmt.Errorf("has a mode without a model name (%q)", part)
			}
			p.each[name] = mode
		} else {
			p.all = mode
		}
	}
	return p, nil
}

// modeFor is the mode a model runs in and whether the operator chose it (SLUICE_QUANTIZE)
// rather than the model's config.json.
func (p quantizePlan) modeFor(name, declared string) (mode string, chosen bool) {
	if m, ok := p.each[name]; ok {
		return m, true
	}
	if p.all != "" {
		return p.all, true
	}
	return declared, false
}

func (p quantizePlan) asksInt8() bool {
	if p.all == "int8" {
		return true
	}
	for _, m := range p.each {
		if m == "int8" {
			return true
		}
	}
	return false
}

// quantizer is the int8 step between reading a model and building its session.
type quantizer struct {
	plan         quantizePlan
	onGPU        bool
	cacheDir     string
	minAgreement float64
	rt           *engine.Runtime
	extract      extract.Config
	logger       *slog.Logger

	once     sync.Once
	cache    *quantize.Cache // nil when no directory could be had
	cacheErr error
	// One warning each per process, however many models are prepared.
	noCacheWarning, thresholdWarning sync.Once
}

// newQuantizer reads the settings. Asking for int8 on CUDA is refused here, at start-up: the
// int8 kernels are the CPU's, and a GPU serves fp16 exports instead.
func newQuantizer(cfg Config, rt *engine.Runtime, logger *slog.Logger) (*quantizer, error) {
	plan, err := parseQuantize(cfg.Quantize)
	if err != nil {
		return nil, fmt.Errorf("SLUICE_QUANTIZE %v", err)
	}
	if err := quantizeOnDevice(plan, rt.Device()); err != nil {
		return nil, err
	}
	return &quantizer{plan: plan, onGPU: rt.Device() == engine.DeviceCUDA, cacheDir: cfg.QuantizeCacheDir, minAgreement: cfg.QuantizeMinAgreement,
		rt: rt, extract: cfg.extract(), logger: logger}, nil
}

// quantizeOnDevice refuses SLUICE_QUANTIZE's int8 on CUDA.
func quantizeOnDevice(plan quantizePlan, d engine.Device) error {
	if d == engine.DeviceCUDA && plan.asksInt8() {
		return errors.New("SLUICE_QUANTIZE asks for int8, which runs on the CPU only: on CUDA serve the float32 model " +
			"(or an fp16 export); unset SLUICE_QUANTIZE or set SLUICE_DEVICE=cpu")
	}
	return nil
}

// prepare replaces m.ONNX with its int8 rewrite when the model is to run in int8, and for a
// token classifier checks the rewrite against the float32 model on the built-in sample.
func (q *quantizer) prepare(ctx context.Context, m *models.Model) error {
	if q == nil {
		return nil
	}
	mode, chosen := q.plan.modeFor(m.Name, m.Config.Quantize)
	if mode != "int8" {
		return nil
	}
	if q.onGPU {
		// Only a model's own config.json can ask for int8 here (the variable is refused at
		// start): it is a CPU setting, so the GPU serves the float32 graph.
		q.logger.Info("model asks for int8 in its config.json; int8 is for the CPU, so it runs in float32 on CUDA",
			slog.String("model", m.Name))
		return nil
	}
	source := "config.json"
	if chosen {
		source = "SLUICE_QUANTIZE"
	}
	start := time.Now()
	res, err := q.rewrite(m.ONNX)
	if err != nil {
		return fmt.Errorf("model %q: int8: %w", m.Name, err)
	}
	attrs := []any{slog.String("model", m.Name), slog.String("asked_by", source), slog.String("outcome", string(res.Outcome)),
		slog.String("rewrite", res.Report.String()), slog.Duration("took", time.Since(start))}
	if res.Why != nil {
		attrs = append(attrs, slog.String("why", res.Why.Error()))
	}
	if res.Report.Quantized == 0 {
		q.logger.Warn("int8 asked for, but no product in the graph qualifies; the model runs as it is", attrs...)
		return nil
	}
	if len(m.Config.Labels) > 0 {
		a, err := q.gate(ctx, m, res)
		if err != nil {
			return err
		}
		attrs = append(attrs, slog.Float64("agreement", round4(a.Agreement)), slog.Float64("min_agreement", q.minAgreement),
			slog.Float64("max_logit_diff", round4(a.MaxLogitDiff)))
		if a.Agreement < q.minAgreement {
			return fmt.Errorf("model %q: its int8 rewrite finds %d of the float32 model's %d entities on the built-in sample exactly "+
				"(%d others; agreement %.4f), under SLUICE_QUANTIZE_MIN_AGREEMENT %.4f: serve it in float32 (SLUICE_QUANTIZE=%s=off) "+
				"or lower the threshold", m.Name, a.Matched, a.FloatEntities, a.Int8Entities-a.Matched, a.Agreement, q.minAgreement, m.Name)
		}
		if q.minAgreement < defaultMinAgreement {
			q.thresholdWarning.Do(func() {
				q.logger.Warn("SLUICE_QUANTIZE_MIN_AGREEMENT is below its default: int8 models are served with fewer of their float32 entities",
					slog.Float64("min_agreement", q.minAgreement), slog.Float64("default", defaultMinAgreement))
			})
		}
	}
	m.ONNX = res.ONNX
	q.logger.Info("model runs with int8 matrix products", attrs...)
	return nil
}

// rewrite answers from the cache when there is one; without a directory it rewrites at every
// start and says so once.
func (q *quantizer) rewrite(src []byte) (quantize.Result, error) {
	q.once.Do(func() {
		dir := q.cacheDir
		if dir == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				q.cacheErr = err
				return
			}
			dir = filepath.Join(base, "sluice", "quantized")
		}
		q.cache, q.cacheErr = quantize.NewCache(dir, quantize.Options{})
	})
	if q.cache == nil {
		if q.cacheDir != "" {
			return quantize.Result{}, fmt.Errorf("SLUICE_QUANTIZE_CACHE_DIR: %w", q.cacheErr)
		}
		q.noCacheWarning.Do(func() {
			q.logger.Warn("no cache directory for int8 rewrites; each start rewrites again (set SLUICE_QUANTIZE_CACHE_DIR)",
				slog.String("error", q.cacheErr.Error()))
		})
		out, rep, err := quantize.Int8(src, quantize.Options{})
		return quantize.Result{ONNX: out, Report: rep, Outcome: quantize.Unstored}, err
	}
	return q.cache.Int8(src)
}

// agreement compares a float32 and an int8 token classifier on a sample.
type agreement struct {
	Texts         int     `json:"texts"`
	FloatEntities int     `json:"float_entities"`
	Int8Entities  int     `json:"int8_entities"`
	Matched       int     `json:"matched"` // entities both found with the same label, start and end
	Agreement     float64 `json:"agreement"`
	MaxLogitDiff  float64 `json:"max_logit_diff"`
	// FloatTime and Int8Time are each model's time for the whole sample, one text at a time.
	FloatTime time.Duration `json:"float_time_ns"`
	Int8Time  time.Duration `json:"int8_time_ns"`
}

// gate measures the rewrite on the built-in sample, or reads the measurement kept beside the
// cache entry (keyed by the sample, so a changed sample measures again).
func (q *quantizer) gate(ctx context.Context, m *models.Model, res quantize.Result) (agreement, error) {
	sum := sha256.Sum256([]byte(strings.Join(agreementSample, "\n")))
	key := hex.EncodeToString(sum[:])
	type kept struct {
		Sample    string    `json:"sample_sha256"`
		Agreement agreement `json:"agreement"`
	}
	path := ""
	if res.Path != "" {
		path = res.Path + ".agreement.json"
		if data, err := os.ReadFile(path); err == nil && res.Outcome == quantize.Cached {
			var k kept
			if json.Unmarshal(data, &k) == nil && k.Sample == key {
				return k.Agreement, nil
			}
		}
	}
	a, err := measureAgreement(ctx, q.rt, m, m.ONNX, res.ONNX, q.extract, agreementSample)
	if err != nil {
		return agreement{}, fmt.Errorf("model %q: measuring the int8 rewrite: %w", m.Name, err)
	}
	if path != "" {
		if data, err := json.Marshal(kept{Sample: key, Agreement: a}); err == nil {
			_ = os.WriteFile(path, data, 0o644) // a lost note only means measuring again
		}
	}
	return a, nil
}

// measureAgreement runs both graphs over texts as /analyze would (simple aggregation, score
// 0.5 or more) and counts the entities they agree on exactly; agreement is the F1 of the
// int8 entities against the float32 ones (1 when neither finds any). It also runs each text's
// first window through both sessions directly for the largest logit difference.
func measureAgreement(ctx context.Context, rt *engine.Runtime, m *models.Model, floatONNX, int8ONNX []byte,
	ext extract.Config, texts []string) (agreement, error) {
	type side struct {
		sess *engine.Session
		cls  *extract.Classifier
		ents [][]entities.Entity
		took time.Duration
	}
	sides := make([]*side, 2)
	for i, graph := range [][]byte{floatONNX, int8ONNX} {
		sess, err := rt.NewSession(m.Name, graph)
		if err != nil {
			return agreement{}, err
		}
		defer sess.Close()
		cls, err := extract.New(fmt.Sprintf("agreement-%d", i), m, sess, ext, clock.Real(), nil)
		if err != nil {
			return agreement{}, err
		}
		work, stop := context.WithCancel(ctx)
		defer stop()
		cls.Start(work)
		defer cls.Close(context.Background())
		sides[i] = &side{sess: sess, cls: cls}
	}
	opts := entities.AnalyzeOptions()
	opts.ConfidenceThreshold = 0.5
	for _, s := range sides {
		if _, _, err := s.cls.Extract(ctx, admission.Interactive, texts[0], opts); err != nil { // warm, untimed
			return agreement{}, err
		}
		start := time.Now()
		for _, text := range texts {
			ents, _, err := s.cls.Extract(ctx, admission.Interactive, text, opts)
			if err != nil {
				return agreement{}, err
			}
			s.ents = append(s.ents, ents)
		}
		s.took = time.Since(start)
	}
	a := agreement{Texts: len(texts), FloatTime: sides[0].took, Int8Time: sides[1].took}
	type key struct {
		label      string
		start, end int
	}
	for i := range texts {
		found := map[key]bool{}
		for _, e := range sides[0].ents[i] {
			found[key{e.Label, e.Start, e.End}] = true
		}
		for _, e := range sides[1].ents[i] {
			if found[key{e.Label, e.Start, e.End}] {
				a.Matched++
			}
		}
		a.FloatEntities += len(sides[0].ents[i])
		a.Int8Entities += len(sides[1].ents[i])
	}
	a.Agreement = 1
	if n := a.FloatEntities + a.Int8Entities; n > 0 {
		a.Agreement = 2 * float64(a.Matched) / float64(n)
	}
	for _, text := range texts {
		enc := m.Tokenizer.Encode(text, true)
		ids := enc.IDs
		if len(ids) > m.Config.MaxLength {
			ids = ids[:m.Config.MaxLength]
		}
		mask := make([]int64, len(ids))
		for i := range mask {
			mask[i] = 1
		}
		b := engine.EncoderBatch{IDs: ids, Mask: mask, Batch: 1, SeqLen: len(ids)}
		fl, err := sides[0].sess.RunEncoder(ctx, b)
		if err != nil {
			return agreement{}, err
		}
		ql, err := sides[1].sess.RunEncoder(ctx, b)
		if err != nil {
			return agreement{}, err
		}
		for i, v := range fl.Data {
			a.MaxLogitDiff = max(a.MaxLogitDiff, math.Abs(float64(v-ql.Data[i])))
		}
	}
	return a, nil
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
