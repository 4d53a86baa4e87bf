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
	// InPlacePositions is 0, or the positions a row of RunDecode's buffers holds.
	InPlacePositions() int
	RunDecode(ctx context.Context, st *DecodeStep) error
	Terminate()
}

// Runner executes a generation scheduler's step plans (package stepplan) on a Decoder. It
// owns the keys and values of the scheduler's KV blocks (a KVStore sized to the block pool)
// and everything tensor-shaped about a step: it makes the plan's copies on write, lays its
// rows out as one left-padded batch (past keys and values gathered from the blocks, or, when
// the batch is the previous step's rows each one token longer, taken from that step's
// present), runs the decoder, writes each row's new keys and values into its blocks and hands
// back each row's scores. On a decoder with an in-place graph, a step of one new token a row
// after a past, or of first prompts, runs there instead: each row's past at the front of its
// row of the runner's own buffers, which the graph extends in place, so that a batch of the
// previous step's rows gathers nothing. Run is called from one goroutine, one step at a time;
// Terminate from any.
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
	if n := r.d.InPlacePositions(); n > 0 && runsInPlace(p, n) {
		return r.runInPlace(ctx, p, n, t0)
	}
	st := r.sc.build(p, r.kv, r.shape)
	t1 := time.Now()
	err := r.d.RunStep(ctx, st)
	t2 := time.Now()
	r.sc.remember(p, st.Past, st.Seq, false, err == nil)
	if err != nil {
		p.KVTime = t1.Sub(t0)
		return err
	}
	// A row's new positions end its left-padded row, in the present and in the scores.
	r.writeBack(p, st.Present, st.Past+st.Seq, st.Logits, st.Seq, func(row *stepplan.Row) (int, int) {
		n := len(row.Tokens)
		return st.Past + st.Seq - n, st.Seq - n
	})
	p.KVTime = t1.Sub(t0) + time.Since(t2)
	return nil
}

// runsInPlace reports whether p is a step the in-place graph computes: one new token a row
// after a past, or first prompts (every row's past 0), every row inside buffers of positions
// positions. Any other (a prompt after a cached prefix, a later chunk of a long one, the two
// mixed) is the decoder-with-past graph's.
func runsInPlace(p *stepplan.Plan, positions int) bool {
	decode, prompts := true, true
	for i := range p.Rows {
		row := &p.Rows[i]
		if row.Past+len(row.Tokens) > positions {
			return false
		}
		decode = decode && len(row.Tokens) == 1 && row.Past > 0
		prompts = prompts && row.Past == 0
	}
	return decode || prompts
}

// runInPlace is Run's step on the in-place graph.
func (r *Runner) runInPlace(ctx context.Context, p *stepplan.Plan, positions int, t0 time.Time) error {
	st := r.sc.buildInPlace(p, r.kv, r.shape, positions)
	t1 := time.Now()
	err := r.d.RunDecode(ctx, st)
	t2 := time.Now()
	r.sc.remember(p, 0, st.Seq, true, err == nil)
	if err != nil {
		p.KVTime = t1.Sub(t0)
		return err
	}
	// A row's new positions follow its past in the buffers, and start its row of scores.
	r.writeBack(p, st.KV, positions, st.Logits, st.Seq, func(row *stepplan.Row) (int, int) { return row.Past, 0 })
	p.KVTime = t1.Sub(t0) + time.Since(t2)
	return nil
}

// writeBack writes each row's new keys and values from a step's tensors (kv[layer][key|value],
// rows of positions positions) into its blocks, and points its Logits at its scores (logits,
// rows of seq). at gives where a row's new positions start in its row of kv and of logits.
func (r *Runner) writeBack(p *stepplan.Plan, kv [][2][]float32, positions int, logits []float32, seq int, at func(*stepplan.Row) (kvAt, scoreAt int)) {
	v := r.shape.Vocab
	for i := range p.Rows {
		row := &p.Rows[i]
		n := len(row.Tokens)
		kvAt, scoreAt := at(row)
		for l := range r.shape.Layers {
			r.kv.Scatter(row.Blocks, row.Past, i, kvAt, n, l, Key, KVTensor{Data: kv[l][0], Batch: len(p.Rows), Positions: positions})
			r.kv.Scatter(row.Blocks, row.Past, i, kvAt, n, l, Value, KVTensor{Data: kv[l][1], Batch: len(p.Rows), Positions: positions})
		}
		first := scoreAt + n - 1
		if row.AllLogits {
			first = scoreAt
		}
		row.Logits = logits[(i*seq+first)*v : (i*seq+scoreAt+n)*v]
	}
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

	// The in-place graph's buffers and inputs: inPlace[l][k] is [rows, heads, positions, dim].
	inPlace     [][2][]float32
	lens, fresh []int64
	decode      DecodeStep

	// lastSeqs is the rows of the previous decode step and lastPast its past length, while
	// its present tensors (or, lastInPlace, the in-place buffers) hold every row's keys and
	// values: a decode step over the same rows in the same order, on the same graph, takes
	// them as its past instead of gathering from the blocks.
	lastSeqs    []uint64
	lastLens    []int // each row's length after the previous step, less one
	lastPast    int
	lastOK      bool
	lastInPlace bool
	reused      int // steps that took the previous step's keys and values (tests read it)
}

