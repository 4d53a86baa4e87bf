package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

var epoch = time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)

// script answers each attempt with the next of its handlers and counts the attempts.
type script struct {
	hits    atomic.Int32
	mu      sync.Mutex
	tokens  []string
	answers []func(w http.ResponseWriter)
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(s.hits.Add(1)) - 1
	s.mu.Lock()
	s.tokens = append(s.tokens, r.Header.Get(retryTokenHeader))
	s.mu.Unlock()
	s.answers[min(n, len(s.answers)-1)](w)
}

func refuse(status int, retryAfter, token string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		if token != "" {
			w.Header().Set(retryTokenHeader, token)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":"backpressure","message":"busy"}}`)
	}
}

func ok(w http.ResponseWriter) {
	fmt.Fprint(w, `{"entities":[{"text":"x","label":"date","start":0,"end":1,"confidence":0.9}],"model_name":"pii"}`)
}

func newTestClient(t *testing.T, url string, clk clock.Clock, cfg Config) *Client {
	t.Helper()
	cfg.BaseURL, cfg.Clock = url, clk
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0.5 }
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// callAsync runs ExtractPII in a goroutine; the test drives the fake clock meanwhile.
func callAsync(c *Client, ctx context.Context) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.ExtractPII(ctx, EntityRequest{Text: "a note"})
		done <- err
	}()
	return done
}

// waitTimer blocks until the client armed a timer (it is waiting), or fails if the call ended.
func waitTimer(t *testing.T, armed <-chan struct{}, done chan error) {
	t.Helper()
	select {
	case <-armed:
	case err := <-done:
		t.Fatalf("the call ended instead of waiting: %v", err)
	}
}

func TestRetryAfterIsWaitedAndTheTokenEchoed(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter){refuse(503, "2", "00ff"), ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	clk := clock.NewFake(epoch)
	c := newTestClient(t, srv.URL, clk, Config{})
	armed := clk.TimerCreated()
	done := callAsync(c, context.Background())
	waitTimer(t, armed, done)
	clk.Advance(1999 * time.Millisecond)
	if s.hits.Load() != 1 {
		t.Fatalf("retried before the Retry-After: %d attempts", s.hits.Load())
	}
	clk.Advance(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hits.Load() != 2 || s.tokens[1] != "00ff" {
		t.Errorf("attempts %d, tokens %q; want 2, the refusal's token on the retry", s.hits.Load(), s.tokens)
	}
}

// Without a Retry-After: full jitter under an exponential ceiling (100 ms, then 200 ms; the
// draw is 0.5), and a 429 is retried like a 503.
func TestBackoffWithFullJitter(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter){refuse(429, "", ""), refuse(429, "", ""), ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	clk := clock.NewFake(epoch)
	c := newTestClient(t, srv.URL, clk, Config{})
	armed := clk.TimerCreated()
	done := callAsync(c, context.Background())
	for i, wait := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond} {
		waitTimer(t, armed, done)
		armed = clk.TimerCreated()
		clk.Advance(wait - time.Millisecond)
		if got := s.hits.Load(); got != int32(i+1) {
			t.Fatalf("retry %d came before %v", i+1, wait)
		}
		clk.Advance(time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b := (Backoff{Initial: time.Second, Multiplier: 3, Max: 5 * time.Second}); b.ceiling(0) != time.Second ||
		b.ceiling(1) != 3*time.Second || b.ceiling(2) != 5*time.Second || b.ceiling(500) != 5*time.Second {
		t.Errorf("ceilings %v %v %v", b.ceiling(0), b.ceiling(1), b.ceiling(2))
	}
}

// What may have run is never retried: a 500, any other 4xx, a timeout.
func TestNotRetried(t *testing.T) {
	for _, status := range []int{500, 502, 400, 422} {
		s := &script{answers: []func(http.ResponseWriter){refuse(status, "1", ""), ok}}
		srv := httptest.NewServer(s)
		c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{})
		_, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"})
		var serr *StatusError
		if !errors.As(err, &serr) || serr.Status != status || s.hits.Load() != 1 {
			t.Errorf("%d: %v after %d attempts; want the StatusError after one", status, err, s.hits.Load())
		}
		srv.Close()
	}
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	if _, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"}); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("a timeout: %v", err)
	}
}

// refusedTransport fails every dial as a refused connection would, and counts them.
type refusedTransport struct{ dials atomic.Int32 }

