package scheduler

import (
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/kvcache"
)

// stepScratch holds the loop's reusable buffers: the slices of sequences it sorts each
// iteration and the tensors of a step, grown to the largest step seen and reused after.
type stepScratch struct {
	rows, decode, prefill, group, gone, victims []*sequence

	step    engine.Step
	ids     []int64
	mask    []int64
	pos     []int64
	logits  []float32
	past    [][2][]float32
	present [][2][]float32
	tables  []*kvcache.Table

	// last is the row set of the previous decode step and lastPast its past length, while
	// its present tensors hold every row's keys and values: a decode step over the same rows
	// in the same order takes them as its past instead of gathering from the blocks.
	last     []*sequence
	lastLens []int // each row's cached tokens before the previous step
	lastPast int
	lastOK   bool
	reused   int // steps that took the previous present as their past (tests read it)
}

// reusable reports whether a decode step over rows can take the previous decode step's
// present as its past: the same rows, in the same order, each one token longer.
func (sc *stepScratch) reusable(rows []*sequence, past, seq int) bool {
	if !sc.lastOK || seq != 1 || past != sc.lastPast+1 || len(rows) != len(sc.last) {
		return false
	}
	for i, q := range rows {
		if sc.last[i] != q || q.table.Len() != sc.lastLens[i]+1 {
			return false
		}
	}
	return true
}

// remember records a successful step over rows for reusable; a prefill step, or a failed
// one, forgets.
func (sc *stepScratch) remember(rows []*sequence, st *engine.Step, ok bool) {
	sc.lastOK = ok && st.Seq == 1
	sc.last = append(sc.last[:0], rows...)
	sc.lastLens = sc.lastLens[:0]
	for _, q := range rows {
		sc.lastLens = append(sc.lastLens, q.table.Len())
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

// build lays out one step over rows: each row's cached positions (its table) as the past,
// the next take of its tokens not yet cached as the new positions, both left padded to the
// longest row, and the output buffers. The past is gathered from the pool's blocks.
func (sc *stepScratch) build(rows []*sequence, pool *kvcache.Pool, shape engine.DecoderShape, pad int64) *engine.Step {
	b := len(rows)
	past, seq := 0, 0
	for _, q := range rows {
		past = max(past, q.table.Len())
		seq = max(seq, q.take)
	}
	width := past + seq
	sc.ids = grow(sc.ids, b*seq)
	sc.mask = grow(sc.mask, b*width)
	sc.pos = grow(sc.pos, b*seq)
	sc.logits = grow(sc.logits, b*seq*shape.Vocab)
	sc.tables = grow(sc.tables, b)
	if len(sc.past) != shape.Layers {
		sc.past = make([][2][]float32, shape.Layers)
		sc.present = make([][2][]float32, shape.Layers)
	}
	cache := b * shape.Heads * shape.HeadDim
	for i, q := range rows {
		cached, fresh := q.table.Len(), q.take
		sc.tables[i] = q.table
		ids := sc.ids[i*seq : (i+1)*seq]
		pos := sc.pos[i*seq : (i+1)*seq]
		for j := range ids {
			ids[j], pos[j] = pad, 0
		}
		copy(ids[seq-fresh:], q.tokens[cached:cached+fresh])
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
	reuse := sc.reusable(rows, past, seq)
	if reuse {
		sc.reused++
	}
	for l := range shape.Layers {
		for k, kind := range [2]kvcache.Kind{kvcache.Key, kvcache.Value} {
			if reuse {
				// Every row grew by the one token the previous step computed: its present
				// is, position for position, this step's past.
				sc.past[l][k], sc.present[l][k] = sc.present[l][k], sc.past[l][k]
				sc.present[l][k] = grow(sc.present[l][k], cache*width)
				continue
			}
			sc.past[l][k] = grow(sc.past[l][k], cache*past)
			sc.present[l][k] = grow(sc.present[l][k], cache*width)
			pool.Gather(sc.tables, l, kind, kvcache.Tensor{Data: sc.past[l][k], Batch: b, Positions: past})
		}
	}
	sc.step = engine.Step{Batch: b, Past: past, Seq: seq, IDs: sc.ids, Mask: sc.mask, Positions: sc.pos,
		Logits: sc.logits, PastKV: sc.past, Present: sc.present}
	return &sc.step
}
