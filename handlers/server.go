package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/sluice-serving/sluice/coalesce"
	"github.com/sluice-serving/sluice/entities"
)

type server struct {
	opts Options
	// known maps every route path to itself, for telling a wrong method from an unknown path.
	known map[string]string
	// wires are the paths with an error format of their own (Route.wire).
	wires map[string]wire
	// piiDefaults is built once: entities.PIIOptions compiles and copies the pattern list.
	piiDefaults entities.Options
	// refusalBufs holds *[]byte scratch space for refusal bodies.
	refusalBufs sync.Pool
	// unpackBufs holds the *bytes.Buffer that compressed bodies unpack into.
	unpackBufs sync.Pool
	// extractions are the entity requests in flight, for Options.Coalesce.
	extractions *coalesce.Group[extraction]
	// refusalLogs samples refusal lines per route, when Options.RefusalLogsPerSecond bounds them.
	refusalLogs map[string]*refusalSampler
	// auditFailures samples the lines of records that could not be stored: during an outage
	// every audited request fails, and the access log has each one already.
	auditFailures *refusalSampler
	// payersWaiting is, by budget key, until when a job's payer's budget said no (jobs.go):
	// its documents go back to the queue meanwhile without asking again.
	payersWaiting sync.Map
	payersPruned  atomic.Int64 // when payersWaiting was last pruned, in Unix nanoseconds
}

// New checks opts and builds the fiber app with the probes, /metrics and every route.
func New(opts Options) (*fiber.App, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &server{opts: opts, known: map[string]string{}, wires: map[string]wire{}, piiDefaults: entities.PIIOptions(), refusalLogs: map[string]*refusalSampler{},
		auditFailures: newRefusalSampler(1, opts.Clock.Now())}
	s.refusalBufs.New = func() any { b := make([]byte, 0, 512); return &b }
	if s.extractions = opts.extractions; s.extractions == nil {
		s.extractions = &coalesce.Group[extraction]{}
	}
	s.extractions.Unheard = func(p any) {
		s.opts.Logger.Error("a shared extraction panicked after its callers left", slog.String("panic_type", fmt.Sprintf("%T", p)))
	}
	app := fiber.New(fiber.Config{
		AppName:               "sluice",
		BodyLimit:             opts.Limits.MaxBodyBytes,
		DisableStartupMessage: true,
		// One spelling per route: the scope a route asks (Options.Auth) is looked up by its
		// path, which "/PII/Extract/" must not dodge.
		StrictRouting: true,
		CaseSensitive: true,
		ErrorHandler:  s.handleError,
		JSONEncoder:   marshal,
		ReadTimeout:   30 * time.Second,
		// A proxy's client certificate header holds a PEM chain: room for a leaf and two
		// intermediates of 4096-bit keys, escaped.
		ReadBufferSize: readBufferSize(opts),
		WriteTimeout:   opts.Limits.WriteTimeout,
		IdleTimeout:    120 * time.Second,
	})
	app.Use(s.observe)
	if h := corsHandler(opts.CORSOrigins); h != nil {
		app.Use(h)
	}
	app.Use(s.hostCheck)
	if opts.MTLS != nil {
		app.Use(s.clientCertificate)
	}
	if opts.Auth != nil {
		app.Use(s.authenticate)
	}
	if opts.Signing != nil {
		app.Use(s.verifySignature)
	}
	app.Use(s.unpackBody)

	app.Get("/health", s.health)
	app.Get("/livez", s.livez)
	app.Get("/readyz", s.readyz)
	app.Get("/models/loaded", s.modelsLoaded)
	app.Post("/models/unload", s.modelsUnload)
	app.Get("/v1/models", s.openAIModels(opts.Clock.Now().Unix()))
	metrics := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	app.Get("/metrics", func(c *fiber.Ctx) error {
		metrics(c.Context())
		return nil
	})
	for _, p := range probes {
		s.known[p] = p
	}
	for i := range s.opts.Routes {
		r := &s.opts.Routes[i]
		app.Post(fiberPath(r.Path), s.handle(r))
		s.known[r.Path] = r.Path
		if r.v2 != nil {
			s.installV2(app, r)
		}
		if r.wire != nil {
			s.wires[r.Path] = r.wire
		}
		opts.Metrics.attach(r.Path)
		if opts.RefusalLogsPerSecond > 0 {
			s.refusalLogs[r.Path] = newRefusalSampler(opts.RefusalLogsPerSecond, opts.Clock.Now())
		}
	}
	if opts.Audit != nil {
		app.Get("/privacy-gateway/audit", s.auditRead)
		s.known["/privacy-gateway/audit"] = "/privacy-gateway/audit"
	}
	if opts.Jobs != nil {
		if err := s.installJobs(app, opts.Jobs); err != nil {
			return nil, err
		}
	}
	if ep := s.generation(); ep != nil {
		app.Get("/info", s.tgiInfo(ep))
		s.known["/info"] = "/info"
		s.wires["/info"], s.wires["/v1/models"] = tgi{}, completions{}
	}
	opts.Metrics.attach(routeUnrouted)
	(&edges{s: s, app: app}).install()
	return app, nil
}

