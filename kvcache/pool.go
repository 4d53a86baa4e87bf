package kvcache

import (
	"encoding/binary"
	"hash/maphash"
	"sync/atomic"

	"github.com/sluice-serving/sluice/settings"
)

// Config sets a Pool's geometry and size. The tags are where the server's environment sets
// the size (SLUICE_ and the env tag; see the package documentation); the geometry is the
// model's.
type Config struct {
	// BlockTokens is how many token positions one block holds (default 16).
	BlockTokens int `env:"KV_BLOCK_TOKENS" envDefault:"16"`
	// Blocks is the pool's size in blocks. When 0, MemoryBytes decides.
	Blocks int `env:"KV_BLOCKS" envDefault:"0"`
	// MemoryBytes is the budget for keys and values when Blocks is 0: as many blocks as fit.
	MemoryBytes int64 `env:"KV_MEMORY_BYTES" envDefault:"67108864"`
	// Layers, Heads and HeadDim are the model's: whoever holds a block's keys and values
	// holds Layers x 2 x Heads x BlockTokens x HeadDim float32 values for it, which is what
	// MemoryBytes buys a block of. The pool itself keeps none of them.
	Layers, Heads, HeadDim int
	// MaxSeqLen is the longest sequence, in tokens, a Table must hold (the model's maximum
	// positions); tables are made with room for that many blocks.
	MaxSeqLen int
}

// DefaultBlockTokens is the block size when Config.BlockTokens is 0.
const DefaultBlockTokens = 16

// maxBlocks keeps block ids in an int32 and the index arithmetic of the slab that holds the
// blocks' contents far from overflow.
const maxBlocks = 1 << 24

// BlockBytes is the memory one block's keys and values take, wherever they are held.
func (c Config) BlockBytes() int64 {
	return int64(c.Layers) * 2 * int64(c.Heads) * int64(c.blockTokens()) * int64(c.HeadDim) * 4
}

func (c Config) blockTokens() int {
	if c.BlockTokens == 0 {
		return DefaultBlockTokens
	}
	return c.BlockTokens
}

// blocks is the pool's size in blocks, from Blocks or from the memory budget.
func (c Config) blocks() int {
	if c.Blocks > 0 || c.BlockBytes() <= 0 {
		return c.Blocks
	}
	return int(min(c.MemoryBytes/c.BlockBytes(), maxBlocks))
}

// Validate reports every field that is out of range: the result joins one *settings.Problem
// per bad field.
func (c Config) Validate() error {
	check := settings.For("kvcache")
	bad := check.Addf
	if bt := c.blockTokens(); bt < 1 || bt > 1024 {
		bad("BlockTokens", "must be between 1 and 1024 (0: %d), got %d", DefaultBlockTokens, c.BlockTokens)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Layers", c.Layers}, {"Heads", c.Heads}, {"HeadDim", c.HeadDim}, {"MaxSeqLen", c.MaxSeqLen}} {
		if f.v < 1 || f.v > MaxSeqLen {
			bad(f.name, "must be between 1 and %d, got %d", MaxSeqLen, f.v)
		}
	}
	switch {
	case c.Blocks < 0 || c.Blocks > maxBlocks:
		bad("Blocks", "must be between 0 (size by MemoryBytes) and %d, got %d", maxBlocks, c.Blocks)
	case c.Blocks == 0 && c.MemoryBytes <= 0:
		bad("MemoryBytes", "must be positive when Blocks is 0, got %d", c.MemoryBytes)
	case c.Blocks == 0 && c.BlockBytes() > 0 && c.MemoryBytes < c.BlockBytes():
		bad("MemoryBytes", "holds no block: one block takes %d bytes, got %d", c.BlockBytes(), c.MemoryBytes)
	}
	return check.Err()
}

// MaxSeqLen is the longest sequence a pool's tables are made for (and the bound of each of
// the geometry's sizes): a model of more positions is served at most this many.
const MaxSeqLen = 1 << 16

// BlockID names a block of a Pool.
type BlockID int32

const none BlockID = -1

