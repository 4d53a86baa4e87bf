package handlers

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hangGuard bounds a wait that a broken server would make endless (its read timeout is 30 s).
const hangGuard = 10 * time.Second

// rawExchange sends raw on a fresh connection and reads one response.
func rawExchange(t *testing.T, f *fixture, raw string) (*http.Response, map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A hang guard only: what is checked is the answer, which must come without more bytes.
	_ = conn.SetDeadline(time.Now().Add(hangGuard))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("%q: body is not JSON: %q", raw, data)
	}
	return resp, body
}

// TestEdgeRequestsGetTheEnvelope: an unknown method and an HTTP/2 preface get 501, and two
// disagreeing Content-Length headers get 400 at once, each in the JSON envelope with a request
// id and counted; identical repeated Content-Lengths are accepted.
func TestEdgeRequestsGetTheEnvelope(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		raw    string
		status int
	}{
		{"FOO /analyze HTTP/1.1\r\nHost: x\r\n\r\n", 501},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 501},
		{"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\nContent-Length: 50\r\n\r\n{\"text\":\"a\"}", 400},
		{"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\ncontent-length: 12\r\n\r\n{\"text\":\"a\"}", 200},
	} {
		resp, body := rawExchange(t, f, tc.raw)
		if resp.StatusCode != tc.status || resp.Header.Get("X-Request-ID") == "" {
			t.Fatalf("%q: %d %v", tc.raw, resp.StatusCode, body)
		}
		if tc.status != 200 {
			if e, ok := body["error"].(map[string]any); !ok || e["code"] != "bad_request" || e["request_id"] != resp.Header.Get("X-Request-ID") {
				t.Fatalf("%q: body %v", tc.raw, body)
			}
		}
	}
	m := f.do(t, "GET", "/metrics", "")
	for _, want := range []string{
		`sluice_http_requests_total{outcome="failed",route="unmatched",status="501"} 2`,
		`sluice_http_requests_total{outcome="failed",route="unrouted",status="400"} 1`,
	} {
		if !strings.Contains(m.raw, want) {
			t.Fatalf("missing %s in\n%s", want, m.raw)
		}
	}
	if !strings.Contains(f.logs.String(), `"method":"OTHER"`) {
		t.Fatalf("unknown method not logged as OTHER:\n%s", f.logs.String())
	}
}

// TestATargetHasOneReading: a request target fasthttp would route as one path while the Host
// check and the signature read another (an authority run into a query, "x//h/p?q=://h/q", a
// path that begins "//") is a 400 at the edge; a path and an absolute URL are served.
func TestATargetHasOneReading(t *testing.T) {
	f := newFixture(t)
	body := "Content-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"text\":\"a\"}"
	for target, status := range map[string]int{
		"/analyze":                        200,
		"http://x/analyze":                200,
		"http://x?y=/analyze":             400,
		"http://x#/analyze":               400,
		"x//x/analyze?q=://x/pii/extract": 400,
		"//x/analyze":                     400,
		"HTTP://x/analyze":                200,
	} {
		resp, got := rawExchange(t, f, "POST "+target+" HTTP/1.1\r\nHost: x\r\n"+body)
		if resp.StatusCode != status {
			t.Errorf("%q: %d %v", target, resp.StatusCode, got)
		}
	}
	for target, want := range map[string]bool{"/": true, "*": true, "/a//b": true, "//": false, "": false, "a:b": false, "1http://x/": false} {
		if plainTarget([]byte(target)) != want {
			t.Errorf("plainTarget(%q) is %v", target, !want)
		}
	}
}
