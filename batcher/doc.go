// Package batcher turns single inference requests into batches for one endpoint, so that the
// engine runs many sequences per pass without padding short texts to long ones and without
// letting the queue grow without bound.
//
// # What it does
//
// Each endpoint (/analyze, /pii/extract) owns one Batcher. A caller has already tokenized its
// text into one or more windows and calls Submit with the request and its Cost: how many
// sequences it adds to a batch and how long the longest is, and its priority class
// (admission.Interactive or admission.Bulk: the classes are the admission layer's, since the
// Batcher is the admission.Queue its Gate guards). Each class waits in its own bounded queue
// (QueueSize requests);
// past that bound Submit fails at once with ErrQueueFull, which the HTTP layer turns into a 503,
// so memory stays flat under any overload.
//
// One formation loop per Batcher builds batches, and only when one of the Workers is free to
// run it: requests nobody could serve yet stay in the queue, where Load (and so the admission
// layer) sees them. A batch holds one class and always starts with that class's oldest waiting
// request, so nothing is overtaken within its class. When both classes have a batch ready, a
// smooth weighted round robin picks which one goes (Config.Weights, 4:1 by default:
// I I B I I ...), so Interactive gets most turns and Bulk is never starved; Limits reports
// the weights, so the admission layer's estimates follow them.
// MaxBulkWorkers can keep some workers out of Bulk's reach, so that a bulk flood never makes
// an interactive request wait for a bulk batch to finish.
// Companions come from the oldest request's power-of-two length bucket, then the neighbouring
// buckets, as long as the batch stays within MaxBatchSize sequences and MaxPaddedTokens
// (sequences x longest sequence). The batch goes when it is full, when the oldest request has
// waited MaxWait, or at once while Close drains; "full" means not even one more sequence as
// long as its longest would fit. MaxWait 0 means no window: whatever waits goes as soon as a
// worker is free. A request larger than the whole budget runs alone.
// Batching pays most on short sequences and padding is pure waste, which is why batches
// are budgeted in padded tokens and grouped by length rather than filled in arrival order.
//
// MaxQueueWait bounds how long a request may wait for dispatch. The loop arms its one timer for
// the earliest of the batch window and this limit; a request still waiting when its limit
// comes (a worker free at that instant takes it first) fails with ErrExpired, is never
// computed, and its slot is free at once, so the HTTP layer can answer 503 max_wait.
//
// A caller whose context ends while it waits is taken out of the queue at once (an O(1)
// unlink) and its slot is free for the next request; it is never computed. A caller whose
// context ends while its batch runs gets ctx.Err() and its result is dropped; if every caller
// of a batch has left, the batch's context is cancelled so the runner can stop early.
//
// An error from Runner.Run goes to every request of the batch. A panic in Run is recovered and
// becomes ErrRunnerPanic for that batch; the panic value is not kept, since it may contain
// request text, and no error from this package names request content.
//
// All waiting goes through a clock.Clock, so tests drive the batch window with clock.NewFake.
//
// # How to use it
//
//	m := batcher.NewMetrics(prometheus.DefaultRegisterer) // once per registry, or nil
//	b, err := batcher.New("analyze", cfg, runner, clock.Real(), m)
//	if err != nil { ... }
//	b.Start(ctx)
//	out, err := b.Submit(reqCtx, admission.Bulk, in, batcher.Cost{Sequences: len(windows), MaxLen: longest})
//	// errors.Is(err, admission.ErrQueueFull): 503 backpressure, reason "saturated"
//	// errors.Is(err, admission.ErrExpired):   503 backpressure, reason "max_wait"
//	...
//	err = b.Close(shutdownCtx) // stop accepting, drain, or give up when shutdownCtx ends
//
// Work that goes in over several turns (a long text's windows, a chunk at a time, each behind
// what arrived meanwhile) uses a Series: opened before Close, it keeps the drain accepting its
// parts until Done, so a shutdown finishes what it had begun. When Close gives up, running
// batches see their context cancelled, and a runner that stops on it (the engine terminates
// its ONNX Runtime pass) answers its members with ErrClosed. The weighted turns between
// classes are admission.Picker's.
//
// # For the admission layer
//
// A Batcher implements admission.Queue. Load reads atomics only, takes no lock and does not
// allocate: waiting per class, running, busy workers and the cumulative count of completed
// requests (whose rate over time is the drain rate), and the same in sequences (Work,
// WorkDone: a request's cost is its windows, not one). Limits gives the bounds and weights the
// Gate's estimates use (QueueSize, MaxQueueWait, Workers, Weights with defaults applied).
// ErrQueueFull, ErrExpired and ErrClosed wrap the admission package's errors of those names.
//
// # Metrics
//
// NewMetrics registers the sluice_batcher_* families (docs/METRICS.md's table says what each
// counts); refusals are counted by the admission layer.
//
// # Traces
//
// A request submitted under a recording OpenTelemetry span gets two children of it once its
// batch has run: sluice.queue (its wait) and sluice.engine_pass (the batch's pass and size),
// made with that span's own tracer provider; under no span, nothing is made.
//
// # Settings
//
// The server's environment sets a Config through its tags: env names the variable (with the
// prefix SLUICE_), envDefault its default, unit the unit a duration's whole number counts, and
// envEach the variable of each element of Weights. GPULimits declares the two limits that
// differ on a GPU. cmd/serve reads the tags (its envvars.go) and names each Problem of
// Validate by the variable its field's tag declares; Validate stays the one check.
package batcher
