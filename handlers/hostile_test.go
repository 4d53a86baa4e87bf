package handlers

// The hostile-input suite: what a caller with a valid key (or none, with auth off) may try to
// get more than its share, or to put its own text where no text may go. Each test reproduces
// an attack that once worked.

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/generate"
	"github.com/sluice-serving/sluice/identity"
)

// tokenizingGenerator is a fakeGenerator that also answers /tokenize: a piece per word.
type tokenizingGenerator struct{ *fakeGenerator }

func (tokenizingGenerator) Tokenize(prompt string) []generate.Piece {
	var out []generate.Piece
	for i, w := range strings.Fields(prompt) {
		out = append(out, generate.Piece{ID: int64(i), Text: w})
	}
	return out
}

// everyRouteFixture serves every kind of route the server has: the entity routes, the PII
// streams, de-identification, generation in every dialect (with /tokenize), the privacy
// gateway and its chat face. edit runs last.
func everyRouteFixture(t *testing.T, edit ...func(*fixtureOptions)) (*fixture, *audit.Log) {
	t.Helper()
	redactor, err := deid.New(deid.Config{})
	if err != nil {
		t.Fatal(err)
	}
	gen := tokenizingGenerator{&fakeGenerator{script: stopScript}}
	trail := newAuditLog(t)
	f := newFixture(t, append([]func(*fixtureOptions){func(o *fixtureOptions) {
		o.Limits.MaxBodyBytes = 64 << 10
		ep := GenerationEndpoint{Model: gen, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second), Chat: fakeTemplate{}}
		gw := GatewayEndpoint{PII: o.pii, Generation: &ep}
		o.extra = append([]Route{PIIDeidentify(o.pii, redactor), PIIExtractStream(o.pii, redactor),
			PIIDeidentifyStream(o.pii, redactor), PrivacyGateway(gw), GatewayChat(gw)}, Generation(ep)...)
		o.Audit = trail
		face := gw.WithDefaults()
		o.GatewayFace = &face
	}}, edit...)...)
	return f, trail
}

// postPaths are every path a POST does work on in everyRouteFixture.
var postPaths = []string{"/analyze", "/pii/extract", "/pii/deidentify", "/pii/extract/stream", "/pii/deidentify/stream",
	"/privacy-gateway/complete", "/gateway/v1/chat/completions", "/generate", "/generate_stream", "/",
	"/v1/completions", "/v1/chat/completions", "/tokenize", "/models/unload"}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// postEncoded posts body with the Content-Encoding given.
func (f *fixture) postEncoded(t *testing.T, path, encoding string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", encoding)
	return f.send(t, req)
}

// A body that unpacks past the body limit is refused with 413 on every route, however deep it
// is packed, without unpacking more than the limit: a gzip of a gzip of 64 MiB is a few hundred
// bytes on the wire. (fiber's Ctx.Body unpacked it all, on any route, before anything looked.)
func TestCompressedBombsAreRefusedOnEveryRoute(t *testing.T) {
	f, _ := everyRouteFixture(t)
	bomb := append(append([]byte(`{"text":"`), bytes.Repeat([]byte("a"), 64<<20)...), `"}`...)
	once := gzipped(t, bomb)
	twice := gzipped(t, once)
	if len(twice) > 4096 {
		t.Fatalf("the bomb is %d bytes on the wire; the test wants it under the body limit", len(twice))
	}
	for _, path := range postPaths {
		for _, c := range []struct {
			encoding string
			body     []byte
		}{{"gzip", once}, {"gzip, gzip", twice}} {
			r := f.postEncoded(t, path, c.encoding, c.body)
			if r.status != 413 || errorOf(t, r)["code"] != CodeTooLarge {
				t.Errorf("%s with %s: %d %s", path, c.encoding, r.status, r.raw)
			}
		}
	}
}

// A body packed as the server reads it is served and counted by what it unpacks to; a coding
// it does not read is 415 with the ones it does (RFC 7694), a stack deeper than two or a body
// that does not decode a clear refusal.
func TestCompressedBodiesAreReadWithinTheLimit(t *testing.T) {
	f, _ := everyRouteFixture(t)
	note := []byte(`{"text":"Alice was seen today."}`)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(note)
	_ = zw.Close()
	for _, c := range []struct {
		encoding string
		body     []byte
	}{{"gzip", gzipped(t, note)}, {"deflate", z.Bytes()}, {"identity", note}, {"gzip, gzip", gzipped(t, gzipped(t, note))}} {
		if r := f.postEncoded(t, "/pii/extract", c.encoding, c.body); r.status != 200 || len(r.body["entities"].([]any)) != 1 {
			t.Errorf("%s: %d %s", c.encoding, r.status, r.raw)
		}
	}
	if got := f.pii.gotText; got != "Alice was seen today." {
		t.Errorf("the model read %q", got)
	}
	r := f.postEncoded(t, "/pii/extract", "br", note)
	if r.status != 415 || errorOf(t, r)["code"] != CodeUnsupportedEncoding || r.header.Get("Accept-Encoding") != "gzip, deflate" {
		t.Errorf("br: %d %v %s", r.status, r.header, r.raw)
	}
	if r := f.postEncoded(t, "/pii/extract", "gzip, gzip, gzip", gzipped(t, gzipped(t, gzipped(t, note)))); r.status != 415 {
		t.Errorf("three deep: %d %s", r.status, r.raw)
	}
	if r := f.postEncoded(t, "/pii/extract", "gzip", note); r.status != 400 || errorOf(t, r)["code"] != CodeBadRequest {
		t.Errorf("not gzip at all: %d %s", r.status, r.raw)
	}
	// The body limit is what the body unpacks to: a packed body under the limit on the wire
	// and over it unpacked is refused.
	big := append(append([]byte(`{"text":"`), bytes.Repeat([]byte("Alice "), 15000)...), `"}`...)
	if r := f.postEncoded(t, "/pii/extract", "gzip", gzipped(t, big)); r.status != 413 {
		t.Errorf("over the limit unpacked: %d %s", r.status, r.raw)
	}
}

// withTenants switches authentication on with one key per tenant ("<tenant>-key", every
// scope), each with the budget given (a key file's "budget" object), and the budgets on the
// fixture's clock.
func withTenants(t *testing.T, budgets map[string]string) func(*fixtureOptions) {
	return func(o *fixtureOptions) {
		var entries []string
		for tenant, budget := range budgets {
			entries = append(entries, `{"id":"`+tenant+`","key_hash":"`+identity.HashKey(tenant+"-key")+
				`","tenant":"`+tenant+`","scopes":"*","budget":`+budget+`}`)
		}
		keys, err := identity.ParseKeys([]byte("[" + strings.Join(entries, ",") + "]"))
		if err != nil {
			t.Fatal(err)
		}
		auth, err := identity.New(identity.Config{Keys: keys}, o.Clock)
		if err != nil {
			t.Fatal(err)
		}
		b, err := admission.NewBudgets(admission.BudgetsConfig{}, nil, o.Clock, admission.NewBudgetMetrics(prometheus.NewRegistry()))
		if err != nil {
			t.Fatal(err)
		}
		o.Auth, o.Budgets = auth, &CallerBudgets{Budgets: b}
	}
}

