package extract

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/settings"
	"github.com/sluice-serving/sluice/tokenizer"
)

// Config sets how a Classifier windows text and batches windows. The tags are where the
// server's environment sets each field (SLUICE_ and the env tag; Batch's are batcher's).
type Config struct {
	// Stride is how many tokens consecutive windows share, so an entity near a window's edge
	// is also seen with context on both sides.
	Stride int `env:"WINDOW_STRIDE" envDefault:"32"`
	Batch  batcher.Config
}

// Validate reports what is wrong before a model is known: a negative Stride (New checks it
// against the model's window too) and Batch's problems (batcher's own).
func (c Config) Validate() error {
	check := settings.For("extract")
	if c.Stride < 0 {
		check.Addf("Stride", "must not be negative (0: windows share no token), got %d", c.Stride)
	}
	check.Include(c.Batch.Validate())
	return check.Err()
}

// Classifier extracts entities with one model. It is safe for concurrent use.
type Classifier struct {
	name   string
	tok    *tokenizer.Tokenizer
	dec    *entities.Decoder
	prefix []int64
	suffix []int64
	padID  int64
	maxLen int
	budget int
	// vocab is config.json's vocab_size (0: not said); rows reads the ids past the graph's
	// rows, once Warm has found them, as the unknown token.
	vocab int64
	rows  tokenizer.GraphRows
	// wordAware is whether word-level aggregation reads the tokenizer's word ids. HF's
	// pipeline reads them only from tokenizers that spell continuation pieces (WordPiece's
	// "##"); for the others (RoBERTa's Ġ, SentencePiece's ▁) it decides from the spaces
	// around each piece, and serving the same answers means deciding the same way.
	wordAware bool
	stride    int
	batcher   *batcher.Batcher[job, result]
	runner    runner
	clock     clock.Clock
	// warmRows and warmRuns give the warm-up's shape: the largest batch the batcher forms
	// at full length, run on every worker at once.
	warmRows, warmRuns int
	// maxBatch and maxPadded are the batcher's limits, from which a long text's chunks are
	// sized (see chunkRows).
	maxBatch, maxPadded int
	// pending counts the windows of long texts not yet submitted: demand the admission layer
	// sees beside what the batcher holds (Queue).
	pending atomic.Int64
	// released is when releaseHeap last ran, in nanoseconds of the clock.
	released atomic.Int64
}

// Stats describe the work one Extract call did, for the access log and response metadata.
type Stats struct {
	Tokens  int
	Windows int
	// Inference is the time from submission to the batcher until logits came back: queueing
	// plus the forward pass.
	Inference time.Duration
}

