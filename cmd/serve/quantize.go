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
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/cpu"

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
	// skipGate is for check-model, which measures the rewrite itself and reports it.
	skipGate bool
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
	res, err := q.rewrite(m.ONNX)
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
		a, err := q.gate(ctx, m, res)
		if err != nil {
			return false, err
		}
		attrs = append(attrs, slog.String("measure", a.Measure), slog.Bool("measured_now", !a.kept), slog.Float64("agreement", round4(a.Agreement)),
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
		if a.Measure == byNothing {
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

// gateVersion changes whenever what the gate measures does, so kept figures are measured again.
const gateVersion = 2

// minEntities is how many entities the float32 model must find on a sample for entity
// agreement to be the measure; below it (a model for another language, labels the sample
// never shows) the gate compares every token's label instead, which always has something to
// compare.
const minEntities = 20

// Measures the gate can take.
const (
	byEntities    = "entities"     // F1 of the int8 entities against the float32 ones (label and span)
	byTokenLabels = "token_labels" // share of tokens labelled other than O by either graph whose best label is the same
	byNothing     = "nothing"      // neither graph labels a token other than O: nothing to compare
	byNextTokens  = "next_tokens"  // generation: share of positions whose most likely next token is the same
)

// agreement compares a float32 model and its int8 rewrite on a sample.
type agreement struct {
	Texts         int     `json:"texts"`
	Measure       string  `json:"measure"`
	FloatEntities int     `json:"float_entities"`
	Int8Entities  int     `json:"int8_entities"`
	Matched       int     `json:"matched"` // entities both found with the same label, start and end
	Tokens        int     `json:"tokens"`
	SameTokens    int     `json:"same_tokens"` // tokens with the same best label (or next token)
	Agreement     float64 `json:"agreement"`
	MaxLogitDiff  float64 `json:"max_logit_diff"`
	// FloatTime and Int8Time are each model's time for the whole sample, one text at a time
	// (classifiers only).
	FloatTime time.Duration `json:"float_time_ns"`
	Int8Time  time.Duration `json:"int8_time_ns"`
	// kept says the figures were read from the cache, not measured this time.
	kept bool
}

func (a agreement) String() string {
	switch a.Measure {
	case byEntities:
		return fmt.Sprintf("float32 finds %d entities, int8 %d, %d with the same label and span: agreement %.4f (entity F1)",
			a.FloatEntities, a.Int8Entities, a.Matched, a.Agreement)
	case byTokenLabels:
		return fmt.Sprintf("float32 finds %d entities, under the %d entity agreement needs; %d of the %d tokens either labels other than O have the same best label: agreement %.4f",
			a.FloatEntities, minEntities, a.SameTokens, a.Tokens, a.Agreement)
	case byNothing:
		return "neither graph labels a token of the sample other than O: nothing to compare (agreement 1)"
	}
	return fmt.Sprintf("%d of %d positions have the same most likely next token: agreement %.4f", a.SameTokens, a.Tokens, a.Agreement)
}

// gate measures the rewrite on the built-in sample, or reads the measurement kept beside the
// cache entry when it was taken on the same sample, rewritten graph, model files and window
// settings (a changed config.json, tokenizer or stride measures again).
func (q *quantizer) gate(ctx context.Context, m *models.Model, res quantize.Result) (agreement, error) {
	h := sha256.New()
	// The machine is part of the key: int8 kernels differ by CPU (VNNI or not), so a figure
	// measured where a cache was filled does not stand for another host.
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%d\x00%s/%v/%v/%v\x00", quantize.Version, gateVersion, res.SHA256, m.Digest, q.extract.Stride,
		runtime.GOARCH, cpu.X86.HasAVX2, cpu.X86.HasAVX512VNNI, cpu.X86.HasAVXVNNI)
	for _, text := range agreementSample {
		fmt.Fprintf(h, "%d:%s", len(text), text)
	}
	key := hex.EncodeToString(h.Sum(nil))
	type kept struct {
		Key       string    `json:"key"`
		Agreement agreement `json:"agreement"`
	}
	path := ""
	if res.Path != "" && res.SHA256 != "" {
		path = res.Path + ".agreement.json"
		if data, err := os.ReadFile(path); err == nil {
			var k kept
			if json.Unmarshal(data, &k) == nil && k.Key == key {
				k.Agreement.kept = true
				return k.Agreement, nil
			}
		}
	}
	a, err := measureInt8(ctx, q.rt, m, res.ONNX, q.extract, agreementSample)
	if err != nil {
		return agreement{}, fmt.Errorf("model %q: measuring the int8 rewrite: %w", m.Name, err)
	}
	if path != "" {
		if data, err := json.Marshal(kept{Key: key, Agreement: a}); err == nil {
			_ = os.WriteFile(path, data, 0o644) // a lost note only means measuring again
		}
	}
	return a, nil
}

// measureInt8 compares m's own graph with its int8 rewrite on texts, by the measure that fits
// the model: entities (or token labels) for a token classifier, next tokens for a decoder.
func measureInt8(ctx context.Context, rt *engine.Runtime, m *models.Model, int8ONNX []byte, ext extract.Config,
	texts []string) (agreement, error) {
	if len(m.Config.Labels) > 0 {
		return measureAgreement(ctx, rt, m, m.ONNX, int8ONNX, ext, texts)
	}
	return measureNextTokens(ctx, rt, m, m.ONNX, int8ONNX, texts)
}

// measureAgreement runs both graphs over texts as /analyze would (simple aggregation, score
// 0.5 or more) and compares the entities exactly: agreement is the F1 of the int8 entities
// against the float32 ones. It also runs each text's first window through both sessions
// directly, for the largest logit difference and the tokens' best labels, which are the
// measure when float32 finds fewer than minEntities entities.
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
	labels := len(m.Config.Labels)
	for _, text := range texts {
		ids := m.Tokenizer.Encode(text, true).IDs
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
		a.compareRows(fl.Data, ql.Data, labels, slices.Index(m.Config.Labels, "O"))
	}
	switch n := a.FloatEntities + a.Int8Entities; {
	case a.FloatEntities >= minEntities:
		a.Measure, a.Agreement = byEntities, 2*float64(a.Matched)/float64(n)
	case a.Tokens > 0:
		a.Measure, a.Agreement = byTokenLabels, float64(a.SameTokens)/float64(a.Tokens)
	default:
		a.Measure, a.Agreement = byNothing, 1
	}
	return a, nil
}

