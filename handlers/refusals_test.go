package handlers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/identity"
)

func TestQueueRefusalAnswer(t *testing.T) {
	r := admission.Refusal{Reason: admission.ReasonMaxWait, Priority: admission.Bulk, Queue: "pii_extract", Depth: 300,
		Capacity: 256, LowWatermark: 128, MaxWait: time.Second, RetryAfter: 7 * time.Second}
	e := queueRefusal(r)
	if e.Status != 503 || e.Message != "bulk inference queue is saturated; retry later" || e.retryAfter != 7*time.Second ||
		e.Outcome != OutcomeExpired {
		t.Fatalf("%+v", e)
	}
	details := func(r admission.Refusal) map[string]any {
		var d map[string]any
		data, err := json.Marshal(queueDetails(r))
		if err != nil || json.Unmarshal(data, &d) != nil {
			t.Fatalf("details %s: %v", data, err)
		}
		return d
	}
	d := details(r)
	want := map[string]any{"priority": "bulk", "queue": "pii_extract", "queue_depth": 300.0,
		"queue_capacity": 256.0, "retry_after_seconds": 7.0, "reason": "max_wait",
		"low_watermark": 128.0, "max_wait_ms": 1000.0}
	if len(d) != len(want) {
		t.Fatalf("details %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("details[%s] = %#v, want %#v", k, d[k], v)
		}
	}
	r.RetryAfter = 0
	if d := details(r); d["retry_after_seconds"] != nil {
		t.Fatalf("retry_after_seconds = %v without a header, want null", d["retry_after_seconds"])
	}
	if queueMessage(admission.Refusal{Priority: admission.Interactive}) != "interactive inference queue is saturated; retry later" {
		t.Fatal("interactive message")
	}
	var h fasthttp.ResponseHeader
	if n := testing.AllocsPerRun(100, func() { setRetryAfter(&h, 60*time.Second) }); n != 0 || string(h.Peek("Retry-After")) != "60" {
		t.Fatalf("setRetryAfter: %v allocs, %q", n, h.Peek("Retry-After"))
	}
	buf := make([]byte, 0, 1024)
	r.RetryAfter = 4 * time.Second
	if n := testing.AllocsPerRun(1000, func() { buf = appendQueueRefusal(buf[:0], r, "req-1") }); n != 0 {
		t.Fatalf("appendQueueRefusal: %v allocs", n)
	}
}

// TestAppendedRefusalIsTheEnvelope: the envelope written without encoding/json is the one
// encoding/json writes for the same refusal, odd request ids included.
func TestAppendedRefusalIsTheEnvelope(t *testing.T) {
	for _, r := range []admission.Refusal{
		{Reason: admission.ReasonHighWatermark, Priority: admission.Interactive, Queue: "analyze", Depth: 256, Capacity: 256,
			LowWatermark: 128, MaxWait: time.Second, RetryAfter: 4 * time.Second},
		{Reason: admission.ReasonSaturated, Priority: admission.Bulk, Queue: "pii_extract", Depth: 3, Capacity: 2},
		{Reason: admission.ReasonMaxWait, Priority: admission.Bulk, Queue: "odd \"queue\"\n<&>\u2028", Depth: 1, Capacity: 1,
			RetryAfter: 500 * time.Millisecond},
	} {
		for _, id := range []string{"abc-123", "quote\"back\\slash\n\x01", "caf\u00e9 \xff"} {
			var got, want any
			if err := json.Unmarshal(appendQueueRefusal(nil, r, id), &got); err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			e := queueRefusal(r)
			raw, _ := json.Marshal(errorBody{Error: errorPayload{Code: e.Code, Message: e.Message, Details: detailsAsAMap(r), RequestID: id}})
			_ = json.Unmarshal(raw, &want)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("appended %s\nencoded  %s", g, w)
			}
		}
	}
}

// detailsAsAMap is a queue refusal's details as encoding/json writes them from a map: the
// reference the self-writing details are held to.
func detailsAsAMap(r admission.Refusal) map[string]any {
	var retry any
	if s := int(r.RetryAfter / time.Second); s > 0 {
		retry = s
	}
	return map[string]any{"priority": r.Priority.String(), "queue": r.Queue, "queue_depth": r.Depth, "queue_capacity": r.Capacity,
		"retry_after_seconds": retry, "reason": string(r.Reason), "low_watermark": r.LowWatermark, "max_wait_ms": r.MaxWait.Milliseconds()}
}