// New builds a Classifier for model m running on sess. The batcher is named queue in metrics.
func New(queue string, m *models.Model, sess *engine.Session, cfg Config, clk clock.Clock, bm *batcher.Metrics) (*Classifier, error) {
	if len(m.Config.Labels) == 0 {
		return nil, fmt.Errorf("extract: model %q: config.json has no id2label; it is not a token classifier", m.Name)
	}
	dec, err := entities.NewDecoder(decoderConfig(m))
	if err != nil {
		return nil, fmt.Errorf("extract: model %q: %w", m.Name, err)
	}
	prefix, suffix := m.Tokenizer.Template()
	budget, err := entities.ContentBudget(m.Config.MaxLength, len(prefix), len(suffix))
	if err != nil {
		return nil, fmt.Errorf("extract: model %q: %w", m.Name, err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Stride >= budget {
		check := settings.For("extract")
		check.Addf("Stride", "must be in [0, %d) for model %q, got %d", budget, m.Name, cfg.Stride)
		return nil, check.Err()
	}
	c := &Classifier{
		name: m.Name, tok: m.Tokenizer, dec: dec, prefix: prefix, suffix: suffix,
		wordAware: m.Tokenizer.SubwordPrefix() != "",
		padID:     m.Tokenizer.PadID(), maxLen: m.Config.MaxLength, budget: budget, stride: cfg.Stride,
		clock:     clk,
		warmRows:  max(1, min(cfg.Batch.MaxBatchSize, cfg.Batch.MaxPaddedTokens/m.Config.MaxLength)),
		warmRuns:  max(1, cfg.Batch.Workers),
		maxBatch:  cfg.Batch.MaxBatchSize,
		maxPadded: cfg.Batch.MaxPaddedTokens,
	}
	c.vocab = int64(m.Config.VocabSize)
	c.runner = runner{sess: sess, padID: c.padID, labels: dec.NumLabels()}
	b, err := batcher.New[job, result](queue, cfg.Batch, c.runner, clk, bm)
	if err != nil {
		return nil, err
	}
	c.batcher = b
	return c, nil
}

// decoderConfig is the model's label space, and its CRF when config.json carries one.
func decoderConfig(m *models.Model) entities.DecoderConfig {
	cfg := entities.DecoderConfig{ID2Label: m.Config.Labels, UnknownID: -1}
	if id, ok := m.Tokenizer.UnknownID(); ok {
		cfg.UnknownID = id
	}
	if crf := m.Config.CRF; crf != nil {
		cfg.Transitions = &entities.Transitions{Spaced: crf.Spaced, Touching: crf.Touching, Break: crf.Break}
	}
	return cfg
}

// Name is the model's name.
func (c *Classifier) Name() string { return c.name }

// MaxLength is the model's maximum sequence length, windows included.
func (c *Classifier) MaxLength() int { return c.maxLen }

// Start starts the batch-formation loop; it stops when ctx ends or Close is called.
func (c *Classifier) Start(ctx context.Context) { c.batcher.Start(ctx) }

// Close stops accepting work and drains what is queued and running, or gives up when ctx ends.
func (c *Classifier) Close(ctx context.Context) error { return c.batcher.Close(ctx) }

// Queue is what the endpoint's admission gate guards: the model's batcher, measured in windows,
// with the windows of long texts still to be submitted counted as demand.
func (c *Classifier) Queue() admission.Queue { return classifierQueue{c} }

type classifierQueue struct{ c *Classifier }

func (q classifierQueue) Load() admission.Load {
	l := q.c.batcher.Load()
	l.Work += q.c.pending.Load()
	return l
}

func (q classifierQueue) Limits() admission.Limits { return q.c.batcher.Limits() }

// Extract finds the entities of text, queueing its windows in priority class p. Offsets in the
// result are byte offsets into text. Errors wrap the batcher's and the engine's sentinels
// (admission.ErrQueueFull and the others, context errors) and never carry text.
func (c *Classifier) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, Stats, error) {
	enc := c.tok.Encode(text, false)
	st := Stats{Tokens: len(enc.IDs)}
	if len(enc.IDs) == 0 {
		return nil, st, nil
	}
	ids := c.rows.Read(enc.IDs) // what the model reads; the decoder reads the tokens as the text spells them
	docs := entities.Documents(text, enc.Offsets)
	wins, rows, err := c.layout(docs, ids, enc.WordIDs)
	if err != nil {
		return nil, st, fmt.Errorf("%w: %w", ErrDecoding, err)
	}
	st.Windows = rows.Count
	if rows.Count > c.chunkRows(rows.Width) {
		defer c.releaseHeap()
	}
	start := c.clock.Now()
	out, err := c.infer(ctx, p, rows)
	st.Inference = c.clock.Now().Sub(start)
	if err != nil {
		return nil, st, err
	}
	logits, err := entities.MergeLogits(wins, len(enc.IDs), out.logits, out.width, len(c.prefix), c.dec.NumLabels())
	if err != nil {
		return nil, st, decodingFailure(err)
	}
	toks := entities.Tokens{IDs: enc.IDs, Offsets: enc.Offsets}
	if c.wordAware {
		toks.WordIDs = enc.WordIDs
	}
	if len(docs) == 1 && docs[0].Start == 0 && docs[0].End == len(text) {
		ents, err := c.dec.Extract(text, toks, logits, opts)
		if err != nil {
			return nil, st, decodingFailure(err)
		}
		return ents, st, nil
	}
	// Each document is decoded as its own text: its spans are those it has alone.
	labels := c.dec.NumLabels()
	var ents []entities.Entity
	for _, d := range docs {
		found, err := c.dec.Extract(text[d.Start:d.End], d.Tokens(toks), logits[d.First*labels:d.Last*labels], opts)
		if err != nil {
			return nil, st, decodingFailure(err)
		}
		for _, e := range found {
			e.Start, e.End = e.Start+d.Start, e.End+d.Start
			ents = append(ents, e)
		}
	}
	return ents, st, nil
}

// Warm runs the largest batch the batcher forms at full length (as many rows of
// MaxLength tokens as its limits allow) straight through the engine, not the
// batcher, once on every worker at the same time. ONNX Runtime initialises lazily and grows
// its memory arena to the largest shapes it has run: warmed this way, the first clients do not
// pay for either, and the process's memory does not creep up under load as bigger batches
// first appear (measured: docs/BENCHMARKS.md, RSS at 10x).
func (c *Classifier) Warm(ctx context.Context) error {
	rows := c.warmBatch()
	errs := make(chan error, c.warmRuns)
	for range c.warmRuns {
		go func() {
			_, err := c.runner.Run(ctx, []job{{rows: rows}})
			errs <- err
		}()
	}
	var first error
	for range c.warmRuns {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("extract: model %q: warm-up failed: %w", c.name, first)
	}
	c.rows.Probe(c.tok, c.vocab, func(id int64) error {
		_, err := c.runner.Run(ctx, []job{{rows: c.probe(id)}})
		return err
	})
	return nil
}

// probe is one row of the template around token id.
func (c *Classifier) probe(id int64) entities.Rows {
	ids := append(append(append([]int64{}, c.prefix...), id), c.suffix...)
	mask := make([]int64, len(ids))
	for i := range mask {
		mask[i] = 1
	}
	return entities.Rows{Count: 1, Width: len(ids), InputIDs: ids, AttentionMask: mask}
}

// warmBatch lays out warmRows full-length rows of real text.
func (c *Classifier) warmBatch() entities.Rows {
	filler := c.tok.Encode("Warm up with a full row.", false).IDs
	if len(filler) == 0 {
		filler = []int64{c.padID}
	}
	content := c.maxLen - len(c.prefix) - len(c.suffix)
	rows := entities.Rows{Count: c.warmRows, Width: c.maxLen,
		InputIDs: make([]int64, 0, c.warmRows*c.maxLen), AttentionMask: make([]int64, c.warmRows*c.maxLen)}
	for range c.warmRows {
		rows.InputIDs = append(rows.InputIDs, c.prefix...)
		for i := range content {
			rows.InputIDs = append(rows.InputIDs, filler[i%len(filler)])
		}
		rows.InputIDs = append(rows.InputIDs, c.suffix...)
	}
	for i := range rows.AttentionMask {
		rows.AttentionMask[i] = 1
	}
	return rows
}

// layout cuts each document's tokens into windows and lays them out as model rows.
func (c *Classifier) layout(docs []entities.Document, ids []int64, wordIDs []int) ([]entities.Window, entities.Rows, error) {
	wins, err := entities.PlanDocumentWindows(docs, wordIDs, c.budget, c.stride)
	if err != nil {
		return nil, entities.Rows{}, err
	}
	rows, err := entities.BuildRows(ids, wins, c.prefix, c.suffix, c.padID, 0)
	return wins, rows, err
}

// ErrDecoding is a text whose windows or entities could not be made (a bug that this text
// meets, not a refusal): the same text fails the same way again, and the model is not at
// fault, so it is neither retried nor counted against the model's breaker. A model output of
// the wrong shape or not a number is the model's failure, and is not ErrDecoding.
var ErrDecoding = errors.New("extract: the text's windows or entities could not be made")

// decodingFailure is ErrDecoding over err, unless the model's output is at fault (scores
// that are not numbers, an output of the wrong shape), which stays the model's failure.
func decodingFailure(err error) error {
	if errors.Is(err, entities.ErrNonFinite) || errors.Is(err, entities.ErrOutputShape) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrDecoding, err)
}

