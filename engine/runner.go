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
// after a past, or of first prompts, runs there instead: each row's past at the front of a
// row of the runner's own buffers, which the graph extends in place. A sequence keeps its row
// from step to step, so that a row that stays gathers nothing whatever the plan's order, and
// a sequence that joins or leaves moves at most one other (stepScratch.place). Run is called
// from one goroutine, one step at a time; Terminate from any.
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
	// A panic (a bug) may come after the step wrote into the buffers a later step would take
	// for its rows' past: they are forgotten as a failed step's are, and the panic goes on to
	// the caller, which may recover it and go on stepping.
	defer func() {
		if v := recover(); v != nil {
			r.sc.forget()
			panic(v)
		}
	}()
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
	r.writeBack(p, st.Present, st.Past+st.Seq, st.Logits, st.Seq, func(i int, row *stepplan.Row) (int, int, int) {
		n := len(row.Tokens)
		return i, st.Past + st.Seq - n, st.Seq - n
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
	r.sc.settle(p, err == nil)
	if err != nil {
		p.KVTime = t1.Sub(t0)
		return err
	}
	// A row's new positions follow its past in its row of the buffers, and start its row of
	// scores.
	r.writeBack(p, st.KV, positions, st.Logits, st.Seq, func(i int, row *stepplan.Row) (int, int, int) {
		return r.sc.at[i] - r.sc.base, row.Past, 0
	})
	p.KVTime = t1.Sub(t0) + time.Since(t2)
	return nil
}

// writeBack writes each row's new keys and values from a step's tensors (kv[layer][key|value],
// rows of positions positions) into its blocks, and points its Logits at its scores (logits,
// rows of seq). at gives plan row i's row of the tensors and where its new positions start in
// its row of kv and of logits.
func (r *Runner) writeBack(p *stepplan.Plan, kv [][2][]float32, positions int, logits []float32, seq int, at func(i int, row *stepplan.Row) (tensorRow, kvAt, scoreAt int)) {
	v := r.shape.Vocab
	for i := range p.Rows {
		row := &p.Rows[i]
		n := len(row.Tokens)
		t, kvAt, scoreAt := at(i, row)
		for l := range r.shape.Layers {
			r.kv.Scatter(row.Blocks, row.Past, t, kvAt, n, l, Key, KVTensor{Data: kv[l][0], Batch: len(p.Rows), Positions: positions})
			r.kv.Scatter(row.Blocks, row.Past, t, kvAt, n, l, Value, KVTensor{Data: kv[l][1], Batch: len(p.Rows), Positions: positions})
		}
		first := scoreAt + n - 1
		if row.AllLogits {
			first = scoreAt
		}
		row.Logits = logits[(t*seq+first)*v : (t*seq+scoreAt+n)*v]
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

	// The in-place graph's buffers and inputs: inPlace[l][k] is [rows, heads, positions, dim],
	// of which a step runs on view, the rows from base on. slots says what each row holds, at
	// where each of the step's plan rows runs (from the previous buffer row of a row moved,
	// else -1), taken which rows below a decode's batch are spoken for, and widest the largest
	// decode batch yet.
	inPlace, view [][2][]float32
	slots         []slot
	at, from      []int
	taken         []bool
	base, widest  int
	lens, fresh   []int64
	decode        DecodeStep

	// lastSeqs is the rows of the previous decode step and lastPast its past length, while
	// its present tensors hold every row's keys and values (lastOK; lastInPlace: it ran on
	// the in-place graph): a decode step over the same rows in the same order on the
	// decoder-with-past graph takes them as its past instead of gathering from the blocks.
	lastSeqs    []uint64
	lastLens    []int // each row's length after the previous step, less one
	lastPast    int
	lastOK      bool
	lastInPlace bool
	reused      int // steps that took the previous step's keys and values (tests read it)
	moved       int // in-place rows copied to another row of the buffers (tests read it)
}

// slot is what a row of the in-place buffers holds: the first n positions of sequence seq's
// keys and values (n 0: nothing).
type slot struct {
	seq uint64
	n   int
}

// reusable reports whether a decode step on the decoder-with-past graph over p's rows can
// take the previous step's present as its past: that step ran there too, over the same rows
// in the same order, each now one token longer. A row's keys and values are a function of its
// tokens, which only grow, so the previous present holds this step's past whatever happened
// to the blocks between (copies, a row preempted and its prefix found again in the cache).
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

// remember records a step over p's rows (of past and seq, on the in-place graph or not) for
// reusable: only a successful decode on the decoder-with-past graph leaves a present the next
// step can take (a prefill's is padded to its longest prompt; the in-place graph's rows are
// kept by place instead), and any other forgets. lastLens is each row's length after the
// step, less one.
func (sc *stepScratch) remember(p *stepplan.Plan, past, seq int, inPlace, ok bool) {
	sc.lastOK = ok && seq == 1 && !inPlace
	sc.lastInPlace = inPlace
	if !sc.lastOK {
		return
	}
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
			kv.Gather(p.Rows, l, kind, KVTensor{Data: sc.past[l][k], Batch: b, Positions: past}, AlignEnd)
		}
	}
	sc.step = Step{Batch: b, Past: past, Seq: seq, IDs: sc.ids, Mask: sc.mask, Positions: sc.pos,
		Logits: sc.logits, PastKV: sc.past, Present: sc.present}
	return &sc.step
}