// compareRows compares two [rows, width] score arrays row by row: the largest difference and
// how many rows have the same best entry, counting only rows where either best entry is other
// than skip (the O label; -1 counts every row). A NaN is a disagreement, never a match.
func (a *agreement) compareRows(f, q []float32, width, skip int) {
	for row := 0; row+width <= len(f) && row+width <= len(q); row += width {
		fr, qr := f[row:row+width], q[row:row+width]
		bf, bq := 0, 0
		nan := false
		for i := range fr {
			if math.IsNaN(float64(fr[i])) || math.IsNaN(float64(qr[i])) {
				nan = true
				continue
			}
			a.MaxLogitDiff = max(a.MaxLogitDiff, math.Abs(float64(fr[i]-qr[i])))
			if fr[i] > fr[bf] {
				bf = i
			}
			if qr[i] > qr[bq] {
				bq = i
			}
		}
		if !nan && skip >= 0 && bf == skip && bq == skip {
			continue
		}
		a.Tokens++
		if bf == bq && !nan {
			a.SameTokens++
		}
	}
}

// nextTokenWindow is how many tokens of each sample text a generation model's gate reads.
const nextTokenWindow = 48

// measureNextTokens runs each text's first nextTokenWindow tokens through both graphs as one
// prefill and compares, at every position, the most likely next token.
func measureNextTokens(ctx context.Context, rt *engine.Runtime, m *models.Model, floatONNX, int8ONNX []byte,
	texts []string) (agreement, error) {
	c := m.Config
	hint := engine.DecoderShape{Layers: c.NumLayers, Heads: c.NumKVHeads, HeadDim: c.HeadDim, Vocab: c.VocabSize}
	decs := make([]*engine.Decoder, 2)
	for i, graph := range [][]byte{floatONNX, int8ONNX} {
		d, err := rt.NewDecoder(m.Name, graph, hint)
		if err != nil {
			return agreement{}, err
		}
		defer d.Close()
		decs[i] = d
	}
	sh := decs[0].Shape()
	a := agreement{Texts: len(texts), Measure: byNextTokens}
	for _, text := range texts {
		ids := m.Tokenizer.Encode(text, true).IDs
		ids = ids[:min(len(ids), nextTokenWindow, max(c.MaxPositionEmbeddings, 1))]
		if len(ids) == 0 {
			continue
		}
		logits := make([][]float32, 2)
		for i, d := range decs {
			st := &engine.Step{Batch: 1, Seq: len(ids), IDs: ids, Mask: make([]int64, len(ids)), Positions: make([]int64, len(ids)),
				PastKV: make([][2][]float32, sh.Layers), Present: make([][2][]float32, sh.Layers),
				Logits: make([]float32, len(ids)*sh.Vocab)}
			for p := range ids {
				st.Mask[p], st.Positions[p] = 1, int64(p)
			}
			for l := range st.Present {
				st.Present[l] = [2][]float32{make([]float32, sh.Heads*len(ids)*sh.HeadDim), make([]float32, sh.Heads*len(ids)*sh.HeadDim)}
			}
			if err := d.RunStep(ctx, st); err != nil {
				return agreement{}, err
			}
			logits[i] = st.Logits
		}
		a.compareRows(logits[0], logits[1], sh.Vocab, -1)
	}
	a.Agreement = float64(a.SameTokens) / float64(max(a.Tokens, 1))
	return a, nil
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