// workBodies are a valid request for each path that does work.
var workBodies = map[string]string{
	"/analyze": `{"text":"Alice was seen."}`, "/pii/extract": `{"text":"Alice was seen."}`,
	"/pii/deidentify": `{"text":"Alice was seen."}`, "/pii/extract/stream": `{"text":"Alice was seen."}`,
	"/pii/deidentify/stream": `{"text":"Alice was seen."}`, "/privacy-gateway/complete": `{"text":"Alice was seen."}`,
	"/gateway/v1/chat/completions": `{"model":"fake-lm","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`,
	"/v1/chat/completions":         `{"model":"fake-lm","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`,
	"/generate":                    `{"inputs":"hi","parameters":{"max_new_tokens":4}}`, "/generate_stream": `{"inputs":"hi","parameters":{"max_new_tokens":4}}`,
	"/": `{"inputs":"hi","parameters":{"max_new_tokens":4}}`, "/v1/completions": `{"model":"fake-lm","prompt":"hi","max_tokens":4}`,
	"/tokenize": `{"inputs":"hi"}`,
}

// Every route that does work is charged to its caller: with one request in the bucket, the
// second request on any route is refused 429. (/tokenize was outside the budgets: a tenant
// already over its budget tokenized 98,000 characters forty times.)
func TestEveryRouteThatWorksIsCharged(t *testing.T) {
	budgets := map[string]string{}
	for path := range workBodies {
		budgets[tenantFor(path)] = `{"requests_per_minute":0.000001,"request_burst":1}`
	}
	f, _ := everyRouteFixture(t, withTenants(t, budgets))
	for path, body := range workBodies {
		key := tenantFor(path) + "-key"
		if r := f.do(t, "POST", path, body, "X-API-Key", key); r.status >= 300 {
			t.Errorf("%s, first: %d %s", path, r.status, r.raw)
		}
		if r := f.do(t, "POST", path, body, "X-API-Key", key); r.status != 429 || errorOf(t, r)["code"] != CodeRateLimited {
			t.Errorf("%s, second: %d %s", path, r.status, r.raw)
		}
	}
}

// tenantFor names a tenant after a path.
func tenantFor(path string) string {
	return "t" + strings.NewReplacer("/", "-", "_", "-").Replace(path)
}

// A generation is estimated at every prompt and every choice, and at the length it will
// really have: a list of eight prompts costs what n: 8 does (both past a burst of 100 tokens,
// refused as too large), and a chat request naming no length costs the model's default (32
// here), not 16. (A prompt list was charged as one prompt: five bursts' worth was served.)
func TestGenerationBudgetCountsEveryPromptAndChoice(t *testing.T) {
	f, _ := everyRouteFixture(t, withTenants(t, map[string]string{
		"wide": `{"tokens_per_minute":0.000001,"token_burst":100}`, "chatty": `{"tokens_per_minute":0.000001,"token_burst":45}`}))
	prompts := `["a","b","c","d","e","f","g","h"]`
	for _, body := range []string{`{"model":"fake-lm","prompt":` + prompts + `}`, `{"model":"fake-lm","prompt":"a","n":8}`,
		`{"model":"fake-lm","prompt":` + prompts + `,"max_tokens":16}`} {
		r := f.do(t, "POST", "/v1/completions", body, "X-API-Key", "wide-key")
		if r.status != 429 || errorOf(t, r)["details"].(map[string]any)["reason"] != "too_large" {
			t.Errorf("%s: %d %s", body, r.status, r.raw)
		}
	}
	if r := f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"a"}`, "X-API-Key", "wide-key"); r.status != 200 {
		t.Errorf("one prompt, one choice: %d %s", r.status, r.raw)
	}
	chatBody := `{"model":"fake-lm","messages":[{"role":"user","content":"hello there"}]}` // 18 tokens of body
	for _, path := range []string{"/v1/chat/completions", "/gateway/v1/chat/completions", "/generate"} {
		body := chatBody
		if path == "/generate" {
			body = `{"inputs":"hello there, what is the plan for today?"}`
		}
		r := f.do(t, "POST", path, body, "X-API-Key", "chatty-key")
		if r.status != 429 || errorOf(t, r)["details"].(map[string]any)["reason"] != "too_large" {
			t.Errorf("%s with the default length: %d %s", path, r.status, r.raw)
		}
	}
	if r := f.do(t, "POST", "/v1/chat/completions", strings.Replace(chatBody, `}]}`, `}],"max_tokens":4}`, 1),
		"X-API-Key", "chatty-key"); r.status != 200 {
		t.Errorf("chat naming a short length: %d %s", r.status, r.raw)
	}
}

// Settlement over HTTP: a request refused as invalid keeps the request it used but gives its
// tokens back; a served one is charged what it used (the fake model reports 3 tokens), not its
// estimate. Each next request fits only if the one before was settled so.
func TestBudgetsSettleByWhatTheRequestDid(t *testing.T) {
	f, _ := everyRouteFixture(t, withTenants(t, map[string]string{
		"ledger": `{"requests_per_minute":0.000001,"request_burst":3,"tokens_per_minute":0.000001,"token_burst":100}`}))
	long := `{"text":"` + strings.Repeat("a", 340) + `"}` // an estimate of 86 tokens; over the text limit: 422
	if r := f.do(t, "POST", "/pii/extract", long, "X-API-Key", "ledger-key"); r.status != 422 {
		t.Fatalf("invalid: %d %s", r.status, r.raw)
	}
	served := `{"text":"Alice ` + strings.Repeat(" ", 300) + `"}` // an estimate of 79; served, 3 used
	if r := f.do(t, "POST", "/pii/extract", served, "X-API-Key", "ledger-key"); r.status != 200 {
		t.Fatalf("after an invalid request, its tokens given back: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "POST", "/pii/extract", served, "X-API-Key", "ledger-key"); r.status != 200 {
		t.Fatalf("after a served request charged what it used: %d %s", r.status, r.raw)
	}
	r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`, "X-API-Key", "ledger-key")
	if r.status != 429 || errorOf(t, r)["details"].(map[string]any)["reason"] != "requests" {
		t.Fatalf("the fourth request, past the three the invalid one shared: %d %s", r.status, r.raw)
	}
}

