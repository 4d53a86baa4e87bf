package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"google.golang.org/grpc"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/fleetbudget"
	"github.com/sluice-serving/sluice/generate"
	"github.com/sluice-serving/sluice/grpcserve"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/handlers/connwatch"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/jobs"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/metricscompat"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/mtls"
	"github.com/sluice-serving/sluice/natsbox"
	"github.com/sluice-serving/sluice/resilience"
	"github.com/sluice-serving/sluice/scheduler"
	"github.com/sluice-serving/sluice/signing"
	"github.com/sluice-serving/sluice/stepplan"
	"github.com/sluice-serving/sluice/tracing"
	"github.com/sluice-serving/sluice/upstream"
	"github.com/sluice-serving/sluice/warmpool"
)

// version is set at build time with -ldflags "-X main.version=..."; "dev" otherwise.
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "check-model" {
		os.Exit(checkModel(os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "audit" {
		os.Exit(auditCommand(os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// SIGHUP's default ends the process. It is taken here for the whole run, so that one sent
	// while the server starts or closes (by a key file's reloader) is lost rather than fatal;
	// while it serves, the server re-reads its key files on each (reloadKeysOnHangup).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
		}
	}()
	os.Exit(run(ctx, os.Environ(), os.Stdout, os.Stderr, nil))
}

// run is the whole server; it returns the process exit code. ready, when not nil, receives
// the listening address once the server is ready (tests use it instead of sleeping).
func run(ctx context.Context, environ []string, stdout, stderr io.Writer, ready chan<- net.Addr) int {
	cfg, err := LoadConfig(environ)
	if err != nil {
		fmt.Fprintln(stderr, "sluice:", err)
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	if (cfg.AuthJWKS != "" || cfg.AuthJWKSFile != "") && (cfg.AuthJWTIssuer == "" || len(cfg.AuthJWTAudience) == 0) {
		// A JWKS shared across an identity provider's realm signs tokens for other services too.
		logger.Warn("bearer tokens are checked without an issuer or an audience: a token the JWKS signed for another service is accepted with its scopes; set SLUICE_AUTH_JWT_ISSUER and SLUICE_AUTH_JWT_AUDIENCE")
	}
	if len(cfg.openMedNoEffect) > 0 {
		logger.Warn("OpenMed settings are set that Sluice does not implement; they have no effect (docs/CONFIGURATION.md: OpenMed's settings)",
			slog.Any("variables", cfg.openMedNoEffect))
	}
	srv, err := newServer(ctx, cfg, logger, clock.Real())
	if ctx.Err() != nil { // SIGTERM or SIGINT while it started: it stops there, never serving
		if err == nil {
			srv.close()
		}
		logger.Info("stopped while starting")
		return 0
	}
	if err != nil {
		logger.Error("start-up failed", slog.String("error", err.Error()))
		fmt.Fprintln(stderr, "sluice:", err)
		return 1
	}
	if err := srv.serve(ctx, ready); err != nil {
		logger.Error("server stopped with an error", slog.String("error", err.Error()))
		fmt.Fprintln(stderr, "sluice:", err)
		return 1
	}
	return 0
}

func logLevel(name string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(name)) // validated in LoadConfig
	return l
}

type server struct {
	cfg         Config
	logger      *slog.Logger
	runtime     *engine.Runtime
	quant       *quantizer // nil: every model runs as its file is
	classifiers []*extract.Classifier
	// encoders are the embedding and rerank models' batchers, started and drained with the
	// classifiers'; encPool holds those loaded on demand (nil without SLUICE_MODELS_DIR).
	encoders  []encoderLoop
	encPool   *encoderPool
	decoder   *engine.Decoder      // nil when no generation model is served
	sched     *scheduler.Scheduler // nil likewise
	generator *generate.Generator  // nil likewise
	app       *fiber.App
	watcher   *connwatch.Watcher
	// pool holds the models loaded on demand (nil without SLUICE_MODELS_DIR); their batch
	// loops run until stopPoolWork.
	pool         *modelPool
	poolWork     context.Context
	stopPoolWork context.CancelFunc
	// fleet keeps the budgets in Redis (nil: in this process).
	fleet *fleetbudget.Store
	// auth checks credentials (nil: off); SIGHUP re-reads its key file.
	auth *identity.Authenticator
	// box is the NATS connection (and the embedded server) the audit lives in; both nil with
	// the audit off.
	box   *natsbox.Box
	audit *audit.Log
	// guard retries and breaks the model calls (resilience).
	guard *resilience.Guard
	// tracer makes the requests' spans; nil with tracing off.
	tracer *tracing.Tracer
	// tls, when not nil, is the listener's: Sluice terminates TLS (SLUICE_TLS_CERT_FILE).
	tls *tls.Config
	// grpcAddr is where the gRPC listener listens; nil without one.
	grpcAddr net.Addr
	jobs     *jobs.Manager
	ready    atomic.Bool
	// listen opens the HTTP and gRPC listeners: net.Listen, but for a test's listener that
	// fails on cue.
	listen func(network, address string) (net.Listener, error)
	clock  clock.Clock
	// closeOnce starts the release that closed reports the end of (close).
	closeOnce sync.Once
	closed    chan struct{}
	// served is what the start-up log reports: each configured model, and the routes.
	served []servedModel
	routes []handlers.Route
}

// servedModel is one configured model as the start-up log describes it.
type servedModel struct {
	name, kind string
	int8       bool
	// gate, set for an embedding or rerank model, is its routes' gate: those routes list no
	// models (Route.Models is /models/loaded's, OpenMed's entity models), so the log finds
	// them by it.
	gate *admission.Gate
}

// newServer builds the server. What it opens it records on s as it goes; when a step fails,
// the deferred s.close releases all of that, once, in the reverse order of its opening.
func newServer(ctx context.Context, cfg Config, logger *slog.Logger, clk clock.Clock) (_ *server, err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	s := &server{logger: logger, listen: net.Listen, clock: clk}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	rtOpts := cfg.runtime()
	rtOpts.Logger = logger
	if rtOpts.LibraryPath == "" {
		rtOpts.LibraryPath = engine.LibraryPath()
	}
	if s.runtime, err = engine.NewRuntime(rtOpts); err != nil {
		return nil, err
	}
	rt := s.runtime
	if rt.Device() == engine.DeviceCUDA {
		cfg = cfg.onGPU()
	}
	s.cfg = cfg
	if s.watcher, err = connwatch.New(logger); err != nil {
		return nil, fmt.Errorf("client-disconnect watcher: %w", err)
	}
	watcher := s.watcher
	reg.MustRegister(watcher.Collector())
	device := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_engine_device_info",
		Help: "1 for the device every model runs on (cpu or cuda)."}, []string{"device"})
	device.WithLabelValues(string(rt.Device())).Set(1)
	reg.MustRegister(device)
	if s.quant, err = newQuantizer(cfg, rt, logger, clk); err != nil {
		return nil, err
	}
	bm := batcher.NewMetrics(reg)
	am := admission.NewMetrics(reg)
	configured := map[string]*pooledModel{} // pinned in the pool, if there is one
	footprints := map[string]int64{}
	if s.tracer, err = tracing.New(cfg.Tracing, version); err != nil {
		return nil, err
	}
	if s.guard, err = resilience.New(cfg.Resilience, clk, rand.Float64, handlers.ModelFailure, resilience.NewMetrics(reg)); err != nil {
		return nil, err
	}
	endpoint := func(queue, model string) (handlers.Endpoint, error) {
		m, err := loadModel(cfg.ModelsDir, model)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		int8, err := s.quant.prepare(ctx, m)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		s.served = append(s.served, servedModel{name: m.Name, kind: "token classification", int8: int8})
		footprints[model] = int64(len(m.ONNX))
		sess, err := rt.NewSession(m.Name, m.ONNX)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		cls, err := extract.New(queue, m, sess, cfg.extract(), clk, bm)
		if err != nil {
			return handlers.Endpoint{}, named(err, byTags(reflect.TypeFor[extract.Config]()))
		}
		s.classifiers = append(s.classifiers, cls)
		gate, err := admission.NewGate(queue, cfg.gate(), cls.Queue(), clk, am)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		configured[model] = &pooledModel{cls: cls, gate: gate, pinned: true}
		guarded := s.guarded(cls)
		ep := handlers.Endpoint{Default: model, Models: map[string]handlers.Extractor{model: guarded}, Gate: gate,
			Footprint: footprints[model]}
		for alias, target := range cfg.ModelAliases {
			if strings.TrimSpace(target) == model {
				ep.Models[strings.TrimSpace(alias)] = guarded // as a request's model_name is read
			}
		}
		return ep, nil
	}
	analyze, err := endpoint("analyze", cfg.AnalyzeModel)
	if err != nil {
		return nil, err
	}
	pii, err := endpoint("pii_extract", cfg.PIIModel)
	if err != nil {
		return nil, err
	}
	redactor, err := deid.New(cfg.deid())
	if err != nil {
		return nil, err
	}
	routes := []handlers.Route{handlers.Analyze(analyze), handlers.PIIExtract(pii), handlers.PIIDeidentify(pii, redactor),
		handlers.PIIExtractStream(pii, redactor), handlers.PIIDeidentifyStream(pii, redactor), handlers.KServeInfer(pii)}
	encoderRoutes, err := s.encoderRoutes(cfg, rt, clk, bm, am)
	if err != nil {
		return nil, err
	}
	routes = append(routes, encoderRoutes...)
	privacy := handlers.GatewayEndpoint{PII: pii}
	external, err := cfg.upstream()
	if err != nil {
		return nil, err
	}
	if external != nil {
		privacy.Upstream = external
		if external.Kind() == "openai" {
			privacy.ChatUpstream = external
		}
	}
	if cfg.GenerateModel != "none" {
		gen, err := s.generation(ctx, cfg, reg, am, clk)
		if err != nil {
			return nil, err
		}
		routes = append(routes, handlers.Generation(gen)...)
		privacy.Generation = &gen
	}
	var face *handlers.GatewayEndpoint
	if privacy.ChatUpstream != nil || (privacy.Generation != nil && privacy.Generation.Chat != nil) {
		routes = append(routes, handlers.GatewayChat(privacy))
		withDefaults := privacy.WithDefaults()
		face = &withDefaults
	}
	routes = append(routes, handlers.PrivacyGateway(privacy))
	models := func() metricscompat.Models { return residentModels(routes, nil) }
	var pool handlers.ModelPool
	if cfg.ModelsDir != "" {
		s.poolWork, s.stopPoolWork = context.WithCancel(context.Background())
		if s.pool, err = newModelPool(cfg, rt, s.quant, clk, bm, am, s.guarded, s.poolWork, s.logger); err != nil {
			return nil, err
		}
		var pinnedBytes int64
		for name, size := range footprints {
			s.pool.pool.Pin(name, configured[name], size)
			pinnedBytes += size
		}
		if cfg.ModelMemoryBudget > 0 && pinnedBytes >= cfg.ModelMemoryBudget {
			return nil, fmt.Errorf("SLUICE_MODEL_MEMORY_BUDGET_BYTES (%d) must exceed the configured models' %d bytes, which stay resident, or no model could load on demand", cfg.ModelMemoryBudget, pinnedBytes)
		}
		if cfg.ModelMemoryBudget > 0 {
			s.pool.warnNeverFit(s.logger, cfg.ModelMemoryBudget-pinnedBytes, footprints)
		}
		pool = s.pool
		models = func() metricscompat.Models { return residentModels(routes, s.pool.pool) }
	}
	if s.auth, err = cfg.auth(clk); err != nil {
		return nil, err
	}
	var gatherer prometheus.Gatherer = reg
	if cfg.MetricsCompat == "openmed" {
		compat := prometheus.NewRegistry()
		compat.MustRegister(metricscompat.OpenMed(reg, models))
		gatherer = prometheus.Gatherers{reg, compat}
	}
	fm := fleetbudget.NewMetrics(reg) // registered either way: the families do not depend on a setting
	var store admission.BudgetStore   // nil: this process's own buckets
	if cfg.Fleet.URL != "" {
		redis.SetLogger(fleetbudget.ClientLog{Logger: logger}) // go-redis's one logger, process-wide
		if s.fleet, err = fleetbudget.New(cfg.Fleet, clk, logger, fm); err != nil {
			return nil, err
		}
		store = s.fleet
	}
	budgets, err := admission.NewBudgets(cfg.budgets(), store, clk, admission.NewBudgetMetrics(reg))
	if err != nil {
		return nil, err
	}
	proxies, err := identity.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	var trail handlers.AuditTrail // nil (not a nil *audit.Log) with the audit off
	if cfg.Audit.Enabled || cfg.Jobs.Enabled {
		if s.box, err = natsbox.Open(ctx, cfg.NATS, logger); err != nil {
			return nil, err
		}
	}
	var jobRoutes *handlers.Jobs
	if cfg.Jobs.Enabled {
		if s.jobs, err = jobs.Open(ctx, s.box, cfg.Jobs, clk, jobs.NewMetrics(reg), logger); err != nil {
			return nil, err
		}
		yield, err := admission.NewYield(pii.Gate, clk, cfg.Jobs.YieldDocuments, cfg.Jobs.YieldWindow)
		if err != nil {
			return nil, err
		}
		jobRoutes = &handlers.Jobs{Manager: s.jobs, PII: pii, Redactor: redactor, Yield: yield}
	}
	if cfg.Audit.Enabled {
		if s.audit, err = audit.Open(ctx, s.box, s.box.Replica(), cfg.Audit, clk, audit.NewMetrics(reg), logger); err != nil {
			return nil, err
		}
		trail = s.audit
	}
	verifier, err := s.signingVerifier(ctx, cfg, clk)
	if err != nil {
		return nil, err
	}
	var certs *mtls.Verifier
	if cfg.MTLS.Enabled {
		if certs, err = mtls.New(cfg.MTLS); err != nil {
			return nil, err
		}
	}
	if s.tls, err = serverTLS(cfg.MTLS, certs); err != nil {
		return nil, err
	}
	s.routes = routes
	s.app, err = handlers.New(handlers.Options{
		Logger: logger, Metrics: handlers.NewMetrics(reg), Gatherer: gatherer, Clock: clk,
		Routes:     routes,
		Limits:     cfg.limits(),
		RetryAfter: cfg.retryAfter(), Ready: s.isReady, Version: version, Profile: cfg.Profile, Device: string(rt.Device()),
		Watcher: watcher, IgnoreDisconnects: cfg.BenchIgnoreDisconnects, Coalesce: cfg.Coalesce, RefusalLogsPerSecond: cfg.RefusalLogsPerSecond,
		TrustedHosts: cfg.TrustedHosts, CORSOrigins: cfg.CORSOrigins, Proxies: proxies,
		Pool: pool, ModelLoadWait: cfg.modelLoadWait(), Auth: s.auth,
		Audit: trail, GatewayFace: face, Jobs: jobRoutes, Signing: verifier, MTLS: certs, Tracer: s.tracer,
		Budgets: &handlers.CallerBudgets{Budgets: budgets, Anonymous: cfg.anonymousBudget(), AnonymousByTenant: cfg.RateLimitKey == "tenant", AnonymousGlobal: cfg.RateLimitKey == "global"},
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// residentModels is what OpenMed's model families say: the distinct models the routes serve
// and, with a pool (nil: none), the models it holds, each counted once with its footprint. A
// model still loading is not resident yet (OpenMed counts it pending).
func residentModels(routes []handlers.Route, pool *warmpool.Pool) metricscompat.Models {
	var m metricscompat.Models
	seen := map[string]bool{}
	if pool != nil {
		for _, st := range pool.Snapshot() {
			if st.Pinned {
				continue // a configured model, counted below as its routes name it (a path's base)
			}
			seen[st.Name] = true
			if !st.Loading {
				m.Resident++
				m.ResidentBytes += st.Footprint
			}
		}
		m.Loads, m.Evictions = pool.Counts()
	}
	for _, r := range routes {
		for _, info := range r.Models {
			if !seen[info.Name] {
				seen[info.Name] = true
				m.Resident++
				m.ResidentBytes += info.Footprint
			}
		}
	}
	return m
}

// generation loads the generation model and builds its paged KV cache, scheduler, generator
// and admission gate.
func (s *server) generation(ctx context.Context, cfg Config, reg prometheus.Registerer, am *admission.Metrics, clk clock.Clock) (handlers.GenerationEndpoint, error) {
	m, err := loadModel(cfg.ModelsDir, cfg.GenerateModel)
	if err != nil {
		return handlers.GenerationEndpoint{}, err
	}
	int8, err := s.quant.prepare(ctx, m)
	if err != nil {
		return handlers.GenerationEndpoint{}, err
	}
	s.served = append(s.served, servedModel{name: m.Name, kind: "text generation", int8: int8})
	defaults, err := models.ParseGeneration(m.Generation)
	if err != nil {
		return handlers.GenerationEndpoint{}, fmt.Errorf("model %q: %w", m.Name, err)
	}
	c := m.Config
	dec, err := s.runtime.NewDecoder(m.Name, m.ONNX, engine.DecoderShape{Layers: c.NumLayers, Heads: c.NumKVHeads,
		HeadDim: c.HeadDim, Vocab: c.VocabSize})
	if err != nil {
		return handlers.GenerationEndpoint{}, err
	}
	s.decoder = dec
	sh := dec.Shape()
	geometry := cfg.kv(kvcache.Config{Layers: sh.Layers, Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: cfg.kvSeqLen(c.MaxPositionEmbeddings)})
	// SLUICE_KV_MEMORY_BYTES is held to half the process's memory when it is read; a count of
	// blocks only once the model says what a block holds (the pool's bookkeeping and the
	// runner's keys and values are made for each).
	if err := geometry.Validate(); err != nil { // before its sizes are multiplied
		return handlers.GenerationEndpoint{}, named(err, byTags(reflect.TypeFor[kvcache.Config]()))
	}
	kv := int64(math.MaxInt64) // a product past int64 is past any machine's memory
	if bb := geometry.BlockBytes(); int64(geometry.Blocks) <= math.MaxInt64/bb {
		kv = int64(geometry.Blocks) * bb
	}
	if mem := thisMachine().MemoryBytes; mem > 0 && kv > mem/2 {
		return handlers.GenerationEndpoint{}, fmt.Errorf("SLUICE_KV_BLOCKS: %d blocks of %d KiB of %s are %d MiB, over half of the %d MiB this process may use",
			geometry.Blocks, geometry.BlockBytes()>>10, m.Name, kv>>20, mem>>20)
	}
	pool, err := kvcache.NewPool(geometry)
	if err != nil {
		return handlers.GenerationEndpoint{}, named(err, byTags(reflect.TypeFor[kvcache.Config]()))
	}
	maxLen, lowered, err := cfg.servedLength(c.MaxPositionEmbeddings, pool.MaxSequence())
	if err != nil {
		return handlers.GenerationEndpoint{}, err
	}
	if lowered {
		s.logger.Info("the served context is lowered to what the KV cache holds (SLUICE_GENERATE_MAX_MODEL_LEN)",
			slog.String("model", m.Name), slog.Int("model_positions", c.MaxPositionEmbeddings), slog.Int("served", maxLen))
	}
	s.inPlaceDecode(cfg, m, dec, int8, maxLen)
	runner, err := engine.NewRunner(dec, pool.Blocks(), pool.BlockTokens())
	if err != nil {
		return handlers.GenerationEndpoint{}, err
	}
	var model scheduler.Runner = runner
	if cfg.BenchStepDelayMS > 0 {
		model = slowedModel{Runner: runner, delay: ms(cfg.BenchStepDelayMS)}
	}
	s.sched, err = scheduler.New(m.Name, model, pool, cfg.scheduler(maxLen, m.Tokenizer.PadID()), clk,
		scheduler.NewMetrics(reg))
	if err != nil {
		return handlers.GenerationEndpoint{}, named(err, byTags(reflect.TypeFor[scheduler.Config]()))
	}
	reg.MustRegister(pool.Collector(m.Name))
	maxNew := defaults.MaxNewTokens
	if maxNew == 0 {
		maxNew = 64
	}
	var moreEOS []int64 // config.json's after its first, and generation_config.json's
	for _, id := range append(slices.Clone(c.EOSTokenIDs), defaults.EOSTokenIDs...) {
		if id != c.EOSTokenID && !slices.Contains(moreEOS, id) {
			moreEOS = append(moreEOS, id)
		}
	}
	s.generator, err = generate.New(m.Name, s.sched, m.Tokenizer, generate.Config{EOS: c.EOSTokenID, MoreEOS: moreEOS,
		MaxPositions: maxLen, DefaultMaxNewTokens: maxNew, FirstTokenTimeout: ms(cfg.GenerateFirstTokenTimeoutMS)})
	if err != nil {
		return handlers.GenerationEndpoint{}, err
	}
	gate, err := admission.NewGate("generate", cfg.generateGate(cfg.Scheduler.MaxRunning), s.generator.Queue(), clk, am)
	if err != nil {
		return handlers.GenerationEndpoint{}, named(err, byTags(reflect.TypeFor[generateGate](), reflect.TypeFor[admission.Config]()))
	}
	return handlers.GenerationEndpoint{Model: servedGenerator{s.generator}, Gate: gate, Timeout: ms(cfg.GenerateTimeoutMS),
		StallTimeout: cfg.Scheduler.StallTimeout, KeepAlive: ms(cfg.GenerateKeepAliveMS), StreamInterval: cfg.GenerateStreamInterval, Chat: s.chatTemplate(m),
		Footprint: int64(len(m.ONNX))}, nil
}

// chatTemplate is the generation model's chat template, or nil when it has none or one that
// does not compile: completions are still served, and /v1/chat/completions says why not.
func (s *server) chatTemplate(m *models.Model) handlers.ChatTemplate {
	t, err := chat.Load(m.TokenizerConfig, m.Tokenizer.SpecialTokens())
	switch {
	case errors.Is(err, chat.ErrNoTemplate):
		s.logger.Info("the generation model has no chat template; /v1/chat/completions answers 400", slog.String("model", m.Name))
		return nil
	case err != nil:
		s.logger.Warn("the generation model's chat template cannot be used; /v1/chat/completions answers 400",
			slog.String("model", m.Name), slog.String("error", err.Error()))
		return nil
	}
	return t
}

// slowedModel waits before each step of the model it wraps (SLUICE_BENCH_STEP_DELAY_MS): a
// small model playing a slower one, so that what needs time (deadlines, slow readers, long
// streams) can be seen with it.
type slowedModel struct {
	scheduler.Runner
	delay time.Duration
}

func (m slowedModel) Run(ctx context.Context, p *stepplan.Plan) error {
	t := time.NewTimer(m.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return m.Runner.Run(ctx, p)
}

// servedGenerator is the generation model as the handlers take it: the same Generator, its
// streams seen through handlers.TokenStream.
type servedGenerator struct{ *generate.Generator }

func (g servedGenerator) Generate(ctx context.Context, p admission.Priority, prompt string, params generate.Params) (handlers.TokenStream, error) {
	st, err := g.Generator.Generate(ctx, p, prompt, params)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return st, nil
}

// isReady is /readyz: models loaded and warm, and the decoder not stalled.
func (s *server) isReady() bool {
	return s.ready.Load() && (s.sched == nil || s.sched.Healthy())
}

// flushWindow bounds close: the webhooks being delivered, the audit's appends in flight,
// NATS's drain, the budgets' settlements for Redis and the last spans, after the shutdown's grace and answer window. A pod's
// termination grace covers all three (deploy/deploy_test.go), so the process ends by itself,
// saying what it did not flush, rather than by a SIGKILL that says nothing.
const flushWindow = 5 * time.Second

// close releases what newServer opened, in the reverse order of its opening: at the end of
// serve, and for a start-up that fails half-way (then only what was opened so far). It
// returns once that is done or flushWindow has passed, whichever is first; the release goes on
// until the process exits.
func (s *server) close() {
	s.closeOnce.Do(func() {
		s.closed = make(chan struct{})
		by := s.clock.Now().Add(flushWindow)
		go func() {
			defer close(s.closed)
			s.release(by)
		}()
	})
	t := s.clock.NewTimer(flushWindow)
	defer t.Stop()
	select {
	case <-s.closed:
	case <-t.C():
		s.logger.Error("state not flushed within the window; exiting without the rest (jobs' webhooks, audit appends, NATS, budget settlements, spans)",
			slog.String("window", flushWindow.String()))
	}
}

// release is close's work, in order, the state's flushes first; the last spans get what is
// left of the window until by.
func (s *server) release(by time.Time) {
	if s.jobs != nil {
		s.jobs.Close() // its workers give their documents back to the queue
		s.jobs = nil
	}
	if s.audit != nil {
		s.audit.Close() // the appends in flight, after the last request
		s.audit = nil
	}
	if s.box != nil {
		s.box.Close()
		s.box = nil
	}
	if s.stopPoolWork != nil {
		if s.pool != nil {
			_ = s.pool.pool.Close(context.Background()) // after a shutdown's drain: nothing left
		}
		s.stopPoolWork()
	}
	if s.fleet != nil {
		_ = s.fleet.Close() // the budgets' settlements still queued, sent to Redis
		s.fleet = nil
	}
	if s.tracer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), min(5*time.Second, by.Sub(s.clock.Now())))
		_ = s.tracer.Shutdown(ctx) // the last spans (requests, jobs), exported
		cancel()
		s.tracer = nil
	}
	if s.decoder != nil {
		_ = s.decoder.Close() // its run options; the session would go with the runtime
	}
	if s.watcher != nil {
		_ = s.watcher.Close()
	}
	if s.runtime != nil {
		if err := s.runtime.Close(); err != nil {
			s.logger.Warn("closing ONNX Runtime", slog.String("error", err.Error()))
		}
	}
}

// loadModel finds a model by name: a directory of that name under dir when dir is set and
// has one, else the embedded model.
func loadModel(dir, name string) (*models.Model, error) {
	if dir == "" {
		m, err := models.Load(models.Embedded(), name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("model %q: not among the embedded models %v (SLUICE_MODELS_DIR is unset)", name, models.EmbeddedNames())
		}
		return m, err
	}
	m, err := models.Load(os.DirFS(dir), name)
	if errors.Is(err, fs.ErrNotExist) {
		// No fall back to the embedded models: a deployment that names a directory means to
		// serve what is in it, and a typo must not quietly serve the demo models instead.
		return nil, fmt.Errorf("model %q: SLUICE_MODELS_DIR (%s) has no complete model of that name: %w", name, dir, err)
	}
	return m, err
}

// reloadKeysOnHangup re-reads SLUICE_API_KEYS_FILE and SLUICE_AUTH_JWKS_FILE on each SIGHUP:
// requests go on with the old keys until the new ones are in place, and a file that does not
// parse keeps the old ones and says why (never which key). It returns the function that stops
// it.
func (s *server) reloadKeysOnHangup() func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				s.reloadCredentials()
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

func (s *server) reloadCredentials() {
	if s.cfg.APIKeysFile != "" {
		if keys, err := s.cfg.apiKeys(); err != nil {
			s.logger.Error("API keys not reloaded; the previous ones stay", slog.String("error", err.Error()))
		} else {
			s.auth.SetKeys(keys)
			s.logger.Info("API keys reloaded", slog.Int("keys", keys.Len()))
		}
	}
	if s.cfg.AuthJWKSFile != "" {
		if v, err := s.cfg.jwtVerifier(); err != nil {
			s.logger.Error("JWKS not reloaded; the previous keys stay", slog.String("error", err.Error()))
		} else {
			s.auth.SetJWT(v)
			s.logger.Info("JWKS reloaded", slog.String("verifier", v.String()))
		}
	}
}

// preload loads SLUICE_PRELOAD_MODELS into the pool before the server is ready; they stay
// until unloaded or evicted (a configured model named there is resident already).
func (s *server) preload(ctx context.Context) error {
	if s.pool == nil {
		return nil
	}
	for _, name := range s.cfg.PreloadModels {
		if err := s.pool.pool.Preload(ctx, name); err != nil {
			return fmt.Errorf("SLUICE_PRELOAD_MODELS: model %q: %w", name, err)
		}
	}
	return nil
}

// inPlaceDecode gives dec the model's in-place decode graph, with buffers of the served
// length, when it has one and it may be used; one the decoder refuses is a warning, the
// decoder's own graph serving every step.
func (s *server) inPlaceDecode(cfg Config, m *models.Model, dec *engine.Decoder, int8 bool, maxLen int) {
	model := slog.String("model", m.Name)
	switch {
	case len(m.DecodeInPlace) == 0 || !cfg.GenerateInPlaceDecode:
		return
	case int8:
		s.logger.Info("decode_inplace.onnx is float32 and the decoder int8: every step on the decoder's graph", model)
		return
	}
	if err := dec.AddInPlaceDecode(m.DecodeInPlace, maxLen); err != nil {
		s.logger.Warn("decode_inplace.onnx not used: every step on the decoder's graph", model, slog.String("error", err.Error()))
		return
	}
	s.logger.Info("decode steps and first prompts on decode_inplace.onnx, keys and values updated in place", model)
}

// warmGeneration runs one short generation through the scheduler before the server is ready:
// ONNX Runtime initialises lazily, and the first client should not pay for it.
func (s *server) warmGeneration(ctx context.Context) error {
	if s.generator == nil {
		return nil
	}
	st, err := s.generator.Generate(ctx, admission.Interactive, "Warm up", generate.Params{MaxNewTokens: 2})
	if err != nil {
		return fmt.Errorf("model %q: warm-up failed: %w", s.generator.Name(), err)
	}
	for {
		ev, err := st.Next(ctx)
		if err == nil && ev.Err != nil {
			err = ev.Err
		}
		if err != nil {
			return fmt.Errorf("model %q: warm-up failed: %w", s.generator.Name(), err)
		}
		if ev.Done {
			return nil
		}
	}
}

// serve listens, warms the models, marks the server ready and blocks until ctx ends; then it
// stops accepting, lets in-flight requests and batches finish, and releases ONNX Runtime.
func (s *server) serve(ctx context.Context, ready chan<- net.Addr) error {
	defer s.close() // idempotent: releases the watcher and ONNX Runtime on every way out
	ln, err := s.listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on SLUICE_ADDR %q: %w", s.cfg.Addr, err)
	}
	ln = boundedSendListener{ln}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	work, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	for _, c := range s.classifiers {
		c.Start(work)
	}
	for _, e := range s.encoders {
		e.Start(work)
	}
	if s.encPool != nil {
		s.encPool.start(work)
	}
	if s.sched != nil {
		s.sched.Start(work)
	}
	if s.auth != nil && (s.cfg.APIKeysFile != "" || s.cfg.AuthJWKSFile != "") {
		// Before the first request: a SIGHUP (a key revoked) must never find the process
		// without its handler, whose default is to end it.
		stopReloads := s.reloadKeysOnHangup()
		defer stopReloads()
	}
	served := make(chan error, 2) // one a listener: neither waits on a reader
	go func() {
		err := s.app.Listener(ln) // nil once shut down, when nobody reads served any more
		if err == nil {
			err = errors.New("stopped accepting connections")
		}
		served <- fmt.Errorf("HTTP listener: %w", err)
	}()
	// stopEarly ends the HTTP server before it has served: a shutdown that comes before its
	// Serve has taken the listener returns at once and leaves the port to that Serve, so the
	// listener is closed too.
	stopEarly := func(grace time.Duration) {
		_ = s.app.ShutdownWithTimeout(grace)
		_ = ln.Close()
	}
	rpc, err := s.listenGRPC(served)
	if err != nil {
		stopEarly(0)
		return err
	}
	if rpc != nil {
		defer rpc.Stop() // whatever the grace left: the calls end with the HTTP server's answers
	}

	grace := time.Duration(s.cfg.ShutdownTimeoutSec) * time.Second
	for _, c := range s.warmers() {
		if err := c.Warm(ctx); err != nil {
			stopEarly(grace)
			if ctx.Err() != nil {
				return nil // SIGTERM during warm-up is a clean stop, not a failure
			}
			return err
		}
	}
	if err := s.preload(ctx); err != nil {
		stopEarly(grace)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := s.warmGeneration(ctx); err != nil {
		stopEarly(grace)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// Loading leaves garbage the size of the models (graph bytes, a rewrite's float32 copies);
	// it goes back to the system now, so the resident size the server starts serving with is
	// its working size.
	debug.FreeOSMemory()
	s.ready.Store(true)
	s.logStart(ln.Addr())
	if ready != nil {
		select {
		case ready <- ln.Addr():
		case <-ctx.Done():
		}
	}

	// A listener that fails (its Accept's error is not a timeout) stops taking connections,
	// not the requests on those it took: they get the grace a SIGTERM gives them.
	var failed error
	select {
	case failed = <-served:
		s.logger.Error("a listener failed; shutting down", slog.String("error", failed.Error()))
	case <-ctx.Done():
	}
	s.ready.Store(false)
	s.logger.Info("shutting down", slog.String("grace", grace.String()))
	end := time.Now().Add(grace + answerWindow)
	rpcStopped := make(chan struct{})
	if rpc != nil {
		go func() { rpc.GracefulStop(); close(rpcStopped) }() // no new calls; those in flight finish
	} else {
		close(rpcStopped)
	}
	s.shutdown(grace)
	// gRPC calls run through the HTTP app in-process, where its shutdown does not see them:
	// they get the same grace and answer window before the deferred Stop cuts them.
	wait := time.NewTimer(time.Until(end))
	defer wait.Stop()
	select {
	case <-rpcStopped:
	case <-wait.C:
	}
	return failed
}

// answerWindow is how long, after the grace, the HTTP server has to write the answers of the
// requests the grace cut short; the process exits by then.
const answerWindow = 500 * time.Millisecond

// warmers are every batched model warmed before the server reports ready: the classifiers and
// the encoders.
func (s *server) warmers() []interface{ Warm(context.Context) error } {
	out := make([]interface{ Warm(context.Context) error }, 0, len(s.classifiers)+len(s.encoders))
	for _, c := range s.classifiers {
		out = append(out, c)
	}
	for _, e := range s.encoders {
		out = append(out, e)
	}
	return out
}

// shutdown keeps the grace's promise. Work that finishes within it is answered as usual: the
// batchers drain what is queued at once instead of waiting out their batch windows, running
// streams go on, new requests are refused. At its end the batchers stop: queued requests and
// running batches (ONNX Runtime passes terminated) answer 503 not_ready, streams end with an
// error event, and the HTTP server has answerWindow to write those answers before it returns.
func (s *server) shutdown(grace time.Duration) {
	drain, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if s.jobs != nil {
		// First, before the batchers refuse work: the job workers give back the documents
		// they hold, for another replica or the next start, rather than failing them against
		// models that are closing. The job routes still answer.
		s.jobs.Close()
	}
	var stopped sync.WaitGroup
	for _, c := range s.classifiers {
		stopped.Go(func() {
			if err := c.Close(drain); err != nil {
				s.logger.Warn("batcher did not drain within the grace; the rest was refused", slog.String("model", c.Name()))
			}
		})
	}
	for _, e := range s.encoders {
		stopped.Go(func() {
			if err := e.Close(drain); err != nil {
				s.logger.Warn("batcher did not drain within the grace; the rest was refused", slog.String("model", e.Name()))
			}
		})
	}
	if s.encPool != nil {
		stopped.Go(func() { s.encPool.close(drain) })
	}
	if s.pool != nil {
		stopped.Go(func() {
			if err := s.pool.pool.Close(drain); err != nil {
				s.logger.Warn("models loaded on demand did not drain within the grace; the rest was refused")
			}
			s.stopPoolWork()
		})
	}
	if s.sched != nil {
		stopped.Go(func() {
			if err := s.sched.Close(drain); err != nil {
				s.logger.Warn("generation did not finish within the grace; streams ended", slog.String("model", s.sched.Name()))
			}
		})
	}
	if err := s.app.ShutdownWithTimeout(grace + answerWindow); err != nil {
		s.logger.Warn("HTTP connections still open at the end of the shutdown", slog.String("error", err.Error()))
	}
	stopped.Wait()
}

// upstream is the privacy gateway's external model, if one is configured.
func (c Config) upstream() (*upstream.Upstream, error) {
	switch {
	case c.GatewayUpstreamURL != "":
		key := ""
		if c.GatewayUpstreamKeyFile != "" {
			data, err := os.ReadFile(c.GatewayUpstreamKeyFile)
			if err != nil {
				return nil, fmt.Errorf("SLUICE_GATEWAY_UPSTREAM_KEY_FILE: %w", err)
			}
			key = strings.TrimSpace(string(data))
		}
		return upstream.NewOpenAI(upstream.Config{URL: c.GatewayUpstreamURL, Key: key, Model: c.GatewayUpstreamModel})
	case c.GatewayOpenMedEndpoint != "":
		return upstream.NewOpenMed(upstream.Config{URL: c.GatewayOpenMedEndpoint})
	}
	return nil, nil
}

// logStart says what the server serves, once it is ready: a line per configured model (its
// kind, precision, device and routes), then where it listens, whether callers must
// authenticate, and where its state lives.
func (s *server) logStart(addr net.Addr) {
	device := string(s.runtime.Device())
	for _, m := range s.served {
		precision := "float32"
		if m.int8 {
			precision = "int8"
		}
		var paths []string
		for _, r := range s.routes {
			if m.gate != nil && r.Gate == m.gate {
				paths = append(paths, r.Path)
			}
			for _, info := range r.Models {
				if info.Name == m.name {
					paths = append(paths, r.Path)
				}
			}
		}
		s.logger.Info("serving", slog.String("model", m.name), slog.String("kind", m.kind), slog.String("precision", precision),
			slog.String("device", device), slog.String("routes", strings.Join(paths, " ")))
	}
	auth := "off: every caller is served"
	switch {
	case s.auth != nil && s.cfg.AuthJWKS+s.cfg.AuthJWKSFile != "":
		auth = "API keys and bearer JWTs"
	case s.auth != nil && (s.cfg.APIKeysFile != "" || s.cfg.APIKeys != ""):
		auth = "API keys"
	case s.auth != nil:
		auth = "none but client certificates"
	}
	if s.cfg.MTLS.Enabled {
		auth += "; client certificates required (mTLS)"
	}
	onDemand := "off"
	if s.pool != nil {
		onDemand = "from " + s.cfg.ModelsDir
	}
	budgets := "this process's memory"
	if s.fleet != nil {
		budgets = fmt.Sprintf("Redis, shared by the fleet; while it is out of reach: %s (%d replicas)", s.cfg.Fleet.Failure, s.cfg.Fleet.Replicas)
	}
	audited := "off"
	switch {
	case s.audit == nil:
	case s.box.Embedded():
		audited = "replica " + s.box.Replica() + ", embedded NATS on " + s.cfg.NATS.DataDir
	default:
		audited = "replica " + s.box.Replica() + ", external NATS (" + strconv.Itoa(s.box.Replicas()) + " copies)"
	}
	rpc := "off"
	if s.grpcAddr != nil {
		rpc = s.grpcAddr.String()
	}
	s.logger.Info("ready", slog.String("addr", addr.String()), slog.String("grpc", rpc), slog.String("device", device),
		slog.String("authentication", auth), slog.String("models_on_demand", onDemand), slog.String("budgets", budgets),
		slog.String("audit", audited), slog.String("state", "this process: the KV cache lives in memory"))
}

// listenGRPC starts the gRPC listener when SLUICE_GRPC_ADDR names one: OpenMed's service and the
// Open Inference Protocol's, both answered by the HTTP server in the process (grpcserve), over
// the HTTP listener's TLS settings. A failure of its Serve ends the process as the HTTP
// server's does.
func (s *server) listenGRPC(served chan<- error) (*grpc.Server, error) {
	if s.cfg.GRPCAddr == "" {
		return nil, nil
	}
	srv, err := grpcserve.New(grpcserve.Config{Calls: handlers.NewInProcess(s.app), TLS: s.tls,
		MaxMessageBytes: s.cfg.MaxBodyBytes, Stall: time.Duration(s.cfg.HTTPWriteTimeoutMS) * time.Millisecond})
	if err != nil {
		return nil, err
	}
	ln, err := s.listen("tcp", s.cfg.GRPCAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on SLUICE_GRPC_ADDR %q: %w", s.cfg.GRPCAddr, err)
	}
	s.grpcAddr = ln.Addr()
	go func() {
		if err := srv.Serve(ln); err != nil {
			served <- fmt.Errorf("gRPC listener: %w", err)
		}
	}()
	return srv, nil
}

// minSigningSecret is the shortest signing secret taken without a warning: 128 bits.
const minSigningSecret = 16

// signingVerifier is the verifier of signed requests when a secret is configured: its nonces
// in JetStream, shared by the fleet, when this process keeps durable state there, else in
// memory.
func (s *server) signingVerifier(ctx context.Context, cfg Config, clk clock.Clock) (*signing.Verifier, error) {
	if cfg.Signing.SecretFile == "" {
		return nil, nil
	}
	secret, err := signing.ReadSecret(cfg.Signing.SecretFile)
	if err != nil {
		return nil, err
	}
	if len(secret) < minSigningSecret {
		// Taken, as OpenMed takes it, but said: a short secret is guessed offline from one
		// signed request.
		s.logger.Warn("the signing secret is short: one signed request lets whoever holds it guess the secret offline; use 32 random bytes or more",
			slog.Int("bytes", len(secret)), slog.Int("at_least", minSigningSecret))
	}
	var nonces signing.Nonces = signing.NewMemoryNonces(clk, cfg.Signing.MaxNonces)
	if s.box == nil || s.box.Embedded() {
		// A replay is refused by the replica that saw the nonce: behind a load balancer, the
		// others would each take the request once within its window.
		s.logger.Warn("signed requests' nonces are kept by this replica alone; with several replicas, set SLUICE_NATS_URL so that a nonce spent at one is spent at all")
	}
	if s.box != nil {
		if nonces, err = signing.NewJetStreamNonces(ctx, s.box.JetStream(), cfg.Signing, s.box.Replicas(), s.logger); err != nil {
			return nil, err
		}
	}
	return signing.NewVerifier(cfg.Signing, secret, clk, nonces)
}

// guarded is ex with its calls through the process's resilience guard, each a span.
func (s *server) guarded(ex handlers.Extractor) handlers.Extractor {
	return handlers.Traced(handlers.Guarded(ex, s.guard), s.tracer)
}

// serverTLS is the listener's TLS when a server certificate is configured: with mTLS on, a
// client certificate is asked for and, when given, checked at the handshake against the CA
// bundle (one that is not is refused there); the request without one is answered by the
// handlers (mtls_certificate_required), and the probes need none.
func serverTLS(cfg mtls.Config, certs *mtls.Verifier) (*tls.Config, error) {
	if cfg.CertFile == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("SLUICE_TLS_CERT_FILE, SLUICE_TLS_KEY_FILE: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if certs != nil {
		c.ClientAuth, c.ClientCAs = tls.VerifyClientCertIfGiven, certs.Pool()
	}
	return c, nil
}
