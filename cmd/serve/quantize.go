package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/quantize"
	"github.com/sluice-serving/sluice/quantize/gate"
)

// defaultMinAgreement is SLUICE_QUANTIZE_MIN_AGREEMENT's default; a lower setting is logged
// as a warning at every start that serves an int8 model.
const defaultMinAgreement = 0.99

// quantizePlan is SLUICE_QUANTIZE read: a mode for every model, and modes per model name.
type quantizePlan struct {
	all  string
	each map[string]string
}

// parseQuantize reads SLUICE_QUANTIZE, with every problem in its error. A mode given twice,
// for a model or for every model, is one: the last would win without a word.
func parseQuantize(v string) (quantizePlan, error) {
	p := quantizePlan{each: map[string]string{}}
	var problems []string
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
			problems = append(problems, fmt.Sprintf("takes int8, off, or name=int8|off pairs separated by commas (got %q)", part))
			continue
		}
		switch name = strings.TrimSpace(name); {
		case named && name == "":
			problems = append(problems, fmt.Sprintf("has a mode without a model name (%q)", part))
		case named:
			if first, twice := p.each[name]; twice {
				problems = append(problems, fmt.Sprintf("sets %s's mode more than once (%s, then %s)", name, first, mode))
			}
			p.each[name] = mode
		default:
			if p.all != "" {
				problems = append(problems, fmt.Sprintf("sets every model's mode more than once (%s, then %s)", p.all, mode))
			}
			p.all = mode
		}
	}
	if len(problems) > 0 {
		return p, errors.New(strings.Join(problems, "; "))
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
	clock        clock.Clock

	once     sync.Once
	cache    *quantize.Cache // nil when no directory could be had
	cacheErr error
	// One warning each per process, however many models are prepared.
	noCacheWarning, thresholdWarning sync.Once
	// skipGate is for check-model, which measures the rewrite itself and reports it.
	skipGate bool
}