// A generation that fails after the engine worked for it costs the tokens it used: one whose
// constraint dead-ends after 30 tokens (a 400), and one cut by its deadline (a 504). Each was
// answered free of tokens, the 504 of its request too, so a caller could generate past its
// budget for ever. Ten such requests of 30 tokens
// against a burst of 100: the fourth at the latest is refused.
func TestAGenerationThatFailsLateCostsWhatItUsed(t *testing.T) {
	t.Parallel()
	script := make([]generate.Event, 0, 31)
	for i := range 30 {
		script = append(script, token(int64(10+i), "x"))
	}
	deadEnd := append(script, generate.Event{Done: true, Err: generate.ErrConstraint})
	for _, c := range []struct {
		name    string
		gen     Generator
		timeout time.Duration
		failed  int
	}{
		{"a constraint's dead end", &fakeGenerator{script: deadEnd}, time.Minute, 400},
		{"a deadline", &fakeGenerator{script: script, block: true}, 20 * time.Millisecond, 504},
		// An external model's pieces are not its tokens: its estimate stands.
		{"an external model's deadline", externalModel{&fakeGenerator{script: script, block: true}}, 20 * time.Millisecond, 504},
	} {
		f := newFixture(t, func(o *fixtureOptions) {
			o.extra = Generation(GenerationEndpoint{Model: c.gen, Timeout: c.timeout,
				Gate: newTestGate(t, "generate", newFakeLoad(16), 2*time.Second)})
			withCallers(t, `{"tokens_per_minute":0.000001,"token_burst":100}`)(&o.Options)
		})
		var statuses []int
		for range 10 {
			statuses = append(statuses, f.do(t, "POST", "/v1/completions", `{"model":"fake-lm","prompt":"a b","max_tokens":30}`,
				"X-API-Key", "bench-key").status)
		}
		if statuses[0] != c.failed || statuses[3] != 429 {
			t.Errorf("%s: %v, want %d, then 429 by the fourth", c.name, statuses, c.failed)
		}
	}
}

// externalModel is the fake generator as an external model, whose pieces are not its tokens.
type externalModel struct{ *fakeGenerator }

func (e externalModel) Converse(ctx context.Context, p admission.Priority, _ []chat.Message, params generate.Params, _ chat.Options) (TokenStream, error) {
	return e.Generate(ctx, p, "a b", params)
}

// withFailureLimit sets the failed-login limit (per second, burst) on the fixture's
// authenticator, which withTenants built.
func withFailureLimit(t *testing.T, rate float64, burst int) func(*fixtureOptions) {
	return func(o *fixtureOptions) {
		auth, err := identity.New(identity.Config{Keys: o.Auth.Keys(), FailureRate: rate, FailureBurst: burst}, o.Clock)
		if err != nil {
			t.Fatal(err)
		}
		o.Auth = auth
	}
}

// Wrong keys sent from a tenant's own address (or an ingress's, which every caller shares)
// use up that address's failures, never the tenant's access: its valid key is still served,
// while the wrong ones get 429. (The failure limit refused every request from a limited
// address, right key or not.)
func TestWrongKeysDoNotLockOutAValidTenant(t *testing.T) {
	f, _ := everyRouteFixture(t, withTenants(t, map[string]string{"clinic": "null"}), withFailureLimit(t, 1e-6, 3))
	for i := range 10 {
		r := f.do(t, "POST", "/pii/extract", workBodies["/pii/extract"], "X-API-Key", "guess-"+string(rune('a'+i)))
		if want := map[bool]int{true: 401, false: 429}[i < 3]; r.status != want {
			t.Fatalf("wrong key %d: %d %s", i+1, r.status, r.raw)
		}
	}
	if r := f.do(t, "POST", "/pii/extract", workBodies["/pii/extract"], "X-API-Key", "clinic-key"); r.status != 200 {
		t.Fatalf("the tenant's own key from the limited address: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "POST", "/pii/extract", workBodies["/pii/extract"], "X-API-Key", "guess-z"); r.status != 429 ||
		errorOf(t, r)["code"] != "auth_rate_limited" {
		t.Fatalf("a wrong key after the valid one: %d %s", r.status, r.raw)
	}
}

// X-Forwarded-For names the client only when the peer is a trusted proxy: behind one, each
// client has its own failures; without one configured, the header is the client's own word
// and changes nothing.
func TestForwardedAddressesCountOnlyFromTrustedProxies(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		f, _ := everyRouteFixture(t, withTenants(t, map[string]string{"clinic": "null"}), withFailureLimit(t, 1e-6, 2),
			func(o *fixtureOptions) {
				if trusted {
					p, err := identity.ParseProxies([]string{"127.0.0.0/8"})
					if err != nil {
						t.Fatal(err)
					}
					o.Proxies = p
				}
			})
		for range 3 {
			f.do(t, "POST", "/pii/extract", workBodies["/pii/extract"], "X-API-Key", "guess", "X-Forwarded-For", "198.51.100.66")
		}
		// Another client behind the proxy; a spoofed entry at the left of its header is not
		// where the proxy says it came from.
		r := f.do(t, "POST", "/pii/extract", workBodies["/pii/extract"], "X-API-Key", "guess",
			"X-Forwarded-For", "198.51.100.66, 198.51.100.7")
		want := map[bool]int{true: 401, false: 429}[trusted]
		if r.status != want {
			t.Errorf("trusted proxies %v: another client's wrong key: %d %s", trusted, r.status, r.raw)
		}
	}
}

// Under an address-keyed default budget, two tenants at one address have a bucket each: one
// tenant's 429 (and its x-ratelimit-* headers) says nothing of, and takes nothing from, the
// other. (They shared one bucket per address.)
func TestAddressKeyedBudgetsBelongToOneTenant(t *testing.T) {
	f, _ := everyRouteFixture(t, withTenants(t, map[string]string{"alpha": "null", "beta": "null"}), func(o *fixtureOptions) {
		o.Budgets.Anonymous = admission.Budget{RequestsPerSecond: 1e-6, RequestBurst: 2}
	})
	body := workBodies["/pii/extract"]
	for i, want := range []int{200, 200, 429} {
		if r := f.do(t, "POST", "/pii/extract", body, "X-API-Key", "alpha-key"); r.status != want {
			t.Fatalf("alpha %d: %d %s", i+1, r.status, r.raw)
		}
	}
	r := f.do(t, "POST", "/pii/extract", body, "X-API-Key", "beta-key")
	if r.status != 200 {
		t.Fatalf("beta after alpha used its bucket: %d %s", r.status, r.raw)
	}
	f.do(t, "POST", "/pii/extract", body, "X-API-Key", "beta-key")
	r = f.do(t, "POST", "/pii/extract", body, "X-API-Key", "beta-key")
	if r.status != 429 || r.header.Get("x-ratelimit-remaining-requests") != "0" || r.header.Get("x-ratelimit-limit-requests") != "2" {
		t.Fatalf("beta's own refusal: %d %v", r.status, r.header)
	}
}

// conversation is a chat body of n user messages, each content.
func conversation(n int, content string) string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = `{"role":"user","content":"` + content + `"}`
	}
	return `{"model":"fake-lm","max_tokens":4,"messages":[` + strings.Join(msgs, ",") + `]}`
}

