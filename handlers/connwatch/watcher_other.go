//go:build !linux

package connwatch

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
)

// Watcher is the portable stand-in: without epoll it never detects a departed client. Its
// contexts are cancelled only by their parent or by stop, and every Watch is counted in
// Stats.Unwatchable so that a deployment can see that detection is off.
type Watcher struct {
	unwatchable atomic.Uint64
}

// New returns a Watcher that never cancels on disconnect; it logs that once.
func New(logger *slog.Logger, opts ...Option) (*Watcher, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The options only shape how events are handled, and this Watcher has none.
	_ = applyOptions(opts).observe
	logger.Info("connwatch: client disconnect detection needs Linux epoll; requests are not cancelled when clients leave")
	return &Watcher{}, nil
}

// Watch returns context.WithCancelCause(parent) and a stop func that cancels it.
func (w *Watcher) Watch(parent context.Context, conn net.Conn) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	w.unwatchable.Add(1)
	return ctx, func() { cancel(nil) }
}

// Stats returns the counters; only Unwatchable ever moves here.
func (w *Watcher) Stats() Stats {
	return Stats{Unwatchable: w.unwatchable.Load()}
}

// Close does nothing and returns nil.
func (w *Watcher) Close() error { return nil }
