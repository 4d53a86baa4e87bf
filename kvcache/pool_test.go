package kvcache

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sluice-serving/sluice/settings"
)

// A small geometry: 2 layers, 2 heads of 3 dims, blocks of 4 tokens.
func testConfig(blocks int) Config {
	return Config{BlockTokens: 4, Blocks: blocks, Layers: 2, Heads: 2, HeadDim: 3, MaxSeqLen: 64}
}

func newTestPool(t testing.TB, blocks int) *Pool {
	t.Helper()
	p, err := NewPool(testConfig(blocks))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// value stands for the keys and values a model would compute for the token at pos after the
// tokens before it: a function of the whole prefix, so a cached block is right only for the
// same one.
func value(prefix []int64, pos int) uint64 {
	return chainHash(uint64(pos*131), prefix[:pos+1])
}

// contents plays the runner that holds what the pool's blocks hold (the pool keeps ids
// only): one value per position of every block, and the copies on write made as a runner
// makes them, before the next write.
type contents struct {
	p     *Pool
	slots []uint64 // bt per block
}

func newContents(p *Pool) *contents {
	return &contents{p: p, slots: make([]uint64, p.Blocks()*p.bt)}
}

// copies makes the copies on write the pool has decided.
func (c *contents) copies() {
	for _, cp := range c.p.TakeCopies() {
		copy(c.slots[int(cp.To)*c.p.bt:(int(cp.To)+1)*c.p.bt], c.slots[int(cp.From)*c.p.bt:(int(cp.From)+1)*c.p.bt])
	}
}

// seq is the test's model of one sequence: the tokens it holds and its table.
type seq struct {
	ids []int64
	t   *Table
}

// write fills positions [from, len(ids)) of s as a model step would: the pending copies,
// each position's value into its block, then Append.
func write(p *Pool, c *contents, s *seq, ids []int64) {
	c.copies()
	for pos := s.t.Len(); pos < len(ids); pos++ {
		b := s.t.IDs()[pos/p.bt]
		c.slots[int(b)*p.bt+pos%p.bt] = value(ids, pos)
	}
	p.Append(s.t, ids[s.t.Len():])
	s.ids = ids
}

// check verifies what s reads back through its table: its own tokens' values and ids, in its
// own order.
func check(t *testing.T, p *Pool, c *contents, s *seq) {
	t.Helper()
	n := s.t.Len()
	if n != len(s.ids) {
		t.Fatalf("table holds %d tokens, the sequence %d", n, len(s.ids))
	}
	for pos, id := range s.ids {
		b := s.t.IDs()[pos/p.bt]
		if got, want := c.slots[int(b)*p.bt+pos%p.bt], value(s.ids, pos); got != want {
			t.Fatalf("pos %d: block %d holds %x, want %x", pos, b, got, want)
		}
		if got := p.tokens[int(b)*p.bt+pos%p.bt]; got != id {
			t.Fatalf("token %d: the pool has %d, the sequence %d", pos, got, id)
		}
	}
}

// invariants checks the pool's bookkeeping against the live tables.
func invariants(t *testing.T, p *Pool, live []*seq) {
	t.Helper()
	holders := make([]int32, len(p.ref))
	for _, s := range live {
		for _, b := range s.t.blocks {
			holders[b]++
		}
	}
	inFree := make([]bool, len(p.ref))
	for _, b := range p.free {
		if inFree[b] {
			t.Fatalf("block %d is on the free list twice", b)
		}
		inFree[b] = true
	}
	inLRU := make([]bool, len(p.ref))
	n := 0
	for b := p.lruHead; b != none; b = p.next[b] {
		if inLRU[b] || n > len(p.ref) {
			t.Fatal("the LRU has a cycle")
		}
		inLRU[b] = true
		n++
	}
	used, cached := 0, 0
	for b := range p.ref {
		switch {
		case p.ref[b] != holders[b]:
			t.Fatalf("block %d: ref %d, held by %d tables", b, p.ref[b], holders[b])
		case p.ref[b] > 0:
			used++
			if inFree[b] || inLRU[b] {
				t.Fatalf("block %d is held and also free or cached", b)
			}
		case p.meta[b].registered:
			cached++
			if !inLRU[b] || inFree[b] {
				t.Fatalf("cached block %d: in LRU %v, free %v", b, inLRU[b], inFree[b])
			}
		default:
			if !inFree[b] {
				t.Fatalf("block %d is neither held, cached nor free: leaked", b)
			}
		}
		if p.meta[b].registered && p.index[p.meta[b].hash] != BlockID(b) {
			t.Fatalf("registered block %d is not under its hash", b)
		}
	}
	st := p.Stats()
	if st.Used != used || st.Cached != cached || st.Free != len(p.free) || st.Free+st.Used+st.Cached != p.Blocks() {
		t.Fatalf("stats %+v, counted used %d cached %d free %d", st, used, cached, len(p.free))
	}
	if len(p.index) != cached+countRegisteredHeld(p) {
		t.Fatalf("index has %d entries for %d registered blocks", len(p.index), cached+countRegisteredHeld(p))
	}
}

func countRegisteredHeld(p *Pool) int {
	n := 0
	for b := range p.ref {
		if p.ref[b] > 0 && p.meta[b].registered {
			n++
		}
	}
	return n
}

// TestRandomLifecyclesNeverLeakOrShareWrites drives random admissions (with shared prompt
// prefixes), token appends, forks, finishes and aborts, with preemption when the pool runs
// out, and checks after every operation that no block leaks or is freed twice, that the free
// count is exact, and that every sequence reads back exactly its own tokens' keys and values.
func TestRandomLifecyclesNeverLeakOrShareWrites(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 99))
		p := newTestPool(t, 6+rng.IntN(30))
		c := newContents(p)
		bases := [][]int64{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 9, 9, 9, 9, 9, 9}, {7, 7, 7, 7, 7, 7, 7, 7}}
		var live []*seq
		remove := func(i int) {
			p.Release(live[i].t)
			live = slices.Delete(live, i, i+1)
		}
		for range 400 {
			switch op := rng.IntN(10); {
			case op < 3: // admit a prompt that often shares a prefix with an earlier one
				prompt := slices.Clone(bases[rng.IntN(len(bases))])
				prompt = prompt[:1+rng.IntN(len(prompt))]
				for range rng.IntN(6) {
					prompt = append(prompt, int64(rng.IntN(4)))
				}
				s := &seq{t: p.NewTable(0)}
				cached := p.Match(s.t, prompt)
				if cached >= len(prompt) || cached%p.bt != 0 {
					t.Fatalf("Match gave %d of %d tokens", cached, len(prompt))
				}
				s.ids = prompt[:cached]
				if !p.Reserve(s.t, len(prompt)-cached) {
					p.Release(s.t) // does not fit: not admitted
					break
				}
				write(p, c, s, prompt)
				live = append(live, s)
			case op < 7 && len(live) > 0: // one decode step of a sequence
				i := rng.IntN(len(live))
				s := live[i]
				if !p.Reserve(s.t, 1) {
					remove(rng.IntN(len(live))) // preempt someone; the step is retried later
					break
				}
				write(p, c, s, append(slices.Clone(s.ids), int64(rng.IntN(4))))
			case op < 8 && len(live) > 0:
				f := live[rng.IntN(len(live))]
				live = append(live, &seq{ids: slices.Clone(f.ids), t: p.Fork(f.t)})
			case len(live) > 0: // finish or abort
				remove(rng.IntN(len(live)))
			}
			invariants(t, p, live)
			for _, s := range live {
				check(t, p, c, s)
			}
		}
		for len(live) > 0 {
			remove(0)
		}
		invariants(t, p, nil)
		if st := p.Stats(); st.Used != 0 || st.Free+st.Cached != p.Blocks() {
			t.Fatalf("seed %d: after every release: %+v", seed, st)
		}
	}
}

