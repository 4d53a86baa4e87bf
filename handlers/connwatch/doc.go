// Package connwatch tells a request handler that its client has gone, by cancelling the
// request's context.
//
// # Why
//
// Fiber v2 runs on fasthttp, which reads a whole request and then runs the handler on the
// connection's goroutine without reading the socket again until the handler returns. Nothing
// in the stack notices a client that hangs up meanwhile: fasthttp's RequestCtx.Done fires
// only at server shutdown. Sluice must not compute answers nobody will read (a queued
// request whose client left is dropped before it runs; a running one stops at the next step),
// so the socket has to be watched from outside the handler.
//
// # How
//
// A Watcher owns one epoll instance and one goroutine that waits on it for the life of the
// process. Watch registers the request's socket for EPOLLRDHUP (the peer sent FIN),
// EPOLLHUP and EPOLLERR (a reset sets both) with EPOLLONESHOT, so that a departed client is
// reported exactly once; EPOLLIN is not asked for, so pipelined requests and other bytes
// the client sends never wake the watcher. On a report the goroutine cancels the context
// with a cause for which errors.Is(cause, ErrClientGone) holds; DisconnectReason says
// whether the peer closed or reset. stop, which the handler must call when it is done,
// deregisters and cancels the context.
//
// # File descriptor reuse
//
// A connection can be closed, and its fd number handed to a new connection, while the old
// one is still registered (the HTTP server closes it before a late stop, say). Two things
// keep that from ever cancelling or deregistering the wrong request:
//
//   - Watch registers its own duplicate of the socket (fcntl F_DUPFD_CLOEXEC, taken inside
//     syscall.RawConn.Control so the original cannot be closed under it). The duplicate is
//     the watcher's reference to the connection's open file description: its number belongs
//     to the watcher until stop closes it, so the number passed to EPOLL_CTL_DEL always
//     names the registration that Watch made, and the registration keeps watching the old
//     socket even after the server closed its own fd. stop deregisters before it closes the
//     duplicate, because epoll keys registrations by file description and the server's fd
//     would otherwise keep a registration alive after the duplicate is gone.
//   - The event's data is a slot index plus a generation, never an fd number. A slot is
//     reused only with a new generation, so an event of an old registration that is already
//     on its way out of epoll_wait when stop runs is recognised as stale and dropped, and a
//     second call of an old stop is a no-op.
//
// The cost of the duplicate: the socket stays open until stop, so a handler that never
// calls stop keeps its connection open. Always defer stop right after Watch.
//
// # Half-close
//
// A client that calls shutdown(SHUT_WR) after sending its request and then waits for the
// answer produces the same FIN as a client that closed; the server cannot tell the two
// apart without writing. What it can tell is when the FIN came: one already there when Watch
// begins follows a complete request at once, which is how half-closing clients (HTTP/1.0
// tools, some proxies) behave, so Watch then watches for a reset only (a poll with POLLRDHUP
// and no wait, one more system call). HTTP/1.1 clients practically never half-close, so by
// default a FIN that arrives during the watch cancels (HalfCloseCancels). WithHalfClose offers two alternatives: HalfCloseCancelsIfDrained
// peeks (recv with MSG_PEEK|MSG_DONTWAIT, which consumes nothing) and treats unread bytes
// ahead of the FIN, such as pipelined requests, as a client that still wants answers;
// HalfCloseIgnored cancels only on a reset. Both keep watching for a reset after a FIN they
// did not act on.
//
// # Other platforms and unwatchable connections
//
// Watch looks through *tls.Conn (NetConn) and fasthttp's hijacked conn (UnsafeConn) to the
// socket. A conn with no reachable socket (net.Pipe, fasthttp's per-IP limiter wrapper
// enabled by MaxConnsPerIP), a failed dup or epoll_ctl, and every Watch on a non-Linux
// build fall back to a context that only its parent or stop cancels: it never cancels on
// disconnect, and no polling runs. Stats.Unwatchable counts these, so a deployment can see
// that detection is off.
//
// Logs carry counts and errno names only; the package never reads request bytes (the peek
// looks at one byte and only asks whether it exists).
//
// # Use
//
//	w, err := connwatch.New(logger, connwatch.WithOnDisconnect(func(r connwatch.Reason) {
//		disconnects.WithLabelValues(r.String()).Inc()
//	}))
//	...
//	defer w.Close()
//
//	app.Post("/analyze", func(c *fiber.Ctx) error {
//		ctx, stop := w.Watch(c.UserContext(), c.Context().Conn())
//		defer stop()
//		res, err := extractor.Extract(ctx, req) // gives up when ctx is cancelled
//		if errors.Is(context.Cause(ctx), connwatch.ErrClientGone) {
//			// count as aborted; nobody is there to read a response
//		}
//		...
//	})
//
// Derive from a standard context (c.UserContext()), not from fasthttp's RequestCtx: the
// context package does not know that type and would start a goroutine per request to
// forward its cancellation.
//
// Watch and stop cost five system calls (dup, poll, EPOLL_CTL_ADD, EPOLL_CTL_DEL, close) and a
// few small allocations per request; see BenchmarkWatchStop.
package connwatch
