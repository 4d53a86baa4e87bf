package handlers

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/coalesce"
	"github.com/sluice-serving/sluice/handlers/connwatch"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/mtls"
	"github.com/sluice-serving/sluice/settings"
	"github.com/sluice-serving/sluice/signing"
	"github.com/sluice-serving/sluice/tracing"
)

// Options wires the handlers to the rest of the server.
type Options struct {
	Logger   *slog.Logger
	Metrics  *Metrics
	Gatherer prometheus.Gatherer // served on /metrics
	Clock    clock.Clock

	// Routes are the endpoints that run models (Analyze, PIIExtract, ...), each registered
	// for POST on its Path.
	Routes []Route

	Limits Limits
	// RetryAfter is sent with not_ready answers (models loading, shutting down), rounded up
	// to whole seconds; 0 sends no header.
	RetryAfter time.Duration
	// Ready reports whether models are loaded and warmed; /readyz answers 503 until then.
	Ready   func() bool
	Version string
	// Profile is OpenMed's settings profile the server runs under, reported by /health as
	// OpenMed's service does ("" reports "default").
	Profile string
	// Device is where the models run ("cpu" or "cuda"), reported by /health and
	// /models/loaded.
	Device string
	// Watcher, when set, cancels a request's context as soon as its client disconnects.
	Watcher *connwatch.Watcher
	// Coalesce answers identical entity requests in flight at once from one model call: the
	// same caller (tenant), route and body. Each request is still admitted, charged and
	// answered on its own; a caller that leaves does not cancel the others.
	Coalesce bool
	// extractions is the group Coalesce shares calls through, when a test watches it (nil:
	// the server's own).
	extractions *coalesce.Group[extraction]
	// IgnoreDisconnects keeps work going for clients that have left: no watcher, and a
	// generation goes on after a failed write. Only for measuring what noticing saves.
	IgnoreDisconnects bool
	// RefusalLogsPerSecond bounds the access-log lines of refused requests (503, 429) per
	// route and second; the rest are counted into the next line written. Served, failed and
	// every other line are always written. 0: no bound.
	RefusalLogsPerSecond int
	// Pool, when not nil, lends the models requests name that no endpoint serves of its own;
	// /models/loaded and /models/unload show and unload them. ModelLoadWait is how long a
	// request waits for its model's load before a 503 with the expected rest of the load.
	Pool          ModelPool
	ModelLoadWait time.Duration
	// Auth, when not nil, authenticates every request but the probes and /metrics, and
	// checks its route's scopes; its tenant labels sluice_tenant_requests_total and the
	// access log.
	Auth *identity.Authenticator
	// GatewayFace, when not nil, is the privacy gateway that a key marked for it ("gateway":
	// true in the key file) has its /v1/chat/completions requests go through, as if sent to
	// /gateway/v1/chat/completions.
	GatewayFace *GatewayEndpoint
	// Audit, when not nil, stores one record of every request admitted to the privacy
	// gateway's and the de-identification routes before the request is answered (503
	// audit_unavailable when it cannot), and GET /privacy-gateway/audit reads them back
	// (operators': with authentication on, the audit:read scope).
	Audit AuditTrail
	// Jobs, when not nil, serves /jobs and runs its workers on the process's share of the
	// job queue.
	Jobs *Jobs
	// Tracer, when not nil, gives every request a server span (a caller's traceparent its
	// parent); nil traces nothing.
	Tracer *tracing.Tracer
	// MTLS, when not nil, requires a verified client certificate on every request but the
	// probes, before authentication.
	MTLS *mtls.Verifier
	// Signing, when not nil, verifies OpenMed's HMAC signature of every request but the
	// probes and /metrics before anything else is done with it.
	Signing *signing.Verifier
	// Budgets, when not nil, charges every request on a model route to its caller's budget
	// before the route's gate: 429 rate_limited past it (503 stays the server's own refusal).
	Budgets *CallerBudgets
	// Proxies are the reverse proxies whose X-Forwarded-For names the client (nil: none; the
	// peer is the client). The client's address keys the failed-login limit and the budgets of
	// callers without a tenant.
	Proxies *identity.Proxies
	// TrustedHosts, when not empty, are the Host header values served (a name, or
	// "*.example.org" for the names under it); any other gets 400. The probes and /metrics
	// answer every host.
	TrustedHosts []string
	// CORSOrigins are the browser origins allowed to call the API (exact origins; none: no
	// CORS headers).
	CORSOrigins []string
}

// Limits bound what one request may ask of the server.
type Limits struct {
	MaxBodyBytes int
	MaxTextChars int
	MaxTextBytes int
	// RequestTimeout bounds the whole of a request's work; past it the client gets 504.
	RequestTimeout time.Duration
	// WriteTimeout bounds writing one answer, so that a client that stops reading does not
	// hold a connection (and shutdown) forever. A stream is not bound by it as a whole: each
	// of its writes must make progress within its route's stall limit instead
	// (GenerationEndpoint.StallTimeout), so a stream lives as long as its generation does.
	WriteTimeout time.Duration
}

// Validate reports every limit that is out of range: the result joins one *settings.Problem
// per bad field (named "Limits.<field>").
func (l Limits) Validate() error {
	check := settings.For("handlers")
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxBodyBytes", l.MaxBodyBytes}, {"MaxTextChars", l.MaxTextChars}, {"MaxTextBytes", l.MaxTextBytes}} {
		if f.v < 1 {
			check.Addf("Limits."+f.name, "must be at least 1, got %d", f.v)
		}
	}
	if l.RequestTimeout <= 0 {
		check.Addf("Limits.RequestTimeout", "must be positive, got %s", l.RequestTimeout)
	}
	if l.WriteTimeout <= 0 {
		check.Addf("Limits.WriteTimeout", "must be positive, got %s", l.WriteTimeout)
	}
	return check.Err()
}

// probes are the routes every server has besides Options.Routes.
var probes = [...]string{"/health", "/livez", "/readyz", "/models/loaded", "/models/unload", "/metrics", "/v1/models"}

// validate reports every option that is missing or out of range: one *settings.Problem per
// field.
func (o Options) validate() error {
	check := settings.For("handlers")
	check.Include(o.Limits.Validate())
	bad := check.Addf
	if o.RetryAfter < 0 {
		bad("RetryAfter", "must not be negative (0: no header), got %s", o.RetryAfter)
	}
	if o.RefusalLogsPerSecond < 0 {
		bad("RefusalLogsPerSecond", "must not be negative (0: no bound), got %d", o.RefusalLogsPerSecond)
	}
	for _, h := range o.TrustedHosts {
		if !ValidTrustedHost(h) {
			bad("TrustedHosts", "must list host names, *.example.org or IP addresses ([::1]), without a port, scheme or path (got %q)", h)
			break
		}
	}
	for _, origin := range o.CORSOrigins {
		if !ValidOrigin(origin) {
			bad("CORSOrigins", "must list exact origins, as https://app.example.org (no wildcard, no path)")
			break
		}
	}
	if o.Logger == nil || o.Clock == nil || o.Gatherer == nil || o.Ready == nil {
		bad("Logger, Clock, Gatherer, Ready", "are required")
	}
	seen := map[string]bool{}
	for _, p := range probes {
		seen[p] = true
	}
	for i, r := range o.Routes {
		switch {
		case r.serve == nil || r.Gate == nil:
			bad(fmt.Sprintf("Routes[%d]", i), "must come from a route constructor and have a Gate")
		case seen[r.Path]:
			bad(fmt.Sprintf("Routes[%d]", i), "path %q is already taken", r.Path)
		}
		seen[r.Path] = true
	}
	return check.Err()
}
