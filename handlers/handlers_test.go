package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/logtest"
)

// canary is planted in request text; no error body or log line may ever contain it.
const canary = "ZEBRA-CANARY-4417"

// fakeExtractor finds every occurrence of "Alice" and records what it was asked.
type fakeExtractor struct {
	mu       sync.Mutex
	err      error
	gotOpts  entities.Options
	gotText  string
	calls    int
	name     string
	maxLen   int
	blocking chan struct{}
	// panicWith makes Extract panic with this value, as a bug would: from call panicFrom on
	// when it is set (1 is the first).
	panicWith string
	panicFrom int
}

func (f *fakeExtractor) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.gotOpts, f.gotText = opts, text
	if f.blocking != nil {
		select {
		case <-f.blocking:
		case <-ctx.Done():
			return nil, extract.Stats{}, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, extract.Stats{}, f.err
	}
	if f.panicWith != "" && f.calls >= f.panicFrom {
		panic(f.panicWith)
	}
	var ents []entities.Entity
	for i := 0; ; {
		j := strings.Index(text[i:], "Alice")
		if j < 0 {
			break
		}
		ents = append(ents, entities.Entity{Label: "first_name", Start: i + j, End: i + j + 5, Score: 0.9})
		i += j + 5
	}
	return ents, extract.Stats{Tokens: 3, Windows: 1}, nil
}
func (f *fakeExtractor) Name() string   { return f.name }
func (f *fakeExtractor) MaxLength() int { return f.maxLen }

// set changes the fake under its lock; the handler runs on another goroutine.
func (f *fakeExtractor) set(fn func(*fakeExtractor)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeExtractor) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeExtractor) opts() entities.Options {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gotOpts
}

type fixture struct {
	app      *fiber.App
	srv      *httptest.Server
	analyze  *fakeExtractor
	pii      *fakeExtractor
	logs     *logtest.Buffer
	registry *prometheus.Registry
	// analyzeLoad and piiLoad are the queue states the endpoints' gates read.
	analyzeLoad, piiLoad *fakeLoad
	ready                atomic.Bool
	// clock is the server's: time moves only when a test advances it.
	clock *clock.Fake
}

// fixtureOptions are the server's options with the two entity endpoints still apart, so that
// a test can change an endpoint before its route is built.
type fixtureOptions struct {
	Options
	analyze, pii Endpoint
	// extra are routes registered after the entity routes.
	extra []Route
}

