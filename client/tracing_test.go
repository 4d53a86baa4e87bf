package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/tracing"
)

// TestTheCallersTraceGoesOn: a call made under a span carries its trace in traceparent.
func TestTheCallersTraceGoesOn(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"entities":[]}`))
	}))
	defer srv.Close()
	on := true
	tr, err := tracing.New(tracing.Config{Enabled: &on, Timeout: 1e9, BatchDelay: 1e9}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	ctx, span := tr.Start(context.Background(), "caller")
	defer span.End()
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{})
	if _, err := c.ExtractPII(ctx, EntityRequest{Text: "a note"}); err != nil {
		t.Fatal(err)
	}
	tp := <-got
	if want := span.SpanContext().TraceID().String(); !strings.Contains(tp, want) {
		t.Fatalf("traceparent %q, want the caller's trace %s", tp, want)
	}
}
