package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/embed"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/quantize"
	"github.com/sluice-serving/sluice/quantize/gate"
)

// checkSample is the text a token classifier is tried on: invented, so that the report can
// show what came out without showing anybody's data.
const checkSample = "Maria Lopez, 58, was seen at Mercy Hospital on 03/14/2024 for chest pain and " +
	"started metoprolol 25 mg; call (415) 555-0132."

// checkModel is `sluice check-model DIR`: it loads a model directory the way the server
// would (configuration, tokenizer, ONNX graph on the CPU, warm-up at the largest batch), runs
// one sample, and reports what it found and every problem. It returns 0 when the server would
// serve the model and 1 when it would refuse it (2 for a usage error).
func checkModel(args, environ []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("check-model", flag.ContinueOnError)
	flags.SetOutput(stderr)
	quant := flags.String("quantize", "", "also rewrite the model to `int8` and compare it with the float32 model")
	sample := flags.String("sample", "", "with -quantize: a `file` of texts to compare on, one per line, or JSON lines {\"text\": ...} when it ends in .jsonl (default: the built-in sample)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: sluice check-model [-quantize int8 [-sample FILE]] DIR\n\nLoads the model directory DIR (config.json, tokenizer.json, model.onnx) as the server would,\nruns a sample through it and reports every problem; exits 1 if the server would refuse it.\nWith -quantize int8 it also rewrites the model as SLUICE_QUANTIZE=int8 would and reports\nentity agreement with the float32 model, the largest logit difference and the speed-up.")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil || flags.NArg() != 1 || (*quant != "" && *quant != "int8") || (*sample != "" && *quant == "") {
		if err == nil {
			flags.Usage()
		}
		return 2
	}
	dir := filepath.Clean(flags.Arg(0))
	r := &checkReport{w: stdout}
	r.line("model directory: %s", dir)
	m, err := models.Load(os.DirFS(filepath.Dir(dir)), filepath.Base(dir))
	if err != nil {
		r.problem("%v", err)
		return r.done()
	}
	r.line("model type: %s %v", m.Config.ModelType, m.Config.Architectures)
	r.line("tokenizer: %s, %d entries", tokenizerFamily(dir), m.Tokenizer.VocabSize())
	r.line("max length: %d tokens (max_position_embeddings %d, tokenizer_config.json's model_max_length where smaller)",
		m.Config.MaxLength, m.Config.MaxPositionEmbeddings)
	if p := m.Tokenizer.SubwordPrefix(); p != "" {
		r.line("word boundaries: the tokenizer's words (continuation pieces spelled %q)", p)
	} else {
		r.line("word boundaries: guessed from spaces, as HF's pipeline does for tokenizers without a subword prefix")
	}
	if v := m.Config.VocabSize; v > 0 && m.Tokenizer.MaxID() >= int64(v) {
		r.line("note: tokenizer.json gives ids up to %d but config.json's vocab_size is %d: where the graph has no rows for them "+
			"(run through it at warm-up) the server reads them as the unknown token, and refuses a generation prompt holding one",
			m.Tokenizer.MaxID(), v)
	}

	cfg, err := loadConfig(environ, thisMachine())
	if err != nil {
		r.problem("%v", err)
		return r.done()
	}
	rtOpts := cfg.runtime()
	rtOpts.Device, rtOpts.Logger = engine.DeviceCPU, slog.New(slog.DiscardHandler)
	if rtOpts.LibraryPath == "" {
		rtOpts.LibraryPath = engine.LibraryPath()
	}
	rt, err := engine.NewRuntime(rtOpts)
	if err != nil {
		r.problem("%v", err)
		return r.done()
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	switch {
	case m.Sentence != nil:
		r.checkEmbedder(ctx, rt, m, cfg)
		return r.done()
	case m.IsCrossEncoder():
		r.checkReranker(ctx, rt, m, cfg)
		return r.done()
	case len(m.Config.Labels) > 0:
		r.checkClassifier(ctx, rt, m, cfg)
	default:
		r.checkGenerator(ctx, rt, m, cfg, dir, nil)
	}
	// The server would rewrite the model when SLUICE_QUANTIZE or its config.json says int8,
	// so the check does too, without being asked.
	plan, _ := parseQuantize(cfg.Quantize)
	if mode, chosen := plan.modeFor(m.Name, m.Config.Quantize); (*quant == "int8" || mode == "int8") && r.problems == 0 {
		if *quant == "" {
			by := "its config.json"
			if chosen {
				by = "SLUICE_QUANTIZE"
			}
			r.line("int8: asked for by %s, so checked as the server would serve it", by)
		}
		r.checkInt8(ctx, rt, m, cfg, dir, *sample)
	}
	return r.done()
}

type checkReport struct {
	w        io.Writer
	problems int
}

func (r *checkReport) line(format string, args ...any) { fmt.Fprintf(r.w, format+"\n", args...) }

func (r *checkReport) problem(format string, args ...any) {
	r.problems++
	fmt.Fprintf(r.w, "PROBLEM: "+format+"\n", args...)
}

func (r *checkReport) done() int {
	if r.problems > 0 {
		r.line("result: %d problem(s); the server would not serve this model", r.problems)
		return 1
	}
	r.line("result: ok; the server would serve this model")
	return 0
}

// checkEmbedder runs a sentence embedder as /v1/embeddings would, on the sample and on the
// sample's first half: their vectors must have the model's dimension and, normalised, unit
// length.
func (r *checkReport) checkEmbedder(ctx context.Context, rt *engine.Runtime, m *models.Model, cfg Config) {
	r.line("kind: sentence embedding, %s pooling, %d dimensions, normalised: %v", m.Sentence.Pooling, m.Sentence.Dimension, m.Sentence.Normalize)
	sess, err := rt.NewSession(m.Name, m.ONNX)
	if err != nil {
		r.problem("%v", err)
		return
	}
	e, err := embed.NewEmbedder("check", m, sess, cfg.extract().Batch, clock.Real(), nil)
	if err != nil {
		r.problem("%v", err)
		return
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	e.Start(work)
	defer func() { _ = e.Close(ctx) }()
	vecs, tokens, err := e.Embed(ctx, admission.Interactive, []string{checkSample, checkSample[:len(checkSample)/2]}, true, true)
	if err != nil {
		r.problem("the sample did not embed: %v", err)
		return
	}
	var dot float64
	for k := range vecs[0] {
		dot += float64(vecs[0][k]) * float64(vecs[1][k])
	}
	r.line("sample: %d tokens, %d-dimensional vectors; the sample and its first half at cosine %.3f", tokens, len(vecs[0]), dot)
	if len(vecs[0]) != m.Sentence.Dimension {
		r.problem("the vectors have %d dimensions, the Pooling module says %d", len(vecs[0]), m.Sentence.Dimension)
	}
}

// checkReranker runs a cross-encoder as /rerank would, on the sample against itself and
// against an unrelated line.
func (r *checkReport) checkReranker(ctx context.Context, rt *engine.Runtime, m *models.Model, cfg Config) {
	r.line("kind: cross-encoder (reranking), one score a pair")
	sess, err := rt.NewSession(m.Name, m.ONNX)
	if err != nil {
		r.problem("%v", err)
		return
	}
	rr, err := embed.NewReranker("check", m, sess, cfg.extract().Batch, clock.Real(), nil)
	if err != nil {
		r.problem("%v", err)
		return
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	rr.Start(work)
	defer func() { _ = rr.Close(ctx) }()
	scores, tokens, err := rr.Score(ctx, admission.Interactive, checkSample, []string{checkSample, "The weather was mild."}, true)
	if err != nil {
		r.problem("the sample did not score: %v", err)
		return
	}
	r.line("sample: %d tokens; scores: the sample against itself %.3f, against an unrelated line %.3f", tokens, scores[0], scores[1])
}

// checkClassifier runs a token classifier as /analyze or /pii/extract would.
func (r *checkReport) checkClassifier(ctx context.Context, rt *engine.Runtime, m *models.Model, cfg Config) {
	r.line("kind: token classification, %d labels: %s", len(m.Config.Labels), strings.Join(m.Config.Labels, " "))
	sess, err := rt.NewSession(m.Name, m.ONNX)
	if err != nil {
		r.problem("%v", err)
		return
	}
	r.line("inputs: %s", describeTensors(sess.Inputs()))
	r.line("outputs: %s", describeTensors(sess.Outputs()))
	cls, err := extract.New("check", m, sess, cfg.extract(), clock.Real(), nil)
	if err != nil {
		r.problem("%v", err)
		return
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	cls.Start(work)
	defer cls.Close(context.Background())
	if err := cls.Warm(ctx); err != nil {
		r.problem("warm-up at the largest batch: %v", err)
		return
	}
	opts := entities.AnalyzeOptions()
	opts.ConfidenceThreshold = 0.5
	ents, st, err := cls.Extract(ctx, admission.Interactive, checkSample, opts)
	if err != nil {
		r.problem("sample extraction: %v", err)
		return
	}
	r.line("sample: %q", checkSample)
	r.line("sample result: %d tokens, %d entities at score 0.5 or more", st.Tokens, len(ents))
	for _, e := range ents {
		r.line("  %-24s %-28q %.2f", e.Label, checkSample[e.Start:e.End], e.Score)
	}
}

// checkGenerator builds the generation model's scheduler as the server does and generates a few
// tokens from a fixed prompt.
// With quant, the model is rewritten as the server would (quant.prepare) before it is built.
func (r *checkReport) checkGenerator(ctx context.Context, rt *engine.Runtime, m *models.Model, cfg Config, dir string, quant *quantizer) {
	if m.Config.NumLayers == 0 {
		r.problem("config.json has neither id2label (a token classifier) nor the layer counts of a decoder")
		return
	}
	r.line("kind: text generation, %d layers, %d heads of %d (%d key/value heads)", m.Config.NumLayers, m.Config.NumHeads,
		m.Config.HeadDim, m.Config.NumKVHeads)
	cfg.ModelsDir, cfg.GenerateModel = filepath.Dir(dir), filepath.Base(dir)
	s := &server{cfg: cfg, logger: slog.New(slog.DiscardHandler), runtime: rt, quant: quant}
	if _, err := s.generation(ctx, cfg, prometheus.NewRegistry(), admission.NewMetrics(nil), clock.Real()); err != nil {
		r.problem("%v", err)
		return
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	s.sched.Start(work)
	defer s.sched.Close(context.Background())
	if err := s.warmGeneration(ctx); err != nil {
		r.problem("%v", err)
		return
	}
	r.line("sample result: generated from a fixed prompt")
}

// tokenizerFamily reads the model type of tokenizer.json, for the report only.
func tokenizerFamily(dir string) string {
	data, err := fs.ReadFile(os.DirFS(dir), "tokenizer.json")
	if err != nil {
		return "?"
	}
	var tj struct {
		Model struct{ Type string } `json:"model"`
	}
	if json.Unmarshal(data, &tj) != nil || tj.Model.Type == "" {
		return "?"
	}
	return tj.Model.Type
}

func describeTensors(ts []engine.TensorInfo) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %v %v", t.Name, t.Type, t.Shape)
	}
	return strings.Join(parts, ", ")
}

// checkInt8 rewrites the model as SLUICE_QUANTIZE=int8 would and compares it with the float32
// model on the sample: a token classifier's entities (or token labels), a generation model's
// next tokens, the largest logit difference and (classifiers) the time each took, judged
// against SLUICE_QUANTIZE_MIN_AGREEMENT. A generation model is then built and run on its int8
// graph through the server's own path.
func (r *checkReport) checkInt8(ctx context.Context, rt *engine.Runtime, m *models.Model, cfg Config, dir, sampleFile string) {
	if rt.Device() == engine.DeviceCUDA {
		r.problem("int8 runs on the CPU only")
		return
	}
	out, rep, err := quantize.Int8(m.ONNX, quantize.ForCPU())
	if err != nil {
		r.problem("int8 rewrite: %v", err)
		return
	}
	r.line("int8 rewrite: %v; graph %.1f MB to %.1f MB", rep, float64(len(m.ONNX))/1e6, float64(len(out))/1e6)
	if rep.Quantized == 0 {
		r.line("int8: nothing to rewrite; the server would run this model as it is")
		return
	}
	texts, from := gate.Sample, "the built-in sample"
	if sampleFile != "" {
		data, err := os.ReadFile(sampleFile)
		if err != nil {
			r.problem("sample: %v", err)
			return
		}
		texts, from = nil, sampleFile
		for n, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			if strings.HasSuffix(sampleFile, ".jsonl") {
				var row struct {
					Text *string `json:"text"`
				}
				if err := json.Unmarshal([]byte(line), &row); err != nil || row.Text == nil {
					r.problem("sample %s line %d: not a JSON object with a \"text\" string", sampleFile, n+1)
					return
				}
				line = *row.Text
			}
			texts = append(texts, line)
		}
		if len(texts) == 0 {
			r.problem("sample %s holds no text", sampleFile)
			return
		}
	}
	a, err := gate.Measure(ctx, rt, m, out, cfg.extract(), texts)
	if err != nil {
		r.problem("int8 comparison: %v", err)
		return
	}
	r.line("int8 sample: %s, %d texts", from, a.Texts)
	r.line("int8 agreement: %v", a)
	r.line("int8 largest logit difference: %.4f", a.MaxLogitDiff)
	if a.Int8Time > 0 {
		r.line("int8 speed on the sample, one text at a time: float32 %v, int8 %v (%.2fx)",
			a.FloatTime.Round(time.Millisecond), a.Int8Time.Round(time.Millisecond), a.FloatTime.Seconds()/a.Int8Time.Seconds())
	}
	if a.Agreement < cfg.QuantizeMinAgreement {
		r.problem("int8 agreement %.4f is under SLUICE_QUANTIZE_MIN_AGREEMENT %.4f: the server would refuse to serve it in int8",
			a.Agreement, cfg.QuantizeMinAgreement)
		return
	}
	if cfg.QuantizeMinAgreement < defaultMinAgreement {
		r.line("WARNING: SLUICE_QUANTIZE_MIN_AGREEMENT is %.4f, below its default %.2f", cfg.QuantizeMinAgreement, defaultMinAgreement)
	}
	r.line("int8 verdict: agreement %.4f meets SLUICE_QUANTIZE_MIN_AGREEMENT %.4f", a.Agreement, cfg.QuantizeMinAgreement)
	if len(m.Config.Labels) == 0 {
		cache, err := os.MkdirTemp("", "sluice-check-int8-")
		if err != nil {
			r.problem("%v", err)
			return
		}
		defer os.RemoveAll(cache)
		q := &quantizer{plan: quantizePlan{all: "int8"}, cacheDir: cache, rt: rt, logger: slog.New(slog.DiscardHandler), skipGate: true, clock: clock.Real()}
		before := r.problems
		r.checkGenerator(ctx, rt, m, cfg, dir, q)
		if r.problems == before {
			r.line("int8 generation: the rewritten graph built and generated through the server's path")
		}
	}
}