func newFixture(t *testing.T, edit ...func(*fixtureOptions)) *fixture {
	t.Helper()
	f := &fixture{
		analyze:     &fakeExtractor{name: "clinical-ner", maxLen: 128},
		pii:         &fakeExtractor{name: "pii", maxLen: 128},
		logs:        &logtest.Buffer{},
		analyzeLoad: newFakeLoad(16),
		piiLoad:     newFakeLoad(16),
	}
	f.ready.Store(true)
	f.registry = prometheus.NewRegistry()
	opts := fixtureOptions{
		Options: Options{
			Logger:     slog.New(slog.NewJSONHandler(f.logs, nil)),
			Metrics:    NewMetrics(f.registry),
			Gatherer:   f.registry,
			Clock:      clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
			Limits:     Limits{MaxBodyBytes: 4096, MaxTextChars: 50, MaxTextBytes: 100, RequestTimeout: time.Minute, WriteTimeout: time.Minute},
			RetryAfter: 3 * time.Second,
			Ready:      f.ready.Load,
			Version:    "test",
		},
		analyze: Endpoint{Default: "clinical-ner", Gate: newTestGate(t, "analyze", f.analyzeLoad, 2*time.Second),
			Models: map[string]Extractor{"clinical-ner": f.analyze, "disease_detection_superclinical": f.analyze}},
		pii: Endpoint{Default: "pii", Gate: newTestGate(t, "pii_extract", f.piiLoad, time.Second),
			Models: map[string]Extractor{"pii": f.pii}},
	}
	for _, e := range edit {
		e(&opts)
	}
	opts.Routes = append([]Route{Analyze(opts.analyze), PIIExtract(opts.pii)}, opts.extra...)
	f.clock, _ = opts.Clock.(*clock.Fake)
	app, err := New(opts.Options)
	if err != nil {
		t.Fatal(err)
	}
	ln := newLocalListener(t)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	f.srv, f.app = &httptest.Server{URL: "http://" + ln.Addr().String()}, app
	// Answered once the server serves: a Shutdown before it did would leave it serving.
	f.do(t, "GET", "/livez", "")
	return f
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (f *fixture) do(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return f.send(t, req)
}

// send sends req and reads the whole response.
func (f *fixture) send(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// errorOf is a failure's code, message, details and request id, from the error envelope, an
// OpenAI error object (the same keys) or TGI's flat error (message in "error").
func errorOf(t *testing.T, r response) map[string]any {
	t.Helper()
	if msg, tgi := r.body["error"].(string); tgi && r.body["error_type"] != nil {
		return map[string]any{"code": r.body["code"], "message": msg, "details": r.body["details"], "request_id": r.body["request_id"]}
	}
	e, ok := r.body["error"].(map[string]any)
	if !ok {
		t.Fatalf("status %d: body has no error envelope: %s", r.status, r.raw)
	}
	if e["request_id"] == "" || e["code"] == "" || e["message"] == "" {
		t.Fatalf("incomplete envelope: %s", r.raw)
	}
	return e
}

func TestAnalyzeServesEntitiesWithCodePointOffsets(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, "POST", "/analyze", `{"text": "  Zoë 😀 met Alice.  "}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r.body["text"] != "Zoë 😀 met Alice." {
		t.Fatalf("text not stripped: %q", r.body["text"])
	}
	if r.body["model_name"] != "clinical-ner" {
		t.Fatalf("model_name = %v", r.body["model_name"])
	}
	ents := r.body["entities"].([]any)
	if len(ents) != 1 {
		t.Fatalf("entities = %v", ents)
	}
	e := ents[0].(map[string]any)
	// "Zoë 😀 met " is 10 code points (and 15 bytes): Python clients slice by code points.
	if e["start"] != 10.0 || e["end"] != 15.0 || e["text"] != "Alice" || e["label"] != "first_name" {
		t.Fatalf("entity = %v", e)
	}
	if e["metadata"].(map[string]any)["span_valid"] != true {
		t.Fatalf("entity metadata = %v", e["metadata"])
	}
	if f.analyze.opts().Strategy != entities.StrategySimple || f.analyze.opts().ConfidenceThreshold != 0 {
		t.Fatalf("defaults not applied: %+v", f.analyze.opts())
	}
	if r.body["timestamp"] != "2026-11-30T12:00:00.000000" {
		t.Fatalf("timestamp = %v", r.body["timestamp"])
	}
	if r.header.Get("X-Request-ID") == "" {
		t.Fatal("no X-Request-ID on the response")
	}
	// Python's strip, OpenMed's, takes the separators U+001C to U+001F too: the offsets are
	// into the text it leaves.
	r = f.do(t, "POST", "/analyze", `{"text": "\u001c\u001f Zoë met Alice.\u001e"}`)
	if ents, _ := r.body["entities"].([]any); r.body["text"] != "Zoë met Alice." || len(ents) != 1 || ents[0].(map[string]any)["start"] != 8.0 {
		t.Fatalf("a text between separators: %s", r.raw)
	}
}

func TestAnalyzeOptionsAndAliases(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, "POST", "/analyze", `{"text":"x","model_name":"disease_detection_superclinical","confidence_threshold":0.7,
		"group_entities":true,"aggregation_strategy":"max","sentence_detection":false,"sentence_language":"en",
		"sentence_clean":true,"use_fast_tokenizer":true,"keep_alive":"5m"}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r.body["model_name"] != "disease_detection_superclinical" {
		t.Fatalf("model_name must echo what the client sent, got %v", r.body["model_name"])
	}
	o := f.analyze.opts()
	if o.Strategy != entities.StrategyMax || o.ConfidenceThreshold != 0.7 || !o.GroupEntities {
		t.Fatalf("options not forwarded: %+v", o)
	}
	r = f.do(t, "POST", "/analyze", `{"text":"x","aggregation_strategy":null}`)
	if r.status != 200 || f.analyze.opts().Strategy != entities.StrategyNone {
		t.Fatalf("null aggregation must mean raw tokens: %d %+v", r.status, f.analyze.opts())
	}
}

func TestPIIDefaults(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, "POST", "/pii/extract", `{"text":"Alice and Alice"}`)
	if r.status != 200 || len(r.body["entities"].([]any)) != 2 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	o := f.pii.opts()
	if o.ConfidenceThreshold != 0.5 || o.SmartMerge == nil || o.Strategy != entities.StrategySimple {
		t.Fatalf("PII defaults not applied: %+v", o)
	}
	f.do(t, "POST", "/pii/extract", `{"text":"x","use_smart_merging":false,"lang":"en","normalize_accents":null}`)
	if f.pii.opts().SmartMerge != nil {
		t.Fatal("use_smart_merging=false ignored")
	}
}

func TestValidationErrors(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("a", 51)
	cases := []struct {
		name, path, body, field, typ string
	}{
		{"missing text", "/analyze", `{}`, "body.text", "missing"},
		{"blank text", "/analyze", `{"text":" \n\t "}`, "body.text", "value_error"},
		{"too many chars", "/analyze", `{"text":"` + long + `"}`, "body.text", "value_error"},
		{"too many bytes", "/pii/extract", `{"text":"` + strings.Repeat("😀", 26) + `"}`, "body.text", "value_error"},
		{"text not a string", "/analyze", `{"text":42}`, "body.text", "string_type"},
		{"unknown field", "/analyze", `{"text":"x","colour":1}`, "body", "extra_forbidden"}, // the key is the client's text: never named
		{"unknown field named like PHI", "/analyze", `{"text":"x","jane_doe_4417":1}`, "body", "extra_forbidden"},
		{"unknown field carrying text", "/analyze", `{"text":"x","Pt ` + canary + `":1}`, "body", "extra_forbidden"},
		{"threshold above 1", "/analyze", `{"text":"x","confidence_threshold":1.5}`, "body.confidence_threshold", "less_than_equal"},
		{"threshold below 0", "/pii/extract", `{"text":"x","confidence_threshold":-0.1}`, "body.confidence_threshold", "greater_than_equal"},
		{"null PII threshold", "/pii/extract", `{"text":"x","confidence_threshold":null}`, "body.confidence_threshold", "float_type"},
		{"bad strategy", "/analyze", `{"text":"x","aggregation_strategy":"mean"}`, "body.aggregation_strategy", "literal_error"},
		{"unknown model", "/analyze", `{"text":"x","model_name":"nope"}`, "body.model_name", "value_error"},
		{"unserved lang", "/pii/extract", `{"text":"x","lang":"xx"}`, "body.lang", "value_error"},
		{"lang with a region", "/pii/extract", `{"text":"x","lang":"de-DE"}`, "body.lang", "value_error"},
		{"bad keep_alive", "/analyze", `{"text":"x","keep_alive":true}`, "body.keep_alive", "value_error"},
		{"not an object", "/analyze", `["x"]`, "body", "model_attributes_type"},
		{"malformed json", "/analyze", `{"text": "` + canary, "body", "json_invalid"},
		{"a stray closing bracket after the object", "/analyze", `{"text":"x"}]`, "body", "json_invalid"},
		{"invalid utf-8", "/analyze", "{\"text\": \"\xff\xfe" + canary + "\"}", "body", "unicode_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "POST", tc.path, tc.body)
			if r.status != 422 {
				t.Fatalf("status %d, want 422: %s", r.status, r.raw)
			}
			e := errorOf(t, r)
			if e["code"] != "validation_error" {
				t.Fatalf("code = %v", e["code"])
			}
			d := e["details"].([]any)[0].(map[string]any)
			if d["field"] != tc.field || d["type"] != tc.typ {
				t.Fatalf("detail = %v, want field %s type %s", d, tc.field, tc.typ)
			}
			if strings.Contains(r.raw, "é") || strings.Contains(r.raw, "😀") || strings.Contains(r.raw, canary) {
				t.Fatalf("error body echoes request text: %s", r.raw)
			}
		})
	}
	calls := 0
	f.analyze.set(func(e *fakeExtractor) { calls += e.calls })
	f.pii.set(func(e *fakeExtractor) { calls += e.calls })
	if calls != 0 {
		t.Fatalf("invalid requests reached the model %d times", calls)
	}
}