// ErrDeadline means a long text's remaining windows could not be computed within the
// request's deadline at the pace its first windows took, so it was cut short rather than left
// to hold the workers. It wraps context.DeadlineExceeded.
var ErrDeadline = fmt.Errorf("extract: the text's windows cannot finish within the request's deadline: %w", context.DeadlineExceeded)

// chunkRows is how many windows of one text go into the batcher at a time: half of what a
// batch of full-width rows holds, so that a batch always has room for other requests' windows
// beside a long text's, and no batch is ever larger than the batcher's budget (ONNX Runtime's
// memory grows to the largest shape it has run).
func (c *Classifier) chunkRows(width int) int {
	return max(1, min(c.maxBatch, c.maxPadded/max(width, 1))/2)
}

// infer runs a text's rows through the batcher, a chunk at a time when there are more than one
// chunk's worth. Each chunk queues behind the requests that came meanwhile, so a long text
// takes its turns with them instead of holding the workers from first window to last; the
// chunks go in as one batcher.Series, so a shutdown's drain finishes a text it had begun. Between
// chunks, a text whose remaining windows cannot finish before ctx's deadline, at the pace of
// its windows so far, stops with ErrDeadline.
func (c *Classifier) infer(ctx context.Context, p admission.Priority, rows entities.Rows) (result, error) {
	n := c.chunkRows(rows.Width)
	if rows.Count <= n {
		return c.batcher.Submit(ctx, p, job{rows: rows}, batcher.Cost{Sequences: rows.Count, MaxLen: rows.Width})
	}
	series, err := c.batcher.Series()
	if err != nil {
		return result{}, err
	}
	defer series.Done()
	out := result{logits: make([]float32, 0, rows.Count*rows.Width*c.dec.NumLabels()), width: rows.Width}
	c.pending.Add(int64(rows.Count))
	defer func() { c.pending.Add(-int64(rows.Count - out.rows)) }()
	start := c.clock.Now()
	for out.rows < rows.Count {
		k := min(n, rows.Count-out.rows)
		if out.rows > 0 {
			if dl, ok := ctx.Deadline(); ok {
				perRow := c.clock.Now().Sub(start) / time.Duration(out.rows)
				if c.clock.Now().Add(perRow * time.Duration(rows.Count-out.rows)).After(dl) {
					return result{}, ErrDeadline
				}
			}
		}
		chunk := rows.Slice(out.rows, out.rows+k)
		c.pending.Add(-int64(k))
		res, err := series.Submit(ctx, p, job{rows: chunk}, batcher.Cost{Sequences: k, MaxLen: rows.Width})
		if err != nil {
			c.pending.Add(int64(k)) // not done after all: the deferred count gives it back
			return result{}, err
		}
		// The batch padded these rows to its own width; keep each row's first rows.Width
		// positions, which is where MergeLogits reads them.
		per := res.width * c.dec.NumLabels()
		for r := range k {
			out.logits = append(out.logits, res.logits[r*per:r*per+rows.Width*c.dec.NumLabels()]...)
		}
		out.rows += k
	}
	return out, nil
}

