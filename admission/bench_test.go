package admission

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/sluice-serving/sluice/clock"
)

// benchQueue is a Queue whose Load reads an atomic, as a real one does, so that the benchmark
// measures the door and not a test double's lock.
type benchQueue struct{ waiting atomic.Int64 }

func (q *benchQueue) Load() Load {
	var l Load
	l.Waiting[Interactive] = int(q.waiting.Load())
	return l
}

func (q *benchQueue) Limits() Limits {
	return Limits{QueueSize: 256, MaxQueueWait: time.Second, Workers: 1, Weights: [NumPriorities]int{4, 1}}
}

// benchGate builds a Gate with metrics on the wall clock. When shed is true one request waits
// and the high watermark is 1, so every Admit is refused; the drain_rate policy is warmed by
// hand so refusals take the computed path.
func benchGate(b *testing.B, shed bool) *Gate {
	b.Helper()
	q := &benchQueue{}
	high := 1 << 20
	if shed {
		q.waiting.Store(1)
		high = 1
	}
	g, err := NewGate("bench", Config{HighWatermark: high, Policy: PolicyDrainRate,
		StaticRetryAfter: time.Second}, q, clock.Real(), NewMetrics(prometheus.NewRegistry()))
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
