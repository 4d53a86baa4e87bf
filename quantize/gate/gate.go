// Package gate decides whether an int8 rewrite (package quantize) answers as its float32 model
// does: it runs both graphs on a built-in sample of clinical text (Sample) and compares what
// a server would answer. A token classifier is compared by its entities (F1 of label and
// span), or by its tokens' best labels when the float32 model finds too few entities on the
// sample; a decoder by its most likely next token at every position. Check keeps the figures
// beside the cached rewrite, keyed by everything they depend on, this machine's int8 kernels
// (its CPU features) included, so that a restart reads them instead of measuring again.
//
// The threshold, the setting that asks for int8 and what to do with a rewrite that falls
// under it are the server's (cmd/serve); this package only measures.
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
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

// Version changes whenever what the gate measures does, so kept figures are measured again.
const Version = 2

// MinEntities is how many entities the float32 model must find on a sample for entity
// agreement to be the measure; below it (a model for another language, labels the sample
// never shows) the gate compares every token's label instead, which always has something to
// compare.
const MinEntities = 20

// Measures the gate can take.
const (
	ByEntities    = "entities"     // F1 of the int8 entities against the float32 ones (label and span)
	ByTokenLabels = "token_labels" // share of tokens labelled other than O by either graph whose best label is the same
	ByNothing     = "nothing"      // neither graph labels a token other than O: nothing to compare
	ByNextTokens  = "next_tokens"  // generation: share of positions whose most likely next token is the same
)

// agreement compares a float32 model and its int8 rewrite on a sample.
type Agreement struct {
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
	// Kept says the figures were read from the cache, not measured this time.
	Kept bool `json:"-"`
}

func (a Agreement) String() string {
	switch a.Measure {
	case ByEntities:
		return fmt.Sprintf("float32 finds %d entities, int8 %d, %d with the same label and span: agreement %.4f (entity F1)",
			a.FloatEntities, a.Int8Entities, a.Matched, a.Agreement)
	case ByTokenLabels:
		return fmt.Sprintf("float32 finds %d entities, under the %d entity agreement needs; %d of the %d tokens either labels other than O have the same best label: agreement %.4f",
			a.FloatEntities, MinEntities, a.SameTokens, a.Tokens, a.Agreement)
	case ByNothing:
		return "neither graph labels a token of the sample other than O: nothing to compare (agreement 1)"
	}
	return fmt.Sprintf("%d of %d positions have the same most likely next token: agreement %.4f", a.SameTokens, a.Tokens, a.Agreement)
}

// Check measures the rewrite res of m on the built-in Sample, or reads the measurement kept beside the
// cache entry when it was taken on the same sample, rewritten graph, model files and window
// settings (a changed config.json, tokenizer or stride measures again).
func Check(ctx context.Context, rt *engine.Runtime, m *models.Model, res quantize.Result, ext extract.Config) (Agreement, error) {
	h := sha256.New()
	// The machine and ONNX Runtime's version are part of the key: int8 kernels differ by CPU
	// (VNNI or not) and by release, so a figure measured where a cache was filled does not
	// stand for another host or another image.
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%d\x00%s/%v/%v/%v\x00%s\x00", quantize.Version, Version, res.SHA256, m.Digest, ext.Stride,
		runtime.GOARCH, cpu.X86.HasAVX2, cpu.X86.HasAVX512VNNI, cpu.X86.HasAVXVNNI, rt.Version())
	for _, text := range Sample {
		fmt.Fprintf(h, "%d:%s", len(text), text)
	}
	key := hex.EncodeToString(h.Sum(nil))
	type kept struct {
		Key       string    `json:"key"`
		Agreement Agreement `json:"agreement"`
	}
	path := ""
	if res.Path != "" && res.SHA256 != "" {
		path = res.Path + ".agreement.json"
		if data, err := os.ReadFile(path); err == nil {
			var k kept
			if json.Unmarshal(data, &k) == nil && k.Key == key {
				k.Agreement.Kept = true
				return k.Agreement, nil
			}
		}
	}
	a, err := Measure(ctx, rt, m, res.ONNX, ext, Sample)
	if err != nil {
		return Agreement{}, fmt.Errorf("model %q: measuring the int8 rewrite: %w", m.Name, err)
	}
	if path != "" {
		if data, err := json.Marshal(kept{Key: key, Agreement: a}); err == nil {
			_ = os.WriteFile(path, data, 0o644) // a lost note only means measuring again
		}
	}
	return a, nil
}