// releaseHeap hands the heap a long text left behind back to the operating system, at most once
// a second. Such a text's logits and CRF tables are tens of megabytes, and Go sets its next
// collection at twice the live heap it last saw, which included them: an idle server would
// hold that until its periodic collection minutes later, and the process's footprint would
// ratchet to the largest document it has read. One full collection per long text costs far
// less than the text's own inference, and done before the answer goes out it leaves the
// process where warm-up put it by the time the client hears back.
func (c *Classifier) releaseHeap() {
	now := c.clock.Now().UnixNano()
	last := c.released.Load()
	if now-last < int64(time.Second) || !c.released.CompareAndSwap(last, now) {
		return
	}
	debug.FreeOSMemory()
}

// job is one request's windows, laid out at the request's own width.
type job struct{ rows entities.Rows }

// result is one request's logits: its rows at the batch's width.
type result struct {
	logits []float32
	width  int
	rows   int // rows done so far, while a long text's chunks come in
}

// runner pads every request of a batch to the batch's widest row and runs one forward pass.
type runner struct {
	sess   *engine.Session
	padID  int64
	labels int
}

func (r runner) Run(ctx context.Context, jobs []job) ([]result, error) {
	width, count := 0, 0
	for _, j := range jobs {
		width = max(width, j.rows.Width)
		count += j.rows.Count
	}
	ids := make([]int64, count*width)
	mask := make([]int64, count*width)
	row := 0
	for _, j := range jobs {
		for i := 0; i < j.rows.Count; i++ {
			dst := ids[(row+i)*width : (row+i+1)*width]
			n := copy(dst, j.rows.InputIDs[i*j.rows.Width:(i+1)*j.rows.Width])
			for k := n; k < width; k++ {
				dst[k] = r.padID
			}
			copy(mask[(row+i)*width:], j.rows.AttentionMask[i*j.rows.Width:(i+1)*j.rows.Width])
		}
		row += j.rows.Count
	}
	out, err := r.sess.RunEncoder(ctx, engine.EncoderBatch{IDs: ids, Mask: mask, Batch: count, SeqLen: width})
	if err != nil {
		return nil, err
	}
	if out.SeqLen != width {
		return nil, fmt.Errorf("extract: the model returned one row per sequence, not per token; it is not a token classifier")
	}
	if out.Labels != r.labels {
		return nil, fmt.Errorf("extract: the model returned %d labels per token, config.json has %d", out.Labels, r.labels)
	}
	results := make([]result, len(jobs))
	per := width * r.labels
	row = 0
	for i, j := range jobs {
		results[i] = result{logits: out.Data[row*per : (row+j.rows.Count)*per], width: width}
		row += j.rows.Count
	}
	return results, nil
}
