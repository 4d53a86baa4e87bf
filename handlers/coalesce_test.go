package handlers

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/coalesce"
)

// TestIdenticalRequestsShareOneModelCall: with coalescing on, identical /pii/extract requests
// in flight at once are answered from one model call, each with the full answer and its own
// request id; a request whose client leaves does not cancel the others.
func TestIdenticalRequestsShareOneModelCall(t *testing.T) {
	var group coalesce.Group[extraction]
	f := newFixture(t, func(o *fixtureOptions) { o.Coalesce, o.extractions = true, &group })
	block := make(chan struct{}) // closed by hand: the fake holds its lock while it blocks
	f.pii.set(func(e *fakeExtractor) { e.blocking = block })
	body := `{"text":"Call Alice."}`
	leaving, leave := context.WithCancel(t.Context())
	left := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(leaving, http.MethodPost, f.srv.URL+"/pii/extract", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		_, err := http.DefaultClient.Do(req)
		left <- err
	}()
	answers := make(chan response, 3)
	for range 3 {
		go func() { answers <- f.do(t, "POST", "/pii/extract", body) }()
	}
	for group.Waiters() != 4 { // every request is in, waiting on the one call
		runtime.Gosched()
	}
	leave()
	<-left
	close(block)
	ids := map[any]bool{}
	for range 3 {
		r := <-answers
		ents, _ := r.body["entities"].([]any)
		if r.status != 200 || len(ents) != 1 {
			t.Fatalf("a waiter: %d %s", r.status, r.raw)
		}
		ids[r.header.Get("X-Request-Id")] = true
	}
	if n := f.pii.callCount(); n != 1 || len(ids) != 3 {
		t.Fatalf("%d model calls for 4 identical requests, %d request ids", n, len(ids))
	}
}

// TestCoalescingKeepsThePriorityClasses: the same body sent as bulk and as interactive at once
// is two model calls, each in its own class: an interactive request never waits in a bulk
// call's queue, nor a bulk one rides an interactive call.
func TestCoalescingKeepsThePriorityClasses(t *testing.T) {
	var group coalesce.Group[extraction]
	f := newFixture(t, func(o *fixtureOptions) { o.Coalesce, o.extractions = true, &group })
	block := make(chan struct{})
	f.pii.set(func(e *fakeExtractor) { e.blocking = block })
	body := `{"text":"Call Alice."}`
	answers := make(chan response, 2)
	for _, class := range []string{"bulk", "interactive"} {
		go func() { answers <- f.do(t, "POST", "/pii/extract", body, "x-openmed-priority", class) }()
	}
	for group.Waiters() != 2 {
		runtime.Gosched()
	}
	close(block)
	for range 2 {
		if r := <-answers; r.status != 200 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	}
	if n := f.pii.callCount(); n != 2 {
		t.Fatalf("%d model calls for a bulk and an interactive request", n)
	}
}