func TestBackpressureTimeoutAndInternalErrorsAreContentFree(t *testing.T) {
	f := newFixture(t)
	// The gate admits (8 waiting of a 16-request class) but the batcher then finds it full.
	f.analyzeLoad.setWaiting(8)
	f.analyze.set(func(e *fakeExtractor) { e.err = fmt.Errorf("batcher: %w", admission.ErrQueueFull) })
	r := f.do(t, "POST", "/analyze", `{"text":"Alice `+canary+`"}`)
	if r.status != 503 || r.header.Get("Retry-After") != "2" {
		t.Fatalf("status %d Retry-After %q: %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
	e := errorOf(t, r)
	d := e["details"].(map[string]any)
	if e["code"] != "backpressure" || d["queue"] != "analyze" || d["queue_depth"] != 8.0 || d["reason"] != "saturated" {
		t.Fatalf("backpressure body = %s", r.raw)
	}

	f.pii.set(func(e *fakeExtractor) { e.err = context.DeadlineExceeded })
	r = f.do(t, "POST", "/pii/extract", `{"text":"Alice `+canary+`"}`)
	if r.status != 504 || errorOf(t, r)["code"] != "timeout" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}

	f.pii.set(func(e *fakeExtractor) { e.err = &leakyError{} })
	r = f.do(t, "POST", "/pii/extract", `{"text":"Alice `+canary+`"}`)
	if r.status != 500 || errorOf(t, r)["code"] != "internal_error" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	for _, out := range []string{r.raw, f.logs.String()} {
		if strings.Contains(out, canary) {
			t.Fatalf("canary leaked: %s", out)
		}
	}
}

func TestPanicIsA500WithoutContent(t *testing.T) {
	f := newFixture(t)
	f.pii.set(func(e *fakeExtractor) { e.panicWith = "index out of range near " + canary })
	r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`)
	if r.status != 500 || errorOf(t, r)["code"] != "internal_error" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if strings.Contains(r.raw+f.logs.String(), canary) {
		t.Fatal("panic value leaked into the response or logs")
	}
	// The server is still up.
	f.pii.set(func(e *fakeExtractor) { e.panicWith = "" })
	if r = f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 200 {
		t.Fatalf("after a panic: status %d", r.status)
	}
}

// leakyError carries request text in its message, as a careless library error might.
type leakyError struct{}

func (*leakyError) Error() string { return "failed on " + canary }

func TestRoutingErrorsUseTheEnvelope(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, "GET", "/nope", "")
	if r.status != 404 || errorOf(t, r)["code"] != "bad_request" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	r = f.do(t, "POST", "/analyze", `{"text":"`+canary+strings.Repeat("a", 5000)+`"}`)
	if r.status != 413 || errorOf(t, r)["code"] != "request_size_exceeded" || r.header.Get("X-Request-ID") == "" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	// fasthttp refuses the body before any middleware runs; it is still counted and logged.
	if m := f.do(t, "GET", "/metrics", ""); !strings.Contains(m.raw,
		`sluice_http_requests_total{outcome="failed",route="unrouted",status="413"} 1`) {
		t.Fatalf("the 413 is not counted:\n%s", m.raw)
	}
	logs := f.logs.String()
	if !strings.Contains(logs, `"route":"unrouted","status":413`) || strings.Contains(logs, canary) {
		t.Fatalf("access log for the 413 missing or holding text: %s", logs)
	}
}

// A client's request id is kept only in a shape that cannot carry a name: a UUID or 32 hex
// digits. Any other is replaced, so that "<name>-<mrn>" never reaches a log line, an audit
// record or an error body.
func TestRequestIDEchoedOnlyWhenPlain(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"123e4567-e89b-12d3-a456-426614174000", "4BF92F3577B34DA6A3CE929D0E0E4736"} {
		if r := f.do(t, "GET", "/livez", "", "X-Request-ID", id); r.header.Get("X-Request-ID") != id {
			t.Errorf("X-Request-ID %s came back as %q", id, r.header.Get("X-Request-ID"))
		}
	}
	for _, id := range []string{"abc-123", "jane-doe-00412345", "name " + canary + " <script>", "123e4567-e89b-12d3-a456-42661417400g",
		"123e4567+e89b-12d3-a456-426614174000"} {
		got := f.do(t, "GET", "/livez", "", "X-Request-ID", id).header.Get("X-Request-ID")
		if got == "" || got == id || !validRequestID(got) {
			t.Errorf("request id %q kept or not replaced: %q", id, got)
		}
	}
}

func TestReadinessAndHealth(t *testing.T) {
	f := newFixture(t)
	f.ready.Store(false)
	r := f.do(t, "GET", "/readyz", "")
	if r.status != 503 || errorOf(t, r)["code"] != "not_ready" || r.header.Get("Retry-After") != "3" {
		t.Fatalf("status %d, Retry-After %q (want the configured 3): %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
	f.ready.Store(true)
	if r = f.do(t, "GET", "/readyz", ""); r.status != 200 || r.body["status"] != "ready" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r = f.do(t, "GET", "/health", ""); r.status != 200 || r.body["status"] != "ok" {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r = f.do(t, "GET", "/models/loaded", ""); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
}

func TestMetricsCountOutcomesWithoutContent(t *testing.T) {
	f := newFixture(t)
	f.do(t, "POST", "/analyze", `{"text":"Alice"}`)
	f.do(t, "POST", "/analyze", `{}`)
	r := f.do(t, "GET", "/metrics", "")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	for _, want := range []string{
		`sluice_http_requests_total{outcome="served",route="/analyze",status="200"} 1`,
		`sluice_http_requests_total{outcome="failed",route="/analyze",status="422"} 1`,
	} {
		if !strings.Contains(r.raw, want) {
			t.Fatalf("metrics lack %q:\n%s", want, r.raw)
		}
	}
}

func TestAccessLogHasNoText(t *testing.T) {
	f := newFixture(t)
	f.do(t, "POST", "/pii/extract", `{"text":"Alice `+canary+`"}`)
	logs := f.logs.String()
	if !strings.Contains(logs, `"route":"/pii/extract"`) || !strings.Contains(logs, `"outcome":"served"`) {
		t.Fatalf("access log line missing: %s", logs)
	}
	if strings.Contains(logs, canary) || strings.Contains(logs, "Alice") {
		t.Fatalf("access log contains request text: %s", logs)
	}
}

// TestKeepAliveGrammarIsOpenMeds: numbers, numeric strings and unit strings are durations;
// OpenMed's words keep a model for ever; booleans, negatives and other strings are 422s.
func TestKeepAliveGrammarIsOpenMeds(t *testing.T) {
	for _, c := range []struct {
		in      string
		d       time.Duration
		forever bool
		bad     bool
	}{
		{`300`, 5 * time.Minute, false, false}, {`0.5`, 500 * time.Millisecond, false, false}, {`"90"`, 90 * time.Second, false, false},
		{`"1h30m"`, 90 * time.Minute, false, false}, {`"250MS"`, 250 * time.Millisecond, false, false}, {`"2d"`, 48 * time.Hour, false, false},
		{`"1.5m"`, 90 * time.Second, false, false}, {`"off"`, 0, true, false}, {`"Forever"`, 0, true, false}, {`""`, 0, true, false},
		{`1e300`, 0, true, false}, {`null`, 0, false, false},
		{`true`, 0, false, true}, {`-1`, 0, false, true}, {`"-5"`, 0, false, true}, {`"5 minutes"`, 0, false, true},
		{`"1h30"`, 0, false, true}, {`[1]`, 0, false, true}, {`{"s":1}`, 0, false, true},
		// Python's float() as OpenMed's: underscores between digits are a number, hexadecimal
		// is not (Go's ParseFloat read "0x1p4" as 16 s).
		{`"1_000"`, 1000 * time.Second, false, false}, {`"1__0"`, 0, false, true}, {`"0x1p4"`, 0, false, true},
		{`"0X1P-2"`, 0, false, true}, {`"inf"`, 0, true, false}, {`"nan"`, 0, false, true},
	} {
		d, forever, err := parseKeepAlive(json.RawMessage(c.in))
		if (err != nil) != c.bad || d != c.d || forever != c.forever {
			t.Errorf("%s: %v %v %v", c.in, d, forever, err)
		}
		if err != nil && (err.Field != "body.keep_alive" || !strings.HasPrefix(err.Message, "Value error, keep_alive ")) {
			t.Errorf("%s: %+v", c.in, err)
		}
	}
}