func (r *refusedTransport) RoundTrip(*http.Request) (*http.Response, error) {
	r.dials.Add(1)
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func TestConnectionRefusedIsRetriedWithinTheAttempts(t *testing.T) {
	rt := &refusedTransport{}
	c := newTestClient(t, "http://127.0.0.1:1", clock.NewFake(epoch), Config{HTTPClient: &http.Client{Transport: rt},
		MaxAttempts: 3, Rand: func() float64 { return 0 }})
	if _, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"}); !errors.Is(err, syscall.ECONNREFUSED) || rt.dials.Load() != 3 {
		t.Errorf("%v after %d dials; want connection refused after 3", err, rt.dials.Load())
	}
	// And a real one: a port nobody listens on.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	c = newTestClient(t, "http://"+addr, clock.NewFake(epoch), Config{Rand: func() float64 { return 0 }})
	if _, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a closed port: %v", err)
	}
}

// A request larger than the caller's whole budget is refused with a hint, and never retried.
func TestTooLargeIsNotRetried(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(429)
		fmt.Fprint(w, `{"error":{"code":"rate_limited","message":"too large","details":{"reason":"too_large","retry_after_seconds":3}}}`)
	}, ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{})
	_, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"})
	var serr *StatusError
	if !errors.As(err, &serr) || serr.Reason != "too_large" || s.hits.Load() != 1 {
		t.Errorf("%+v after %d attempts", err, s.hits.Load())
	}
}

func TestRetryAfterPastTheLimitIsReturned(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter){refuse(429, "120", ""), ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{})
	_, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"})
	var serr *StatusError
	if !errors.As(err, &serr) || serr.RetryAfter != 2*time.Minute || serr.Code != "backpressure" || s.hits.Load() != 1 {
		t.Errorf("%+v after %d attempts", err, s.hits.Load())
	}
}

