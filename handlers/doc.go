// Package handlers is Sluice's HTTP surface (gofiber v2), compatible with the OpenMed REST
// service so that its clients switch without changes.
//
// It owns what is HTTP-shaped and nothing else: request ids, strict JSON parsing and
// validation with OpenMed's error envelope, size limits, per-request deadlines, health and
// readiness, Prometheus request metrics and one JSON access-log line per request (refusals
// excepted: at most Options.RefusalLogsPerSecond lines a route and second, the next one
// carrying how many were held back, so that overload does not flood the log).
//
// Every endpoint that runs a model is a Route: its path, the admission.Gate that admits its
// requests before their bodies are read, the models it serves, and the work of one admitted
// request. Route constructors take the work through small interfaces: Analyze and PIIExtract
// an Extractor (OpenMed's JSON), Generation a Generator (HuggingFace TGI's /generate,
// /generate_stream and /, and OpenAI's /v1/completions, answered whole or as server-sent
// events). The handlers are tested with fakes and, in integration tests, with the real batcher,
// runner and ONNX Runtime behind them. A stream is committed (200) only after its first token,
// so a refusal or a timeout before it is still an HTTP status; after it, errors are events,
// and the access-log line is written when the stream ends. Options.Routes is the one table of routes: the router,
// 404/405, /models/loaded, the metrics' route label and the access log read it. Errors from
// the work are answered the same way on every route: the Queue's refusals (admission's
// ErrQueueFull, ErrExpired) as 503 backpressure with a computed Retry-After, ErrClosed as 503
// not_ready, the deadline as 504, a departed client as 499 (counted, never read), anything
// else as a 500 that says nothing of the request. Requests that never reach the router are
// answered in the same envelope too: a method fiber does not know (501), Content-Length
// headers that disagree (400, the connection closed), a body over the limit (413); a client
// that leaves mid-body is counted as aborted.
//
// No handler ever echoes request text: error messages name fields, sizes and limits, and the
// access log records ids, status, outcome and timings only.
//
// Use New to build the fiber.App and Listen or app.Listener to serve it.
package handlers
