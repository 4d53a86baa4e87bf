package admission

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/valyala/fasthttp"
)

// benchGate builds a Gate with metrics over a real, unstarted batcher on the wall clock. When
// shed is true one request is parked in the batcher and the high watermark is 1, so every
// Admit is refused; the drain_rate policy is warmed by hand so refusals take the computed path.
func benchGate(b *testing.B, shed bool) *Gate {
	b.Helper()
	noop := runFunc(func(batch []int) []int { return batch })
	bt, err := batcher.New[int, int]("bench", batcher.Config{MaxBatchSize: 8, MaxPaddedTokens: 1024,
		QueueSize: 256, Workers: 1, MaxQueueWait: time.Second}, noop, clock.Real(), nil)
	if err != nil {
		b.Fatal(err)
	}
	parked := make(chan struct{})
	b.Cleanup(func() {
		_ = bt.Close(context.Background())
		<-parked
	})
	if shed {
		go func() {
			defer close(parked)
			_, _ = bt.Submit(context.Background(), 1, batcher.Cost{Sequences: 1, MaxLen: 8})
		}()
		for bt.Load().Depth() == 0 {
			time.Sleep(time.Millisecond) // benchmark set-up only, never in a test
		}
	} else {
		close(parked)
	}
	high := 1 << 20
	if shed {
		high = 1
	}
	g, err := NewGate("bench", Config{HighWatermark: high, Policy: PolicyDrainRate,
		StaticRetryAfter: time.Second}, bt, clock.Real(), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	g.drain.rate.Store(math.Float64bits(50))
	g.drain.warm.Store(warmIntervals)
	return g
}

// BenchmarkAdmit measures the door itself: one Admit per op, admitted or refused (with a
// computed, jittered Retry-After and the metrics updated).
func BenchmarkAdmit(b *testing.B) {
	for _, c := range []struct {
		name string
		shed bool
	}{{"admitted", false}, {"refused", true}} {
		b.Run(c.name, func(b *testing.B) {
			g := benchGate(b, c.shed)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, ok := g.Admit(Bulk); ok == c.shed {
					b.Fatal("unexpected outcome")
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			g := benchGate(b, c.shed)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					g.Admit(Interactive)
				}
			})
		})
	}
}

// bodyPool holds scratch buffers for refusal bodies, as the HTTP layer would.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// BenchmarkRefusalVsBare200 answers a POST through fiber's full handler chain, in one run:
// a bare 200, the refusal written with AppendJSON (no encoding/json), and the refusal written
// the way handlers write their other errors (c.JSON of a map). The request is the same in all
// three, with a body that is never read.
func BenchmarkRefusalVsBare200(b *testing.B) {
	g := benchGate(b, true)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post("/bare", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusOK) })
	app.Post("/refuse/append", func(c *fiber.Ctx) error {
		p, err := ParsePriority(c.Get(PriorityHeader))
		if err != nil {
			return c.SendStatus(fiber.StatusBadRequest)
		}
		ref, ok := g.Admit(p)
		if ok {
			return c.SendStatus(fiber.StatusOK)
		}
		if v, ok := ref.RetryAfterHeader(); ok {
			c.Set(fiber.HeaderRetryAfter, v)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Status(ref.Status())
		bp := bodyPool.Get().(*[]byte)
		*bp = ref.AppendJSON((*bp)[:0], "bench-request")
		c.Response().SetBody(*bp) // copies into the response's own pooled buffer
		bodyPool.Put(bp)
		return nil
	})
	app.Post("/refuse/map", func(c *fiber.Ctx) error {
		p, err := ParsePriority(c.Get(PriorityHeader))
		if err != nil {
			return c.SendStatus(fiber.StatusBadRequest)
		}
		ref, ok := g.Admit(p)
		if ok {
			return c.SendStatus(fiber.StatusOK)
		}
		if v, ok := ref.RetryAfterHeader(); ok {
			c.Set(fiber.HeaderRetryAfter, v)
		}
		return c.Status(ref.Status()).JSON(fiber.Map{"error": fiber.Map{
			"code": Code, "message": ref.Message(), "details": ref.Details(), "request_id": "bench-request"}})
	})
	h := app.Handler()
	body := []byte(`{"text": "a clinical note of some length that is never parsed on a refusal"}`)
	for _, route := range []struct{ path string }{{"/bare"}, {"/refuse/append"}, {"/refuse/map"}} {
		b.Run(route.path[1:], func(b *testing.B) {
			var fctx fasthttp.RequestCtx
			fctx.Request.Header.SetMethod(fiber.MethodPost)
			fctx.Request.SetRequestURI(route.path)
			fctx.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
			fctx.Request.Header.Set(PriorityHeader, "bulk")
			fctx.Request.SetBody(body)
			h(&fctx)
			want := fiber.StatusServiceUnavailable
			if route.path == "/bare" {
				want = fiber.StatusOK
			}
			if got := fctx.Response.StatusCode(); got != want {
				b.Fatalf("status %d, want %d: %s", got, want, fctx.Response.Body())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				fctx.Response.Reset()
				h(&fctx)
			}
		})
	}
}
