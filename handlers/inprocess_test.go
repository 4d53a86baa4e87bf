package handlers

import (
	"context"
	"strings"
	"testing"
)

// An in-process call is answered as the same HTTP request; its Host is judged as the edge
// judges one; and its caller's context ends its work as a departed client's would.
func TestInProcessCallsAreHTTPRequests(t *testing.T) {
	f := newFixture(t)
	calls := NewInProcess(f.app)
	r := calls.Do(context.Background(), Call{Method: "POST", Path: "/pii/extract", Host: "localhost:50051",
		Header: map[string]string{"X-Request-ID": "0123456789abcdef0123456789abcdef"}, Body: []byte(`{"text":"Alice called"}`)})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"label":"first_name"`) || r.Header["x-request-id"] != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("%d %s %v", r.Status, r.Body, r.Header)
	}
	if r := calls.Do(context.Background(), Call{Method: "POST", Path: "/pii/extract", Host: "evil.example/.example.org",
		Body: []byte(`{"text":"Alice"}`)}); r.Status != 400 {
		t.Fatalf("a path as the authority: %d %s", r.Status, r.Body)
	}

	// The body limit holds for a call made in the process, which no listener reads.
	big := `{"text":"` + strings.Repeat("a", 4096) + `"}` // the fixture's MaxBodyBytes is 4096
	if r := calls.Do(context.Background(), Call{Method: "POST", Path: "/pii/extract", Host: "localhost", Body: []byte(big)}); r.Status != 413 ||
		!strings.Contains(string(r.Body), CodeTooLarge) {
		t.Fatalf("a body past the limit: %d %.200s", r.Status, r.Body)
	}

	block := make(chan struct{})
	f.pii.set(func(x *fakeExtractor) { x.blocking = block })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Reply, 1)
	go func() {
		done <- calls.Do(ctx, Call{Method: "POST", Path: "/pii/extract", Host: "localhost", Body: []byte(`{"text":"Alice"}`)})
	}()
	// Before the model is called or while it runs, the caller's leaving is the answer's end: a
	// context that did not reach the work would wait for the model, then the route's timeout.
	cancel()
	if r := <-done; r.Status != statusClientClosed {
		t.Fatalf("after the caller left: %d %s", r.Status, r.Body)
	}
}
