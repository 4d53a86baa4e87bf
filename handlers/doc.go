// Package handlers is Sluice's HTTP surface (gofiber v2), compatible with the OpenMed REST
// service so that its clients switch without changes.
//
// It owns what is HTTP-shaped and nothing else: request ids, strict JSON parsing and
// validation with OpenMed's error envelope, size limits, per-request deadlines, health and
// readiness, Prometheus request metrics and one JSON access-log line per request. The work
// itself goes through small interfaces (Extractor) so the handlers can be tested with a fake
// and, in integration tests, with the real batcher and ONNX Runtime behind them.
//
// No handler ever echoes request text: error messages name fields, sizes and limits, and the
// access log records ids, status, outcome and timings only.
//
// Use New to build the fiber.App and Listen or app.Listener to serve it.
package handlers
