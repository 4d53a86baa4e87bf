package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// Config configures a Client. BaseURL is required; the zero value of every other field is a
// sensible default.
type Config struct {
	// BaseURL is the server, e.g. "http://sluice:8080".
	BaseURL string
	// APIKey, when set, is sent as X-API-Key.
	APIKey string
	// BearerToken, when set, is sent as "Authorization: Bearer" (an OpenAI-compatible server's
	// key).
	BearerToken string
	// HTTPClient sends the requests; nil means one with no overall timeout (bound each call
	// with its context). New takes a copy that follows no redirect unless its CheckRedirect
	// is set: a 3xx is a *StatusError, not retried.
	HTTPClient *http.Client
	// The retry rules (also a Retrier's, for callers that send their own requests).
	// MaxAttempts bounds the attempts of one call, the first included; 0 means 4. 1 never
	// retries.
	MaxAttempts int
	// Backoff is the wait when a refusal says none; zero means DefaultBackoff.
	Backoff Backoff
	// Budget bounds the client's retries; zero means DefaultBudget.
	Budget Budget
	// MaxRetryAfter is the longest Retry-After the client waits out; a refusal asking for more
	// is returned to the caller. 0 means 30 s. A Retry-After is read as a day at most.
	MaxRetryAfter time.Duration
	// OnAttempt, when set, is told of every attempt as it ends (a load harness's records).
	OnAttempt func(Attempt)
	// Clock and Rand are for tests: the time and the jitter's uniform draw in [0, 1).
	Clock clock.Clock
	Rand  func() float64
}

// Attempt is one try of a call, as Config.OnAttempt sees it.
type Attempt struct {
	// N counts the call's attempts from 0.
	N          int
	Start, End time.Time
	// Status is the answer's (0: none; Err says why).
	Status int
	Err    error
	// RetryAfter is the refusal's advice (0: none sent).
	RetryAfter time.Duration
	// Wait is how long the client waits before the next attempt; 0 when there is none.
	Wait time.Duration
	// GaveUp says why a refusal was not retried: "attempts", "budget", "retry_after" (a
	// Retry-After longer than MaxRetryAfter), "deadline" (the wait would outlast the context's
	// deadline), "not_retryable"; "" when it was, or when the attempt succeeded.
	GaveUp string
}

// Client calls Sluice's routes with retry discipline. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	key     string
	bearer  string
	http    *http.Client
	retry   *Retrier
	clk     clock.Clock
	observe func(Attempt)
}

// New validates cfg, reporting every problem at once.
func New(cfg Config) (*Client, error) {
	var check settings.Check
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		check.Addf("BaseURL", "must be an http or https URL with a host, got %q", cfg.BaseURL)
	}
	r := newRetrier(cfg, &check)
	if err := check.Err(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	hc := http.Client{}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	if hc.CheckRedirect == nil {
		// A redirect is not followed: it would send the key, and on a 307 or 308 the text,
		// where the configuration does not say.
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return &Client{base: base, key: cfg.APIKey, bearer: cfg.BearerToken, http: &hc, retry: r, clk: r.clk, observe: cfg.OnAttempt}, nil
}

// StatusError is an answer other than 2xx, in Sluice's (OpenMed's) error envelope.
type StatusError struct {
	Status  int
	Code    string
	Message string
	// Reason is the error's details.reason where it has one (e.g. too_large: a request larger
	// than the caller's whole token budget, which no wait lets in, so it is not retried).
	Reason string
	// RetryAfter is the server's advice, 0 when it sent none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	s := "sluice: " + strconv.Itoa(e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// The header a refusal's retry reservation comes in, and goes back in.
const retryTokenHeader = "X-Sluice-Retry-Token"

// do sends body to path (POST, JSON) until an answer is not retryable, and returns the
// response of the last attempt, a 2xx one, whose body the caller closes. An answer that is not
// 2xx becomes a *StatusError.
func (c *Client) do(ctx context.Context, path string, body any) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the request: %w", err)
	}
	c.retry.Begin()
	var token string
	for attempt := 0; ; attempt++ {
		a := Attempt{N: attempt, Start: c.clk.Now()}
		resp, err := c.send(ctx, path, data, token)
		a.End = c.clk.Now()
		var o Outcome
		switch {
		case err == nil && resp.StatusCode/100 == 2:
			a.Status = resp.StatusCode
			c.tell(a)
			return resp, nil
		case err == nil:
			serr := readError(resp, a.End)
			a.Status, a.Err, a.RetryAfter = serr.Status, serr, serr.RetryAfter
			token = resp.Header.Get(retryTokenHeader)
			o, err = Outcome{Status: serr.Status, Reason: serr.Reason, Code: serr.Code, RetryAfter: serr.RetryAfter}, serr
		default:
			a.Err = err
			o.ConnRefused = errors.Is(err, syscall.ECONNREFUSED) && ctx.Err() == nil
		}
		o.Deadline, _ = ctx.Deadline()
		wait, giveUp := c.retry.Next(attempt, o)
		if giveUp != "" {
			// For a timeout, a reset or a cancel, the request may have run; past the deadline,
			// the refusal is the answer.
			a.GaveUp = giveUp
			c.tell(a)
			return nil, err
		}
		a.Wait = wait
		c.tell(a)
		t := c.clk.NewTimer(wait)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(ctx.Err(), err)
		}
	}
}

