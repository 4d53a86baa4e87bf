package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/stepplan"
)

// A small geometry: 2 layers, 2 heads of 3 dims, blocks of 4 tokens.
var kvTestShape = DecoderShape{Layers: 2, Heads: 2, HeadDim: 3, Vocab: 7}

const kvTestBlockTokens = 4

// kvTestPool is a block pool and the store of its blocks' contents, as a runner pairs them.
func kvTestPool(t testing.TB, blocks int) (*kvcache.Pool, *KVStore) {
	t.Helper()
	p, err := kvcache.NewPool(kvcache.Config{BlockTokens: kvTestBlockTokens, Blocks: blocks, Layers: kvTestShape.Layers,
		Heads: kvTestShape.Heads, HeadDim: kvTestShape.HeadDim, MaxSeqLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewKVStore(kvTestShape, p.Blocks(), p.BlockTokens())
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

// kvValue is the key or value a model would compute for the token at pos after the tokens
// before it: a function of the whole prefix, so a cached block is right only for the same one.
func kvValue(prefix []int64, pos, layer int, kind KVKind, head, d int) float32 {
	h := uint64(pos*131 + layer*17 + int(kind)*7 + head*3 + d)
	for _, id := range prefix[:pos+1] {
		h = (h ^ uint64(id)) * 1099511628211
	}
	return float32(h%100000) / 100
}

// kvSeq is the test's model of one sequence: the tokens it holds and its table.
type kvSeq struct {
	ids []int64
	t   *kvcache.Table
}

// row is the sequence as a plan row of its first past tokens.
func (q *kvSeq) row(past int) stepplan.Row {
	var blocks []int32
	for _, b := range q.t.IDs() {
		blocks = append(blocks, int32(b))
	}
	return stepplan.Row{Past: past, Blocks: blocks}
}

// kvWrite fills positions [from, len(ids)) of q as a runner does after a step: the pool's
// copies on write, Scatter from a tensor, then Append.
func kvWrite(p *kvcache.Pool, s *KVStore, q *kvSeq, ids []int64) {
	for _, c := range p.TakeCopies() {
		s.Copy(int32(c.From), int32(c.To))
	}
	from := q.t.Len()
	n := len(ids) - from
	src := KVTensor{Batch: 1, Positions: n, Data: make([]float32, s.heads*n*s.dim)}
	for layer := range s.layers {
		for _, kind := range []KVKind{Key, Value} {
			for h := range s.heads {
				for j := range n {
					for d := range s.dim {
						src.Data[(h*n+j)*s.dim+d] = kvValue(ids, from+j, layer, kind, h, d)
					}
				}
			}
			s.Scatter(q.row(0).Blocks, from, 0, 0, n, layer, kind, src)
		}
	}
	p.Append(q.t, ids[from:])
	q.ids = ids
}

// kvCheck verifies what q reads back through Gather: its own tokens' values, in its own
// order, after extra positions of padding that Gather must zero.
func kvCheck(t *testing.T, s *KVStore, q *kvSeq, extra int) {
	t.Helper()
	n := q.t.Len()
	if n != len(q.ids) {
		t.Fatalf("table holds %d tokens, the sequence %d", n, len(q.ids))
	}
	positions := n + extra
	dst := KVTensor{Batch: 1, Positions: positions, Data: make([]float32, s.heads*positions*s.dim)}
	for i := range dst.Data {
		dst.Data[i] = -1 // Gather must overwrite the padding too
	}
	for layer := range s.layers {
		for _, kind := range []KVKind{Key, Value} {
			s.Gather([]stepplan.Row{q.row(n)}, layer, kind, dst, AlignEnd)
			for h := range s.heads {
				for pos := range positions {
					for d := range s.dim {
						got := dst.Data[(h*positions+pos)*s.dim+d]
						want := float32(0)
						if pos >= extra {
							want = kvValue(q.ids, pos-extra, layer, kind, h, d)
						}
						if got != want {
							t.Fatalf("layer %d kind %d head %d pos %d dim %d: %v, want %v", layer, kind, h, pos, d, got, want)
						}
					}
				}
			}
		}
	}
}

// TestKVStoreGathersWhatEachSequenceWrote drives random admissions (with shared prompt
// prefixes), token appends, forks, finishes and aborts through a block pool, with preemption
// when it runs out, and checks after every operation that every sequence reads back, left
// padded, exactly its own tokens' keys and values: the store follows the pool's tables and
// makes its copies on write.
func TestKVStoreGathersWhatEachSequenceWrote(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 99))
		p, s := kvTestPool(t, 6+rng.IntN(30))
		bases := [][]int64{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 9, 9, 9, 9, 9, 9}, {7, 7, 7, 7, 7, 7, 7, 7}}
		var live []*kvSeq
		remove := func(i int) {
			p.Release(live[i].t)
			live = slices.Delete(live, i, i+1)
		}
		for step := range 400 {
			switch op := rng.IntN(10); {
			case op < 3: // admit a prompt that often shares a prefix with an earlier one
				prompt := slices.Clone(bases[rng.IntN(len(bases))])
				prompt = prompt[:1+rng.IntN(len(prompt))]
				for range rng.IntN(6) {
					prompt = append(prompt, int64(rng.IntN(4)))
				}
				q := &kvSeq{t: p.NewTable(0)}
				cached := p.Match(q.t, prompt)
				q.ids = prompt[:cached]
				if !p.Reserve(q.t, len(prompt)-cached) {
					p.Release(q.t) // does not fit: not admitted
					break
				}
				kvWrite(p, s, q, prompt)
				live = append(live, q)
			case op < 7 && len(live) > 0: // one decode step of a sequence
				i := rng.IntN(len(live))
				q := live[i]
				if !p.Reserve(q.t, 1) {
					remove(rng.IntN(len(live))) // preempt someone; the step is retried later
					break
				}
				kvWrite(p, s, q, append(slices.Clone(q.ids), int64(rng.IntN(4))))
			case op < 8 && len(live) > 0:
				f := live[rng.IntN(len(live))]
				live = append(live, &kvSeq{ids: slices.Clone(f.ids), t: p.Fork(f.t)})
			case len(live) > 0: // finish or abort
				remove(rng.IntN(len(live)))
			}
			for _, q := range live {
				kvCheck(t, s, q, step%3)
			}
		}
		for len(live) > 0 {
			remove(0)
		}
	}
}

