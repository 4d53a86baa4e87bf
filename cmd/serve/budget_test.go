package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/identity"
)

// postWithKey posts a JSON body to path with an API key; the caller reads and closes the answer.
func postWithKey(t *testing.T, srv *testServer, path, body, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// budgetKey is a key-file entry whose tenant has a budget.
func budgetKey(key, tenant, budget string) string {
	return `{"id":"` + tenant + `-key","key_hash":"` + identity.HashKey(key) + `","tenant":"` + tenant +
		`","scopes":"*","budget":` + budget + `}`
}

// TestTenantBudgets: a tenant past its token budget gets 429 rate_limited with a Retry-After
// from its request's own size and both dimensions' x-ratelimit-* headers, while another tenant
// is served; a request larger than the whole burst is refused at once; the refusals are
// counted by tenant and reason.
func TestTenantBudgets(t *testing.T) {
	// Not parallel: a refusal needs six requests served before the bucket refills.
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path,
		budgetKey("small-secret-1", "small", `{"requests_per_minute":600,"tokens_per_minute":600,"token_burst":100}`),
		budgetKey("big-secret-1", "big", `{"tokens_per_minute":600000}`))
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_API_KEYS_FILE="+path)
	body := `{"text":"Call Maria at (415) 555-0132 about the results from 03/14/2024."}` // 75 bytes: 19 tokens estimated
	small := []string{"X-API-Key", "small-secret-1"}
	refused := 0
	var hdr http.Header
	for range 6 {
		status, h, code := call(t, srv, "/pii/extract", body, small...)
		if status == http.StatusTooManyRequests {
			if code != "rate_limited" {
				t.Fatalf("429 with code %q", code)
			}
			refused++
			hdr = h
			continue
		}
		if status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
	}
	// 100 tokens of burst refill at 10/s: five requests of 19 fit, the sixth waits ~1 s.
	if refused == 0 {
		t.Fatal("six requests of 19 estimated tokens all fit a 100-token burst")
	}
	if hdr.Get("Retry-After") == "" || hdr.Get("x-ratelimit-limit-tokens") != "100" || hdr.Get("x-ratelimit-limit-requests") != "600" ||
		hdr.Get("x-ratelimit-remaining-tokens") == "" || hdr.Get("x-ratelimit-reset-tokens") == "" {
		t.Errorf("refusal headers: %v", hdr)
	}
	if status, _, _ := call(t, srv, "/pii/extract", body, "X-API-Key", "big-secret-1"); status != http.StatusOK {
		t.Errorf("the other tenant got %d", status)
	}
	large := `{"text":"` + strings.Repeat("word ", 100) + `"}`
	status, h, code := call(t, srv, "/pii/extract", large, small...)
	if status != http.StatusTooManyRequests || code != "rate_limited" || h.Get("Retry-After") != "13" {
		// 515 bytes: 129 tokens estimated, at 10/s: 13 s.
		t.Errorf("larger than the burst: %d %q Retry-After %q; want 429 rate_limited, 13", status, code, h.Get("Retry-After"))
	}
	// The refusal's body is the error envelope, whole (it is written without encoding/json).
	resp := postWithKey(t, srv, "/pii/extract", large, "small-secret-1")
	var env struct {
		Error struct {
			Code      string
			Message   string
			RequestID string `json:"request_id"`
			Details   struct {
				Reason            string
				RetryAfterSeconds int `json:"retry_after_seconds"`
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Error.Code != "rate_limited" || env.Error.Details.Reason != "too_large" ||
		env.Error.Details.RetryAfterSeconds != 13 || env.Error.RequestID == "" || env.Error.Message == "" {
		t.Errorf("refusal body: %+v %v", env, err)
	}
	resp.Body.Close()
	srv.waitForMetric(t, `sluice_budget_refusals_total{reason="too_large",tenant="small"} 2`)
}

// TestOpenMedRateLimitIsTheAnonymousBudget: OpenMed's RATE_LIMIT_RPS and _BURST limit callers
// without a tenant, per peer; a 429 is the caller's, distinct from the server's 503.
func TestOpenMedRateLimitIsTheAnonymousBudget(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_RATE_LIMIT_RPS=0.001",
		"OPENMED_SERVICE_RATE_LIMIT_BURST=2", "OPENMED_SERVICE_THROTTLE_KEY=peer")
	body := `{"text":"Seen on 03/14/2024."}`
	for i, want := range []int{200, 200, 429} {
		if status, h, code := call(t, srv, "/pii/extract", body); status != want {
			t.Fatalf("request %d: %d %q; want %d", i+1, status, code, want)
		} else if want == 429 && (h.Get("x-ratelimit-limit-requests") != "2" || h.Get("x-ratelimit-limit-tokens") != "") {
			t.Errorf("headers %v", h)
		}
	}
	srv.waitForMetric(t, `sluice_budget_refusals_total{reason="requests",tenant="anonymous"} 1`)
}

// TestOpenMedThrottleKeyGlobalIsOneBucket: OpenMed's rate limit counts the whole service in one
// bucket unless THROTTLE_KEY says otherwise; x-forwarded-for counts each client, named by the
// trusted proxy in front.
func TestOpenMedThrottleKeyGlobalIsOneBucket(t *testing.T) {
	t.Parallel()
	body := `{"text":"Seen on 03/14/2024."}`
	for key, third := range map[string]int{"": 429, "global": 429, "x-forwarded-for": 200} {
		env := []string{"SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_RATE_LIMIT_RPS=0.001", "OPENMED_SERVICE_RATE_LIMIT_BURST=2",
			"SLUICE_TRUSTED_PROXIES=127.0.0.1/32"}
		if key != "" {
			env = append(env, "OPENMED_SERVICE_THROTTLE_KEY="+key)
		}
		srv := startServer(t, env...)
		for i, client := range []string{"203.0.113.7", "203.0.113.7", "198.51.100.9"} {
			want := 200
			if i == 2 {
				want = third
			}
			if status, _, code := call(t, srv, "/pii/extract", body, "X-Forwarded-For", client); status != want {
				t.Errorf("THROTTLE_KEY %q, request %d from %s: %d %q; want %d", key, i+1, client, status, code, want)
			}
		}
	}
}

// TestDeferredAdmissionHoldsInsteadOfRefusing: with deferred admission on, a request its
// budget takes within max_wait is held and served, not refused.
func TestDeferredAdmissionHoldsInsteadOfRefusing(t *testing.T) {
	// Not parallel: a request is held only if the one before it was served within half a second.
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_RATE_LIMIT_RPS=2", "SLUICE_RATE_LIMIT_BURST=1",
		"SLUICE_DEFERRED_ADMISSION=true", "SLUICE_DEFERRED_MAX_WAIT_MS=2000")
	body := `{"text":"Seen on 03/14/2024."}`
	for i := range 3 {
		if status, _, code := call(t, srv, "/pii/extract", body); status != http.StatusOK {
			t.Fatalf("request %d: %d %q; want each held for its half second, then served", i+1, status, code)
		}
	}
	srv.waitForMetric(t, `sluice_budget_deferred_total{outcome="admitted",tenant="anonymous"} 2`)
	srv.waitForMetric(t, `sluice_budget_held_requests 0`)
}

func TestRateLimitSettingsAreChecked(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{
		"SLUICE_RATE_LIMIT_TOKENS_PER_MINUTE=-60": "SLUICE_RATE_LIMIT_TOKENS_PER_MINUTE must be a number at least 0",
		"SLUICE_RATE_LIMIT_BURST=5":               "SLUICE_RATE_LIMIT_BURST is a burst of SLUICE_RATE_LIMIT_RPS",
		"SLUICE_RATE_LIMIT_KEY=ip":                "SLUICE_RATE_LIMIT_KEY must be peer, tenant or global",
		"OPENMED_SERVICE_THROTTLE_KEY=route":      "OPENMED_SERVICE_THROTTLE_KEY",
		"SLUICE_RATE_LIMIT_MAX_CONCURRENCY=-1":    "SLUICE_RATE_LIMIT_MAX_CONCURRENCY must be at least 0",
	} {
		if _, err := loadConfig([]string{env}, testMachine); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", env, err, want)
		}
	}
}

