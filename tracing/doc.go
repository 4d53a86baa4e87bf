// Package tracing is OpenMed's REST tracing in OpenTelemetry: one server span per request (a
// caller's W3C traceparent its parent), child spans for the stages a request goes through,
// exported over OTLP/HTTP when an endpoint is configured, and no request text, entity, header,
// query or client identity in any attribute.
//
// # How to use it
//
//	t, err := tracing.New(cfg, version)        // cfg: from the environment; nil Tracer when off
//	defer t.Shutdown(ctx)                       // flushes what is buffered
//	ctx, span := t.Start(ctx, "sluice.model_request", attribute.String("model", name))
//	defer span.End()
//
// A nil *Tracer is valid and traces nothing, so callers need not ask whether tracing is on.
// The W3C propagator is installed process-wide (otel.SetTextMapPropagator), so that an
// outgoing call (the client package's) carries the request's trace on.
package tracing
