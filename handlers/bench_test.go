package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/tracing"
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
	// Authentication and a budget with room to spare in front of the shedding gate; and a
	// budget that is spent, whose 429 comes before the gate.
	withCallers503 := benchApp(b, gate, prometheus.NewRegistry(), withCallers(b, `{"requests_per_minute":1e12,"tokens_per_minute":1e12}`))
	// Its gate admits: the one request of the burst is served (a 503 would give it back).
	open := newTestGate(b, "analyze", newFakeLoad(256), time.Second)
	spent := benchApp(b, open, prometheus.NewRegistry(), withCallers(b, `{"requests_per_minute":1e-9,"request_burst":1}`))
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Post("/analyze", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusOK) })

	body := []byte(`{"text": "a clinical note of some length that is never parsed on a refusal"}`)
	for _, tc := range []struct {
		name string
		app  *fiber.App
		want int
	}{{"fiber-bare-200", bare, 200}, {"sluice-refusal-503", sluice, 503}, {"sluice-refusal-503-with-token", withTokens, 503},
		{"sluice-refusal-503-auth-budget", withCallers503, 503}, {"sluice-refusal-429-budget", spent, 429}} {
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
			fctx.Request.Header.Set("X-API-Key", "bench-key")
			h(&fctx)
			if tc.app == spent && fctx.Response.StatusCode() == 200 {
				fctx.Response.Reset()
				h(&fctx) // the first took the one request of the burst
			}
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
func benchApp(b testing.TB, gate *admission.Gate, reg *prometheus.Registry, with ...func(*Options)) *fiber.App {
	o := Options{
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: NewMetrics(reg), Gatherer: reg,
		Clock: clock.Real(),
		Routes: []Route{
			Analyze(Endpoint{Default: "m", Models: map[string]Extractor{"m": &fakeExtractor{name: "m"}}, Gate: gate}),
			PIIExtract(Endpoint{Default: "m", Models: map[string]Extractor{"m": &fakeExtractor{name: "m"}},
				Gate: newTestGate(b, "pii_extract", newFakeLoad(256), time.Second)}),
		},
		Limits: Limits{MaxBodyBytes: 1 << 20, MaxTextChars: 1000, MaxTextBytes: 4000, RequestTimeout: time.Second, WriteTimeout: time.Second},
		Ready:  func() bool { return true },
	}
	for _, f := range with {
		f(&o)
	}
	app, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	return app
}

// withCallers switches authentication on (one key, "bench-key", whose tenant's budget is
// allowance) and the budgets.
func withCallers(b testing.TB, allowance string) func(*Options) {
	return func(o *Options) {
		keys, err := identity.ParseKeys([]byte(`[{"id":"k","key_hash":"` + identity.HashKey("bench-key") +
			`","tenant":"bench","scopes":"*","budget":` + allowance + `}]`))
		if err != nil {
			b.Fatal(err)
		}
		auth, err := identity.New(identity.Config{Keys: keys}, clock.Real())
		if err != nil {
			b.Fatal(err)
		}
		budgets, err := admission.NewBudgets(admission.BudgetsConfig{}, nil, clock.Real(), admission.NewBudgetMetrics(prometheus.NewRegistry()))
		if err != nil {
			b.Fatal(err)
		}
		o.Auth, o.Budgets = auth, &CallerBudgets{Budgets: budgets}
	}
}

// BenchmarkTracing is a served /analyze (fake model) with tracing off and on (spans made and
// batched, none exported: the exporter's network is not the request's), alternated in one run.
func BenchmarkTracing(b *testing.B) {
	on := true
	tr, err := tracing.New(tracing.Config{Enabled: &on, Timeout: time.Second, BatchDelay: time.Second}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	gate := newTestGate(b, "analyze", newFakeLoad(256), time.Second)
	off := benchApp(b, gate, prometheus.NewRegistry())
	traced := benchApp(b, newTestGate(b, "analyze2", newFakeLoad(256), time.Second), prometheus.NewRegistry(), func(o *Options) {
		o.Tracer = tr
		o.Routes[0] = Analyze(Endpoint{Default: "m", Models: map[string]Extractor{"m": Traced(&fakeExtractor{name: "m"}, tr)},
			Gate: newTestGate(b, "analyze3", newFakeLoad(256), time.Second)})
	})
	body := []byte(`{"text":"Patient Alice was seen today."}`)
	for _, tc := range []struct {
		name string
		app  *fiber.App
	}{{"off", off}, {"on", traced}, {"off-again", off}, {"on-again", traced}} {
		b.Run(tc.name, func(b *testing.B) {
			h := tc.app.Handler()
			var fctx fasthttp.RequestCtx
			fctx.Request.Header.SetMethod(fiber.MethodPost)
			fctx.Request.SetRequestURI("/analyze")
			fctx.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
			fctx.Request.SetBody(body)
			h(&fctx)
			if got := fctx.Response.StatusCode(); got != 200 {
				b.Fatalf("status %d: %s", got, fctx.Response.Body())
			}
			b.ReportAllocs()
			for b.Loop() {
				fctx.Response.Reset()
				fctx.ResetUserValues() // as the server does between requests: the last one's context goes
				h(&fctx)
			}
		})
	}
}

// BenchmarkStrictBody reads a /pii/extract body of a note of about 120 tokens and a chat
// completion's, as every strict route reads its body (readObject), beside encoding/json's
// decode alone in the same run: the difference is what checking the keys' spelling costs.
func BenchmarkStrictBody(b *testing.B) {
	note := `{"text":"Patient Maria Gonzalez, 58F, DOB 03/14/1962, seen 2024-01-05 at Mercy General for chest pain radiating to the left arm. Call (415) 555-0132 or maria.g@example.org. MRN 4471902. Follow up with Dr. Emily Chen in two weeks; continue metformin 500 mg twice daily.","model_name":"pii","confidence_threshold":0.5,"use_smart_merging":true}`
	chatBody := `{"model":"tiny-lm","max_tokens":64,"temperature":0,"messages":[{"role":"system","content":"You are a clinical assistant."},{"role":"user","content":"Summarize the note."}],"tools":[{"type":"function","function":{"name":"flag","parameters":{"type":"object"}}}]}`
	for _, c := range []struct {
		name string
		body string
		dst  func() any
	}{{"pii", note, func() any { return &piiRequest{} }}, {"chat", chatBody, func() any { return &chatRequest{} }}} {
		body := []byte(c.body)
		b.Run(c.name+"/decode", func(b *testing.B) {
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.DisallowUnknownFields()
				if err := dec.Decode(c.dst()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/readObject", func(b *testing.B) {
			for b.Loop() {
				if fe := readObject(body, c.dst(), true); fe != nil {
					b.Fatal(fe)
				}
			}
		})
	}
}