// Pool is the blocks of one decoder model. See the package documentation.
type Pool struct {
	bt              int
	maxBlocksPerSeq int

	ref    []int32   // sequences holding each block
	free   []BlockID // stack of blocks nobody holds and no cache keeps
	tokens []int64   // bt per block: the token ids a block holds
	meta   []blockMeta
	index  map[uint64]BlockID // prefix cache: chained hash of a full block -> block
	// lru lists the cached blocks nobody holds, least recently released first: the ones
	// eviction takes. prev and next are indexed by block; none ends the list.
	lruHead, lruTail BlockID
	prev, next       []BlockID

	// copies are the copies on write decided since TakeCopies last took them.
	copies []Copy

	stats counters
}

// Copy is a copy on write: block To must hold block From's keys and values before anyone
// reads or writes To. The pool only decides it; whoever holds the contents makes it.
type Copy struct {
	From, To BlockID
}

type blockMeta struct {
	hash       uint64
	parentHash uint64
	registered bool // in index under hash
}

// counters are what metrics read from other goroutines.
type counters struct {
	used      atomic.Int64 // blocks with ref > 0
	cached    atomic.Int64 // registered blocks with ref 0: reusable on a hit, evictable
	hits      atomic.Uint64
	lookups   atomic.Uint64
	evictions atomic.Uint64
	cows      atomic.Uint64
}

// NewPool checks cfg and allocates the pool.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.blocks()
	bt := cfg.blockTokens()
	p := &Pool{
		bt:              bt,
		maxBlocksPerSeq: (cfg.MaxSeqLen + bt - 1) / bt,
		ref:             make([]int32, n),
		free:            make([]BlockID, n),
		tokens:          make([]int64, n*bt),
		meta:            make([]blockMeta, n),
		index:           make(map[uint64]BlockID, n),
		lruHead:         none, lruTail: none,
		prev: make([]BlockID, n), next: make([]BlockID, n),
		// At most one copy per table between two steps, and rarely that: room for a few
		// keeps a steady step free of allocation.
		copies: make([]Copy, 0, 16),
	}
	for i := range p.free {
		p.free[i] = BlockID(n - 1 - i) // pop order 0, 1, 2, ...
	}
	return p, nil
}

// Blocks is the pool's size in blocks.
func (p *Pool) Blocks() int { return len(p.ref) }

// BlockTokens is how many token positions a block holds.
func (p *Pool) BlockTokens() int { return p.bt }

// MaxSequence is the longest sequence the pool can hold when it holds nothing else: its
// blocks, or the longest sequence it was made for, whichever is shorter.
func (p *Pool) MaxSequence() int { return min(len(p.ref), p.maxBlocksPerSeq) * p.bt }

// Stats is a snapshot of the pool's counters; safe to call from any goroutine.
type Stats struct {
	// Free, Used and Cached partition the blocks: Free nobody holds nor caches, Used some
	// sequence holds, Cached only the prefix cache keeps (reused on a hit, evicted when
	// free blocks run out).
	Free, Used, Cached int
	// Lookups counts full prompt blocks looked up in the prefix cache; Hits those found.
	Lookups, Hits uint64
	// Evictions counts cached blocks taken back for other tokens; CopiesOnWrite counts
	// shared blocks copied before a write.
	Evictions, CopiesOnWrite uint64
}

// Stats reads the counters.
func (p *Pool) Stats() Stats {
	used, cached := int(p.stats.used.Load()), int(p.stats.cached.Load())
	return Stats{
		Free: len(p.ref) - used - cached, Used: used, Cached: cached,
		Lookups: p.stats.lookups.Load(), Hits: p.stats.hits.Load(),
		Evictions: p.stats.evictions.Load(), CopiesOnWrite: p.stats.cows.Load(),
	}
}

// Table is one sequence's blocks. Make it with NewTable; it is used on the pool's goroutine.
type Table struct {
	blocks []BlockID // cap: the pool's maxBlocksPerSeq
	n      int       // tokens held (written and appended)
	// hashes[i] is the chained hash of full block i: its tokens and every token before, and
	// the table's scope.
	hashes []uint64
	scope  Scope
}

// Scope keeps prefix caches apart: a table finds in the cache only the blocks that tables of
// its own scope computed. A hit can be seen (in the metrics, in the time to a first token), so
// callers who must not learn each other's prompts (tenants) are given different scopes.
type Scope uint64