// readBufferSize is fasthttp's per-connection header buffer: its default, or 32 KiB when a
// proxy forwards client certificates in a header.
func readBufferSize(opts Options) int {
	if opts.MTLS != nil && opts.MTLS.Header() != "" {
		return 32 << 10
	}
	return 4096
}

// observe assigns the request id, then after the handler records metrics and the access log.
func (s *server) observe(c *fiber.Ctx) error {
	start := s.opts.Clock.Now()
	// A copy: work may outlive the handler (a coalesced call its caller left), and the header
	// is a view of a buffer the connection's next request writes over.
	id := strings.Clone(c.Get(fiber.HeaderXRequestID))
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	if ctx, ok := callerContext(c); ok {
		c.SetUserContext(ctx)
	}
	if s.opts.Tracer != nil {
		// Strings kept by a span are copies: the exporter reads them after fasthttp has reused
		// the request's buffers.
		ctx, span := s.opts.Tracer.StartServer(c.UserContext(), "sluice.request", func(k string) string { return c.Get(k) },
			attribute.String("http.request.method", strings.Clone(c.Method())), attribute.String("sluice.request_id", strings.Clone(id)))
		c.SetUserContext(ctx)
		defer func() {
			route, ok := s.known[routeOf(c.Path())]
			if !ok {
				route = "unmatched"
			}
			status := c.Response().StatusCode()
			span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
			span.End()
		}()
	}

	// A scrape is not counted in flight: it would always see itself.
	streamed, counted := false, c.Path() != "/metrics"
	if counted {
		s.opts.Metrics.started()
	}
	defer func() {
		if counted && !streamed {
			s.opts.Metrics.finished()
		}
	}()
	err := s.next(c)
	if err != nil && !errors.Is(err, errRefused) {
		// Write the error now so the status below is the one the client sees.
		if herr := s.handleError(c, err); herr != nil {
			return herr
		}
	}
	// The route's label is its path when the path is one of the table's, whether its route ran,
	// a middleware answered first (the Host, the credentials, the body's coding) or the method
	// was wrong; anything else is "unmatched", so that no client-chosen path becomes a label.
	// (Every route has a fixed path, matched exactly: StrictRouting, CaseSensitive.)
	route, ok := s.known[routeOf(c.Path())] // the table's string: c.Path() points into a buffer fasthttp reuses
	if !ok {
		route = "unmatched"
	}
	if d, ok := c.Locals(localDeferred).(*deferredRecord); ok && c.Response().StatusCode() == fiber.StatusOK {
		// A response still streaming: its line is written when the stream ends, after fasthttp
		// may have reused the request's buffers, which c.Method() and a client's request id
		// point into: copies, then.
		tenant, _ := c.Locals(localTenant).(string)
		label, _ := c.Locals(localTenantLabel).(string)
		d.entry = accessEntry{id: strings.Clone(id), method: strings.Clone(c.Method()), route: route, status: fiber.StatusOK,
			streamed: true, tenant: tenant, label: label}
		d.start = start
		streamed = true
		close(d.ready)
		return nil
	}
	s.record(c, id, route, s.opts.Clock.Now().Sub(start))
	return nil
}

// next runs the rest of the chain and turns a panic into a 500: a bug in one request must not
// take the process down. Only the panic's type is logged; its value may hold request content.
func (s *server) next(c *fiber.Ctx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("handler panicked", slog.String("request_id", requestID(c)),
				slog.String("panic_type", fmt.Sprintf("%T", p)))
			err = &apiError{Status: fiber.StatusInternalServerError, Code: CodeInternal,
				Message: "Internal server error", Outcome: OutcomeFailed}
		}
	}()
	return c.Next()
}