// TestClientLeavingWhileHeldFreesItsHold: a request held by deferred admission whose client
// closes the connection is let go then (counted cancelled), not admitted when its wait ends.
func TestClientLeavingWhileHeldFreesItsHold(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_RATE_LIMIT_RPS=0.6", "SLUICE_RATE_LIMIT_BURST=1",
		"SLUICE_DEFERRED_ADMISSION=true", "SLUICE_DEFERRED_MAX_WAIT_MS=2000")
	body := `{"text":"Seen on 03/14/2024."}`
	if status, _, _ := call(t, srv, "/pii/extract", body); status != http.StatusOK {
		t.Fatalf("first: %d", status)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /pii/extract HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	srv.waitForMetric(t, `sluice_budget_held_requests 1`) // 1.7 s from its turn
	conn.Close()
	srv.waitForMetric(t, `sluice_budget_deferred_total{outcome="cancelled",tenant="anonymous"} 1`)
	srv.waitForMetric(t, `sluice_budget_held_requests 0`)
}

// TestStreamSettlesItsChargeWhenItEnds: a tenant allowed one request at a time gets its place
// back when its stream ends, not when the handler returns (or never): while a stream goes on
// (on a slowed model), the tenant's next request is refused for concurrency; once the stream
// has ended, by its client leaving or by its last token, the next is served.
func TestStreamSettlesItsChargeWhenItEnds(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path, budgetKey("stream-secret", "svc", `{"max_concurrency":1}`))
	srv := startServer(t, "SLUICE_API_KEYS_FILE="+path, "SLUICE_BENCH_STEP_DELAY_MS=50")
	long := `{"model":"tiny-lm","prompt":"The patient","max_tokens":200,"ignore_eos":true,"stream":true}` // 10 s of steps
	resp := postWithKey(t, srv, "/v1/completions", long, "stream-secret")
	events := bufio.NewScanner(resp.Body)
	for events.Scan() && !strings.HasPrefix(events.Text(), "data:") {
	}
	// The handler has returned (the stream is being written), and the stream goes on.
	short := `{"model":"tiny-lm","prompt":"The patient","max_tokens":1}`
	status, _, code := call(t, srv, "/v1/completions", short, "X-API-Key", "stream-secret")
	if status != 429 || code != "rate_limited" {
		t.Fatalf("a second request while the stream goes on: %d %s; its place was given back early", status, code)
	}
	resp.Body.Close() // the client leaves: the stream ends, aborted
	srv.waitForMetric(t, `sluice_tenant_requests_total{outcome="aborted",route="/v1/completions",tenant="svc"} 1`)
	if status, _, code := call(t, srv, "/v1/completions", short, "X-API-Key", "stream-secret"); status != 200 {
		t.Fatalf("after the stream ended: %d %s", status, code)
	}
	body := `{"model":"tiny-lm","prompt":"The patient","max_tokens":8,"stream":true}`
	for i := range 2 {
		resp := postWithKey(t, srv, "/v1/completions", body, "stream-secret")
		data, _ := io.ReadAll(resp.Body) // to its end: a reader that leaves early aborts it
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "[DONE]") {
			t.Fatalf("stream %d: %d", i+1, resp.StatusCode)
		}
		// The access-log line is written, and the charge settled, once the stream has ended.
		srv.waitForMetric(t, fmt.Sprintf(`sluice_tenant_requests_total{outcome="served",route="/v1/completions",tenant="svc"} %d`, i+2))
	}
}