// buildInPlace lays out one step on the in-place graph: its rows of the buffers chosen and
// each row's past brought there (place), row i's new tokens at the front of its row of ids,
// then padding.
func (sc *stepScratch) buildInPlace(p *stepplan.Plan, kv *KVStore, shape DecoderShape, positions int) *DecodeStep {
	b, seq := len(p.Rows), p.Seq()
	rowFloats := shape.Heads * positions * shape.HeadDim
	if len(sc.inPlace) != shape.Layers {
		sc.inPlace = make([][2][]float32, shape.Layers)
		sc.view = make([][2][]float32, shape.Layers)
	}
	sc.place(p, kv, shape, positions)
	sc.ids = grow(sc.ids, b*seq)
	sc.lens = grow(sc.lens, b)
	sc.fresh = grow(sc.fresh, b)
	sc.logits = grow(sc.logits, b*seq*shape.Vocab)
	for i := range p.Rows {
		row, t := &p.Rows[i], sc.at[i]-sc.base
		ids := sc.ids[t*seq : (t+1)*seq]
		for j := range ids {
			ids[j] = p.Pad
		}
		copy(ids, row.Tokens)
		sc.lens[t], sc.fresh[t] = int64(row.Past), int64(len(row.Tokens))
	}
	for l := range sc.view {
		for k := range sc.view[l] {
			sc.view[l][k] = sc.inPlace[l][k][sc.base*rowFloats : (sc.base+b)*rowFloats]
		}
	}
	sc.decode = DecodeStep{Batch: b, Seq: seq, IDs: sc.ids, Past: sc.lens, New: sc.fresh,
		KV: sc.view, Logits: sc.logits, positions: sc.decode.positions, seqLens: sc.decode.seqLens}
	return &sc.decode
}