func TestPrefixCacheSharesFullBlocksOnly(t *testing.T) {
	p := newTestPool(t, 16)
	kv := newContents(p)
	a := &seq{t: p.NewTable(0)}
	prompt := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if got := p.Match(a.t, prompt); got != 0 {
		t.Fatalf("cold cache matched %d", got)
	}
	p.Reserve(a.t, len(prompt))
	write(p, kv, a, prompt)
	b := &seq{t: p.NewTable(0)}
	// Same first 8 tokens (two full blocks), then different.
	other := []int64{1, 2, 3, 4, 5, 6, 7, 8, 42}
	if got := p.Match(b.t, other); got != 8 {
		t.Fatalf("matched %d tokens, want the two full blocks (8)", got)
	}
	if b.t.blocks[0] != a.t.blocks[0] || b.t.blocks[1] != a.t.blocks[1] {
		t.Fatal("the matched blocks are not a's")
	}
	b.ids = other[:8]
	p.Reserve(b.t, 1)
	write(p, kv, b, other)
	check(t, p, kv, a)
	check(t, p, kv, b)
	// A prompt that is exactly the cached blocks still leaves its last token to compute.
	c := &seq{t: p.NewTable(0)}
	if got := p.Match(c.t, prompt[:8]); got != 4 {
		t.Fatalf("matched %d tokens of an 8-token prompt, want 4", got)
	}
	st := p.Stats()
	if st.Hits != 3 || st.Lookups != 4 {
		t.Fatalf("stats %+v, want 3 hits of 4 lookups", st)
	}
	// Released blocks stay findable until evicted.
	p.Release(a.t)
	p.Release(b.t)
	p.Release(c.t)
	if st := p.Stats(); st.Used != 0 || st.Cached != 2 {
		t.Fatalf("after release: %+v, want the two full blocks cached", st)
	}
	d := &seq{t: p.NewTable(0)}
	if got := p.Match(d.t, prompt); got != 8 {
		t.Fatalf("after release matched %d, want 8", got)
	}
	p.Release(d.t)
	// Filling the pool evicts them, least recently released first.
	e := &seq{t: p.NewTable(0)}
	if !p.Reserve(e.t, 16*4) {
		t.Fatal("a pool of free and cached blocks refused its own size")
	}
	if st := p.Stats(); st.Evictions != 2 || st.Cached != 0 || st.Used != 16 {
		t.Fatalf("after filling: %+v, want 2 evictions", st)
	}
	if p.Reserve(p.NewTable(0), 1) {
		t.Fatal("a full pool reserved a block")
	}
}