// A conversation is bounded in messages and in text, and the privacy gateway finds every
// message's PII in one pass of the model, not one per message. (20,000 two-word messages ran
// 20,000 passes, 120 s, to a 504.)
func TestMessageFloodsAreBoundedAndBatched(t *testing.T) {
	f, _ := everyRouteFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxBodyBytes, o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1<<20, 20000, 80000
	})
	for _, path := range []string{"/gateway/v1/chat/completions", "/v1/chat/completions"} {
		r := f.do(t, "POST", path, conversation(20000, "hi there"))
		if e, _ := r.body["error"].(map[string]any); r.status != 400 || e["param"] != "messages" {
			t.Errorf("%s, 20,000 messages: %d %.300s", path, r.status, r.raw)
		}
	}
	if n := f.pii.callCount(); n != 0 {
		t.Errorf("the PII model ran %d times on refused conversations", n)
	}
	r := f.do(t, "POST", "/gateway/v1/chat/completions", conversation(1000, "Alice called"))
	if r.status != 200 {
		t.Fatalf("1,000 messages: %d %.300s", r.status, r.raw)
	}
	if n := f.pii.callCount(); n != 1 {
		t.Errorf("1,000 messages took %d passes of the PII model, want 1", n)
	}
	if got := f.pii.gotText; strings.Count(got, "Alice") != 1000 || strings.Count(got, "\n\n") != 999 {
		t.Errorf("the pass did not read the messages apart: %d names, %d breaks", strings.Count(got, "Alice"), strings.Count(got, "\n\n"))
	}
	// Past the text limit, the whole conversation is refused before the model reads it.
	r = f.do(t, "POST", "/gateway/v1/chat/completions", conversation(900, strings.Repeat("word ", 5)))
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || e["param"] != "messages" {
		t.Errorf("over the text limit: %d %.300s", r.status, r.raw)
	}
	if n := f.pii.callCount(); n != 1 {
		t.Errorf("the model read a conversation over the text limit")
	}
}

// Every route the server registers asks a scope of its own (identity.DefaultRouteScopes), but
// the probes and /metrics: none is reachable by any valid key for want of one.
func TestEveryRouteHasAScope(t *testing.T) {
	f, _ := everyRouteFixture(t)
	open := map[string]bool{"/health": true, "/livez": true, "/readyz": true, "/metrics": true}
	seen := 0
	for _, r := range f.app.GetRoutes(true) {
		if r.Method == "USE" || r.Method == "HEAD" || open[r.Path] {
			continue
		}
		seen++
		if scopes := identity.DefaultRouteScopes[r.Method+" "+r.Path]; len(scopes) == 0 {
			t.Errorf("%s %s declares no scope", r.Method, r.Path)
		}
	}
	if seen < len(postPaths) {
		t.Fatalf("only %d routes seen", seen)
	}
}