func (c *Client) tell(a Attempt) {
	if c.observe != nil {
		c.observe(a)
	}
}

func (c *Client) send(ctx context.Context, path string, data []byte, token string) (*http.Response, error) {
	// Each attempt is a client span under the caller's, when the caller's records (the
	// tracer is its span's own, so the client needs no tracing setup); its traceparent is the
	// attempt's.
	ctx, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("github.com/sluice-serving/sluice/client").Start(ctx,
		"sluice.upstream", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", http.MethodPost), attribute.String("server.address", c.base.Host)))
	defer span.End()
	target := c.base.String()
	if path != "" {
		target = c.base.JoinPath(path).String()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	// The caller's trace goes on (traceparent), when it has one and a propagator is installed.
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if token != "" {
		req.Header.Set(retryTokenHeader, token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		span.SetStatus(codes.Error, "no answer")
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, "")
	}
	return resp, nil
}

// MaxAnswer bounds an answer: one decoded whole, and (upstream's) one streamed.
const MaxAnswer = 16 << 20

// drain reads what is left of a small body and closes it, so that the connection is reused.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	body.Close()
}

// readError reads and closes a non-2xx answer that came at now.
func readError(resp *http.Response, now time.Time) *StatusError {
	defer drain(resp.Body)
	e := &StatusError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), now)}
	var env struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&env) == nil {
		e.Code, e.Message = env.Error.Code, env.Error.Message
		var details struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(env.Error.Details, &details) == nil {
			e.Reason = details.Reason
		}
	}
	return e
}

// longestRetryAfter caps a Retry-After as read: a longer one, seconds too many for a Duration
// or for any integer included, is a day (past MaxRetryAfter's default), never none.
const longestRetryAfter = 24 * time.Hour

// retryAfter reads a Retry-After (RFC 9110 §10.2.3): seconds, as Sluice sends them, or an
// HTTP date, the wait from now on the client's clock; at most longestRetryAfter. 0 is none:
// "0", a date past, or a value that is neither (the backoff applies).
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v != "" && strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(longestRetryAfter/time.Second) {
			// Only digits, so an error is a number too large for a uint64: a long wait too.
			return longestRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), longestRetryAfter)
	}
	return 0
}

// PostStream is Post for an answer read as it comes (server-sent events): retries happen only
// before the 2xx response, never once its body is being read; the caller closes the body.
func (c *Client) PostStream(ctx context.Context, path string, req any) (*http.Response, error) {
	return c.do(ctx, path, req)
}

// Post sends req as JSON to path under the base URL ("" for the base URL itself) with the
// client's retry discipline, and decodes a 2xx answer into out: for servers other than
// Sluice's routes (an OpenAI-compatible API, a JSON endpoint).
func (c *Client) Post(ctx context.Context, path string, req, out any) error {
	return c.call(ctx, path, req, out)
}

// call posts req to path and decodes a 2xx answer into out.
func (c *Client) call(ctx context.Context, path string, req, out any) error {
	resp, err := c.do(ctx, path, req)
	if err != nil {
		return err
	}
	defer drain(resp.Body)
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("client: decoding the answer of %s: %w", path, err)
	}
	return nil
}
