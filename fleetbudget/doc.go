// Package fleetbudget keeps callers' budgets in Redis, so that every replica of a fleet
// enforces one budget instead of each its own (three replicas would otherwise serve a tenant
// three times its budget). It is an admission.BudgetStore: admission.Budgets still decides
// what a refusal says, how long it asks to wait, whether to hold a request (deferred
// admission) and what is counted; this package only keeps the state, atomically, where every
// replica sees it.
//
// # What Redis holds
//
// Per caller (the key hashed: it may hold a client's address), two keys with one hash tag: a
// hash with both buckets' levels and when they were last refilled, and a sorted set of the
// caller's running requests, each a lease whose score is its expiry. Time is Redis's own (the
// TIME command inside the scripts), so the replicas' clocks need not agree.
//
//   - Admission is one script, one round trip: it refills both buckets to now, drops expired
//     leases, and either debits both buckets and adds a lease, or changes nothing and reports
//     what the buckets held, from which Budgets computes the size-aware Retry-After and the
//     x-ratelimit-* state exactly as it does for local buckets.
//   - A request's end is another script: it removes the lease and gives back what the request
//     did not use (or takes what it used beyond its estimate: debt), or, for a refund, its
//     request too. Settlements are sent in batches, one round trip for all that end at once; a
//     request holding a concurrency slot waits for its batch, so the caller's next request
//     finds the slot free.
//   - Every LeaseTTL/3 the store pushes back the expiry of the slots its running requests
//     hold, in one pipeline. A replica that dies (SIGKILL, a lost node) stops renewing, and its
//     slots come back LeaseTTL after its last renewal, by Redis's clock.
//   - A key that would have refilled to full expires, which is the same as full: idle callers
//     cost Redis nothing.
//
// # When Redis is out of reach
//
// A call that fails or takes longer than Timeout marks Redis out of reach: one warning in the
// log, sluice_fleet_budget_degraded 1. Then, by Config.Failure, each replica enforces its share
// of every budget in its own memory (FailLocal: rates, bursts and concurrency divided by
// Config.Replicas), or refuses every budgeted request (FailClosed: admission's reason
// unavailable, a 429 with a Retry-After). Never unlimited. One request per ProbeInterval tries
// Redis again, the others do not wait on it; the first that succeeds ends the outage (one
// line in the log).
//
// # How to use it
//
//	store, err := fleetbudget.New(fleetbudget.Config{URL: "redis://redis:6379/0",
//		Failure: fleetbudget.FailLocal, Replicas: 3, Timeout: 100 * time.Millisecond,
//		LeaseTTL: 15 * time.Second}, clk, logger, fleetbudget.NewMetrics(reg))
//	defer store.Close() // after the last request has settled
//	budgets, err := admission.NewBudgets(cfg, store, clk, admission.NewBudgetMetrics(reg))
//
// cmd/serve does this when SLUICE_REDIS_URL is set (Config's tags name every variable).
package fleetbudget