// NewTable makes an empty table of scope with room for the longest sequence.
func (p *Pool) NewTable(scope Scope) *Table {
	return &Table{blocks: make([]BlockID, 0, p.maxBlocksPerSeq), hashes: make([]uint64, 0, p.maxBlocksPerSeq), scope: scope}
}

// Len is the number of tokens the table holds.
func (t *Table) Len() int { return t.n }

// Blocks is the number of blocks the table holds, including reserved room.
func (t *Table) Blocks() int { return len(t.blocks) }

// IDs is the table's blocks in position order, reserved room included: position p lives in
// block IDs()[p/BlockTokens]. The slice is the table's; read it before the next Reserve.
func (t *Table) IDs() []BlockID { return t.blocks }

// Match looks the longest prefix of prompt up in the prefix cache, among the blocks of t's
// scope, and makes t hold the full blocks found; t must be empty. It returns how many tokens of prompt t now holds: a multiple
// of the block size, and always less than len(prompt), so that the caller still runs at least
// the prompt's last token and has its logits.
func (p *Pool) Match(t *Table, prompt []int64) int {
	if t.n != 0 || len(t.blocks) != 0 {
		panic("kvcache: Match on a table that holds tokens")
	}
	parent := uint64(t.scope)
	for end := p.bt; end <= len(prompt)-1 && len(t.blocks) < p.maxBlocksPerSeq; end += p.bt {
		p.stats.lookups.Add(1)
		ids := prompt[end-p.bt : end]
		h := chainHash(parent, ids)
		b, ok := p.index[h]
		if !ok || p.meta[b].parentHash != parent || !equal(p.blockTokens(b), ids) {
			break
		}
		p.stats.hits.Add(1)
		p.hold(b)
		t.blocks = append(t.blocks, b)
		t.hashes = append(t.hashes, h)
		t.n = end
		parent = h
	}
	return t.n
}

// Reserve makes room in t for n more tokens after those it holds: blocks from the free list,
// or cached blocks evicted, and a private copy of t's last block if it is shared and not
// full (copy on write: the copy of the contents is left to TakeCopies' caller). It returns
// false, and changes nothing, when the pool cannot supply them all, or when t would exceed
// the longest sequence.
func (p *Pool) Reserve(t *Table, n int) bool {
	if n <= 0 {
		return n == 0
	}
	blocks := (t.n + n + p.bt - 1) / p.bt
	if blocks > p.maxBlocksPerSeq {
		return false
	}
	grow := max(blocks-len(t.blocks), 0)
	cow := t.n%p.bt != 0 && p.ref[t.blocks[t.n/p.bt]] > 1
	if grow+boolInt(cow) > len(p.free)+int(p.stats.cached.Load()) {
		return false
	}
	if cow {
		i := t.n / p.bt
		old := t.blocks[i]
		b := p.take()
		p.copies = append(p.copies, Copy{From: old, To: b})
		copy(p.blockTokens(b), p.blockTokens(old))
		p.drop(old)
		t.blocks[i] = b
		p.stats.cows.Add(1)
	}
	for range grow {
		t.blocks = append(t.blocks, p.take())
	}
	return true
}

// Append records ids as the next tokens of t, whose keys and values the caller has had
// written into the reserved room. A block that becomes full is registered in the prefix
// cache. It panics if t has no room reserved for them: that is a bug in the caller.
func (p *Pool) Append(t *Table, ids []int64) {
	if t.n+len(ids) > len(t.blocks)*p.bt {
		panic("kvcache: Append past the reserved room")
	}
	for _, id := range ids {
		b := t.blocks[t.n/p.bt]
		p.tokens[int(b)*p.bt+t.n%p.bt] = id
		t.n++
		if t.n%p.bt == 0 {
			p.register(t, t.n/p.bt-1)
		}
	}
}

// TakeCopies returns the copies on write Reserve has decided since the last call, in the
// order they must be made, and forgets them. A copy's source stays valid until the copy is
// made as long as nothing is written into any block before: the caller makes them before
// its next write. The slice is the pool's, valid until the next Reserve.
func (p *Pool) TakeCopies() []Copy {
	c := p.copies
	p.copies = p.copies[:0]
	return c
}

