package handlers

import (
	"net/http"
	"strings"
	"testing"
)

// TestTrustedHostsAndCORS: with trusted hosts set, another Host header gets OpenMed's 400 (the
// probes answer any host); a listed origin gets CORS headers, an unlisted one none.
func TestTrustedHostsAndCORS(t *testing.T) {
	f := newFixture(t, func(o *fixtureOptions) {
		o.TrustedHosts = []string{"api.example.org", "*.internal.example", "[::1]"}
		o.CORSOrigins = []string{"https://app.example.org"}
	})
	send := func(method, path, host, origin string) *http.Response {
		req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(`{"text":"Alice"}`))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for host, want := range map[string]int{"api.example.org": 200, "API.example.org:8080": 200, "a.internal.example": 200,
		"internal.example": 400, "evil.example": 400, "[::1]:8080": 200} {
		if got := send("POST", "/pii/extract", host, "").StatusCode; got != want {
			t.Errorf("Host %s: %d, want %d", host, got, want)
		}
	}
	r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`, "Host", "evil.example")
	if e := errorOf(t, r); r.status != 400 || e["code"] != "bad_request" || e["message"] != "Invalid host header" {
		t.Fatalf("%d %v", r.status, e)
	}
	if got := send("GET", "/readyz", "10.0.0.7:8080", "").StatusCode; got != 200 {
		t.Fatalf("a probe by address: %d", got)
	}
	if resp := send("OPTIONS", "/pii/extract", "api.example.org", "https://app.example.org"); resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.org" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := send("POST", "/pii/extract", "api.example.org", "https://evil.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("an unlisted origin got CORS headers")
	}
}

// TestValidTrustedHostIsWhatHostCheckCanMatch: a pattern with a port, a scheme or a path, an
// unbracketed IPv6 address, a bare or inner wildcard is refused, since hostCheck compares the
// Host header without its port and would answer every request 400 (or trust any host).
func TestValidTrustedHostIsWhatHostCheckCanMatch(t *testing.T) {
	for pattern, want := range map[string]bool{
		"api.example.org": true, "API.example.org": true, "*.internal.example": true, "10.0.0.7": true, "[::1]": true,
		"sluice_svc": true, "api.example.org:8443": false, "https://api.example.org": false, "api.example.org/": false,
		"[::1]:8080": false, "::1": false, "*": false, "": false, "*.": false, "a.*.example": false, "*.*.example": false,
		"user@api.example.org": false, "[10.0.0.7]": false,
	} {
		if got := ValidTrustedHost(pattern); got != want {
			t.Errorf("ValidTrustedHost(%q) = %v, want %v", pattern, got, want)
		}
	}
}

// TestOriginFormIsTheRequestLinesTarget: the signed target is the request line's, as the
// client wrote it (no decoding), an absolute form losing its scheme and host.
func TestOriginFormIsTheRequestLinesTarget(t *testing.T) {
	for raw, want := range map[string]string{
		"/pii/%65xtract?b=2&a=1":             "/pii/%65xtract?b=2&a=1",
		"http://sluice.internal/jobs?mode=x": "/jobs?mode=x",
		"https://sluice.internal":            "/",
		"*":                                  "*",
	} {
		if got := originForm([]byte(raw)); got != want {
			t.Errorf("%q: %q, want %q", raw, got, want)
		}
	}
}