// reusable reports whether a decode step over p's rows can take the previous decode step's
// present as its past: the same rows, in the same order, each one token longer. A row's keys
// and values are a function of its tokens, which only grow, so the previous present holds
// this step's past whatever happened to the blocks between (copies, a row preempted and its
// prefix found again in the cache).
func (sc *stepScratch) reusable(p *stepplan.Plan, past, seq int, inPlace bool) bool {
	if !sc.lastOK || seq != 1 || inPlace != sc.lastInPlace || len(p.Rows) != len(sc.lastSeqs) {
		return false
	}
	if !inPlace && past != sc.lastPast+1 { // the in-place buffers are not padded to the longest
		return false
	}
	for i := range p.Rows {
		if sc.lastSeqs[i] != p.Rows[i].Seq || p.Rows[i].Past != sc.lastLens[i]+1 {
			return false
		}
	}
	return true
}

// remember records a successful step over p's rows (of past and seq, on the in-place graph
// or not) for reusable; a failed step, or a prefill on the decoder-with-past graph (whose
// present is padded to its longest prompt), forgets. lastLens is each row's length after the
// step, less one. In-place rows are not padded to one another, so the buffers after a step of
// first prompts are the next decode's past as they are after a decode.
func (sc *stepScratch) remember(p *stepplan.Plan, past, seq int, inPlace, ok bool) {
	sc.lastOK = ok && (seq == 1 || inPlace)
	sc.lastInPlace = inPlace
	sc.lastSeqs = sc.lastSeqs[:0]
	sc.lastLens = sc.lastLens[:0]
	for i := range p.Rows {
		sc.lastSeqs = append(sc.lastSeqs, p.Rows[i].Seq)
		sc.lastLens = append(sc.lastLens, p.Rows[i].Past+len(p.Rows[i].Tokens)-1)
	}
	sc.lastPast = past
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
	reuse := sc.reusable(p, past, seq, false)
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
			kv.Gather(p.Rows, l, kind, KVTensor{Data: sc.past[l][k], Batch: b, Positions: past}, AlignEnd)
		}
	}
	sc.step = Step{Batch: b, Past: past, Seq: seq, IDs: sc.ids, Mask: sc.mask, Positions: sc.pos,
		Logits: sc.logits, PastKV: sc.past, Present: sc.present}
	return &sc.step
}

// buildInPlace lays out one step on the in-place graph: row i's new tokens at the front of
// its row of ids, then padding, and its past at the front of its row of the buffers, gathered
// from the blocks unless the buffers hold the previous step's rows, each now one token
// longer, which the graph extended in place.
func (sc *stepScratch) buildInPlace(p *stepplan.Plan, kv *KVStore, shape DecoderShape, positions int) *DecodeStep {
	b, seq := len(p.Rows), p.Seq()
	reuse := sc.reusable(p, 0, seq, true)
	if reuse {
		sc.reused++
	}
	sc.ids = grow(sc.ids, b*seq)
	sc.lens = grow(sc.lens, b)
	sc.fresh = grow(sc.fresh, b)
	sc.logits = grow(sc.logits, b*seq*shape.Vocab)
	for i := range p.Rows {
		row := &p.Rows[i]
		ids := sc.ids[i*seq : (i+1)*seq]
		for j := range ids {
			ids[j] = p.Pad
		}
		copy(ids, row.Tokens)
		sc.lens[i], sc.fresh[i] = int64(row.Past), int64(len(row.Tokens))
	}
	if len(sc.inPlace) != shape.Layers {
		sc.inPlace = make([][2][]float32, shape.Layers)
	}
	for l := range shape.Layers {
		for k, kind := range [2]KVKind{Key, Value} {
			// Reused, the batch is as big as before, so grow keeps the buffer and its contents.
			sc.inPlace[l][k] = grow(sc.inPlace[l][k], b*shape.Heads*positions*shape.HeadDim)
			if !reuse {
				kv.Gather(p.Rows, l, kind, KVTensor{Data: sc.inPlace[l][k], Batch: b, Positions: positions}, AlignStart)
			}
		}
	}
	sc.decode = DecodeStep{Batch: b, Seq: seq, IDs: sc.ids, Past: sc.lens, New: sc.fresh,
		KV: sc.inPlace, Logits: sc.logits, positions: sc.decode.positions, seqLens: sc.decode.seqLens}
	return &sc.decode
}
