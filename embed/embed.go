package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/tokenizer"
)

// Errors that are the request's fault; they quote no text.
var (
	// ErrTooLong is a text longer than the model takes, asked not to be truncated.
	ErrTooLong = errors.New("embed: a text is longer than the model takes")
	// ErrNoTokens is a text the tokenizer makes nothing of, under a model with no special
	// tokens around a text.
	ErrNoTokens = errors.New("embed: a text has no tokens")
)

// ErrNonFinite is a model output that is not a number (NaN, an infinity): the model's
// failure (a half-precision overflow on a GPU), never written into an answer.
var ErrNonFinite = errors.New("embed: the model's output is not a finite number")

// Encoder is one model's texts to rows of token ids, cut to the model's length, and the
// batcher its rows run through: the part an Embedder and a Reranker share.
type encoder struct {
	name           string
	tok            *tokenizer.Tokenizer
	prefix, suffix []int64
	padID          int64
	maxLen         int
	batcher        *batcher.Batcher[job, result]
	runner         runner
	// maxRows and maxPadded are the batcher's limits: a request larger than one batch goes
	// in chunks of at most that, never as one huge pass.
	maxRows, maxPadded int
	// perToken says the model's output is per token (an embedder's); otherwise one row per
	// sequence (a cross-encoder's).
	perToken bool
	// vocab is config.json's vocab_size (0: not said); rows reads the ids past the graph's
	// rows, once Warm has found them, as the unknown token.
	vocab int64
	rows  tokenizer.GraphRows
}

func newEncoder(queue string, m *models.Model, sess *engine.Session, cfg batcher.Config, clk clock.Clock, bm *batcher.Metrics, labels int, perToken bool) (*encoder, error) {
	prefix, suffix := m.Tokenizer.Template()
	// Room for a pair's specials and a token of each part.
	if m.Config.MaxLength < len(prefix)+2*len(suffix)+2 {
		return nil, fmt.Errorf("embed: model %q: a max length of %d leaves no room for text", m.Name, m.Config.MaxLength)
	}
	e := &encoder{name: m.Name, tok: m.Tokenizer, prefix: prefix, suffix: suffix, padID: m.Tokenizer.PadID(), maxLen: m.Config.MaxLength,
		maxRows: max(cfg.MaxBatchSize, 1), maxPadded: max(cfg.MaxPaddedTokens, m.Config.MaxLength), perToken: perToken}
	e.vocab = int64(m.Config.VocabSize)
	e.runner = runner{sess: sess, padID: e.padID, labels: labels, perToken: perToken}
	b, err := batcher.New[job, result](queue, cfg, e.runner, clk, bm)
	if err != nil {
		return nil, err
	}
	e.batcher = b
	return e, nil
}

// row is a text's ids with the model's special tokens, cut to its length (the end kept for
// the suffix) unless truncate is false, when a longer text is ErrTooLong.
func (e *encoder) row(text string, truncate bool) ([]int64, error) {
	ids := e.encode(text)
	room := e.maxLen - len(e.prefix) - len(e.suffix)
	if len(ids) > room {
		if !truncate {
			return nil, ErrTooLong
		}
		ids = ids[:room]
	}
	out := make([]int64, 0, len(ids)+len(e.prefix)+len(e.suffix))
	out = append(append(append(out, e.prefix...), ids...), e.suffix...)
	if len(out) == 0 {
		return nil, ErrNoTokens
	}
	return out, nil
}

// encode is text's ids as the graph reads them: those past its rows (Warm) as the unknown
// token.
func (e *encoder) encode(text string) []int64 { return e.rows.Read(e.tok.Encode(text, false).IDs) }

// output is one row's part of a job's result: its token states ([width x labels], the row's
// real tokens first) or its scores ([labels]).
type output struct {
	data   []float32
	n      int // the row's real tokens
	labels int
}

