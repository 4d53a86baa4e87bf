package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-serving/sluice/stepplan"
)

// stepper is what a Runner drives: *Decoder, or a test's fake.
type stepper interface {
	Shape() DecoderShape
	RunStep(ctx context.Context, st *Step) error
	Terminate()
}

// Runner executes a generation scheduler's step plans (package stepplan) on a Decoder. It
// owns the keys and values of the scheduler's KV blocks (a KVStore sized to the block pool)
// and everything tensor-shaped about a step: it makes the plan's copies on write, lays its
// rows out as one left-padded batch (past keys and values gathered from the blocks, or, when
// the batch is the previous step's rows each one token longer, taken from that step's
// present), runs the decoder, writes each row's new keys and values into its blocks and hands
// back each row's scores. Run is called from one goroutine, one step at a time; Terminate from
// any.
type Runner struct {
	d     stepper
	shape DecoderShape
	kv    *KVStore
	sc    stepScratch
}

// NewRunner makes the runner of d over a KV cache of blocks blocks of blockTokens positions
// (a kvcache.Pool's Blocks and BlockTokens).
func NewRunner(d *Decoder, blocks, blockTokens int) (*Runner, error) {
	return newRunner(d, blocks, blockTokens)
}

func newRunner(d stepper, blocks, blockTokens int) (*Runner, error) {
	kv, err := NewKVStore(d.Shape(), blocks, blockTokens)
	if err != nil {
		return nil, err
	}
	return &Runner{d: d, shape: d.Shape(), kv: kv}, nil
}

// Vocab is the width of a row's scores.
func (r *Runner) Vocab() int { return r.shape.Vocab }

// Terminate makes the step in flight return an error soon (Decoder.Terminate).
func (r *Runner) Terminate() { r.d.Terminate() }

// Run executes p: its copies first, then one decoder step over its rows, then each row's new
// keys and values into its blocks; on success every row's Logits holds its scores. A plan
// that does not fit the store (a block id out of range, a table shorter than its positions)
// is an ErrInvalidInput error and nothing runs; a failed step writes no block. p.KVTime says
// what the copying took.
func (r *Runner) Run(ctx context.Context, p *stepplan.Plan) error {
	t0 := time.Now()
	if err := r.checkCopies(p); err != nil {
		return fmt.Errorf("engine: step plan: %w: %w", ErrInvalidInput, err)
	}
	// Copies come first and whatever happens next, a wrong row included: they were decided
	// against the blocks as they are now (the scheduler has handed them over, for sequences
	// in this step or not), and a later step must find them made.
	for _, c := range p.Copies {
		r.kv.Copy(c.From, c.To)
	}
	if err := r.check(p); err != nil {
		return fmt.Errorf("engine: step plan: %w: %w", ErrInvalidInput, err)
	}
	st := r.sc.build(p, r.kv, r.shape)
	t1 := time.Now()
	err := r.d.RunStep(ctx, st)
	t2 := time.Now()
	r.sc.remember(p, st, err == nil)
	if err != nil {
		p.KVTime = t1.Sub(t0)
		return err
	}
	for i := range p.Rows {
		row := &p.Rows[i]
		n := len(row.Tokens)
		from := st.Past + st.Seq - n // a row's new positions end the padded row
		for l := range r.shape.Layers {
			r.kv.Scatter(row.Blocks, row.Past, i, from, n, l, Key, KVTensor{Data: st.Present[l][0], Batch: st.Batch, Positions: st.Past + st.Seq})
			r.kv.Scatter(row.Blocks, row.Past, i, from, n, l, Value, KVTensor{Data: st.Present[l][1], Batch: st.Batch, Positions: st.Past + st.Seq})
		}
		first := st.Seq - 1
		if row.AllLogits {
			first = st.Seq - n
		}
		row.Logits = st.Logits[(i*st.Seq+first)*r.shape.Vocab : (i+1)*st.Seq*r.shape.Vocab]
	}
	p.KVTime = t1.Sub(t0) + time.Since(t2)
	return nil
}

var errEmptyPlan = errors.New("no rows")

// checkCopies makes sure every block a copy names is the store's.
func (r *Runner) checkCopies(p *stepplan.Plan) error {
	n := int32(r.kv.Blocks())
	for _, c := range p.Copies {
		if c.From < 0 || c.From >= n || c.To < 0 || c.To >= n {
			return fmt.Errorf("copy of block %d to %d in a store of %d", c.From, c.To, n)
		}
	}
	return nil
}

// check makes sure every block p's rows name is the store's and every row's table holds its
// positions, so that a wrong plan is an error rather than another sequence's keys.
func (r *Runner) check(p *stepplan.Plan) error {
	if len(p.Rows) == 0 {
		return errEmptyPlan
	}
	n := int32(r.kv.Blocks())
	for i := range p.Rows {
		row := &p.Rows[i]
		if len(row.Tokens) == 0 || row.Past < 0 {
			return fmt.Errorf("row %d: %d new tokens after %d", i, len(row.Tokens), row.Past)
		}
		need := (row.Past + len(row.Tokens) + r.kv.bt - 1) / r.kv.bt
		if len(row.Blocks) < need {
			return fmt.Errorf("row %d: %d blocks for %d positions", i, len(row.Blocks), row.Past+len(row.Tokens))
		}
		for _, b := range row.Blocks[:need] {
			if b < 0 || b >= n {
				return fmt.Errorf("row %d: block %d in a store of %d", i, b, n)
			}
		}
	}
	return nil
}