// Retry-After is seconds or an HTTP date (RFC 9110 §10.2.3, its three forms), read on the
// client's clock; seconds too many for any integer are a long wait, not none; a date past, "0"
// or a value that is neither is none.
func TestRetryAfterIsSecondsOrADate(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"2": 2 * time.Second, " 120 ": 2 * time.Minute, "86401": 24 * time.Hour,
		"99999999999999999999": 24 * time.Hour, "9223372036854775808": 24 * time.Hour,
		"Fri, 04 Dec 2026 00:00:02 GMT": 2 * time.Second, "Friday, 04-Dec-26 00:00:02 GMT": 2 * time.Second,
		"Fri Dec  4 00:00:02 2026": 2 * time.Second, "Wed, 21 Oct 2099 07:28:00 GMT": 24 * time.Hour,
		"Thu, 03 Dec 2026 23:59:59 GMT": 0, "0": 0, "": 0, "-3": 0, "+5": 0, "1.5": 0, "2 s": 0, "soon": 0,
	} {
		if got := retryAfter(v, epoch); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
	// Through the client: a date is waited out on its clock, a huge number is given up on.
	s := &script{answers: []func(http.ResponseWriter){refuse(503, "Fri, 04 Dec 2026 00:00:02 GMT", ""), refuse(503, "99999999999999999999", ""), ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	clk := clock.NewFake(epoch)
	var seen []Attempt
	c := newTestClient(t, srv.URL, clk, Config{OnAttempt: func(a Attempt) { seen = append(seen, a) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	armed := clk.TimerCreated()
	done := callAsync(c, ctx)
	waitTimer(t, armed, done)
	if seen[0].RetryAfter != 2*time.Second || seen[0].Wait != 2*time.Second {
		t.Fatalf("a date 2 s ahead: %+v", seen[0])
	}
	armed = clk.TimerCreated()
	clk.Advance(2 * time.Second)
	var err error
	select {
	case err = <-done:
	case <-armed:
		t.Fatalf("a Retry-After of 99999999999999999999 s is waited as none: %+v", seen[1])
	}
	var serr *StatusError
	if !errors.As(err, &serr) || serr.RetryAfter != 24*time.Hour || s.hits.Load() != 2 || seen[1].GaveUp != "retry_after" {
		t.Errorf("%+v after %d attempts, the last %+v; want the refusal with a day's Retry-After after 2", err, s.hits.Load(), seen[1])
	}
}

func TestWaitEndsWithTheContext(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter){refuse(503, "10", "")}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	clk := clock.NewFake(epoch)
	c := newTestClient(t, srv.URL, clk, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	armed := clk.TimerCreated()
	done := callAsync(c, ctx)
	waitTimer(t, armed, done)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: %v", err)
	}
}

// The budget: retries at most Ratio of the requests in the window, plus the floor; counts
// age out of the window; asking allocates nothing.
func TestRetryBudget(t *testing.T) {
	b := newRetryBudget(Budget{Ratio: 0.1, Window: 10 * time.Second})
	now := epoch
	for range 100 {
		b.request(now)
	}
	allowed := 0
	for range 20 {
		if b.allow(now) {
			allowed++
		}
	}
	if allowed != 10 {
		t.Errorf("%d retries allowed for 100 requests at 10%%", allowed)
	}
	if b.allow(now.Add(10 * time.Second)) {
		t.Error("a retry allowed once the requests left the window")
	}
	floor := newRetryBudget(Budget{Ratio: 0, Window: 2 * time.Second, MinPerSecond: 1})
	if got := []bool{floor.allow(now), floor.allow(now), floor.allow(now)}; !got[0] || !got[1] || got[2] {
		t.Errorf("the floor of 1/s over 2 s allowed %v; want exactly 2", got)
	}
	if n := testing.AllocsPerRun(100, func() { b.request(now); b.allow(now) }); n != 0 {
		t.Errorf("%v allocations a request and a retry", n)
	}
	// A client with no budget left returns the refusal instead of retrying.
	s := &script{answers: []func(http.ResponseWriter){refuse(503, "1", ""), ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{Budget: Budget{Ratio: 0.0001, Window: time.Second}})
	if _, err := c.ExtractPII(context.Background(), EntityRequest{Text: "x"}); err == nil || s.hits.Load() != 1 {
		t.Errorf("%v after %d attempts; want the refusal, not a retry", err, s.hits.Load())
	}
}

// A stream is never retried once it began: a cut stream is the caller's error.
func TestStreamIsNotRetriedAfterItsFirstByte(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"Hel\",\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		// then the connection ends without [DONE]
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{})
	st, err := c.CompleteStream(context.Background(), CompletionRequest{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text string
	for st.Next() {
		text += st.Text()
	}
	if text != "Hel" || !errors.Is(st.Err(), io.ErrUnexpectedEOF) || hits.Load() != 1 {
		t.Errorf("text %q, err %v, attempts %d", text, st.Err(), hits.Load())
	}
}

func TestConfigReportsEveryProblem(t *testing.T) {
	_, err := New(Config{BaseURL: "ftp://x", MaxAttempts: -1, Backoff: Backoff{Initial: -1, Multiplier: 0.5},
		Budget: Budget{Ratio: -1, Window: 1500 * time.Millisecond}})
	for _, want := range []string{"BaseURL", "MaxAttempts", "Backoff.Initial", "Backoff.Multiplier", "Budget.Ratio", "Budget.Window"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not name %s", err, want)
		}
	}
}

// Every attempt is told to OnAttempt: its status, the wait before the next, and why the last
// was not retried; Floor 1 waits the whole ceiling.
func TestAttemptsAreObserved(t *testing.T) {
	s := &script{answers: []func(http.ResponseWriter){refuse(503, "", ""), refuse(503, "", "")}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	var seen []Attempt
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{MaxAttempts: 2, Rand: func() float64 { return 0 },
		Backoff:   Backoff{Initial: time.Millisecond, Multiplier: 2, Max: time.Second, Floor: 1},
		OnAttempt: func(a Attempt) { seen = append(seen, a) }})
	armed := c.clk.(*clock.Fake).TimerCreated()
	done := callAsync(c, context.Background())
	waitTimer(t, armed, done)
	c.clk.(*clock.Fake).Advance(time.Millisecond)
	<-done
	if len(seen) != 2 || seen[0].Status != 503 || seen[0].Wait != time.Millisecond || seen[0].GaveUp != "" ||
		seen[1].N != 1 || seen[1].GaveUp != "attempts" {
		t.Errorf("attempts seen: %+v", seen)
	}
}

// The rules on their own, as a harness uses them.
func TestRetrierDecides(t *testing.T) {
	r, err := NewRetrier(Config{MaxAttempts: 3, Rand: func() float64 { return 0.5 }, Clock: clock.NewFake(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	r.Begin()
	for _, tc := range []struct {
		n      int
		o      Outcome
		wait   time.Duration
		giveUp string
	}{
		{0, Outcome{Status: 503, RetryAfter: 2 * time.Second}, 2 * time.Second, ""},
		{0, Outcome{Status: 429}, 50 * time.Millisecond, ""},
		{1, Outcome{ConnRefused: true}, 100 * time.Millisecond, ""},
		{0, Outcome{}, 0, "not_retryable"}, // a timeout or a reset: it may have run
		{0, Outcome{Status: 500}, 0, "not_retryable"},
		{0, Outcome{Status: 429, Reason: "too_large", RetryAfter: time.Second}, 0, "not_retryable"},
		{2, Outcome{Status: 503}, 0, "attempts"},
		{0, Outcome{Status: 503, RetryAfter: time.Hour}, 0, "retry_after"},
		{0, Outcome{Status: 503, Code: "audit_unavailable", RetryAfter: time.Second}, 0, "not_retryable"}, // its work was done
		{0, Outcome{Status: 503, RetryAfter: 2 * time.Second, Deadline: epoch.Add(time.Second)}, 0, "deadline"},
	} {
		if wait, giveUp := r.Next(tc.n, tc.o); wait != tc.wait || giveUp != tc.giveUp {
			t.Errorf("Next(%d, %+v) = %v %q; want %v %q", tc.n, tc.o, wait, giveUp, tc.wait, tc.giveUp)
		}
	}
}

// TestARetryNotSentIsNotCounted: a retry given up for the request's deadline leaves the retry
// budget as it was, so a later request without a deadline still has its retry.
func TestARetryNotSentIsNotCounted(t *testing.T) {
	r, err := NewRetrier(Config{MaxAttempts: 3, Clock: clock.NewFake(epoch), Budget: Budget{Window: 10 * time.Second, MinPerSecond: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	r.Begin()
	if _, giveUp := r.Next(0, Outcome{Status: 503, RetryAfter: time.Second, Deadline: epoch.Add(100 * time.Millisecond)}); giveUp != "deadline" {
		t.Fatalf("gave up for %q; want the deadline", giveUp)
	}
	r.Begin()
	if _, giveUp := r.Next(0, Outcome{Status: 503, RetryAfter: time.Second}); giveUp != "" {
		t.Fatalf("the budget's one retry: gave up for %q", giveUp)
	}
}

// The stream parser: keep-alive comments and usage-only events are skipped, [DONE] ends it
// cleanly; an error event is the stream's error. The retry re-sends the whole body with the key.
func TestStreamEventsAndRetriedBody(t *testing.T) {
	var bodies, keys []string
	var mu sync.Mutex
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies, keys = append(bodies, string(b)), append(keys, r.Header.Get("X-API-Key"))
		mu.Unlock()
		if n.Add(1) == 1 {
			refuse(503, "", "")(w)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.Contains(string(b), "fail") {
			fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"error\":{\"message\":\"stalled\"}}\n\n")
			return
		}
		fmt.Fprint(w, ": keep-alive\n\ndata: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n"+
			"data: {\"choices\":[{\"text\":\"b\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{APIKey: "k1", Rand: func() float64 { return 0 }})
	st, err := c.CompleteStream(context.Background(), CompletionRequest{Model: "m", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for st.Next() {
		text += st.Text()
	}
	st.Close()
	if text != "ab" || st.Err() != nil || st.FinishReason() != "stop" {
		t.Errorf("text %q, finish %q, err %v", text, st.FinishReason(), st.Err())
	}
	mu.Lock()
	if len(bodies) != 2 || bodies[0] != bodies[1] || !strings.Contains(bodies[1], `"stream":true`) || keys[0] != "k1" || keys[1] != "k1" {
		t.Errorf("bodies %q, keys %q: want the same body and key on the retry", bodies, keys)
	}
	mu.Unlock()
	st, err = c.CompleteStream(context.Background(), CompletionRequest{Model: "m", Prompt: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	for st.Next() {
	}
	st.Close()
	if st.Err() == nil || !strings.Contains(st.Err().Error(), "stalled") {
		t.Errorf("error event: %v", st.Err())
	}
}

// A redirect is not followed, with the default http.Client or a caller's that does not say
// how (the key, and on a 307 or 308 the text, would go where Location points); a caller's own
// CheckRedirect is its choice.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		ok(w)
	}))
	defer elsewhere.Close()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	given := &http.Client{Timeout: time.Minute}
	for name, hc := range map[string]*http.Client{"the default": nil, "a caller's": given} {
		hits.Store(0)
		c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{APIKey: "sk-secret", HTTPClient: hc})
		_, err := c.ExtractPII(context.Background(), EntityRequest{Text: "a note"})
		var serr *StatusError
		if !errors.As(err, &serr) || serr.Status != http.StatusTemporaryRedirect || hits.Load() != 1 {
			t.Errorf("%s http.Client: %v after %d attempts; want the 307 as a StatusError after one", name, err, hits.Load())
		}
	}
	if given.CheckRedirect != nil {
		t.Error("the caller's http.Client was changed")
	}
	follow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	c := newTestClient(t, srv.URL, clock.NewFake(epoch), Config{HTTPClient: follow})
	if _, err := c.ExtractPII(context.Background(), EntityRequest{Text: "a note"}); err != nil {
		t.Errorf("a caller's CheckRedirect that follows: %v", err)
	}
	if n := reached.Load(); n != 1 {
		t.Errorf("the redirect's target got %d requests; want only the one the caller's CheckRedirect allowed", n)
	}
}