// Scopes as a security review tried them: a pii:read key reaches neither the in-process
// model's generation routes nor the gateway's; the gateway's audit needs audit:read; a key
// marked for the gateway is authorized as the gateway's face, whose scope it must hold (its
// mark routed a pii:read key through the gateway that the face itself refused).
func TestScopesGuardEveryRoute(t *testing.T) {
	scoped := func(o *fixtureOptions) {
		keys, err := identity.ParseKeys([]byte(`[
			{"id":"r","key_hash":"` + identity.HashKey("reader") + `","tenant":"r","scopes":"pii:read"},
			{"id":"w","key_hash":"` + identity.HashKey("writer") + `","tenant":"w","scopes":"pii:write"},
			{"id":"g","key_hash":"` + identity.HashKey("generator") + `","tenant":"g","scopes":"generate:write models:read"},
			{"id":"gr","key_hash":"` + identity.HashKey("gateway-reader") + `","tenant":"gr","scopes":"pii:read generate:write","gateway":true},
			{"id":"gw","key_hash":"` + identity.HashKey("gateway-writer") + `","tenant":"gw","scopes":"pii:write","gateway":true},
			{"id":"a","key_hash":"` + identity.HashKey("auditor") + `","tenant":"a","scopes":"audit:read"}]`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Auth, err = identity.New(identity.Config{Keys: keys}, o.Clock); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := everyRouteFixture(t, scoped)
	chatBody := workBodies["/v1/chat/completions"]
	for _, c := range []struct {
		method, path, key string
		want              int
	}{
		{"POST", "/generate", "reader", 403}, {"POST", "/", "reader", 403}, {"POST", "/v1/completions", "reader", 403},
		{"POST", "/v1/chat/completions", "reader", 403}, {"POST", "/tokenize", "reader", 403},
		{"GET", "/info", "reader", 403}, {"GET", "/v1/models", "reader", 403},
		{"POST", "/generate", "generator", 200}, {"POST", "/v1/chat/completions", "generator", 200}, {"GET", "/info", "generator", 200},
		{"POST", "/gateway/v1/chat/completions", "reader", 403}, {"POST", "/gateway/v1/chat/completions", "writer", 200},
		{"POST", "/privacy-gateway/complete", "reader", 403}, {"POST", "/privacy-gateway/complete", "writer", 200},
		{"GET", "/privacy-gateway/audit", "writer", 403}, {"GET", "/privacy-gateway/audit", "auditor", 200},
		{"POST", "/v1/chat/completions", "gateway-reader", 403}, {"POST", "/v1/chat/completions", "gateway-writer", 200},
	} {
		body := workBodies[c.path]
		if c.path == "/v1/chat/completions" {
			body = chatBody
		}
		r := f.do(t, c.method, c.path, body, "Authorization", "Bearer "+c.key)
		if r.status != c.want {
			t.Errorf("%s %s with %s: %d, want %d: %.200s", c.method, c.path, c.key, r.status, c.want, r.raw)
		}
	}
	// A refusal by credentials is counted under the route it was for, never under TGI's "/".
	f.do(t, "POST", "/pii/deidentify", workBodies["/pii/deidentify"], "Authorization", "Bearer nobody")
	metrics := f.do(t, "GET", "/metrics", "", "X-API-Key", "generator").raw
	for _, want := range []string{`sluice_http_requests_total{outcome="failed",route="/generate",status="403"} 1`,
		`sluice_http_requests_total{outcome="failed",route="/pii/deidentify",status="401"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, `route="/",status="401"`) { // "/" itself was sent only 403s
		t.Error("an authentication refusal counted under route /")
	}
	// Authorized as the gateway's face, a marked key never reaches the model without it.
	noFace, _ := everyRouteFixture(t, scoped, func(o *fixtureOptions) { o.GatewayFace = nil })
	if r := noFace.do(t, "POST", "/v1/chat/completions", chatBody, "Authorization", "Bearer gateway-writer"); r.status != 503 {
		t.Errorf("a gateway key on a server without the gateway's face: %d %.200s", r.status, r.raw)
	}
}

// numberCanary is a number a client chose (an MRN, say): no error may repeat it.
const numberCanary = "99887766"

// Whatever a client chooses (a request id, a JSON key, a policy name, a model name, a number)
// enters no log line, audit record, metric or error body: those hold closed sets and counts
// only. Every route is tried with every field a client may fill.
func TestClientChosenTextGoesNowhere(t *testing.T) {
	f, trail := everyRouteFixture(t)
	n := numberCanary
	attempts := []struct{ path, body string }{
		{"/analyze", `{"text":"Alice","` + canary + `":1}`},
		{"/analyze", `{"text":"Alice","model_name":"` + canary + `"}`},
		{"/analyze", `{"text":"Alice","keep_alive":"` + n + ` fortnights"}`},
		{"/pii/extract", `{"text":"Alice","confidence_threshold":` + n + `}`},
		{"/pii/deidentify", `{"text":"Alice","policy":"` + canary + `"}`},
		{"/pii/deidentify", `{"text":"Alice","method":"` + canary + `"}`},
		{"/pii/extract/stream", `{"text":"Alice","window_chars":` + n + `}`},
		{"/privacy-gateway/complete", `{"text":"Alice was seen.","policy":"` + canary + `"}`},
		{"/privacy-gateway/complete", `{"text":"Alice was seen.","disallowed_entity_categories":["` + canary + `"]}`},
		{"/privacy-gateway/complete", `{"text":"Alice was seen.","disallowed_entity_categories":["zebra_canary_` + n + `"]}`}, // a valid name
		{"/generate", `{"inputs":"hi","parameters":{"top_n_tokens":` + n + `}}`},
		{"/generate", `{"inputs":"hi","parameters":{"truncate":` + n + `}}`},
		{"/generate", `{"inputs":"hi","parameters":{"max_new_tokens":` + n + `}}`},
		{"/generate_stream", `{"inputs":"hi","parameters":{"best_of":` + n + `}}`},
		{"/", `{"inputs":"hi","` + canary + `":true}`},
		{"/v1/completions", `{"model":"` + canary + `","prompt":"hi","n":` + n + `}`},
		{"/v1/completions", `{"model":"fake-lm","prompt":"hi","max_tokens":` + n + `}`},
		{"/v1/completions", `{"model":"fake-lm","prompt":"hi","logprobs":` + n + `}`},
		{"/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"` + canary + `","content":"hi"}]}`},
		{"/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":"hi"}],"top_logprobs":` + n + `,"logprobs":true}`},
		{"/gateway/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":"hi"}],"n":` + n + `}`},
		{"/tokenize", `{"inputs":"hi","` + canary + `":1}`},
		{"/models/unload", `{"model_name":"` + canary + `"}`},
	}
	for _, a := range attempts {
		for _, headers := range [][]string{
			{"X-Request-ID", "jane-" + canary},
			{"X-Request-ID", n},
			{"X-OpenMed-Priority", canary},
			{"X-Sluice-Retry-Token", canary},
		} {
			r := f.do(t, "POST", a.path, a.body, headers...)
			if r.status >= 400 && (strings.Contains(r.raw, canary) || strings.Contains(r.raw, n)) {
				t.Errorf("%s %s with %s: the error repeats the client's text: %s", a.path, a.body, headers[0], r.raw)
			}
		}
	}
	f.do(t, "GET", "/"+canary+"/"+n, "")
	metrics := f.do(t, "GET", "/metrics", "").raw
	recs := auditRecords(t, trail)
	records, _ := json.Marshal(recs)
	for where, text := range map[string]string{"log": f.logs.String(), "metrics": metrics, "audit": string(records)} {
		if strings.Contains(text, canary) || strings.Contains(text, n) {
			i := max(strings.Index(text, canary), strings.Index(text, n))
			t.Errorf("the %s holds the client's text: ...%s...", where, text[max(i-200, 0):min(i+100, len(text))])
		}
	}
	if len(recs) == 0 || !strings.Contains(string(records), `"name":"custom"`) || !strings.Contains(string(records), `"route":"/pii/deidentify"`) {
		t.Errorf("the gateway's audit did not record its requests' policy as custom: %s", records)
	}
}

// Host handling as HTTP asks: two Host headers, or none in HTTP/1.1, are 400 before routing;
// a Host that ends with a trusted suffix but is no host name under it is refused; a request
// refused for its Host is counted under its route, not under "/". (Two Host headers were
// served, "evil.com/.internal.example" passed *.internal.example, and the refusals were
// counted under route "/".)
func TestHostHeadersAsHTTPAsks(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) { o.TrustedHosts = []string{"api.example.org", "*.internal.example"} })
	post := "POST /pii/extract %s\r\nContent-Type: application/json\r\nContent-Length: 16\r\n%s\r\n{\"text\":\"Alice\"}"
	for _, c := range []struct {
		proto, hosts string
		status       int
	}{
		{"HTTP/1.1", "Host: api.example.org\r\n", 200},
		{"HTTP/1.1", "Host: api.example.org\r\nHost: evil.example\r\n", 400},
		{"HTTP/1.1", "Host: api.example.org\r\nhost: api.example.org\r\n", 400},
		{"HTTP/1.1", "", 400},
		{"HTTP/1.1", "Host: evil.com/.internal.example\r\n", 400},
		{"HTTP/1.1", "Host: evil.com@a.internal.example\r\n", 400},
		{"HTTP/1.1", "Host: a.internal.example:8080\r\n", 200},
		{"HTTP/1.0", "", 400}, // no Host to match the trusted ones: refused by the list, not the framing
	} {
		resp, body := rawExchange(t, f, fmt.Sprintf(post, c.proto, c.hosts))
		if resp.StatusCode != c.status {
			t.Errorf("%s with %q: %d %v", c.proto, c.hosts, resp.StatusCode, body)
		}
	}
	// An absolute-form target names its host over the Host header: the two must agree.
	absolute := strings.Replace(post, "POST /pii/extract", "POST %s/pii/extract", 1)
	for target, status := range map[string]int{"http://evil.example": 400, "http://API.example.org": 200,
		"http://api.example.org:80": 200, "ftp://evil.example": 400, "http://user@api.example.org": 400} {
		resp, body := rawExchange(t, f, fmt.Sprintf(absolute, target, "HTTP/1.1", "Host: api.example.org\r\n"))
		if resp.StatusCode != status {
			t.Errorf("absolute target %s with a trusted Host: %d %v", target, resp.StatusCode, body)
		}
	}
	metrics := f.do(t, "GET", "/metrics", "", "Host", "api.example.org").raw
	for _, want := range []string{
		`sluice_http_requests_total{outcome="failed",route="unrouted",status="400"} 8`,     // framing, names that are no host, targets
		`sluice_http_requests_total{outcome="failed",route="/pii/extract",status="400"} 1`, // HTTP/1.0 without a Host
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, `route="/",`) {
		t.Error("a refusal counted under route /")
	}
}