// run submits rows, a chunk at a time when they are more than one batch holds (as a
// batcher.Series, so that a drain finishes a request it has begun), and returns the model's
// output per row.
func (e *encoder) run(ctx context.Context, p admission.Priority, rows, types [][]int64) ([]output, error) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	out := make([]output, len(rows))
	collect := func(res result, idx []int) {
		per := res.width * res.labels
		for i, k := range idx {
			out[k] = output{data: res.data[i*per : (i+1)*per], n: len(rows[k]), labels: res.labels}
		}
	}
	pick := func(idx []int) job {
		j := job{rows: make([][]int64, len(idx))}
		if types != nil {
			j.types = make([][]int64, len(idx))
		}
		for i, k := range idx {
			j.rows[i] = rows[k]
			if types != nil {
				j.types[i] = types[k]
			}
		}
		return j
	}
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	if len(rows) <= max(1, min(e.maxRows, e.maxPadded/max(width, 1))) {
		res, err := e.batcher.Submit(ctx, p, pick(all), batcher.Cost{Sequences: len(rows), MaxLen: width})
		if err != nil {
			return nil, err
		}
		collect(res, all)
		return out, nil
	}
	// Chunks of rows of like lengths, shortest first: a chunk is padded to its longest row,
	// so one long text among short ones no longer pads a whole chunk of them.
	slices.SortStableFunc(all, func(a, b int) int { return len(rows[a]) - len(rows[b]) })
	series, err := e.batcher.Series()
	if err != nil {
		return nil, err
	}
	defer series.Done()
	for at := 0; at < len(all); {
		end := at + 1
		for end < len(all) && end-at < e.maxRows && (end-at+1)*len(rows[all[end]]) <= e.maxPadded {
			end++
		}
		idx := all[at:end]
		res, err := series.Submit(ctx, p, pick(idx), batcher.Cost{Sequences: len(idx), MaxLen: len(rows[idx[len(idx)-1]])})
		if err != nil {
			return nil, err
		}
		collect(res, idx)
		at = end
	}
	return out, nil
}

// Warm runs the largest batch the batcher forms, rows of the model's full length, straight
// through the model: ONNX Runtime sizes its memory for it before the first request, and a
// model whose outputs do not fit its role fails here rather than on a request.
func (e *encoder) Warm(ctx context.Context) error {
	row := make([]int64, e.maxLen)
	copy(row, e.prefix)
	for i := len(e.prefix); i < len(row); i++ {
		row[i] = e.padID
	}
	copy(row[len(row)-len(e.suffix):], e.suffix)
	rows := make([][]int64, max(1, min(e.maxRows, e.maxPadded/e.maxLen)))
	for i := range rows {
		rows[i] = row
	}
	if _, err := e.runner.Run(ctx, []job{{rows: rows}}); err != nil {
		return fmt.Errorf("embed: model %q: warm-up failed: %w", e.name, err)
	}
	e.rows.Probe(e.tok, e.vocab, func(id int64) error {
		row := append(append(append([]int64{}, e.prefix...), id), e.suffix...)
		_, err := e.runner.Run(ctx, []job{{rows: [][]int64{row}}})
		return err
	})
	return nil
}

// Start runs the batcher until ctx ends.
func (e *encoder) Start(ctx context.Context) { e.batcher.Start(ctx) }

// Close stops taking requests and drains the batcher.
func (e *encoder) Close(ctx context.Context) error { return e.batcher.Close(ctx) }

// Queue is the batcher, which the endpoint's admission gate guards.
func (e *encoder) Queue() admission.Queue { return e.batcher }

// Name is the model's name.
func (e *encoder) Name() string { return e.name }

// MaxLength is the longest row the model takes, specials included.
func (e *encoder) MaxLength() int { return e.maxLen }

// job is one request's rows, and each row's token types (nil: every token 0).
type job struct{ rows, types [][]int64 }

// result is a job's output: for each row, its token states padded to width ([width x
// labels]) and its length, or its score row ([labels]).
type result struct {
	data   []float32
	width  int
	labels int
}

// runner pads every row of a batch to the batch's longest and runs one forward pass.
type runner struct {
	sess     *engine.Session
	padID    int64
	labels   int // the output's last axis, as the model's config says; 0: any
	perToken bool
}

func (r runner) Run(ctx context.Context, jobs []job) ([]result, error) {
	width, count := 0, 0
	for _, j := range jobs {
		for _, row := range j.rows {
			width = max(width, len(row))
		}
		count += len(j.rows)
	}
	ids := make([]int64, count*width)
	mask := make([]int64, count*width)
	var types []int64 // nil unless a job has types: the engine feeds zeros
	for _, j := range jobs {
		if j.types != nil {
			types = make([]int64, count*width)
			break
		}
	}
	at := 0
	for _, j := range jobs {
		for k, row := range j.rows {
			if types != nil && j.types != nil {
				copy(types[at*width:(at+1)*width], j.types[k])
			}
			dst := ids[at*width : (at+1)*width]
			n := copy(dst, row)
			for k := n; k < width; k++ {
				dst[k] = r.padID
			}
			for k := range n {
				mask[at*width+k] = 1
			}
			at++
		}
	}
	out, err := r.sess.RunEncoder(ctx, engine.EncoderBatch{IDs: ids, Mask: mask, Batch: count, SeqLen: width, TypeIDs: types})
	if err != nil {
		return nil, err
	}
	if r.labels > 0 && out.Labels != r.labels {
		return nil, fmt.Errorf("embed: the model returned %d values per row, its config says %d", out.Labels, r.labels)
	}
	switch {
	case r.perToken && out.SeqLen != width:
		return nil, errors.New("embed: the embedder returned one row per sequence, not its token states (last_hidden_state)")
	case !r.perToken && out.SeqLen != 1:
		return nil, errors.New("embed: the cross-encoder returned a row per token, not one score a pair")
	}
	per := out.SeqLen * out.Labels
	results := make([]result, len(jobs))
	at = 0
	for i, j := range jobs {
		results[i] = result{data: out.Data[at*per : (at+len(j.rows))*per], width: out.SeqLen, labels: out.Labels}
		at += len(j.rows)
	}
	return results, nil
}

