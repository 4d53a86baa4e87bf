// Package kvcache holds the keys and values of a decoder's attention for every running
// sequence, in fixed-size blocks drawn from one pool, as vLLM's paged attention does: a
// sequence owns a table of blocks instead of one tensor sized for its longest possible length,
// so memory follows the tokens actually held and a finished or aborted sequence gives its
// blocks back at once.
//
// # What it holds
//
// A Pool is one slab of float32: Blocks blocks of BlockTokens token positions, each holding,
// for every layer, the key and the value of every head (layout [layer][key|value][head]
// [position][dim] within a block, so that one head's positions are contiguous). It is sized by
// Config.Blocks or by a memory budget (Config.MemoryBytes) and allocated once.
//
// A Table is one sequence's list of blocks and the token ids it holds. Reserve makes room for
// more tokens (taking blocks from the free list, or evicting cached ones), Append records the
// ids of tokens whose keys and values the caller has written, Release gives everything back.
// Reserve never half-succeeds: when the pool cannot hold the tokens it takes nothing and
// reports false, and the caller (the decoder's scheduler) decides whom to preempt.
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
// write), so no sequence ever sees another's tokens.
//
// # Cost
//
// A Pool and its Tables are used from one goroutine (the decoder's step loop); the counters
// that metrics read are atomics. Tables are sized for Config.MaxSeqLen when made, and the pool
// keeps its free list, LRU and index preallocated, so a decode step in steady state (Reserve,
// Append, Gather, Scatter) does not allocate.
//
// # Metrics
//
// Pool.Collector reports a pool's blocks and prefix cache at scrape time (the sluice_kvcache_*
// families of README's metric table), from those atomics.
//
// # Use
//
//	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 16, MemoryBytes: 64 << 20,
//		Layers: 2, Heads: 4, HeadDim: 32, MaxSeqLen: 256})
//	t := pool.NewTable()
//	cached := pool.Match(t, prompt)            // tokens whose KV is already there
//	if !pool.Reserve(t, len(prompt)-cached) { ... } // room for the rest, or preempt someone
//	// run the model on prompt[cached:], then write its keys and values:
//	pool.Scatter(t, cached, layer, kvcache.Key, present, ...)
//	pool.Append(t, prompt[cached:])
//	...
//	pool.Release(t)
package kvcache