// A huge n must not wrap n times the prompts into a small number: refused as invalid, with
// nothing generated, and estimated at the most choices a request may have. (n = 2^62+1 over
// four prompts passed the check, was estimated at 24 tokens and started thousands of
// generations.)
func TestChoicesThatWrapAreRefused(t *testing.T) {
	gen := &fakeGenerator{script: stopScript}
	f := generationFixture(t, gen, time.Minute)
	body := `{"model":"fake-lm","prompt":["a","b","c","d"],"n":4611686018427387905,"max_tokens":1}`
	r := f.do(t, "POST", "/v1/completions", body)
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || e["param"] != "n" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if len(gen.prompts) != 0 {
		t.Fatalf("%d generations started", len(gen.prompts))
	}
	ep := GenerationEndpoint{Model: gen}.withDefaults()
	if got, want := (completions{}).cost([]byte(body), &ep), textCost([]byte(body))+float64(ep.MaxChoices); got != want {
		t.Fatalf("estimated %v tokens, want %v", got, want)
	}
}

// A compressed body cut short is refused, not read as the part that decoded: a gzip without
// its trailer (checksum and size), or cut in the middle. (Both were served as the prefix.)
func TestTruncatedCompressedBodiesAreRefused(t *testing.T) {
	f, _ := everyRouteFixture(t)
	whole := gzipped(t, []byte(`{"text":"Alice was seen today, and again on Friday."}`))
	for name, body := range map[string][]byte{"without its trailer": whole[:len(whole)-8], "cut in half": whole[:len(whole)/2]} {
		if r := f.postEncoded(t, "/pii/extract", "gzip", body); r.status != 400 || errorOf(t, r)["code"] != CodeBadRequest {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
}

// A conversation the external model answers is charged what is asked of it, on the gateway's
// face and through a key marked for the gateway alike, not the in-process model's length.
// (With both models configured, an answer of any length asked of the external one was
// charged at most the local model's context.)
func TestExternalAnswersAreChargedWhatTheyAsk(t *testing.T) {
	up := &fakeChatUpstream{pieces: []string{"All well."}}
	f, _ := everyRouteFixture(t, withTenants(t, map[string]string{"ext": `{"tokens_per_minute":0.000001,"token_burst":500}`}),
		func(o *fixtureOptions) {
			keys, err := identity.ParseKeys([]byte(`[{"id":"ext","key_hash":"` + identity.HashKey("ext-key") +
				`","tenant":"ext","scopes":"*","gateway":true,"budget":{"tokens_per_minute":0.000001,"token_burst":500}}]`))
			if err != nil {
				t.Fatal(err)
			}
			if o.Auth, err = identity.New(identity.Config{Keys: keys}, o.Clock); err != nil {
				t.Fatal(err)
			}
			o.GatewayFace.ChatUpstream = up
			for i, r := range o.extra {
				if r.Path == "/gateway/v1/chat/completions" {
					o.extra[i] = GatewayChat(*o.GatewayFace)
				}
			}
		})
	asking := func(n int) string {
		return `{"model":"fake-lm","messages":[{"role":"user","content":"hi"}],"max_tokens":` + fmt.Sprint(n) + `}`
	}
	for _, path := range []string{"/gateway/v1/chat/completions", "/v1/chat/completions"} {
		r := f.do(t, "POST", path, asking(1000), "X-API-Key", "ext-key")
		if r.status != 429 || errorOf(t, r)["details"].(map[string]any)["reason"] != "too_large" {
			t.Errorf("%s asking 1,000 tokens of the external model: %d %.200s", path, r.status, r.raw)
		}
		if r := f.do(t, "POST", path, asking(10), "X-API-Key", "ext-key"); r.status != 200 {
			t.Errorf("%s asking 10: %d %.200s", path, r.status, r.raw)
		}
	}
	// An external answer keeps the charge it was admitted at: its pieces are not tokens, and
	// counting them would refund the conversation. 500 tokens hold two such requests of about
	// 200 each (text and answer room), not five.
	served := 0
	for range 5 {
		if r := f.do(t, "POST", "/gateway/v1/chat/completions", asking(190), "X-API-Key", "ext-key"); r.status == 200 {
			served++
		}
	}
	if served > 2 {
		t.Errorf("%d of 5 external answers of 190 tokens each were served on a 500-token budget", served)
	}
}

// Every coding is read to its end, deflate's too (zlib stops at its checksum): bytes after a
// stream, or an outer layer cut short, are 400 whichever coding is inside. An empty body, or
// codings that are all identity, are the body as it is.
func TestEveryCodingIsReadToItsEnd(t *testing.T) {
	f, _ := everyRouteFixture(t)
	note := []byte(`{"text":"Alice was seen today."}`)
	deflated := func(data []byte) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		_, _ = w.Write(data)
		_ = w.Close()
		return b.Bytes()
	}
	outer := gzipped(t, deflated(note))
	for name, c := range map[string]struct {
		encoding string
		body     []byte
	}{
		"deflate with bytes after it":        {"deflate", append(deflated(note), "trailing"...)},
		"gzip with bytes after it":           {"gzip", append(gzipped(t, note), "trailing"...)},
		"deflate inside a gzip cut short":    {"deflate, gzip", outer[:len(outer)-8]},
		"deflate inside a deflate cut short": {"deflate, deflate", deflated(deflated(note))[:len(deflated(deflated(note)))-4]},
		"gzip inside a deflate, bytes after": {"gzip, deflate", append(deflated(gzipped(t, note)), 0)},
		// Bytes after an inner stream, which a decoder's own read-ahead of the outer one hid.
		"deflate inside a gzip, bytes after the deflate":    {"deflate, gzip", gzipped(t, append(deflated(note), `,"x":1}`...))},
		"deflate inside a deflate, bytes after the deflate": {"deflate, deflate", deflated(append(deflated(note), `,"x":1}`...))},
	} {
		if r := f.postEncoded(t, "/pii/extract", c.encoding, c.body); r.status != 400 {
			t.Errorf("%s: %d %.200s", name, r.status, r.raw)
		}
	}
	if r := f.postEncoded(t, "/pii/extract", "deflate, gzip", outer); r.status != 200 {
		t.Errorf("deflate inside gzip, whole: %d %.200s", r.status, r.raw)
	}
	for _, encoding := range []string{"identity, identity", "identity,", " Identity "} {
		if r := f.postEncoded(t, "/pii/extract", encoding, note); r.status != 200 {
			t.Errorf("%q: %d %.200s", encoding, r.status, r.raw)
		}
	}
	if r := f.postEncoded(t, "/models/unload", "gzip", nil); r.status == 400 && errorOf(t, r)["code"] == CodeBadRequest &&
		strings.Contains(r.raw, "invalid_content_encoding") {
		t.Errorf("an empty body said to be gzip: %s", r.raw)
	}
}

// TestAMiddleLayerIsHeldToTheLimit: a body whose middle coding unpacks to a megabyte of empty
// deflate blocks, around a short valid note, is refused once that layer has read a few
// kilobytes that made nothing, not decoded whole (seconds of CPU for each such request, before
// any admission; a 413 once the layer passed the limit, before); so is a layer of empty gzip
// members (an auditor's 3 kB body of empty Huffman blocks cost a third of a second of a core).
// A stream that makes about what it reads (no compression at all) is no waste.
func TestAMiddleLayerIsHeldToTheLimit(t *testing.T) {
	f, _ := everyRouteFixture(t)
	note := []byte(`{"text":"Alice was seen today."}`)
	// zlib: its header, 200,000 empty stored blocks, the note in a final stored block, and
	// the note's Adler-32.
	z := []byte{0x78, 0x01}
	z = append(z, bytes.Repeat([]byte{0x00, 0x00, 0x00, 0xff, 0xff}, 200_000)...)
	n := uint16(len(note))
	z = append(z, 0x01, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
	z = append(z, note...)
	z = binary.BigEndian.AppendUint32(z, adler32.Checksum(note))
	wasteful := func(r response) bool { return r.status == 400 && strings.Contains(r.raw, "wasteful_content_encoding") }
	if r := f.postEncoded(t, "/pii/extract", "deflate, gzip", gzipped(t, z)); !wasteful(r) {
		t.Errorf("a megabyte of empty blocks under the note: %d %.200s", r.status, r.raw)
	}
	members := append(bytes.Repeat(gzipped(t, nil), 50_000), gzipped(t, note)...)
	if r := f.postEncoded(t, "/pii/extract", "gzip, gzip", gzipped(t, members)); !wasteful(r) {
		t.Errorf("50,000 empty gzip members before the note: %d %.200s", r.status, r.raw)
	}
	// Streams that make about what they read, within the fixture's 64 KiB: none is waste (a
	// second reader found the first cut refused them, flate handing back a window at a time).
	random := make([]byte, 30_000)
	for i := range random {
		random[i] = byte(i*2654435761>>13) | 0x20 // printable, and nothing deflate can shorten much
	}
	randomText := `{"text":"` + base64.StdEncoding.EncodeToString(random)[:40_000] + `"}`
	for name, c := range map[string]struct {
		level int
		extra int
	}{"stored": {gzip.NoCompression, 0}, "compressed": {gzip.BestCompression, 0}, "with a 5,000-byte extra field": {gzip.DefaultCompression, 5000}} {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, c.level)
		w.Header.Extra = make([]byte, c.extra)
		_, _ = w.Write([]byte(randomText))
		_ = w.Close()
		if r := f.postEncoded(t, "/pii/extract", "gzip", b.Bytes()); r.status != 200 && r.status != 422 {
			t.Errorf("40 kB of base64, %s: %d %.200s", name, r.status, r.raw)
		}
	}
}

// TestAMeteredLayerIsHeldToItsMeasure: a middle layer may not make more than twice what it
// read and 64 KiB (a compressed stream does not compress again: only a bomb's middle layer
// does), and no layer may read on past the body's time.
func TestAMeteredLayerIsHeldToItsMeasure(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	read := func(m *metered, r io.Reader) error {
		_, err := io.Copy(io.Discard, &meteredOutput{r: r, m: m})
		return err
	}
	if err := read(&metered{middle: true, in: 1000, clk: clk, deadline: clk.Now().Add(time.Second)}, bytes.NewReader(make([]byte, 200<<10))); !errors.Is(err, errWasteful) {
		t.Errorf("a middle layer making 200 KiB of 1,000 bytes: %v", err)
	}
	if err := read(&metered{in: 1000, clk: clk, deadline: clk.Now().Add(time.Second)}, bytes.NewReader(make([]byte, 200<<10))); err != nil {
		t.Errorf("the last layer making 200 KiB of 1,000 bytes (a body's compression): %v", err)
	}
	m := &metered{clk: clk, deadline: clk.Now().Add(unpackTime)}
	in := &meteredInput{r: bytes.NewReader(make([]byte, 16<<10)), m: m}
	for range 5000 {
		if _, err := in.ReadByte(); err != nil {
			t.Fatalf("within its time: %v", err)
		}
	}
	clk.Advance(unpackTime + time.Millisecond)
	var err error
	for i := 0; i < 8192 && err == nil; i++ {
		_, err = in.ReadByte()
	}
	if !errors.Is(err, errWasteful) {
		t.Errorf("past its time: %v", err)
	}
}

// The same mistake gets the same answer on every route, in the route's own words: a body that
// is not valid UTF-8 is a validation error everywhere (it was served on the generation
// routes), and so is a value of the wrong type, named by its field as the wire spells it.
func TestTheSameMistakeGetsTheSameAnswerEverywhere(t *testing.T) {
	f, _ := everyRouteFixture(t)
	for path, body := range workBodies {
		bad := strings.Replace(body, "hi", "h\xffi", 1)
		bad = strings.Replace(bad, "Alice", "Al\xffice", 1)
		r := f.do(t, "POST", path, bad)
		if (r.status != 400 && r.status != 422) || errorOf(t, r)["code"] != CodeValidation {
			t.Errorf("%s, invalid UTF-8: %d %s", path, r.status, r.raw)
		}
	}
	for path, body := range map[string]string{
		"/v1/completions": `{"model":"fake-lm","prompt":"hi","max_tokens":"many"}`,
		"/generate":       `{"inputs":"hi","parameters":{"max_new_tokens":"many"}}`,
		"/pii/extract":    `{"text":"Alice","confidence_threshold":"high"}`,
	} {
		r := f.do(t, "POST", path, body)
		if raw := r.raw; !strings.Contains(raw, "max_tokens") && !strings.Contains(raw, "max_new_tokens") &&
			!strings.Contains(raw, "confidence_threshold") || strings.Contains(raw, "openAISampling") || r.status < 400 {
			t.Errorf("%s, a wrong type: %d %s", path, r.status, raw)
		}
	}
}

// A request whose handling panics is a 500, a server failure, and costs its caller nothing:
// its tokens come back as an error's do (while the panic unwinds, the response still says
// 200, which settled it as served).
func TestAPanicCostsTheCallerNothing(t *testing.T) {
	f, _ := everyRouteFixture(t, withTenants(t, map[string]string{
		"ledger": `{"requests_per_minute":0.000001,"request_burst":10,"tokens_per_minute":0.000001,"token_burst":100}`}))
	served := `{"text":"Alice ` + strings.Repeat(" ", 300) + `"}` // an estimate of 79 tokens
	f.pii.set(func(e *fakeExtractor) { e.panicWith = "a bug" })
	if r := f.do(t, "POST", "/pii/extract", served, "X-API-Key", "ledger-key"); r.status != 500 {
		t.Fatalf("the panic: %d %s", r.status, r.raw)
	}
	f.pii.set(func(e *fakeExtractor) { e.panicWith = "" })
	if r := f.do(t, "POST", "/pii/extract", served, "X-API-Key", "ledger-key"); r.status != 200 {
		t.Fatalf("after a panic, its tokens given back: %d %s", r.status, r.raw)
	}
}

// TestAPanicIsAuditedAsThe500ItIs: an audited request whose handling panics leaves a record
// of the 500 its caller gets (while the panic unwinds the response still says 200), never
// one of an answer served.
func TestAPanicIsAuditedAsThe500ItIs(t *testing.T) {
	f, trail := everyRouteFixture(t, func(o *fixtureOptions) { o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 20_000, 20_000 })
	f.pii.set(func(e *fakeExtractor) { e.panicWith = "a bug" })
	for path, body := range map[string]string{
		"/pii/deidentify":           `{"text":"Call Alice."}`,
		"/privacy-gateway/complete": `{"text":"Call Alice."}`,
		"/pii/deidentify/stream":    `{"text":"Call Alice."}`,
	} {
		if r := f.do(t, "POST", path, body); r.status != 500 {
			t.Fatalf("%s, the panic: %d %s", path, r.status, r.raw)
		}
	}
	recs := auditRecords(t, trail)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if r.HTTPStatus != 500 || r.Status == "served" || r.Status == "forwarded" {
			t.Errorf("%s: recorded %d %s", r.Route, r.HTTPStatus, r.Status)
		}
	}
	// A stream that has begun (its first window answered) and panics on its second ends with
	// the error line, and leaves its record as a failure.
	f.pii.set(func(e *fakeExtractor) { e.calls, e.panicFrom = 0, 2 })
	r := f.do(t, "POST", "/pii/deidentify/stream", `{"text":"Call Alice.`+strings.Repeat(" And then Alice again.", 400)+`"}`)
	if r.status != 200 || !strings.Contains(r.raw, `"type":"error"`) {
		t.Fatalf("the stream that panics: %d %.200s", r.status, r.raw)
	}
	recs = auditRecords(t, trail)
	if len(recs) != 4 || recs[3].Status != OutcomeFailed {
		t.Fatalf("%d records; the stream's: %+v", len(recs), recs[len(recs)-1])
	}
}