// TestPrefixCacheKeepsScopesApart: a scope finds only its own blocks, a fork keeps its
// table's scope, and two scopes computing the same prompt each keep their own blocks.
func TestPrefixCacheKeepsScopesApart(t *testing.T) {
	p := newTestPool(t, 16)
	kv := newContents(p)
	prompt := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	a := &seq{t: p.NewTable(1)}
	p.Reserve(a.t, len(prompt))
	write(p, kv, a, prompt)
	for _, c := range []struct {
		scope Scope
		want  int
	}{{0, 0}, {2, 0}, {1, 8}} {
		tb := p.NewTable(c.scope)
		if got := p.Match(tb, prompt); got != c.want {
			t.Errorf("scope %d matched %d tokens of scope 1's prompt, want %d", c.scope, got, c.want)
		}
		p.Release(tb)
	}
	f := p.Fork(a.t)
	b := &seq{t: p.NewTable(2)}
	p.Reserve(b.t, len(prompt))
	write(p, kv, b, prompt)
	if b.t.blocks[0] == a.t.blocks[0] || b.t.hashes[0] == a.t.hashes[0] {
		t.Fatal("two scopes share a block")
	}
	for _, tb := range []*Table{p.NewTable(1), p.NewTable(2)} {
		if got := p.Match(tb, prompt); got != 8 {
			t.Errorf("a scope's own prompt matched %d, want 8", got)
		}
	}
	if f.scope != 1 {
		t.Errorf("a fork's scope is %d", f.scope)
	}
}

