package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestSafeRetryToken(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0123abcdef": true, "ABC": false, "ab cd": false,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false, "ab\ncd": false} {
		if got := safeRetryToken(v); got != want {
			t.Errorf("safeRetryToken(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestParseErrorEnvelope(t *testing.T) {
	cases := []struct{ body, code, reason string }{
		{`{"error":{"code":"backpressure","message":"m","details":{"reason":"high_watermark","queue_depth":9},"request_id":"r"}}`, "backpressure", "high_watermark"},
		{`{"error":{"code":"validation_error","details":[{"field":"body.text"}]}}`, "validation_error", ""},
		{`{"error":{"code":"rate_limited","details":null}}`, "rate_limited", ""},
		{`{"error":{"code":"Backpressure!","details":{"reason":"a reason with spaces"}}}`, "other", "other"},
		{`<html>bad gateway</html>`, "", ""},
	}
	for _, c := range cases {
		code, reason := parseErrorEnvelope([]byte(c.body))
		if code != c.code || reason != c.reason {
			t.Errorf("parseErrorEnvelope(%s) = %q, %q; want %q, %q", c.body, code, reason, c.code, c.reason)
		}
	}
}

func TestTargetSendsRequestAndReadsRefusal(t *testing.T) {
	var gotPath, gotPriority, gotType, gotBody, gotToken, gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotPath, gotPriority, gotType, gotBody = r.URL.Path, r.Header.Get(priorityHeader), r.Header.Get("Content-Type"), string(b)
		gotToken, gotKey = r.Header.Get(retryTokenHeader), r.Header.Get("X-API-Key")
		w.Header().Set("Retry-After", "4")
		w.Header().Set(retryTokenHeader, "00ff")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"backpressure","message":"busy","details":{"reason":"max_wait"},"request_id":"x"}}`)
	}))
	defer srv.Close()
	tg := NewTarget(srv.URL+"/", srv.Client(), clock.Real(), time.Minute).WithKey("tenant-key")
	a := tg.Do(context.Background(), "pii", "bulk", "", []byte(`{"text":"t"}`))
	if gotPath != "/pii/extract" || gotPriority != "bulk" || gotType != "application/json" || gotBody != `{"text":"t"}` || gotToken != "" ||
		gotKey != "tenant-key" {
		t.Errorf("server saw %s priority %q type %q body %q token %q key %q", gotPath, gotPriority, gotType, gotBody, gotToken, gotKey)
	}
	if a.Status != 503 || a.Code != "backpressure" || a.Reason != "max_wait" || !a.HasRetryAfter || a.RetryAfter != 4*time.Second || a.Err != "" || a.RetryToken != "00ff" {
		t.Errorf("attempt %+v", a)
	}
	tg.Do(context.Background(), "pii", "bulk", a.RetryToken, []byte(`{"text":"t"}`))
	if gotToken != "00ff" {
		t.Errorf("retry sent token %q, want the refusal's", gotToken)
	}
	if !a.Refused() || a.Admitted() || a.Key() != "503/backpressure/max_wait" {
		t.Errorf("refused %v admitted %v key %q", a.Refused(), a.Admitted(), a.Key())
	}
	if a.End.Before(a.Start) {
		t.Error("end before start")
	}
}

func TestTargetTimesOutOnItsClock(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	clk := clock.NewFake(epoch)
	tg := NewTarget(srv.URL, srv.Client(), clk, 5*time.Second)
	armed := clk.TimerCreated()
	got := make(chan Attempt)
	go func() { got <- tg.Do(context.Background(), "analyze", "interactive", "", []byte(`{"text":"t"}`)) }()
	<-armed
	clk.Advance(5 * time.Second)
	a := <-got
	if a.Err != errClientTimeout || a.Status != 0 || a.Admitted() || a.Key() != errClientTimeout {
		t.Errorf("attempt %+v, want a client timeout", a)
	}
	if a.Latency() != 5*time.Second {
		t.Errorf("latency %v, want the 5s timeout", a.Latency())
	}
}

func TestTargetTellsRunEndFromTransportFailure(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	tg := NewTarget(url, http.DefaultClient, clock.Real(), time.Minute)
	if a := tg.Do(context.Background(), "analyze", "bulk", "", nil); a.Err != errConnRefused || outcomeOf(a) != outcomeError {
		t.Errorf("closed port: %+v, want a refused connection", a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if a := tg.Do(ctx, "analyze", "bulk", "", nil); a.Err != errCanceled || outcomeOf(a) != outcomeAbandoned {
		t.Errorf("canceled run: %+v, want canceled", a)
	}
}
