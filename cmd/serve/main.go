package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/handlers/connwatch"
	"github.com/sluice-serving/sluice/models"
)

// version is set at build time with -ldflags "-X main.version=..."; "dev" otherwise.
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
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
	srv, err := newServer(cfg, logger, clock.Real())
	if err != nil {
		logger.Error("start-up failed", slog.String("error", err.Error()))
		fmt.Fprintln(stderr, "sluice:", err)
		return 1
	}
	if err := srv.serve(ctx, ready); err != nil {
		logger.Error("server stopped with an error", slog.String("error", err.Error()))
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
	classifiers []*extract.Classifier
	app         *fiber.App
	watcher     *connwatch.Watcher
	ready       atomic.Bool
}

func newServer(cfg Config, logger *slog.Logger, clk clock.Clock) (*server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	rtOpts := cfg.runtime()
	rtOpts.Logger = logger
	if rtOpts.LibraryPath == "" {
		rtOpts.LibraryPath = engine.LibraryPath()
	}
	rt, err := engine.NewRuntime(rtOpts)
	if err != nil {
		return nil, err
	}
	watcher, err := connwatch.New(logger)
	if err != nil {
		_ = rt.Close()
		return nil, fmt.Errorf("client-disconnect watcher: %w", err)
	}
	reg.MustRegister(watcher.Collector())
	s := &server{cfg: cfg, logger: logger, runtime: rt, watcher: watcher}
	bm := batcher.NewMetrics(reg)
	am := admission.NewMetrics(reg)
	endpoint := func(queue, model string) (handlers.Endpoint, error) {
		m, err := loadModel(cfg.ModelsDir, model)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		sess, err := rt.NewSession(m.Name, m.ONNX)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		cls, err := extract.New(queue, m, sess, cfg.extract(), clk, bm)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		s.classifiers = append(s.classifiers, cls)
		gate, err := admission.NewGate(queue, cfg.gate(), cls.Queue(), clk, am)
		if err != nil {
			return handlers.Endpoint{}, err
		}
		ep := handlers.Endpoint{Default: model, Models: map[string]handlers.Extractor{model: cls}, Gate: gate}
		for alias, target := range cfg.ModelAliases {
			if target == model {
				ep.Models[alias] = cls
			}
		}
		return ep, nil
	}
	analyze, err := endpoint("analyze", cfg.AnalyzeModel)
	if err != nil {
		s.close()
		return nil, err
	}
	pii, err := endpoint("pii_extract", cfg.PIIModel)
	if err != nil {
		s.close()
		return nil, err
	}
	s.app, err = handlers.New(handlers.Options{
		Logger: logger, Metrics: handlers.NewMetrics(reg), Gatherer: reg, Clock: clk,
		Routes:     []handlers.Route{handlers.Analyze(analyze), handlers.PIIExtract(pii)},
		Limits:     cfg.limits(),
		RetryAfter: cfg.retryAfter(), Ready: s.ready.Load, Version: version,
		Watcher: watcher,
	})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close releases what newServer acquired, for a start-up that fails half-way.
func (s *server) close() {
	_ = s.watcher.Close()
	if err := s.runtime.Close(); err != nil {
		s.logger.Warn("closing ONNX Runtime", slog.String("error", err.Error()))
	}
}

// loadModel finds a model by name: a directory of that name under dir when dir is set and
// has one, else the embedded model.
func loadModel(dir, name string) (*models.Model, error) {
	if dir != "" {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
			return models.Load(os.DirFS(dir), name)
		}
	}
	m, err := models.Load(models.Embedded(), name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("model %q: not found in SLUICE_MODELS_DIR nor among the embedded models (%v)", name, models.EmbeddedNames())
	}
	return m, err
}

// serve listens, warms the models, marks the server ready and blocks until ctx ends; then it
// stops accepting, lets in-flight requests and batches finish, and releases ONNX Runtime.
func (s *server) serve(ctx context.Context, ready chan<- net.Addr) error {
	defer s.close() // idempotent: releases the watcher and ONNX Runtime on every way out
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on SLUICE_ADDR %q: %w", s.cfg.Addr, err)
	}
	work, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	for _, c := range s.classifiers {
		c.Start(work)
	}
	served := make(chan error, 1)
	go func() { served <- s.app.Listener(ln) }()

	grace := time.Duration(s.cfg.ShutdownTimeoutSec) * time.Second
	for _, c := range s.classifiers {
		if err := c.Warm(ctx); err != nil {
			_ = s.app.ShutdownWithTimeout(grace)
			if ctx.Err() != nil {
				return nil // SIGTERM during warm-up is a clean stop, not a failure
			}
			return err
		}
	}
	s.ready.Store(true)
	s.logger.Info("ready", slog.String("addr", ln.Addr().String()), slog.String("device", string(s.runtime.Device())))
	if ready != nil {
		select {
		case ready <- ln.Addr():
		case <-ctx.Done():
		}
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.ready.Store(false)
	s.logger.Info("shutting down", slog.String("grace", grace.String()))
	drain, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Drain the batchers while the HTTP server stops accepting: queued work is dispatched at
	// once instead of waiting out its batch window, so in-flight requests get their answers.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for _, c := range s.classifiers {
			if err := c.Close(drain); err != nil {
				s.logger.Warn("batcher did not drain in time", slog.String("model", c.Name()))
			}
		}
	}()
	if err := s.app.ShutdownWithTimeout(grace); err != nil {
		s.logger.Warn("HTTP shutdown did not finish in time", slog.String("error", err.Error()))
	}
	<-drained
	return nil
}