// BenchmarkRefusalVsBare200 answers a POST through fiber's full handler chain, in one run: a
// bare 200, a gate's refusal written by writeRefusal (the reused buffer), and the same refusal
// written as other errors are (c.JSON of the envelope). The body is never read.
func BenchmarkRefusalVsBare200(b *testing.B) {
	src := newFakeLoad(8)
	src.setWaiting(1000)
	g := newTestGate(b, "bench", src, time.Second)
	s := &server{wires: map[string]wire{}}
	s.refusalBufs.New = func() any { buf := make([]byte, 0, 512); return &buf }
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post("/bare", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusOK) })
	refuse := func(write func(c *fiber.Ctx, ref admission.Refusal) error) fiber.Handler {
		return func(c *fiber.Ctx) error {
			p, err := admission.ParsePriority(c.Get(admission.PriorityHeader))
			if err != nil {
				return c.SendStatus(fiber.StatusBadRequest)
			}
			if ref, ok := g.Admit(p); !ok {
				_ = write(c, ref)
				return nil
			}
			return c.SendStatus(fiber.StatusOK)
		}
	}
	app.Post("/refuse/append", refuse(s.writeRefusal))
	app.Post("/refuse/map", refuse(func(c *fiber.Ctx, ref admission.Refusal) error { return s.writeError(c, queueRefusal(ref)) }))
	h := app.Handler()
	body := []byte(`{"text": "a clinical note of some length that is never parsed on a refusal"}`)
	for _, path := range []string{"/bare", "/refuse/append", "/refuse/map"} {
		b.Run(path[1:], func(b *testing.B) {
			var fctx fasthttp.RequestCtx
			fctx.Request.Header.SetMethod(fiber.MethodPost)
			fctx.Request.SetRequestURI(path)
			fctx.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
			fctx.Request.Header.Set(admission.PriorityHeader, "bulk")
			fctx.Request.SetBody(body)
			h(&fctx)
			want := fiber.StatusServiceUnavailable
			if path == "/bare" {
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

// shapeOf names the wire format of an error body: "tgi" (a flat error string with its type),
// "openai" (an error object with a type) or "envelope" (an error object with a code and no
// type).
func shapeOf(r response) string {
	if _, ok := r.body["error"].(string); ok && r.body["error_type"] != nil {
		return "tgi"
	}
	if e, ok := r.body["error"].(map[string]any); ok {
		if _, typed := e["type"]; typed {
			return "openai"
		}
		return "envelope"
	}
	return "none"
}

// wantShape is the wire format each route answers its failures in.
func wantShape(path string) string {
	switch path {
	case "/generate", "/generate_stream", "/", "/tokenize":
		return "tgi"
	case "/v1/completions", "/v1/chat/completions", "/gateway/v1/chat/completions":
		return "openai"
	}
	return "envelope"
}

// TestEveryRefusalSpeaksTheRoutesDialect: a missing or wrong credential (401), a missing scope
// (403), a body past the limit (413), a budget's 429 and a queue's 503 come on TGI's routes in
// TGI's shape, on OpenAI's in OpenAI's, elsewhere in the envelope; each with the same status
// and code, and Retry-After where there is one. (The refusals made before a route's own code
// ran all came in the envelope.)
func TestEveryRefusalSpeaksTheRoutesDialect(t *testing.T) {
	budgets := map[string]string{"spent": `{"requests_per_minute":0.000001,"request_burst":1}`}
	f, _ := everyRouteFixture(t, withTenants(t, budgets), func(o *fixtureOptions) {
		keys, err := identity.ParseKeys([]byte(`[{"id":"spent","key_hash":"` + identity.HashKey("spent-key") +
			`","tenant":"spent","scopes":"*","budget":{"requests_per_minute":0.000001,"request_burst":1}},` +
			`{"id":"reader","key_hash":"` + identity.HashKey("reader-key") + `","tenant":"reader","scopes":"models:read"}]`))
		if err != nil {
			t.Fatal(err)
		}
		o.Auth.SetKeys(keys)
	})
	// Past the limit once unpacked: the server answers 413 having read all of the body (a
	// plain body past the limit is answered before it is read, and the client may see the
	// connection reset while it still writes).
	big := string(gzipped(t, []byte(`{"text":"`+strings.Repeat("a", 70<<10)+`"}`)))
	for _, path := range postPaths {
		if path == "/models/unload" {
			continue
		}
		want := wantShape(path)
		check := func(what string, r response, status int, code string) {
			t.Helper()
			if r.status != status || shapeOf(r) != want || errorOf(t, r)["code"] != code {
				t.Errorf("%s %s: %d %s, want %d %s in the %s shape", path, what, r.status, r.raw, status, code, want)
			}
		}
		check("without a key", f.do(t, "POST", path, workBodies[path]), 401, "authentication_required")
		check("with a wrong key", f.do(t, "POST", path, workBodies[path], "X-API-Key", "nope"), 401, "invalid_credentials")
		check("without the scope", f.do(t, "POST", path, workBodies[path], "X-API-Key", "reader-key"), 403, "forbidden")
		check("too large", f.do(t, "POST", path, big, "X-API-Key", "spent-key", "Content-Encoding", "gzip"), 413, CodeTooLarge)
		f.do(t, "POST", path, workBodies[path], "X-API-Key", "spent-key") // the one request the budget holds
		r := f.do(t, "POST", path, workBodies[path], "X-API-Key", "spent-key")
		check("past its budget", r, 429, CodeRateLimited)
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s past its budget: no Retry-After", path)
		}
	}
}

func TestLiteralsWordsAListAsPydantic(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{[]string{"a"}, "'a'"}, {[]string{"a", "b"}, "'a' or 'b'"}, {[]string{"mask", "remove", "hash"}, "'mask', 'remove' or 'hash'"}} {
		if got := literals(c.in); got != c.want {
			t.Errorf("literals(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
