// Package kvcache is the bookkeeping of a decoder's paged KV cache, as vLLM's block pool is:
// which fixed-size blocks hold which sequence's tokens, drawn from one pool, so that a
// sequence owns a table of blocks instead of one tensor sized for its longest possible
// length, memory follows the tokens actually held, and a finished or aborted sequence gives
// its blocks back at once. It keeps block ids, reference counts, the token ids and prefix
// hashes of each block and the free list; it holds no keys or values. Those live with
// whoever runs the model (engine.KVStore, behind engine.Runner), which reads and writes a
// block where a table says.
//
// # What it holds
//
// A Pool is Blocks blocks of BlockTokens token positions. It is sized by Config.Blocks or by
// a memory budget (Config.MemoryBytes over what one block's keys and values take for the
// model's layers, heads and head dim, Config.BlockBytes), so that the store that holds the
// contents, allocated to the pool's Blocks, stays within the budget.
//
// A Table is one sequence's list of blocks (IDs) and the token ids it holds. Reserve makes
// room for more tokens (taking blocks from the free list, or evicting cached ones), Append
// records the ids of tokens whose keys and values the caller has had written, Release gives
// everything back. Reserve never half-succeeds: when the pool cannot hold the tokens it takes
// nothing and reports false, and the caller (the decoder's scheduler) decides whom to
// preempt.
//
// # Sharing
//
// Blocks are reference-counted. A full block is registered in a prefix cache under a hash of
// its tokens chained with its predecessor's, so Match lets a new sequence whose prompt starts
// with the same tokens take those blocks instead of recomputing them (hits counted). A full
// block is never written again, so sharing it is safe. A block whose sequences have all
// released it stays cached, still findable, until the free list runs dry and it is evicted
// (least recently released first; evictions counted). Fork gives a second sequence the same
// blocks; the first write into a shared, partly filled last block copies it first (copy on
// write), so no sequence ever sees another's tokens. The pool decides the copy: Reserve gives
// the table a fresh block and queues {From, To}; TakeCopies hands the queue to the caller,
// who has the contents copied before anything writes a block (the scheduler puts them in
// its next step plan, as vLLM's blocks_to_copy).
//
// # Cost
//
// A Pool and its Tables are used from one goroutine (the decoder's step loop); the counters
// that metrics read are atomics. Tables are sized for Config.MaxSeqLen when made, and the pool
// keeps its free list, LRU and index preallocated, so a decode step in steady state (Reserve,
// TakeCopies, Append) does not allocate.
//
// # Metrics
//
// Pool.Collector reports a pool's blocks and prefix cache at scrape time (the sluice_kvcache_*
// families of docs/METRICS.md's table), from those atomics.
//
// # Use
//
//	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 16, MemoryBytes: 64 << 20,
//		Layers: 2, Heads: 4, HeadDim: 32, MaxSeqLen: 256})
//	t := pool.NewTable(scope)                  // the caller's: prefixes are shared within it
//	cached := pool.Match(t, prompt)            // tokens whose KV is already there
//	if !pool.Reserve(t, len(prompt)-cached) { ... } // room for the rest, or preempt someone
//	// the runner makes pool.TakeCopies(), runs the model on prompt[cached:] and writes
//	// their keys and values into t.IDs()' blocks after the first cached positions; then:
//	pool.Append(t, prompt[cached:])
//	...
//	pool.Release(t)
//
// # Settings
//
// The server's environment sets a Config's size (BlockTokens, Blocks, MemoryBytes) through its
// tags: env names the variable (with the prefix SLUICE_) and envDefault its default; the
// geometry is the model's. cmd/serve reads them (its envvars.go) and names each Problem of
// Validate by the variable its field's tag declares.
package kvcache
