package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/embed"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/warmpool"
)

// maxOnDemandEncoders bounds the embedders and rerankers loaded on demand (each has its
// session and batcher until the server stops).
const maxOnDemandEncoders = 4

// encoderPool loads, on the first request that names one, an embedder or cross-encoder of
// SLUICE_MODELS_DIR that is not the configured one, and keeps it: its own batcher, started
// with the server's work, and its own admission gate.
type encoderPool struct {
	dir  string
	rt   *engine.Runtime
	cfg  Config
	clk  clock.Clock
	bm   *batcher.Metrics
	am   *admission.Metrics
	work context.Context // set when the server starts serving
	log  *slog.Logger

	mu     sync.Mutex
	loaded map[string]*onDemand
	loops  []encoderLoop
	// failed remembers the names whose load failed, as models on demand do.
	failed warmpool.Failures
	// loadTime is how long the last load took: what a request that stops waiting is told.
	loadTime time.Duration
	closed   bool
	loads    sync.WaitGroup
}

// onDemand is one encoder's load; its fields are set before done is closed.
type onDemand struct {
	done    chan struct{}
	started time.Time
	emb     *embed.Embedder
	rr      *embed.Reranker
	gate    *admission.Gate
	err     error
}

// guessedLoadTime is what a request is told to wait before any load has been measured.
const guessedLoadTime = 2 * time.Second

// start is the server's work context, under which loaded encoders run.
func (p *encoderPool) start(work context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.work = work
	for _, l := range p.loops {
		l.Start(work)
	}
}

// close drains every loaded encoder, once the loads under way have ended (or ctx has).
func (p *encoderPool) close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	loaded := make(chan struct{})
	go func() { p.loads.Wait(); close(loaded) }()
	select {
	case <-loaded:
	case <-ctx.Done(): // a load still under way is left to the process's end
	}
	p.mu.Lock()
	loops := append([]encoderLoop(nil), p.loops...)
	p.mu.Unlock()
	for _, l := range loops {
		_ = l.Close(ctx)
	}
}

// get loads (once) the model called name as an embedder (embedder true) or a cross-encoder,
// waiting for its load while ctx lives: the load is the server's and goes on without the
// request (handlers.ModelLoadingError). A name the directory does not hold, or a model of the
// other kind, is handlers.ErrModelUnknown.
func (p *encoderPool) get(ctx context.Context, name string, embedder bool) (*onDemand, error) {
	if p == nil || p.dir == "" || !fs.ValidPath(name) || name == "." {
		return nil, handlers.ErrModelUnknown
	}
	want := models.CrossEncoder
	if embedder {
		want = models.Embedder
	}
	p.mu.Lock()
	_, ok := p.loaded[name]
	p.mu.Unlock()
	if !ok {
		// Asked of the small files before a slot is taken: a model of the other kind, named
		// on the wrong route, is never loaded for it.
		switch kind, err := models.EncoderKindOf(os.DirFS(p.dir), name); {
		case err != nil:
			return nil, fmt.Errorf("%w: %w", handlers.ErrModelUnknown, err)
		case kind != want:
			return nil, handlers.ErrModelUnknown
		}
	}
	p.mu.Lock()
	if err := p.failed.Recall(name, p.clk.Now()); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	d, ok := p.loaded[name]
	if !ok {
		switch {
		case p.closed:
			p.mu.Unlock()
			return nil, errServerStopping
		case len(p.loaded) >= maxOnDemandEncoders:
			p.mu.Unlock()
			return nil, handlers.ErrModelBusy
		}
		d = &onDemand{done: make(chan struct{}), started: p.clk.Now()}
		p.loaded[name] = d
		p.loads.Add(1)
		go p.loadInBackground(d, name)
	}
	p.mu.Unlock()
	select {
	case <-d.done: // loaded (or failed) already: whatever the request's wait, which may be none
	default:
		if err := p.await(ctx, d); err != nil {
			return nil, err
		}
	}
	switch {
	case d.err != nil:
		return nil, d.err
	case embedder != (d.emb != nil):
		return nil, handlers.ErrModelUnknown
	}
	return d, nil
}