// Measure compares m's own graph with its int8 rewrite on texts, by the measure that fits
// the model: entities (or token labels) for a token classifier, next tokens for a decoder.
func Measure(ctx context.Context, rt *engine.Runtime, m *models.Model, int8ONNX []byte, ext extract.Config,
	texts []string) (Agreement, error) {
	if len(m.Config.Labels) > 0 {
		return measureAgreement(ctx, rt, m, m.ONNX, int8ONNX, ext, texts)
	}
	return measureNextTokens(ctx, rt, m, m.ONNX, int8ONNX, texts)
}

// measureAgreement runs both graphs over texts as /analyze would (simple aggregation, score
// 0.5 or more) and compares the entities exactly: agreement is the F1 of the int8 entities
// against the float32 ones. It also runs each text's first window through both sessions
// directly, for the largest logit difference and the tokens' best labels, which are the
// measure when float32 finds fewer than MinEntities entities.
func measureAgreement(ctx context.Context, rt *engine.Runtime, m *models.Model, floatONNX, int8ONNX []byte,
	ext extract.Config, texts []string) (Agreement, error) {
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
			return Agreement{}, err
		}
		defer sess.Close()
		cls, err := extract.New(fmt.Sprintf("agreement-%d", i), m, sess, ext, clock.Real(), nil)
		if err != nil {
			return Agreement{}, err
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
			return Agreement{}, err
		}
		start := time.Now()
		for _, text := range texts {
			ents, _, err := s.cls.Extract(ctx, admission.Interactive, text, opts)
			if err != nil {
				return Agreement{}, err
			}
			s.ents = append(s.ents, ents)
		}
		s.took = time.Since(start)
	}
	a := Agreement{Texts: len(texts), FloatTime: sides[0].took, Int8Time: sides[1].took}
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
			return Agreement{}, err
		}
		ql, err := sides[1].sess.RunEncoder(ctx, b)
		if err != nil {
			return Agreement{}, err
		}
		a.compareRows(fl.Data, ql.Data, labels, slices.Index(m.Config.Labels, "O"))
	}
	switch n := a.FloatEntities + a.Int8Entities; {
	case a.FloatEntities >= MinEntities:
		a.Measure, a.Agreement = ByEntities, 2*float64(a.Matched)/float64(n)
	case a.Tokens > 0:
		a.Measure, a.Agreement = ByTokenLabels, float64(a.SameTokens)/float64(a.Tokens)
	default:
		a.Measure, a.Agreement = ByNothing, 1
	}
	return a, nil
}

// compareRows compares two [rows, width] score arrays row by row: the largest difference and
// how many rows have the same best entry, counting only rows where either best entry is other
// than skip (the O label; -1 counts every row). A NaN is a disagreement, never a match.
func (a *Agreement) compareRows(f, q []float32, width, skip int) {
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
	texts []string) (Agreement, error) {
	c := m.Config
	hint := engine.DecoderShape{Layers: c.NumLayers, Heads: c.NumKVHeads, HeadDim: c.HeadDim, Vocab: c.VocabSize}
	decs := make([]*engine.Decoder, 2)
	for i, graph := range [][]byte{floatONNX, int8ONNX} {
		d, err := rt.NewDecoder(m.Name, graph, hint)
		if err != nil {
			return Agreement{}, err
		}
		defer d.Close()
		decs[i] = d
	}
	sh := decs[0].Shape()
	a := Agreement{Texts: len(texts), Measure: ByNextTokens}
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
				return Agreement{}, err
			}
			logits[i] = st.Logits
		}
		a.compareRows(logits[0], logits[1], sh.Vocab, -1)
	}
	a.Agreement = float64(a.SameTokens) / float64(max(a.Tokens, 1))
	return a, nil
}