// Embedder turns texts into vectors with a sentence-transformers model: its token states
// pooled as its Pooling module says, normalised when it has a Normalize module. It is safe
// for concurrent use.
type Embedder struct {
	*encoder
	sentence models.Sentence
}

// NewEmbedder serves m, a model with a sentence-transformers layout (m.Sentence), on sess.
// The batcher is named queue in metrics.
func NewEmbedder(queue string, m *models.Model, sess *engine.Session, cfg batcher.Config, clk clock.Clock, bm *batcher.Metrics) (*Embedder, error) {
	if m.Sentence == nil {
		return nil, fmt.Errorf("embed: model %q has no modules.json: not a sentence-transformers embedder", m.Name)
	}
	e, err := newEncoder(queue, m, sess, cfg, clk, bm, m.Sentence.Dimension, true)
	if err != nil {
		return nil, err
	}
	return &Embedder{encoder: e, sentence: *m.Sentence}, nil
}

// Dimensions is the length of the model's vectors.
func (e *Embedder) Dimensions() int { return e.sentence.Dimension }

// Normalized reports whether the vectors have unit length (a Normalize module).
func (e *Embedder) Normalized() bool { return e.sentence.Normalize }

// Embed returns one vector per text and the tokens read. truncate cuts a text longer than
// the model takes; without it such a text is ErrTooLong. normalize scales each vector to
// unit length, whether or not the model has a Normalize module (TEI's normalize); the
// OpenAI route asks for what the model's modules say (Normalized).
func (e *Embedder) Embed(ctx context.Context, p admission.Priority, texts []string, truncate, normalize bool) ([][]float32, int, error) {
	rows := make([][]int64, len(texts))
	tokens := 0
	for i, t := range texts {
		r, err := e.row(t, truncate)
		if err != nil {
			return nil, 0, err
		}
		rows[i], tokens = r, tokens+len(r)
	}
	res, err := e.run(ctx, p, rows, nil)
	if err != nil {
		return nil, 0, err
	}
	out := make([][]float32, len(rows))
	for i, r := range res {
		out[i] = Pool(e.sentence.Pooling, r.data, r.n, r.labels)
		if !finite(out[i]) {
			return nil, 0, ErrNonFinite
		}
		if normalize {
			Normalize(out[i])
		}
	}
	return out, tokens, nil
}

// Pool is one row's token states (n real tokens of dim values, the row's padding after them)
// pooled as mode says: the mean or the maximum over its tokens, its first token (CLS) or its
// last real one.
func Pool(mode string, states []float32, n, dim int) []float32 {
	out := make([]float32, dim)
	switch mode {
	case "cls":
		copy(out, states[:dim])
	case "lasttoken":
		copy(out, states[(n-1)*dim:n*dim])
	case "max":
		copy(out, states[:dim])
		for t := 1; t < n; t++ {
			for k, v := range states[t*dim : (t+1)*dim] {
				out[k] = max(out[k], v)
			}
		}
	default: // mean
		sums := make([]float64, dim)
		for t := range n {
			for k, v := range states[t*dim : (t+1)*dim] {
				sums[k] += float64(v)
			}
		}
		for k := range out {
			out[k] = float32(sums[k] / float64(n))
		}
	}
	return out
}

// Normalize scales v to unit length (a zero vector stays zero). The scale is taken in
// float64: the inverse of a float32 vector's length overflows float32 for a tiny vector.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// finite says whether every value of v is a number.
func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// Reranker scores passages against a query with a cross-encoder: [CLS] query [SEP] passage
// [SEP] to one logit. It is safe for concurrent use.
type Reranker struct {
	*encoder
	pair tokenizer.PairTemplate
	// typed: the model has token types to tell the passage by (BERT's type_vocab_size 2);
	// otherwise every token is fed type 0, whatever the template says.
	typed bool
}

