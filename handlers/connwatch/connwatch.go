package connwatch

import (
	"context"
	"errors"
)

// ErrClientGone is the cause (context.Cause) of a context that Watch cancelled because the
// peer closed or reset its connection. Test for it with errors.Is; DisconnectReason tells
// which of the two happened.
var ErrClientGone = errors.New("client disconnected")

// Reason says how a client left. The values form a small fixed set, safe as a metric label.
type Reason uint8

const (
	// ReasonClosed: the peer sent FIN (close or shutdown of its write side).
	ReasonClosed Reason = iota + 1
	// ReasonReset: the peer reset the connection, or the socket reported an error or a
	// hang-up in both directions.
	ReasonReset
)

// String returns "closed", "reset" or "unknown".
func (r Reason) String() string {
	switch r {
	case ReasonClosed:
		return "closed"
	case ReasonReset:
		return "reset"
	}
	return "unknown"
}

// goneError is the cancellation cause; errors.Is matches it to ErrClientGone.
type goneError struct{ reason Reason }

func (e *goneError) Error() string        { return "client disconnected (" + e.reason.String() + ")" }
func (e *goneError) Is(target error) bool { return target == ErrClientGone }

// DisconnectReason reports whether ctx, or a context it derives from, was cancelled by a
// Watcher because the client left, and how.
func DisconnectReason(ctx context.Context) (Reason, bool) {
	var g *goneError
	if errors.As(context.Cause(ctx), &g) {
		return g.reason, true
	}
	return 0, false
}

// HalfClose chooses what a FIN from the peer (EPOLLRDHUP without a reset) means. A peer that
// calls shutdown(SHUT_WR) after sending its request still waits for the answer, but on the
// server side that looks exactly like a peer that called close(): only a write could tell
// them apart, and a handler cannot write a probe into an HTTP response. What can be told is
// when the FIN came. Under the two cancelling policies, a FIN that is already there when Watch
// begins (the peer shut its side right after sending a complete request, as HTTP/1.0 tools
// and some proxies do) is taken for a half-close: that request is cancelled only by a reset.
// A FIN that arrives while the request is watched follows the policy.
type HalfClose uint8

const (
	// HalfCloseCancels treats a FIN that arrives during the watch as departure. Right for
	// HTTP/1.1 clients, which keep their write side open while they wait; this is the
	// default.
	HalfCloseCancels HalfClose = iota
	// HalfCloseCancelsIfDrained peeks (recv with MSG_PEEK|MSG_DONTWAIT) when a FIN arrives:
	// end-of-stream with nothing unread cancels; unread bytes ahead of the FIN (pipelined
	// requests) mean the peer may still want their answers, so the watch stays and only a
	// later reset cancels it. The peek sees the kernel's buffer only: bytes the HTTP server
	// already pulled into its own read buffer are invisible to it. Not for TLS: a TLS client
	// that closes cleanly sends a close_notify record ahead of its FIN, which this policy
	// would take for unread requests.
	HalfCloseCancelsIfDrained
	// HalfCloseIgnored never cancels on FIN alone, only on reset or socket error. For
	// deployments whose clients half-close on purpose; an ordinary close then goes unnoticed
	// until the server writes the response.
	HalfCloseIgnored
)

// String returns "cancels", "cancels-if-drained" or "ignored".
func (p HalfClose) String() string {
	switch p {
	case HalfCloseCancels:
		return "cancels"
	case HalfCloseCancelsIfDrained:
		return "cancels-if-drained"
	case HalfCloseIgnored:
		return "ignored"
	}
	return "unknown"
}

// Option configures New.
type Option func(*options)

type options struct {
	halfClose    HalfClose
	onDisconnect func(Reason)
	observe      func(Reason, bool) // tests only; see Watcher.observe
}

// WithHalfClose sets the policy for a FIN without a reset (default HalfCloseCancels).
func WithHalfClose(p HalfClose) Option {
	return func(o *options) { o.halfClose = p }
}

// WithOnDisconnect sets a function called once for every watch cancelled because its client
// left, after the context is cancelled. It runs on the watcher's single goroutine, so it
// must be quick and must not block (incrementing a counter is the intended use).
func WithOnDisconnect(f func(Reason)) Option {
	return func(o *options) { o.onDisconnect = f }
}

// Stats are the watcher's counters.
type Stats struct {
	// Watching is the number of registrations whose stop has not been called yet.
	Watching int
	// Disconnects counts watches cancelled because their client left.
	Disconnects uint64
	// Unwatchable counts Watch calls that could not watch their connection (no socket
	// underneath, a dup or epoll error, a closed Watcher, or a platform without epoll);
	// their contexts are cancelled only by the parent or stop.
	Unwatchable uint64
}

func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