// place chooses the row of the in-place buffers each of p's rows runs on (sc.at, from
// sc.base on) and brings its past there. The buffers keep each sequence's keys and values
// where its last in-place step left them, so that a row that stays gathers nothing, in
// whatever order the plan lists it; a sequence that ends costs a copy of one row, not a
// gather of every row after it.
//
// A step of first prompts (no past to bring) runs on the rows after every row the buffers
// hold, so that the next decode finds those rows where they were: unless that would hold
// more than twice the widest decode (prompts whose sequences never decode in place must not
// grow the buffers without bound), when it runs from row 0 and the buffers forget. A decode
// of b rows runs on rows [0, b): a row held there stays, one held further on is copied into a
// free row below b, and one not held (or held shorter: it stepped on the other graph) is
// gathered from its blocks.
func (sc *stepScratch) place(p *stepplan.Plan, kv *KVStore, shape DecoderShape, positions int) {
	b, rowFloats := len(p.Rows), shape.Heads*positions*shape.HeadDim
	sc.at = grow(sc.at, b)
	if p.Rows[0].Past == 0 { // first prompts: runsInPlace allows no other step with a row of none
		sc.base = len(sc.slots)
		if sc.base+b > 2*max(sc.widest, b) {
			sc.base, sc.slots = 0, sc.slots[:0]
		}
		sc.reserve(sc.base+b, rowFloats)
		for i := range p.Rows {
			if s := sc.held(p.Rows[i].Seq, -1); s >= 0 {
				sc.slots[s] = slot{} // a sequence computed again from the start (preempted)
			}
			sc.at[i] = sc.base + i
			sc.slots = append(sc.slots, slot{seq: p.Rows[i].Seq})
		}
		return
	}
	sc.base, sc.widest = 0, max(sc.widest, b)
	sc.reserve(max(b, len(sc.slots)), rowFloats)
	sc.from = grow(sc.from, b)
	sc.taken = grow(sc.taken, b)
	clear(sc.taken)
	gathered := 0
	for i := range p.Rows {
		row := &p.Rows[i]
		sc.at[i], sc.from[i] = -1, -1
		if s := sc.held(row.Seq, i); s >= 0 && sc.slots[s].n == row.Past {
			if s < b {
				sc.at[i], sc.taken[s] = s, true
			} else {
				sc.from[i] = s
			}
		}
	}
	free := 0
	for i := range p.Rows {
		if sc.at[i] >= 0 {
			continue
		}
		for sc.taken[free] {
			free++
		}
		t := free
		sc.at[i], sc.taken[t] = t, true
		if s := sc.from[i]; s >= 0 {
			// A row from past b into one below it: nothing below b is another's source.
			sc.copyRow(s, t, p.Rows[i].Past*shape.HeadDim, positions*shape.HeadDim, rowFloats)
			sc.moved++
			continue
		}
		for l := range sc.inPlace {
			for k, kind := range [2]KVKind{Key, Value} {
				kv.Gather(p.Rows[i:i+1], l, kind, KVTensor{Data: sc.inPlace[l][k][t*rowFloats : (t+1)*rowFloats], Batch: 1, Positions: positions}, AlignStart)
			}
		}
		gathered++
	}
	if gathered == 0 {
		sc.reused++
	}
	sc.slots = grow(sc.slots, b)
	for i := range p.Rows {
		sc.slots[sc.at[i]] = slot{seq: p.Rows[i].Seq}
	}
}

// held is the row of the buffers that holds sequence seq, or -1; hint is where it likely is
// (where the plan lists it: a batch that kept its order).
func (sc *stepScratch) held(seq uint64, hint int) int {
	if hint >= 0 && hint < len(sc.slots) && sc.slots[hint].seq == seq {
		return hint
	}
	for s := range sc.slots {
		if sc.slots[s].seq == seq {
			return s
		}
	}
	return -1
}

// reserve makes the buffers hold at least rows rows, keeping what they hold.
func (sc *stepScratch) reserve(rows, rowFloats int) {
	for l := range sc.inPlace {
		for k := range sc.inPlace[l] {
			buf := sc.inPlace[l][k]
			if n := rows * rowFloats; cap(buf) < n {
				grown := make([]float32, n, n+n/4)
				copy(grown, buf[:cap(buf)])
				buf = grown
			}
			sc.inPlace[l][k] = buf[:cap(buf)]
		}
	}
}

// copyRow copies the first n floats of every head (of head floats) of row from of the buffers
// (of rowFloats) into row to.
func (sc *stepScratch) copyRow(from, to, n, head, rowFloats int) {
	for l := range sc.inPlace {
		for k := range sc.inPlace[l] {
			src, dst := sc.inPlace[l][k][from*rowFloats:(from+1)*rowFloats], sc.inPlace[l][k][to*rowFloats:(to+1)*rowFloats]
			for h := 0; h < rowFloats; h += head {
				copy(dst[h:h+n], src[h:h+n])
			}
		}
	}
}

// forget drops what the buffers were said to hold, as a failed step does.
func (sc *stepScratch) forget() {
	sc.lastOK = false
	sc.slots = sc.slots[:0]
}

// settle records what the buffers hold after an in-place step over p: each row's positions
// through its new ones, or, when the step failed, nothing (the graph may have written part of
// any row).
func (sc *stepScratch) settle(p *stepplan.Plan, ok bool) {
	if !ok {
		sc.forget()
		return
	}
	for i := range p.Rows {
		sc.slots[sc.at[i]].n = p.Rows[i].Past + len(p.Rows[i].Tokens)
	}
}