func TestForkCopiesTheSharedLastBlockOnWrite(t *testing.T) {
	p := newTestPool(t, 8)
	c := newContents(p)
	a := &seq{t: p.NewTable(0)}
	p.Reserve(a.t, 6)
	write(p, c, a, []int64{1, 2, 3, 4, 5, 6}) // one full block, one half full
	b := &seq{ids: slices.Clone(a.ids), t: p.Fork(a.t)}
	if st := p.Stats(); st.Used != 2 {
		t.Fatalf("fork took blocks: %+v", st)
	}
	p.Reserve(b.t, 1)
	// The pool decides the copy; the contents are its caller's to copy, before the write.
	if got, want := p.copies, []Copy{{From: a.t.blocks[1], To: b.t.blocks[1]}}; !slices.Equal(got, want) {
		t.Fatalf("copies on write %v, want %v", got, want)
	}
	write(p, c, b, append(slices.Clone(b.ids), 70))
	if len(p.copies) != 0 {
		t.Fatalf("copies %v left after they were taken", p.copies)
	}
	p.Reserve(a.t, 1)
	write(p, c, a, append(slices.Clone(a.ids), 80))
	if st := p.Stats(); st.CopiesOnWrite != 1 || st.Used != 3 {
		t.Fatalf("stats %+v, want one copy and 3 blocks", st)
	}
	if a.t.blocks[0] != b.t.blocks[0] || a.t.blocks[1] == b.t.blocks[1] {
		t.Fatal("the full block must stay shared and the written one must not")
	}
	check(t, p, c, a)
	check(t, p, c, b)
}

func TestReserveIsAllOrNothing(t *testing.T) {
	p := newTestPool(t, 3)
	a := &seq{t: p.NewTable(0)}
	if p.Reserve(a.t, 13) {
		t.Fatal("13 tokens fit in 3 blocks of 4")
	}
	if st := p.Stats(); st.Used != 0 || a.t.Blocks() != 0 {
		t.Fatalf("a failed Reserve took blocks: %+v", st)
	}
	if !p.Reserve(a.t, 12) {
		t.Fatal("12 tokens do not fit in 3 blocks of 4")
	}
	long := newTestPool(t, 100)
	if long.Reserve(long.NewTable(0), 65) {
		t.Fatal("a table longer than MaxSeqLen was reserved")
	}
}

// TestDecodeStepDoesNotAllocate: in steady state a step's bookkeeping is Reserve, taking the
// copies on write and Append, none of which allocates, across block boundaries and
// registrations. (Gathering and writing the keys and values is the runner's:
// engine.TestKVStoreStepDoesNotAllocate.)
func TestDecodeStepDoesNotAllocate(t *testing.T) {
	p := newTestPool(t, 64)
	var tables []*Table
	for i := range 4 {
		tb := p.NewTable(0)
		p.Reserve(tb, 3)
		p.Append(tb, []int64{int64(i), 1, 2})
		tables = append(tables, tb)
	}
	id := []int64{5}
	step := func() {
		for _, tb := range tables {
			if tb.Len() == 60 {
				p.Release(tb)
			}
			if !p.Reserve(tb, 1) {
				t.Fatal("out of blocks")
			}
			_ = p.TakeCopies()
			_ = tb.IDs()
			p.Append(tb, id)
		}
	}
	for range 100 {
		step() // reach steady state: every table has wrapped once
	}
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("a decode step allocates %v times", n)
	}
}

func TestConfigValidation(t *testing.T) {
	c := testConfig(0)
	c.MemoryBytes = 10 * c.BlockBytes()
	p, err := NewPool(c)
	if err != nil || p.Blocks() != 10 {
		t.Fatalf("sized by memory: %v blocks, %v", p, err)
	}
	bad := Config{BlockTokens: -1, Layers: 0, Heads: 2, HeadDim: 3, MaxSeqLen: 8}
	err = bad.Validate()
	var fields []string
	problems, other := settings.Problems(err)
	if len(other) > 0 {
		t.Fatalf("%v are not settings.Problems", other)
	}
	for _, p := range problems {
		fields = append(fields, p.Field)
	}
	if want := []string{"BlockTokens", "Layers", "MemoryBytes"}; !slices.Equal(fields, want) {
		t.Fatalf("fields %v, want %v", fields, want)
	}
	small := testConfig(0)
	small.MemoryBytes = small.BlockBytes() - 1
	if small.Validate() == nil {
		t.Fatal("a budget below one block accepted")
	}
}
