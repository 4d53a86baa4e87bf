// Package warmpool keeps the models a server loads on demand: a model is loaded on its first
// request (once, however many ask at the same time), stays resident while it is used, and is
// unloaded when it has been idle for its keep-alive, or, least recently used first, when a
// cap on resident models or a memory budget needs the room. Models the server configured are
// pinned: resident for the life of the process.
//
// # How to use it
//
//	p, err := warmpool.New(warmpool.Config{MaxResident: 4, MemoryBudget: 8 << 30, KeepAlive: 5 * time.Minute}, load, estimate, clk)
//	p.Pin("pii", piiModel, size)              // configured models
//	m, release, err := p.Acquire(ctx, "other-model", warmpool.KeepAlive{})
//	defer release()                           // the keep-alive starts when the last user releases
//	err = p.Preload(ctx, "warm-model")        // loaded now, to stay while requests say nothing
//
// load builds a model (and may take seconds); estimate gives its footprint before it is loaded,
// from its files, so that the budget is kept before the memory is spent, and says whether the
// name is a model at all. A request that finds its model loading waits for it as long as its
// context allows, then gets ErrLoading with the time the load is expected to take still; the
// model then stays, once loaded, until that time is past (and a grace), whatever its
// keep-alive, so that the retry finds it.
// The keep-alive a model keeps once idle is that of the request that gave it back last (the
// pool's when that request set none; for ever for a model preloaded).
// A load that would not fit even with every idle model unloaded gets ErrBusy, one that can
// never fit (larger than the budget's room beside the pinned models) a *TooLargeError.
package warmpool