// newQuantizer reads the settings. Asking for int8 on CUDA is refused here, at start-up: the
// int8 kernels are the CPU's, and a GPU serves fp16 exports instead.
func newQuantizer(cfg Config, rt *engine.Runtime, logger *slog.Logger, clk clock.Clock) (*quantizer, error) {
	plan, err := parseQuantize(cfg.Quantize)
	if err != nil {
		return nil, fmt.Errorf("SLUICE_QUANTIZE %v", err)
	}
	if err := quantizeOnDevice(plan, rt.Device()); err != nil {
		return nil, err
	}
	var unknown []string
	for name := range plan.each {
		if name == cfg.AnalyzeModel || name == cfg.PIIModel || name == cfg.GenerateModel {
			continue
		}
		if cfg.ModelsDir == "" {
			unknown = append(unknown, name)
		} else if _, err := os.Stat(filepath.Join(cfg.ModelsDir, name, "model.onnx")); err != nil {
			logger.Warn("SLUICE_QUANTIZE names a model SLUICE_MODELS_DIR does not hold; the setting waits for one of that name",
				slog.String("model", name))
		}
	}
	if len(unknown) > 0 {
		// Only the configured models can be served, so such a name is a typo that would
		// otherwise leave its model as its config.json has it.
		slices.Sort(unknown)
		return nil, fmt.Errorf("SLUICE_QUANTIZE names %s, which this server does not serve (%s, %s, %s)",
			strings.Join(unknown, ", "), cfg.AnalyzeModel, cfg.PIIModel, cfg.GenerateModel)
	}
	return &quantizer{plan: plan, onGPU: rt.Device() == engine.DeviceCUDA, cacheDir: cfg.QuantizeCacheDir, minAgreement: cfg.QuantizeMinAgreement, clock: clk,
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

// prepare replaces m.ONNX with its int8 rewrite when the model is to run in int8, after
// checking the rewrite against the float32 model on the built-in sample: a token classifier's
// entities (or its tokens' labels), a generation model's next tokens.
func (q *quantizer) prepare(ctx context.Context, m *models.Model) (int8 bool, err error) {
	if q == nil {
		return false, nil
	}
	mode, chosen := q.plan.modeFor(m.Name, m.Config.Quantize)
	if mode != "int8" {
		return false, nil
	}
	if q.onGPU {
		// Only a model's own config.json can ask for int8 here (the variable is refused at
		// start): it is a CPU setting, so the GPU serves the float32 graph.
		q.logger.Info("model asks for int8 in its config.json; int8 is for the CPU, so it runs in float32 on CUDA",
			slog.String("model", m.Name))
		return false, nil
	}
	source := "config.json"
	if chosen {
		source = "SLUICE_QUANTIZE"
	}
	start := time.Now()
	res, err := q.rewrite(m.Name, m.ONNX)
	if err != nil {
		return false, fmt.Errorf("model %q: int8: %w", m.Name, err)
	}
	attrs := []any{slog.String("model", m.Name), slog.String("asked_by", source), slog.String("outcome", string(res.Outcome)),
		slog.String("rewrite", res.Report.String()), slog.Int64("took_ms", time.Since(start).Milliseconds())}
	if res.Why != nil {
		attrs = append(attrs, slog.String("why", res.Why.Error()))
	}
	if res.Report.Quantized == 0 {
		q.logger.Warn("int8 asked for, but no product in the graph qualifies; the model runs as it is", attrs...)
		return false, nil
	}
	if !q.skipGate {
		a, err := gate.Check(ctx, q.rt, m, res, q.extract)
		if err != nil {
			return false, err
		}
		attrs = append(attrs, slog.String("measure", a.Measure), slog.Bool("measured_now", !a.Kept), slog.Float64("agreement", round4(a.Agreement)),
			slog.Float64("min_agreement", q.minAgreement), slog.Float64("max_logit_diff", round4(a.MaxLogitDiff)))
		if a.Agreement < q.minAgreement {
			if !chosen {
				// The model asked for int8 and this machine does not keep its answers: the
				// float32 graph serves, and the log says why.
				q.logger.Warn("int8 asked for by the model's config.json falls under SLUICE_QUANTIZE_MIN_AGREEMENT here; the model runs in float32",
					append(attrs, slog.String("figures", a.String()))...)
				return false, nil
			}
			return false, fmt.Errorf("model %q: its int8 rewrite on the built-in sample: %v, under SLUICE_QUANTIZE_MIN_AGREEMENT %.4f: "+
				"serve it in float32 (SLUICE_QUANTIZE=%s=off) or lower the threshold", m.Name, a, q.minAgreement, m.Name)
		}
		if a.Measure == gate.ByNothing {
			q.logger.Warn("the int8 gate had nothing to compare: neither graph finds an entity or a label other than O on the built-in sample",
				slog.String("model", m.Name))
		}
		if q.minAgreement < defaultMinAgreement {
			q.thresholdWarning.Do(func() {
				q.logger.Warn("SLUICE_QUANTIZE_MIN_AGREEMENT is below its default: int8 models are served further from their float32 answers",
					slog.Float64("min_agreement", q.minAgreement), slog.Float64("default", defaultMinAgreement))
			})
		}
	}
	m.ONNX = res.ONNX
	q.logger.Info("model runs with int8 matrix products", attrs...)
	return true, nil
}

// rewrite answers from the cache when there is one; without a directory it rewrites at every
// start and says so once.
func (q *quantizer) rewrite(model string, src []byte) (quantize.Result, error) {
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
		q.cache, q.cacheErr = quantize.NewCache(dir, quantize.ForCPU())
		if q.cache != nil {
			// A rewrite takes seconds: an hour-old temporary file is a killed process's.
			if n := q.cache.RemoveAbandoned(q.clock.Now().Add(-time.Hour)); n > 0 {
				q.logger.Info("removed int8 cache files no process reads: a killed write's temporary files, an older release's entries", slog.Int("files", n))
			}
		}
	})
	if q.cache == nil {
		if q.cacheDir != "" {
			return quantize.Result{}, fmt.Errorf("SLUICE_QUANTIZE_CACHE_DIR: %w", q.cacheErr)
		}
		q.noCacheWarning.Do(func() {
			q.logger.Warn("no cache directory for int8 rewrites; each start rewrites again (set SLUICE_QUANTIZE_CACHE_DIR)",
				slog.String("error", q.cacheErr.Error()))
		})
		out, rep, err := quantize.Int8(src, quantize.ForCPU())
		return quantize.Result{ONNX: out, Report: rep, Outcome: quantize.Unstored}, err
	}
	return q.cache.Int8(model, src)
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
