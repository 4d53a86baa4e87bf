// Package admission decides, before a request costs anything, whether an endpoint takes it,
// and when it does not, answers honestly: 503 "backpressure", a reason, aggregate queue state,
// and a Retry-After a client can trust.
//
// # What it does
//
// Each endpoint ("analyze", "pii_extract", "generate") has one Gate over the Queue that feeds
// its workers: an entity endpoint's batcher, the generation model's scheduler (whose work is
// counted in tokens and whose memory, its KV cache blocks, has a watermark of its own). The package owns the vocabulary of that seam: the Queue interface, with its
// Load (waiting per class, running, busy workers, completions) and Limits (per-class capacity,
// max queue wait, workers, dispatch weights), the Priority classes, and the errors a Queue
// returns when it refuses work itself (ErrQueueFull, ErrExpired, ErrClosed). Whatever does
// the work implements Queue and wraps those errors; the Gate imports nothing of it. The depth
// is the Queue's waiting requests (every class) plus its running ones.
//
//   - Watermarks. When the depth reaches HighWatermark the Gate starts shedding: every
//     request is refused with reason high_watermark until the depth has drained to
//     LowWatermark (default HighWatermark / 2), so it does not flap at the limit.
//   - Priority classes. ParsePriority reads the x-openmed-priority header (interactive by
//     default; bulk; OpenMed's aliases). Each class has its own hard capacity in the Queue;
//     Admit refuses a class whose queue is already full (reason saturated) without waiting for
//     the Queue to say so, and Refuse maps the Queue's own refusals (ErrQueueFull: saturated,
//     ErrExpired: max_wait) to the same kind of answer.
//   - Retry-After. PolicyStatic sends StaticRetryAfter. PolicyDrainRate estimates when the
//     endpoint admits again: the backlog that must drain (down to the low watermark; for
//     saturated, the class's queue down to half; for max_wait, the class's queue beyond what
//     drains within the max wait) divided by an EWMA of the completion rate (alpha 0.3 over 1 s
//     intervals, warm after 3 intervals with completions; a class's rate is its share under
//     the Queue's dispatch weights among the classes waiting), times a saturation factor in
//     [1, 1.25] from worker occupancy and the current refusal streak; rounded up, clamped to
//     [1, 60] s and jittered by +/-20% so clients do not return in lockstep. Until the EWMA is
//     warm it falls back to the static value, then to no header.
//   - Retry reservations. With Config.RetryReserve > 0, a refusal that carries a Retry-After
//     (but one of AdmitUnbooked or RefuseUnbooked, for work no client brings back with a
//     token) also books a place for the retry at that second (or, when it is full, in one of
//     the four seconds after it; otherwise it gets no token) and returns the place's token,
//     which the handler sends in the X-Sluice-Retry-Token header. Each second holds at most
//     RetryReserve x the measured completion rate places (in requests: a rate in tokens is
//     divided by the requests' average demand), divided by the measured share of
//     tokens that come back (many refused clients never retry, and a place nobody claims costs
//     nothing), so what returns stays a fraction of what the endpoint completes. A retry that
//     sends the token back at its time (from 250 ms early to 2 s plus a quarter of the delay
//     after its second) is let past the watermarks, once; the class's hard capacity still
//     bounds it. The estimate alone cannot make that promise: under sustained overload the
//     door opens for everyone at once, and fresh arrivals take the places a returning client
//     was told about. Tokens are 32 hex digits (second, place, delay, and a hash keyed per
//     gate and process), so the gate keeps no table of them: one atomic word and a bitmap of
//     used places per second.
//
// Admit is O(1): one clock read, a handful of atomic loads from the Queue (Queue.Load),
// and on a refusal a few float operations and two metric updates. It takes no lock that a
// caller waits on, never touches the batch loop, and does not allocate, refused or not. The
// EWMA is folded lazily by the first Admit that notices a second has passed, under a TryLock,
// so no goroutine or ticker is needed.
//
// The depth the Gate reads counts what the Queue holds, not requests between Admit and
// Submit (parsing, tokenizing). Under a burst a few more than HighWatermark can be admitted;
// the per-class capacity in the Queue is the hard bound that keeps memory flat.
//
// # How to use it
//
//	am := admission.NewMetrics(reg) // once per registry, or nil
//	gate, err := admission.NewGate("analyze", admission.Config{
//		HighWatermark: 256, LowWatermark: 128,
//		Policy: admission.PolicyDrainRate, StaticRetryAfter: time.Second,
//	}, b /* a *batcher.Batcher, or anything that implements Queue */, clk, am)
//
//	// In the handler, before the body is read:
//	p, err := admission.ParsePriority(c.Get(admission.PriorityHeader)) // err: 400 bad_request
//	tok := c.Request().Header.Peek(admission.RetryTokenHeader) // nil when absent
//	if ref, ok := gate.AdmitRetry(p, tok); !ok { return writeRefusal(c, ref) }
//	out, err := b.Submit(ctx, p, in, cost)
//	if ref, ok := gate.Refuse(p, err); ok { return writeRefusal(c, ref) }
//
// where writeRefusal (in handlers, which words every refusal) sends 503 with the Retry-After
// of ref.RetryAfter, the X-Sluice-Retry-Token header from ref.Token.Value() when there is one,
// and the reason and queue state in the body. The package decides and never writes HTTP.
//
// # Retry-After
//
// Every refusal's wait goes through a RetryAfterRule (retryafter.go): the gate's with
// DrainRetryAfter or ServerRetryAfter, a budget's with CallerRetryAfter; the HTTP layer
// uses the same rules for its own waits (a model loading, a shutdown, failed logins). A
// budget's buckets are package bucket's.
//
// # Budgets and where they are kept
//
// Budgets decides for callers' budgets: the refusal's reason and Retry-After (from the
// refused request's own size against what its buckets hold), deferred admission, the
// metrics. A BudgetStore keeps the state and answers one Take per attempt, atomically:
// LocalStore in this process, or a store a fleet shares (package fleetbudget, in Redis),
// which may answer with its share of the budget, or Unavailable, while its state is out of
// reach. A Take that admits returns a BudgetLease, which Charge settles once: what the
// request used against its estimate, or a refund.
//
// # Tuning
//
// Set HighWatermark no larger than what the endpoint completes within the max queue wait
// (capacity x MaxQueueWait). Above that, requests pass the door only to expire in the queue:
// the refusal still comes, but a full max wait later instead of at once.
//
// # Metrics
//
// NewMetrics registers the sluice_admission_* families; docs/METRICS.md's table, which a test
// keeps equal to what the server exports, says what each counts.
//
// # Settings
//
// The server's environment sets the fields every endpoint shares through Config's tags (the
// Retry-After policy, its static value, the retry reserve) and deferred admission through
// BudgetsConfig's: env names the variable (with the prefix SLUICE_), envDefault its default,
// unit the unit a duration's whole number counts. An endpoint's watermarks are its own, so
// the server declares their variables per endpoint. cmd/serve reads the tags (its envvars.go)
// and names each Problem of Validate by the variable its field's tag declares.
package admission