// NewReranker serves m, a sequence classifier with one label (models.Model.IsCrossEncoder),
// on sess.
func NewReranker(queue string, m *models.Model, sess *engine.Session, cfg batcher.Config, clk clock.Clock, bm *batcher.Metrics) (*Reranker, error) {
	if !m.IsCrossEncoder() {
		return nil, fmt.Errorf("embed: model %q is not a cross-encoder (a sequence classifier with one label)", m.Name)
	}
	e, err := newEncoder(queue, m, sess, cfg, clk, bm, 1, false)
	if err != nil {
		return nil, err
	}
	pair, ok := m.Tokenizer.Pair()
	if !ok {
		// A pair template of a shape not read: the single one's specials around each part.
		pair = tokenizer.PairTemplate{Before: e.prefix, Between: e.suffix, After: e.suffix, TypeB: 1,
			BeforeTypes: make([]int64, len(e.prefix)), BetweenTypes: make([]int64, len(e.suffix)), AfterTypes: make([]int64, len(e.suffix))}
	}
	if m.Config.MaxLength < len(pair.Before)+len(pair.Between)+len(pair.After)+2 {
		return nil, fmt.Errorf("embed: model %q: a max length of %d leaves no room for a pair", m.Name, m.Config.MaxLength)
	}
	return &Reranker{encoder: e, pair: pair, typed: m.Config.TypeVocabSize > 1}, nil
}

// Score returns each passage's score against query (a logit: higher is more relevant) and
// the tokens read. A pair longer than the model takes is cut as HF's longest_first cuts it
// (a token at a time from the longer part), or is ErrTooLong without truncate.
func (r *Reranker) Score(ctx context.Context, p admission.Priority, query string, passages []string, truncate bool) ([]float32, int, error) {
	q := r.encode(query)
	rows := make([][]int64, len(passages))
	var types [][]int64
	if r.typed {
		types = make([][]int64, len(passages))
	}
	tokens := 0
	for i, passage := range passages {
		row, typ, err := r.pairRow(q, r.encode(passage), truncate)
		if err != nil {
			return nil, 0, err
		}
		rows[i], tokens = row, tokens+len(row)
		if r.typed {
			types[i] = typ
		}
	}
	res, err := r.run(ctx, p, rows, types)
	if err != nil {
		return nil, 0, err
	}
	scores := make([]float32, len(rows))
	for i, o := range res {
		scores[i] = o.data[0]
	}
	if !finite(scores) {
		return nil, 0, ErrNonFinite
	}
	return scores, tokens, nil
}

// longestFirst is how many of a and b tokens HF tokenizers' longest_first keeps in room (their
// sum over it): the longer cut to what the shorter leaves, or both to half when the shorter is
// over half itself, the odd token to the second when they tie.
func longestFirst(a, b, room int) (int, int) {
	short := min(a, b)
	long := max(short, room-short)
	if short+long > room {
		short, long = room/2, room/2+room%2
	}
	if a > b {
		return long, short
	}
	return short, long
}

// pairRow is q and d joined as the tokenizer's pair template joins them (BERT's [CLS] q [SEP]
// d [SEP], RoBERTa's <s> q </s></s> d </s>), and each token's type.
func (r *Reranker) pairRow(q, d []int64, truncate bool) (row, types []int64, err error) {
	t := r.pair
	room := r.maxLen - len(t.Before) - len(t.Between) - len(t.After)
	if len(q)+len(d) > room {
		if !truncate {
			return nil, nil, ErrTooLong
		}
		qn, dn := longestFirst(len(q), len(d), room)
		q, d = q[:qn], d[:dn]
	}
	n := len(t.Before) + len(q) + len(t.Between) + len(d) + len(t.After)
	if n == 0 {
		return nil, nil, ErrNoTokens
	}
	row, types = make([]int64, 0, n), make([]int64, 0, n)
	for _, part := range []struct {
		ids, types []int64
		typ        int64
	}{{t.Before, t.BeforeTypes, 0}, {q, nil, t.TypeA}, {t.Between, t.BetweenTypes, 0}, {d, nil, t.TypeB}, {t.After, t.AfterTypes, 0}} {
		row = append(row, part.ids...)
		for i := range part.ids {
			if part.types != nil {
				types = append(types, part.types[i])
			} else {
				types = append(types, part.typ)
			}
		}
	}
	return row, types, nil
}