// stepScratch holds a Runner's reusable buffers: the tensors of a step, grown to the largest
// step seen and reused after.
type stepScratch struct {
	step    Step
	ids     []int64
	mask    []int64
	pos     []int64
	logits  []float32
	past    [][2][]float32
	present [][2][]float32

	// lastSeqs is the rows of the previous decode step and lastPast its past length, while
	// its present tensors hold every row's keys and values: a decode step over the same rows
	// in the same order takes them as its past instead of gathering from the blocks.
	lastSeqs []uint64
	lastLens []int // each row's past in the previous step
	lastPast int
	lastOK   bool
	reused   int // steps that took the previous present as their past (tests read it)
}

// reusable reports whether a decode step over p's rows can take the previous decode step's
// present as its past: the same rows, in the same order, each one token longer. A row's keys
// and values are a function of its tokens, which only grow, so the previous present holds
// this step's past whatever happened to the blocks between (copies, a row preempted and its
// prefix found again in the cache).
func (sc *stepScratch) reusable(p *stepplan.Plan, past, seq int) bool {
	if !sc.lastOK || seq != 1 || past != sc.lastPast+1 || len(p.Rows) != len(sc.lastSeqs) {
		return false
	}
	for i := range p.Rows {
		if sc.lastSeqs[i] != p.Rows[i].Seq || p.Rows[i].Past != sc.lastLens[i]+1 {
			return false
		}
	}
	return true
}

// remember records a successful step over p's rows for reusable; a prefill step, or a failed
// one, forgets.
func (sc *stepScratch) remember(p *stepplan.Plan, st *Step, ok bool) {
	sc.lastOK = ok && st.Seq == 1
	sc.lastSeqs = sc.lastSeqs[:0]
	sc.lastLens = sc.lastLens[:0]
	for i := range p.Rows {
		sc.lastSeqs = append(sc.lastSeqs, p.Rows[i].Seq)
		sc.lastLens = append(sc.lastLens, p.Rows[i].Past)
	}
	sc.lastPast = st.Past
}

// grow returns buf resized to n, reallocating only when it is too small.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n, n+n/4)
	}
	return buf[:n]
}

// build lays out one step over p's rows: each row's past positions as the past, its new
// tokens as the new positions, both left padded to the longest row, and the output buffers.
// The past is gathered from the store's blocks.
func (sc *stepScratch) build(p *stepplan.Plan, kv *KVStore, shape DecoderShape) *Step {
	b := len(p.Rows)
	past, seq := p.Past(), p.Seq()
	width := past + seq
	sc.ids = grow(sc.ids, b*seq)
	sc.mask = grow(sc.mask, b*width)
	sc.pos = grow(sc.pos, b*seq)
	sc.logits = grow(sc.logits, b*seq*shape.Vocab)
	if len(sc.past) != shape.Layers {
		sc.past = make([][2][]float32, shape.Layers)
		sc.present = make([][2][]float32, shape.Layers)
	}
	cache := b * shape.Heads * shape.HeadDim
	for i := range p.Rows {
		row := &p.Rows[i]
		cached, fresh := row.Past, len(row.Tokens)
		ids := sc.ids[i*seq : (i+1)*seq]
		pos := sc.pos[i*seq : (i+1)*seq]
		for j := range ids {
			ids[j], pos[j] = p.Pad, 0
		}
		copy(ids[seq-fresh:], row.Tokens)
		for j := range fresh {
			pos[seq-fresh+j] = int64(cached + j)
		}
		mask := sc.mask[i*width : (i+1)*width]
		for j := range mask {
			mask[j] = 0
		}
		for j := past - cached; j < past; j++ {
			mask[j] = 1
		}
		for j := width - fresh; j < width; j++ {
			mask[j] = 1
		}
	}
	reuse := sc.reusable(p, past, seq)
	if reuse {
		sc.reused++
	}
	for l := range shape.Layers {
		for k, kind := range [2]KVKind{Key, Value} {
			if reuse {
				// Every row grew by the one token the previous step computed: its present
				// is, position for position, this step's past.
				sc.past[l][k], sc.present[l][k] = sc.present[l][k], sc.past[l][k]
				sc.present[l][k] = grow(sc.present[l][k], cache*width)
				continue
			}
			sc.past[l][k] = grow(sc.past[l][k], cache*past)
			sc.present[l][k] = grow(sc.present[l][k], cache*width)
			kv.Gather(p.Rows, l, kind, KVTensor{Data: sc.past[l][k], Batch: b, Positions: past})
		}
	}
	sc.step = Step{Batch: b, Past: past, Seq: seq, IDs: sc.ids, Mask: sc.mask, Positions: sc.pos,
		Logits: sc.logits, PastKV: sc.past, Present: sc.present}
	return &sc.step
}
