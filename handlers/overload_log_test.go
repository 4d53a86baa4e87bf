package handlers

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// accessLines are the access-log lines of route, decoded.
func accessLines(t *testing.T, f *fixture, route string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "request" && rec["route"] == route {
			out = append(out, rec)
		}
	}
	return out
}

// TestRefusalLinesAreSampledServedOnesAreNot: with two refusal lines a second, five refusals in
// one second write two lines; the first line of the next second reports the three held back,
// and the first served line the one held back after it; the metrics count all eight, and
// served requests' lines are always written.
func TestRefusalLinesAreSampledServedOnesAreNot(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	src := newFakeLoad(100)
	gate, err := admission.NewGate("analyze", admission.Config{HighWatermark: 10, LowWatermark: 5,
		Policy: admission.PolicyStatic, StaticRetryAfter: time.Second}, src, fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *fixtureOptions) {
		o.analyze.Gate, o.Clock, o.RefusalLogsPerSecond = gate, fake, 2
	})
	src.setWaiting(10)
	for range 5 {
		if r := f.do(t, "POST", "/analyze", `{"text":"x"}`); r.status != 503 {
			t.Fatalf("status %d, want a refusal", r.status)
		}
	}
	if n := len(accessLines(t, f, "/analyze")); n != 2 {
		t.Fatalf("%d refusal lines in one second, want 2", n)
	}
	fake.Advance(time.Second)
	f.do(t, "POST", "/analyze", `{"text":"x"}`)
	lines := accessLines(t, f, "/analyze")
	if len(lines) != 3 || lines[2]["refusals_not_logged"] != 3.0 {
		t.Fatalf("lines after the second changed: %v", lines)
	}
	for range 2 { // the second's allowance, then one held back
		f.do(t, "POST", "/analyze", `{"text":"x"}`)
	}
	src.setWaiting(0)
	for range 4 {
		if r := f.do(t, "POST", "/analyze", `{"text":"x"}`); r.status != 200 {
			t.Fatalf("status %d, want served", r.status)
		}
	}
	lines = accessLines(t, f, "/analyze")
	if len(lines) != 8 {
		t.Fatalf("%d lines after four served requests, want 8: served lines are never sampled", len(lines))
	}
	if lines[4]["outcome"] != "served" || lines[4]["refusals_not_logged"] != 1.0 || lines[5]["refusals_not_logged"] != nil {
		t.Fatalf("the first served line must carry the refusal held back, once: %v", lines[4:6])
	}
	if m := f.do(t, "GET", "/metrics", ""); !strings.Contains(m.raw,
		`sluice_http_requests_total{outcome="refused",route="/analyze",status="503"} 8`) {
		t.Fatalf("the metrics must count every refusal:\n%s", m.raw)
	}
}

// TestClientLeavingMidBodyIsAborted: a client that closes or resets its connection before its
// body is complete is counted as an aborted request, not as a failed one.
func TestClientLeavingMidBodyIsAborted(t *testing.T) {
	f := newFixture(t)
	addr := strings.TrimPrefix(f.srv.URL, "http://")
	for _, reset := range []bool{false, true} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
			"Content-Length: 1000\r\n\r\n{\"text\":\"" + canary)); err != nil {
			t.Fatal(err)
		}
		if reset {
			_ = conn.(*net.TCPConn).SetLinger(0) // close sends a reset
		}
		conn.Close()
	}
	want := []string{
		`sluice_http_requests_total{outcome="aborted",route="unrouted",status="499"} 2`,
		`sluice_http_requests_aborted_total{reason="client_closed",route="unrouted"} 1`,
		`sluice_http_requests_aborted_total{reason="client_reset",route="unrouted"} 1`,
	}
	var m response
	for i := 0; ; i++ { // each scrape is a request: wait on the server's state, with a hang guard
		if m = f.do(t, "GET", "/metrics", ""); containsAll(m.raw, want) {
			break
		}
		if i == 2000 {
			t.Fatalf("mid-body departures not counted as aborted:\n%s", m.raw)
		}
	}
	if strings.Contains(m.raw, `route="unrouted",status="400"`) || strings.Contains(f.logs.String(), canary) {
		t.Fatalf("departures counted as failures, or text leaked:\n%s", m.raw)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