// Release gives back every block t holds and empties it.
func (p *Pool) Release(t *Table) {
	for i := len(t.blocks) - 1; i >= 0; i-- {
		p.drop(t.blocks[i])
	}
	t.blocks = t.blocks[:0]
	t.hashes = t.hashes[:0]
	t.n = 0
}

// Fork returns a new table holding the same tokens in the same blocks. Whichever table
// writes first into a shared block that is not full copies it (Reserve does).
func (p *Pool) Fork(t *Table) *Table {
	f := p.NewTable(t.scope)
	for _, b := range t.blocks[:(t.n+p.bt-1)/p.bt] {
		p.hold(b)
		f.blocks = append(f.blocks, b)
	}
	f.hashes = append(f.hashes, t.hashes...)
	f.n = t.n
	return f
}

// register puts t's i-th block, now full, in the prefix cache, chained to the blocks before
// it. When a block with the same tokens after the same prefix is registered already, it keeps
// its place and this one stays private.
func (p *Pool) register(t *Table, i int) {
	b := t.blocks[i]
	parent := uint64(t.scope)
	if i > 0 {
		parent = t.hashes[i-1]
	}
	h := chainHash(parent, p.blockTokens(b))
	t.hashes = append(t.hashes, h)
	if _, taken := p.index[h]; taken {
		return
	}
	p.meta[b] = blockMeta{hash: h, parentHash: parent, registered: true}
	p.index[h] = b
}

// hold adds a holder to b, taking it off the LRU if only the cache kept it.
func (p *Pool) hold(b BlockID) {
	if p.ref[b] == 0 {
		p.unlink(b)
		p.stats.cached.Add(-1)
		p.stats.used.Add(1)
	}
	p.ref[b]++
}

// drop removes a holder from b; a block nobody holds goes to the LRU when the prefix cache
// keeps it, else to the free list.
func (p *Pool) drop(b BlockID) {
	p.ref[b]--
	switch {
	case p.ref[b] > 0:
		return
	case p.ref[b] < 0:
		panic("kvcache: block released twice")
	}
	p.stats.used.Add(-1)
	if p.meta[b].registered {
		p.pushLRU(b)
		p.stats.cached.Add(1)
		return
	}
	p.free = append(p.free, b)
}

// take returns a block for one holder: a free one, or the least recently released cached
// block, which leaves the prefix cache. The caller has checked that one exists.
func (p *Pool) take() BlockID {
	var b BlockID
	if n := len(p.free); n > 0 {
		b = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		b = p.lruHead
		p.unlink(b)
		delete(p.index, p.meta[b].hash)
		p.meta[b] = blockMeta{}
		p.stats.cached.Add(-1)
		p.stats.evictions.Add(1)
	}
	p.ref[b] = 1
	p.stats.used.Add(1)
	return b
}

func (p *Pool) pushLRU(b BlockID) {
	p.prev[b], p.next[b] = p.lruTail, none
	if p.lruTail != none {
		p.next[p.lruTail] = b
	} else {
		p.lruHead = b
	}
	p.lruTail = b
}

func (p *Pool) unlink(b BlockID) {
	if p.prev[b] != none {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.lruHead = p.next[b]
	}
	if p.next[b] != none {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.lruTail = p.prev[b]
	}
	p.prev[b], p.next[b] = none, none
}

func (p *Pool) blockTokens(b BlockID) []int64 {
	return p.tokens[int(b)*p.bt : (int(b)+1)*p.bt]
}

// chainHash is a block's hash: its parent's and its token ids', keyed by a seed each process
// draws. Match trusts a block whose hash, parent hash and tokens agree, so a prefix made to
// collide with another's (FNV, which this was, is no obstacle to that) would be served keys
// and values computed after the other; a caller cannot aim at a seed it never sees.
func chainHash(parent uint64, ids []int64) uint64 {
	var h maphash.Hash
	h.SetSeed(chainSeed)
	var word [8]byte
	binary.LittleEndian.PutUint64(word[:], parent)
	_, _ = h.Write(word[:])
	for _, id := range ids {
		binary.LittleEndian.PutUint64(word[:], uint64(id))
		_, _ = h.Write(word[:])
	}
	return h.Sum64()
}

var chainSeed = maphash.MakeSeed()

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
