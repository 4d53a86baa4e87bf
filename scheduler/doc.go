// Package scheduler is the scheduler of generation: one step loop per decoder model that
// runs every admitted sequence together over a paged KV cache (iteration-level scheduling, or
// continuous batching), and the streams that carry each sequence's tokens to its reader. It
// plans; a Runner executes: the scheduler decides which sequences step and how far, and in
// which blocks their keys and values live, and never touches a tensor.
//
// # How it works
//
// Everything that changes the running set happens at a step boundary, between two steps
// (boundary.go): sequences that ended, whose context ended (the client left, its deadline
// passed), whose first token is late, or whose reader stopped reading for the stall timeout
// leave, their blocks back in the pool before the next step; then waiting sequences are
// admitted (admit.go), by class weight (admission.Picker) and in arrival order, while their
// tokens fit in the pool (a shared prompt prefix is taken from the prefix cache, and a
// sequence whose prefix another is computing right now waits for it to be cached: the choices
// of an n > 1 request compute their prompt once). Each
// iteration (step.go) runs prefill steps for the sequences with several tokens to compute
// (new, or resumed), at most MaxStepTokens new positions an iteration (a longer prompt in
// chunks over several iterations), then one decode step for every other running sequence as
// one batch. Each step is a stepplan.Plan (scratch.go): per row the sequence's new token ids,
// how many of its tokens are past, its block table and whether it wants the scores of every
// new position (a prompt being scored) or of the last, plus the copies on write the pool
// decided since the last step. The Runner makes the copies, runs the model, writes the new
// keys and values into the blocks and hands back each row's scores; the scheduler then
// records the tokens in the tables (kvcache.Pool.Append) and chooses the next ones. When the
// pool runs short, the lowest class's most recently admitted sequence is preempted: its blocks go back and it waits at the head of its queue to
// be recomputed. A class that finds the running set full or the pool short takes the place
// of a lower class's latest sequence the same way, at most PreemptLimit times per sequence, so
// an interactive request does not wait for bulk ones to finish and a bulk one still finishes.
// Tokens are chosen by the request's Chooser (sampling, detokenizing and stop
// conditions are the caller's; see package generate). Work a choice needs that may take long
// (a constraint's mask at a new state) is the request's Prepare (before the first choice) or
// the Choice's (before the next): it runs off the loop while its sequence sits out the steps,
// and each such work takes the time a stream does while other rows run, in small pieces
// between steps (prepare.go), so the loop never waits on one request's dear constraint and
// the request pays for it.
//
// A Stream buffers OutBuffer events; a reader that falls behind pauses its sequence instead of
// being buffered without bound, and one that stays behind for the stall timeout is ended. A
// watchdog (watchdog.go) stops a step that runs past its limit (Runner.Terminate), ends that
// step's streams and marks the scheduler unhealthy until a step finishes; the limit is the
// stall timeout or, when longer, a multiple of what a step of that size was measured to cost,
// so a long prefill is slow, not hung. A step that fails, the Runner's error or its panic,
// ends that step's rows with ErrStepFailed and no others. A sequence that has streamed tokens and then gets none
// for TokenStallTimeout (preempted while the server is busy) ends with ErrStarved. Close stops admitting, lets running
// and preempted streams finish until its context ends, then ends them with ErrShutdown; every block is back
// in the pool when it returns.
//
// The Scheduler is an admission.Queue that measures work in tokens and memory in KV blocks.
// Steps counts boundaries, so tests assert "within one step" by counting, not by time.
//
// The Runner is anything with its interface (engine.Runner in the server, which owns the
// model and the keys and values of the pool's blocks), and the scheduler does not import
// package engine, so the whole loop (preemption, abort, flow control, priorities, the
// watchdog) is tested with a fake runner and a fake clock, without ONNX Runtime or a tensor.
// Metrics: NewMetrics registers the sluice_generate_* families (docs/METRICS.md's table says
// what each counts; the step time is the runner's less what it reports moving keys and
// values, which is counted apart); the KV cache reports its own (kvcache.Pool.Collector).
//
// # Use
//
//	runner, err := engine.NewRunner(decoder, pool.Blocks(), pool.BlockTokens())
//	s, err := scheduler.New("tiny-lm", runner, pool, scheduler.Config{MaxRunning: 32,
//		MaxStepTokens: 4096, QueueSize: 64, OutBuffer: 16, StallTimeout: 10 * time.Second,
//		MaxPositions: 256}, clock.Real(), scheduler.NewMetrics(reg))
//	s.Start(ctx)
//	defer s.Close(drainCtx)
//	st, err := s.Submit(reqCtx, scheduler.Request{Prompt: ids, MaxNewTokens: 16, Chooser: c})
//	for {
//		ev, err := st.Next(reqCtx)
//		... ev.ID, ev.Text ... if ev.Done { ev.Finish, ev.Err }
//	}
//
// # Settings
//
// The server's environment sets a Config through its tags: env names the variable (with the
// prefix SLUICE_), envDefault its default, unit the unit a duration's whole number counts, and
// envEach the variable of each element of Weights (the batcher's, shared). MaxPositions and
// PadID are the model's. cmd/serve reads the tags (its envvars.go) and names each Problem of
// Validate by the variable its field's tag declares.
package scheduler
