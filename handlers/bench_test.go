package handlers

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// BenchmarkRefusalPath sends a POST /analyze that the gate sheds through Sluice's whole handler
// chain (request id, admission, refusal body, metrics, access log), and, in the same run, the
// same request to a bare fiber app that answers 200. The ratio is what a refusal costs over
// the least a fiber server can do.
func BenchmarkRefusalPath(b *testing.B) {
	src := newFakeLoad(256)
	src.setWaiting(300)
	reg := prometheus.NewRegistry()
	gate, err := admission.NewGate("analyze", admission.Config{HighWatermark: 256, Policy: admission.PolicyStatic,
		StaticRetryAfter: time.Second}, src, clock.Real(), admission.NewMetrics(reg))
	if err != nil {
		b.Fatal(err)
	}
	sluice := benchApp(b, gate, reg)
	// The same refusal from a gate that books retry reservations: warm on a fake clock at a
	// rate high enough that the benchmark's refusals never fill a second.
	tokSrc := newFakeLoad(256)
	tokSrc.load.Running = 1
	fake := clock.NewFake(time.Unix(0, 0))
	tokGate, err := admission.NewGate("analyze", admission.Config{HighWatermark: 256, Policy: admission.PolicyStatic,
		StaticRetryAfter: time.Second, RetryReserve: 1}, tokSrc, fake, admission.NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	for range 4 {
		tokGate.Admit(admission.Interactive)
		fake.Advance(time.Second)
		tokSrc.load.Completed += 1 << 20
	}
	tokSrc.setWaiting(300)
	withTokens := benchApp(b, tokGate, prometheus.NewRegistry())
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Post("/analyze", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusOK) })

	body := []byte(`{"text": "a clinical note of some length that is never parsed on a refusal"}`)
	for _, tc := range []struct {
		name string
		app  *fiber.App
		want int
	}{{"fiber-bare-200", bare, 200}, {"sluice-refusal-503", sluice, 503}, {"sluice-refusal-503-with-token", withTokens, 503}} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.app == withTokens {
				// Fresh seconds to book into, at the same rate: a run (or a -count repeat)
				// never finds the book full from the one before.
				fake.Advance(10 * time.Second)
				tokSrc.mu.Lock()
				tokSrc.load.Completed += 10 << 20
				tokSrc.mu.Unlock()
			}
			h := tc.app.Handler()
			var fctx fasthttp.RequestCtx
			fctx.Request.Header.SetMethod(fiber.MethodPost)
			fctx.Request.SetRequestURI("/analyze")
			fctx.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
			fctx.Request.SetBody(body)
			h(&fctx)
			if got := fctx.Response.StatusCode(); got != tc.want {
				b.Fatalf("status %d, want %d: %s", got, tc.want, fctx.Response.Body())
			}
			if tok := fctx.Response.Header.Peek(admission.RetryTokenHeader); (tc.app == withTokens) != (len(tok) > 0) {
				b.Fatalf("%s: retry token %q", tc.name, tok)
			}
			b.ReportAllocs()
			for b.Loop() {
				fctx.Response.Reset()
				h(&fctx)
			}
		})
	}
}

// benchApp is the whole Sluice handler chain with fake models, /analyze behind gate.
func benchApp(b *testing.B, gate *admission.Gate, reg *prometheus.Registry) *fiber.App {
	app, err := New(Options{
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: NewMetrics(reg), Gatherer: reg,
		Clock: clock.Real(),
		Routes: []Route{
			Analyze(Endpoint{Default: "m", Models: map[string]Extractor{"m": &fakeExtractor{name: "m"}}, Gate: gate}),
			PIIExtract(Endpoint{Default: "m", Models: map[string]Extractor{"m": &fakeExtractor{name: "m"}},
				Gate: newTestGate(b, "pii_extract", newFakeLoad(256), time.Second)}),
		},
		Limits: Limits{MaxBodyBytes: 1 << 20, MaxTextChars: 1000, MaxTextBytes: 4000, RequestTimeout: time.Second, WriteTimeout: time.Second},
		Ready:  func() bool { return true },
	})
	if err != nil {
		b.Fatal(err)
	}
	return app
}