// await waits for d's load while ctx lives; then the request is told how long it has left.
func (p *encoderPool) await(ctx context.Context, d *onDemand) error {
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		expect := p.loadTime
		if expect == 0 {
			expect = guessedLoadTime
		}
		return &handlers.ModelLoadingError{Remaining: max(expect-p.clk.Now().Sub(d.started), time.Second)}
	}
}

// errServerStopping is a load asked for once the server has begun to stop: ErrModelBusy's
// 503, which a client retries (on another replica).
var errServerStopping = fmt.Errorf("%w: the server is stopping", handlers.ErrModelBusy)

// loadInBackground is d's load. A failure is logged (the request that asked answers a 500 that
// names no cause, as modelPool.loadLogged) and remembered, and frees d's slot.
func (p *encoderPool) loadInBackground(d *onDemand, name string) {
	defer p.loads.Done()
	err := p.loadSafely(d, name)
	p.mu.Lock()
	d.err = err
	if err == nil {
		p.loadTime = p.clk.Now().Sub(d.started)
	} else {
		delete(p.loaded, name) // a request after RetryFailedAfter tries again
		p.failed.Remember(name, err, p.clk.Now())
	}
	p.mu.Unlock()
	// Logged before the waiters hear of it: the answer they give names no cause, and a
	// failure is in the log by the time one is answered.
	if err != nil && !errors.Is(err, handlers.ErrModelUnknown) {
		p.log.Error("an encoder on demand failed to load", slog.String("model", name), slog.String("error", err.Error()))
	}
	close(d.done)
}

// loadSafely is load with a panic (a model's files no check foresaw) made its error: the load
// runs on a goroutine of its own, where a panic would end the process.
func (p *encoderPool) loadSafely(d *onDemand, name string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("loading the model panicked: %T", r)
		}
	}()
	return p.load(d, name)
}

func (p *encoderPool) load(d *onDemand, name string) (err error) {
	m, err := models.Load(os.DirFS(p.dir), name) // get has read its small files: an encoder
	if err != nil {
		return fmt.Errorf("%w: %w", handlers.ErrModelUnknown, err)
	}
	if m.Sentence == nil && !m.IsCrossEncoder() {
		return handlers.ErrModelUnknown
	}
	sess, err := p.rt.NewSession(m.Name, m.ONNX)
	if err != nil {
		return err
	}
	loaded := false // not by a return alone: a panic (loadSafely) must also close what was opened
	defer func() {
		if !loaded {
			_ = sess.Close() // nothing started on it
		}
	}()
	var loop encoderLoop
	var q admission.Queue
	// The batcher and the gate take the route's name before the model's: a bare directory name
	// ("rerank", "analyze") may be a configured endpoint's queue.
	queue := "rerank:" + name
	if m.Sentence != nil {
		queue = "embeddings:" + name
	}
	if m.Sentence != nil {
		e, err := embed.NewEmbedder(queue, m, sess, p.cfg.extract().Batch, p.clk, p.bm)
		if err != nil {
			return err
		}
		d.emb, loop, q = e, e, e.Queue()
	} else {
		r, err := embed.NewReranker(queue, m, sess, p.cfg.extract().Batch, p.clk, p.bm)
		if err != nil {
			return err
		}
		d.rr, loop, q = r, r, r.Queue()
	}
	defer func() {
		if !loaded {
			_ = loop.Close(context.Background()) // never started: frees its name for a later try
		}
	}()
	if err := loop.Warm(context.Background()); err != nil {
		return err
	}
	if d.gate, err = admission.NewGate(queue, p.cfg.gate(), q, p.clk, p.am); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.work != nil {
		loop.Start(p.work)
	}
	p.loops = append(p.loops, loop)
	loaded = true
	return nil
}

// embedders is the pool as the embedding routes' loader.
func (p *encoderPool) embedders(ctx context.Context, name string) (handlers.Embedder, *admission.Gate, error) {
	d, err := p.get(ctx, name, true)
	if err != nil {
		return nil, nil, err
	}
	return d.emb, d.gate, nil
}

// rerankers is the pool as the rerank routes' loader.
func (p *encoderPool) rerankers(ctx context.Context, name string) (handlers.Reranker, *admission.Gate, error) {
	d, err := p.get(ctx, name, false)
	if err != nil {
		return nil, nil, err
	}
	return d.rr, d.gate, nil
}