// TestKVStoreForkCopiesTheSharedLastBlockOnWrite: two sequences that share a half-full block
// each write their own next token, and each reads back its own.
func TestKVStoreForkCopiesTheSharedLastBlockOnWrite(t *testing.T) {
	p, s := kvTestPool(t, 8)
	a := &kvSeq{t: p.NewTable(0)}
	p.Reserve(a.t, 6)
	kvWrite(p, s, a, []int64{1, 2, 3, 4, 5, 6}) // one full block, one half full
	b := &kvSeq{ids: slices.Clone(a.ids), t: p.Fork(a.t)}
	p.Reserve(b.t, 1)
	kvWrite(p, s, b, append(slices.Clone(b.ids), 70))
	p.Reserve(a.t, 1)
	kvWrite(p, s, a, append(slices.Clone(a.ids), 80))
	if st := p.Stats(); st.CopiesOnWrite != 1 || st.Used != 3 {
		t.Fatalf("stats %+v, want one copy and 3 blocks", st)
	}
	kvCheck(t, s, a, 0)
	kvCheck(t, s, b, 0)
}

// TestKVStoreStepDoesNotAllocate: in steady state a step's KV work is a Scatter per row and a
// Gather of the batch, neither of which allocates, across block boundaries.
func TestKVStoreStepDoesNotAllocate(t *testing.T) {
	p, s := kvTestPool(t, 64)
	var tables []*kvcache.Table
	rows := make([]stepplan.Row, 4)
	for i := range 4 {
		tb := p.NewTable(0)
		p.Reserve(tb, 3)
		p.Append(tb, []int64{int64(i), 1, 2})
		tables = append(tables, tb)
		rows[i].Blocks = make([]int32, 0, 16)
	}
	src := KVTensor{Batch: len(tables), Positions: 1, Data: make([]float32, len(tables)*s.heads*s.dim)}
	dst := KVTensor{Batch: len(tables), Positions: 64, Data: make([]float32, len(tables)*s.heads*64*s.dim)}
	id := []int64{5}
	step := func() {
		for i, tb := range tables {
			if tb.Len() == 60 {
				p.Release(tb)
			}
			if !p.Reserve(tb, 1) {
				t.Fatal("out of blocks")
			}
			rows[i].Blocks = rows[i].Blocks[:0]
			for _, b := range tb.IDs() {
				rows[i].Blocks = append(rows[i].Blocks, int32(b))
			}
			for layer := range s.layers {
				s.Scatter(rows[i].Blocks, tb.Len(), i, 0, 1, layer, Key, src)
				s.Scatter(rows[i].Blocks, tb.Len(), i, 0, 1, layer, Value, src)
			}
			p.Append(tb, id)
			rows[i].Past = tb.Len()
		}
		for layer := range s.layers {
			s.Gather(rows, layer, Key, dst, AlignEnd)
			s.Gather(rows, layer, Value, dst, AlignEnd)
		}
	}
	for range 100 {
		step() // reach steady state: every table has wrapped once
	}
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("a decode step allocates %v times", n)
	}
}

func TestNewKVStoreRefusesWhatItCannotHold(t *testing.T) {
	for _, c := range []struct {
		shape         DecoderShape
		blocks, width int
	}{
		{kvTestShape, 0, 16}, {kvTestShape, 1 << 25, 16}, {kvTestShape, 4, 0}, {kvTestShape, 4, 2048},
		{DecoderShape{Layers: 0, Heads: 2, HeadDim: 3}, 4, 16}, {DecoderShape{Layers: 2, Heads: 2, HeadDim: 0}, 4, 16},
	} {
		if _, err := NewKVStore(c.shape, c.blocks, c.width); err == nil {
			t.Errorf("%+v, %d blocks of %d: accepted", c.shape, c.blocks, c.width)
		}
	}
}
