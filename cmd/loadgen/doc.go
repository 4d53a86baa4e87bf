// Command loadgen is Sluice's load harness: it drives a running server with a controlled mix
// of requests, measures what the server serves and refuses, and checks whether the
// Retry-After it sends when it sheds load is advice a client can follow.
//
// # How it works
//
// In open mode (the default) requests arrive on a Poisson schedule at -rate per second, each
// arrival at its scheduled time whatever the server is doing, as independent clients would. A
// cap on requests in flight (-max-in-flight) protects the harness itself; an arrival that finds
// it reached is counted as dropped by the generator, never delayed, so the loop cannot quietly
// become a closed one. In closed mode -workers clients each send their next request as soon as
// the last one finished. Every request picks an endpoint (-mix), an x-openmed-priority
// (-priority-mix) and one of the built-in synthetic clinical notes of about 20, 120 or 600
// tokens (-lengths); the notes are invented and contain no real patient data.
//
// With -retry, refused attempts are retried by the Go client's rules (client.Retrier): a 429
// or 503 after its Retry-After (or the client's backoff with full jitter without one), a
// refused connection after the backoff, never a timeout or a 500; at most -max-retries times a
// request and within a budget of -retry-budget retries per request over a 10 s window. A
// refusal's retry token (X-Sluice-Retry-Token) is sent back with its retry. Each retry
// records the suggested delay, the delay actually waited, whether the retry was admitted, and
// the time from the request's first refusal to that retry.
//
// Meanwhile the harness reads the server's /metrics every -scrape-interval and keeps the
// sluice_ gauges and counters (queue depth, shedding state, shed counts, Retry-After
// histogram counts); families the server does not expose are simply absent from the report.
//
// The first -warmup of load is sent and plotted but left out of the summary. After -duration
// the generator stops; requests in flight and their retries get up to -drain to finish and
// still count, since the summary covers requests by when they arrived. Ctrl-C stops early and
// still writes the reports.
//
// # Output
//
// A progress line on stderr every second (rewritten in place on a terminal). A JSON summary on
// stdout or in -json: offered and served counts and rates, goodput (served within -timeout of
// arrival, retries included), p50/p95/p99 latency of served attempts and end to end,
// refusals by "status/code/reason", errors, request outcomes, retry statistics (admit ratio,
// admitted at first retry, mean suggested delay against mean observed time to admission),
// the in-flight high-water mark, how late the generator ran against its schedule, and
// breakdowns by endpoint, priority and length. With -html, a single self-contained HTML file
// (inline SVG, no scripts, no network) plots per-second throughput, p50/p99 latency,
// refusals by reason, scraped queue depth, shedding state and shed rate, and a histogram of
// the Retry-After values sent beside the observed times to admission. With -records, every
// request (classes, times, status, code, reason, Retry-After, retries; never its text) as
// one JSON line. -quiet drops the progress line.
//
// # Usage
//
//	make serve &   # the server on :8080
//	go run ./cmd/loadgen -mode open -rate 200 -duration 60s -warmup 10s \
//	    -mix analyze=0.7,pii=0.3 -priority-mix interactive=0.8,bulk=0.2 \
//	    -retry -retry-budget 0.2 -json load.json -html load.html
//
//	go run ./cmd/loadgen -mode closed -workers 32 -duration 30s -lengths long=1
package main
