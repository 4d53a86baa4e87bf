package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// Names for attempts that got no HTTP response.
const (
	errClientTimeout = "client_timeout" // -timeout passed before the response was read
	errTransport     = "transport"      // reset, malformed response
	errConnRefused   = "connection_refused"
	errCanceled      = "canceled" // the run ended (drain deadline or interrupt)
)

// endpointPaths maps the names used in -mix to the server's routes.
var endpointPaths = map[string]string{
	"analyze": "/analyze",
	"pii":     "/pii/extract",
}

// endpointNames lists the -mix names in a fixed order.
var endpointNames = []string{"analyze", "pii"}

// priorityNames are the values of the x-openmed-priority header.
var priorityNames = []string{"interactive", "bulk"}

const priorityHeader = "x-openmed-priority"

// retryTokenHeader carries a retry reservation: the server sets it on a refusal, the harness
// echoes it on the retry, as a well-behaved client of Sluice would.
const retryTokenHeader = "X-Sluice-Retry-Token"

// safeRetryToken accepts what the server's tokens look like (short, lower-case hex), so a
// misbehaving server cannot make the harness echo arbitrary bytes.
func safeRetryToken(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// maxErrorBody bounds what is read of a response: error envelopes are small, and a 200 body is
// discarded after reading so that the connection can be reused.
const maxErrorBody = 64 << 10

var errAttemptTimeout = errors.New("attempt timeout")

// Target sends single attempts to a Sluice server.
type Target struct {
	base    string
	client  *http.Client
	clk     clock.Clock
	timeout time.Duration
	key     string
}

// WithKey makes every attempt carry key as X-API-Key.
func (t *Target) WithKey(key string) *Target {
	t.key = key
	return t
}

// NewTarget returns a Target for the server at base (scheme, host and port, no path). Each
// attempt is bounded by timeout, measured on clk.
func NewTarget(base string, client *http.Client, clk clock.Clock, timeout time.Duration) *Target {
	return &Target{base: strings.TrimRight(base, "/"), client: client, clk: clk, timeout: timeout}
}

// Do sends one attempt and reads the whole response. token, when not empty, is the retry
// token of the refusal this attempt retries.
func (t *Target) Do(ctx context.Context, endpoint, priority, token string, body []byte) Attempt {
	// Start is read before the deadline is armed, so the timeout is never longer than it says.
	a := Attempt{Start: t.clk.Now()}
	actx, cancel := withClockTimeout(ctx, t.clk, t.timeout)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(actx, http.MethodPost, t.base+endpointPaths[endpoint], bytes.NewReader(body))
	if err != nil {
		a.End, a.Err = t.clk.Now(), errTransport
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(priorityHeader, priority)
	if t.key != "" {
		req.Header.Set("X-API-Key", t.key)
	}
	if token != "" {
		req.Header.Set(retryTokenHeader, token)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		a.End, a.Err = t.clk.Now(), noResponseKind(ctx, actx, err)
		return a
	}
	defer resp.Body.Close()
	var raw []byte
	if resp.StatusCode == http.StatusOK {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	}
	a.End = t.clk.Now()
	if err != nil {
		// A body cut short by our own deadline is a timeout, not an answer.
		a.Err = noResponseKind(ctx, actx, err)
		return a
	}
	a.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		a.Code, a.Reason = parseErrorEnvelope(raw)
	}
	if v := resp.Header.Get("Retry-After"); v != "" {
		a.RetryAfter, a.HasRetryAfter = parseRetryAfter(v, a.End)
	}
	if v := resp.Header.Get(retryTokenHeader); safeRetryToken(v) {
		a.RetryToken = v
	}
	return a
}

// noResponseKind tells apart the run ending, the attempt's own timeout and anything else.
func noResponseKind(runCtx, attemptCtx context.Context, err error) string {
	switch {
	case runCtx.Err() != nil:
		return errCanceled
	case errors.Is(context.Cause(attemptCtx), errAttemptTimeout):
		return errClientTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return errConnRefused
	default:
		return errTransport
	}
}

// withClockTimeout is context.WithTimeout on an injected clock, so that the attempt deadline
// follows the same time source as everything else the harness measures.
func withClockTimeout(ctx context.Context, clk clock.Clock, d time.Duration) (context.Context, context.CancelCauseFunc) {
	actx, cancel := context.WithCancelCause(ctx)
	if d <= 0 {
		return actx, cancel
	}
	timer := clk.NewTimer(d)
	go func() {
		select {
		case <-timer.C():
			cancel(errAttemptTimeout)
		case <-actx.Done():
			timer.Stop()
		}
	}()
	return actx, cancel
}

// parseErrorEnvelope reads error.code and error.details.reason from a Sluice error body. Both
// pass through safeToken, so a misbehaving server cannot put arbitrary text into the report.
func parseErrorEnvelope(raw []byte) (code, reason string) {
	var env struct {
		Error struct {
			Code    string          `json:"code"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return "", ""
	}
	var details struct {
		Reason string `json:"reason"`
	}
	// details is a list for validation errors; only an object carries a reason.
	_ = json.Unmarshal(env.Error.Details, &details)
	return safeToken(env.Error.Code), safeToken(details.Reason)
}

// safeToken keeps identifiers made of [a-z0-9_.-] up to 48 bytes and replaces anything else
// with "other".
func safeToken(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > 48 {
		return "other"
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
		if !ok {
			return "other"
		}
	}
	return s
}

// parseRetryAfter reads delta-seconds, or an HTTP date taken relative to now.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