// lengthOnly is a Reranker that only says its max length, for the cost estimate.
type lengthOnly int

func (lengthOnly) Name() string     { return "rr" }
func (n lengthOnly) MaxLength() int { return int(n) }
func (lengthOnly) Score(context.Context, admission.Priority, string, []string, bool) ([]float32, int, error) {
	panic("the estimate scores nothing")
}

// TestARerankIsChargedWhatTheModelReads: a rerank's estimate counts each query and passage
// pair at most the model's max length, as the model reads it: a 4,400-character query beside
// 60 one-word passages is 60 pairs of 128 tokens (7,680), not the query 60 times over (66,000,
// which a budget of 60,000 tokens refused for ever as too large).
func TestARerankIsChargedWhatTheModelReads(t *testing.T) {
	ep := RerankEndpoint{Model: lengthOnly(128)}
	app := fiber.New()
	var got float64
	app.Post("/", func(c *fiber.Ctx) error { got = ep.cost(nil, c); return nil })
	estimate := func(body any) float64 {
		b, _ := json.Marshal(body)
		resp, err := app.Test(httptest.NewRequest("POST", "/", bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return got
	}
	long := strings.Repeat("chest pain ", 400)
	if e := estimate(map[string]any{"query": long, "texts": slices.Repeat([]string{"fever"}, 60)}); e != 60*128 {
		t.Errorf("a long query beside 60 words: %v, want %d", e, 60*128)
	}
	if e := estimate(map[string]any{"query": "chest pain", "documents": []string{"fever and chills"}}); e != 10 {
		t.Errorf("a short pair: %v, want 10", e)
	}
}

// logits is a Reranker that answers fixed logits.
type logits []float32

func (logits) Name() string   { return "rr" }
func (logits) MaxLength() int { return 512 }
func (l logits) Score(_ context.Context, _ admission.Priority, _ string, passages []string, _ bool) ([]float32, int, error) {
	return slices.Clone(l[:len(passages)]), 10, nil
}

// TestRerankRanksConfidentPassagesByTheirLogits: logits of 20 and 30 are both 1 as float32
// probabilities; the passages are still ranked by the logits, best first, on both routes
// (they tied at 1 and came back by index, so top_n 1 returned the weaker).
func TestRerankRanksConfidentPassagesByTheirLogits(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) {
		ep := RerankEndpoint{Model: logits{20, 30}, Gate: newTestGate(t, "rerank", newFakeLoad(16), time.Second)}
		o.extra = append(o.extra, TEIRerank(ep), CohereRerank(ep))
	})
	r := f.do(t, "POST", "/rerank", `{"query":"q","texts":["a","b"]}`)
	var tei []struct{ Index int }
	if r.status != 200 || json.Unmarshal([]byte(r.raw), &tei) != nil || len(tei) != 2 || tei[0].Index != 1 {
		t.Errorf("/rerank: %d %s; want passage 1 first", r.status, r.raw)
	}
	r = f.do(t, "POST", "/v1/rerank", `{"model":"rr","query":"q","documents":["a","b"],"top_n":1}`)
	var cohere struct{ Results []struct{ Index int } }
	if r.status != 200 || json.Unmarshal([]byte(r.raw), &cohere) != nil || len(cohere.Results) != 1 || cohere.Results[0].Index != 1 {
		t.Errorf("/v1/rerank, top_n 1: %d %s; want passage 1", r.status, r.raw)
	}
}
