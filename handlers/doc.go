// Package handlers is Sluice's HTTP surface (gofiber v2), compatible with the OpenMed REST
// service so that its clients switch without changes, and with HuggingFace TGI's and OpenAI's
// generation APIs.
//
// It owns what is HTTP-shaped and nothing else: request ids, strict JSON parsing and
// validation with OpenMed's error envelope, size limits, per-request deadlines, health and
// readiness, Prometheus request metrics (docs/METRICS.md's table lists them) and one JSON
// access-log line per request (refusals excepted: at most Options.RefusalLogsPerSecond lines a
// route and second, the next one carrying how many were held back, so that overload does not
// flood the log).
//
// Before any route reads it, a body in a Content-Encoding is unpacked within the body limit
// (body.go), so that the limits and the budgets count what it unpacks to.
//
// Every endpoint that runs a model is a Route: its path, the admission.Gate that admits its
// requests before their bodies are read, the models it serves, what a request costs its
// caller's budget in tokens (every prompt and choice of a generation at the length it will
// have), and the work of one admitted request (route.go). Options.Routes is the one table of routes: the router, 404/405,
// /models/loaded, the metrics' route label and the access log read it. Route constructors take
// the work through small interfaces: Analyze and PIIExtract an Extractor (entities.go),
// Generation a Generator whose streams are TokenStreams (generation.go).
//
// Generation is one driver, serveGeneration, under dialects (tgi.go: TGI's /generate,
// /generate_stream and /; completions.go: OpenAI's /v1/completions; chat.go: its chat
// completions), for every model: the in-process one, and the privacy gateway's external chat
// model, a Generator that takes the messages themselves (upstreammodel.go). A dialect reads its
// requests and writes its answers and errors; the driver does the rest for all of them:
// submission, waiting for every choice's first token (so that a refusal or a timeout before
// it is still an HTTP status), the whole answer or the server-sent events, the end of a
// stream (a stream that ends early ends with the dialect's error event, never a bare close), a
// client that leaves, the access-log line, written when a stream ends, and the outcome. A
// stream's body is read by the connection's own goroutine, one event a read (genbody.go); the
// OpenAI chunks, a token's most frequent body, are appended to a head encoded once
// (jsonappend.go), byte for byte what encoding/json writes.
//
// The packages decide and this one words: admission's refusals (a queue's 503, a budget's 429),
// identity's (401, 403, 429) and the gateway's (gateway.Refusal) are answered in refusals.go
// and gateway.go, each Retry-After through admission's RetryAfterRule, in the route's own wire
// format (Route.wire: TGI's or OpenAI's on their routes, the envelope elsewhere). The privacy
// gateway's policy, tripwire, restoration and audit record are gateway.Session's; gateway.go and
// gatewaychat.go only read the wire and word the outcome. Storing a request's record before it
// is answered (the gateway's and the de-identification routes') is audit.go's, through
// Options.Audit; a record that cannot be stored is a 503 audit_unavailable.
//
// Errors from the work are answered the same way on every route and in every wire format
// (failure, route.go): the Queue's refusals (admission's ErrQueueFull, ErrExpired) as 503
// backpressure with a computed Retry-After, a closed Queue as 503 not_ready,
// the deadline as 504, a departed client as 499 (counted in sluice_http_requests_aborted_total,
// never read), a request the model cannot take as 422, anything else as a 500 that says
// nothing of the request. Requests that never reach the router are answered in the envelope
// too: a method fiber does not know (501), Content-Length headers that disagree (400, the
// connection closed), a body over the limit (413); a client that leaves mid-body is counted as
// aborted.
//
// No handler ever echoes request text: error messages name fields, sizes and limits, and the
// access log records ids, status, outcome and timings only. The handlers are tested with fakes
// (an Extractor, a Generator) and, in cmd/serve, with the real batcher, scheduler and ONNX
// Runtime behind them.
//
// Use New to build the fiber.App and serve it with app.Listener.
package handlers
