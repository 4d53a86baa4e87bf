package handlers

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// TestAnUnparsedRequestIsAnsweredInTheEnvelope: a request fasthttp cannot parse (a header past
// the read buffer: 431; a header line without a colon: 400) is answered in the error envelope
// and logged with the method OTHER: its path read as "/", TGI's route, so every such answer
// was TGI's flat error whatever the client called, and its access line said GET.
func TestAnUnparsedRequestIsAnsweredInTheEnvelope(t *testing.T) {
	f, _ := everyRouteFixture(t)
	for raw, want := range map[string]int{
		"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Big: " + strings.Repeat("a", 8000) + "\r\nContent-Length: 2\r\n\r\n{}": 431,
		"POST /analyze HTTP/1.1\r\nHost: x\r\nno colon here\r\nContent-Length: 2\r\n\r\n{}":                                                              400,
	} {
		resp, body := rawExchange(t, f, raw)
		if _, envelope := body["error"].(map[string]any); !envelope || resp.StatusCode != want {
			t.Errorf("%.40q: %d %v, want %d in the envelope", raw, resp.StatusCode, body, want)
		}
	}
	if logs := f.logs.String(); strings.Contains(logs, `"method":"GET","route":"unrouted"`) {
		t.Errorf("a POST that did not parse is logged as a GET:\n%s", logs)
	}
}

// TestAmbiguousFramingIsRefusedAndClosed: a request with both Transfer-Encoding and
// Content-Length (the CL.TE smuggling shape), an HTTP/1.0 request with Transfer-Encoding, or a
// coding other than chunked alone is refused and its connection closed (RFC 9112 §6.1): they
// were served on a connection kept open, and the bytes after the chunked body were served as
// a request of their own, which a proxy in front had framed as the first one's body.
func TestAmbiguousFramingIsRefusedAndClosed(t *testing.T) {
	f := newFixture(t)
	for first, want := range map[string]int{
		"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"text\":\"a\"}\r\n0\r\n\r\n":          400,
		"POST /analyze HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"text\":\"a\"}\r\n0\r\n\r\n":     400,
		"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\nc\r\n{\"text\":\"a\"}\r\n0\r\n\r\n":                         501,
		"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"text\":\"a\"}\r\n0\r\n\r\n": 501,
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(hangGuard))
		if _, err := io.WriteString(conn, first+"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		if resp.StatusCode != want || !resp.Close {
			t.Errorf("%.70q: %d, close %v; want %d and the connection closed", first, resp.StatusCode, resp.Close, want)
		}
		if second, err := http.ReadResponse(br, nil); err == nil {
			t.Errorf("%.70q: the bytes after its body were served as another request: %d", first, second.StatusCode)
		}
		conn.Close()
	}
	// A chunked body alone is framed by its coding, and served.
	raw := "POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"text\":\"a\"}\r\n0\r\n\r\n"
	if resp, _ := rawExchange(t, f, raw); resp.StatusCode != 200 {
		t.Errorf("a chunked body: %d", resp.StatusCode)
	}
}

// TestAChunkedBodyTooLargeIsAnsweredInTheEnvelope: a chunked body past the limit is read to
// the limit, and fasthttp resets the request, as for headers that do not parse: answered in the
// envelope and logged as OTHER, not in "/"'s TGI format as a GET (a second reader's find); a
// body refused for its Content-Length keeps its route's answer.
func TestAChunkedBodyTooLargeIsAnsweredInTheEnvelope(t *testing.T) {
	f, _ := everyRouteFixture(t) // MaxBodyBytes 64 KiB
	chunk := strings.Repeat("a", 70<<10)
	raw := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(chunk), chunk)
	resp, body := rawExchange(t, f, raw)
	if _, flat := body["error"].(string); flat || resp.StatusCode != 413 {
		t.Errorf("a chunked body too large on /v1/chat/completions: %d %v, want 413 not in TGI's flat format", resp.StatusCode, body)
	}
	for _, l := range accessLines(t, f, routeUnrouted) {
		if l["method"] == "GET" {
			t.Errorf("a POST whose chunked body was too large is logged as GET: %v", l)
		}
	}
	// By its Content-Length, the request line is kept: the route's own answer (TGI's on /generate).
	raw = "POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n"
	resp, body = rawExchange(t, f, raw)
	if _, flat := body["error"].(string); !flat || resp.StatusCode != 413 {
		t.Errorf("a Content-Length too large on /generate: %d %v, want TGI's 413", resp.StatusCode, body)
	}
}
