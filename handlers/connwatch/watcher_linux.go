//go:build linux

package connwatch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// wakeTag tags the eventfd that Close uses to stop the loop. Slot indexes are never negative.
const wakeTag int32 = -1

// watchMask: a FIN (RDHUP), both directions shut (HUP) or a socket error (ERR; a reset sets
// it). EPOLLIN is left out on purpose, so pipelined request bytes never wake the loop.
// ONESHOT disarms a registration after its one report; the conditions are level states, so
// without it a disconnected socket would be reported on every epoll_wait until stop.
const watchMask = unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR | unix.EPOLLONESHOT

// rearmMask keeps a half-closed registration that the policy did not cancel waiting for a
// reset. HUP and ERR are always reported; RDHUP is dropped because it is still set and would
// report again at once.
const rearmMask = unix.EPOLLHUP | unix.EPOLLERR | unix.EPOLLONESHOT

// slot is one registration. Its index and generation travel in the epoll event's data, so
// an event is matched to the registration that asked for it and never to a later one that
// reuses the slot.
type slot struct {
	gen    uint32
	used   bool
	fired  bool  // the client left and the context was cancelled; the registration is disarmed
	fd     int32 // the watcher's own dup of the connection's socket
	cancel context.CancelCauseFunc
}

// Watcher turns a departed client into a cancelled context. It owns one epoll instance and
// one goroutine for its whole life. Safe for concurrent use.
type Watcher struct {
	logger       *slog.Logger
	halfClose    HalfClose
	onDisconnect func(Reason)

	// life keeps epfd valid under Watch and stop: they hold it shared around epoll_ctl, and
	// Close takes it exclusively before closing epfd, whose number could otherwise be reused
	// by an unrelated file while a stop is about to deregister from it.
	life   sync.RWMutex
	closed bool
	epfd   int
	wakefd int

	mu       sync.Mutex
	slots    []slot
	free     []uint32
	watching int

	disconnects atomic.Uint64
	unwatchable atomic.Uint64
	loopDone    chan struct{}

	// observe, set only by tests, sees every event that reached a live registration and what
	// was decided, so a test can wait for a decision not to cancel.
	observe func(reason Reason, gone bool)
}

// New creates the epoll instance and starts the goroutine that waits on it. Close releases
// both. A nil logger discards.
func New(logger *slog.Logger, opts ...Option) (*Watcher, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	o := applyOptions(opts)
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("connwatch: epoll_create1: %s", errnoName(err))
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		_ = unix.Close(epfd)
		return nil, fmt.Errorf("connwatch: eventfd: %s", errnoName(err))
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeTag}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		_ = unix.Close(wakefd)
		_ = unix.Close(epfd)
		return nil, fmt.Errorf("connwatch: epoll_ctl add eventfd: %s", errnoName(err))
	}
	w := &Watcher{
		logger:       logger,
		halfClose:    o.halfClose,
		onDisconnect: o.onDisconnect,
		observe:      o.observe,
		epfd:         epfd,
		wakefd:       wakefd,
		loopDone:     make(chan struct{}),
	}
	go w.run()
	return w, nil
}

// Watch returns a context derived from parent that is cancelled, with a cause for which
// errors.Is(cause, ErrClientGone) holds, when the peer of conn closes or resets the
// connection; and a stop func that must be called when the handler is done with the request.
// stop deregisters, releases the watcher's reference to the socket and cancels the context
// (cause context.Canceled); it is idempotent and safe to call from any goroutine.
//
// A conn without a reachable socket, or any failure to register it, is not an error for
// the request: the context then works like context.WithCancelCause(parent), and
// Stats.Unwatchable counts it.
//
// Pass a standard context as parent (fiber's c.UserContext()), not fasthttp's RequestCtx:
// deriving from a context that the context package does not know makes it start a goroutine
// per request to forward the parent's cancellation.
func (w *Watcher) Watch(parent context.Context, conn net.Conn) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	if ctx.Err() != nil {
		// Already over: four system calls would buy nothing.
		return ctx, func() { cancel(nil) }
	}
	fd, err := dupSocket(conn)
	if err != nil {
		return ctx, w.fallback(cancel, "dup", err)
	}

	w.life.RLock()
	defer w.life.RUnlock()
	if w.closed {
		_ = unix.Close(fd)
		return ctx, w.fallback(cancel, "closed", nil)
	}

	mask := uint32(watchMask)
	if w.halfClose != HalfCloseIgnored && finAlreadyIn(fd) {
		// The peer shut its side before its handler began, right after a complete request:
		// a half-close (HTTP/1.0 tools and some proxies do this, then wait for the answer),
		// not a departure. Only a reset cancels this request.
		mask = rearmMask
	}

	w.mu.Lock()
	idx := w.allocLocked()
	s := &w.slots[idx]
	s.gen++
	s.used, s.fired, s.fd, s.cancel = true, false, int32(fd), cancel
	gen := s.gen
	w.watching++
	w.mu.Unlock()

	// Registered after the slot is filled, so an event that is ready at once (the client
	// left while the request waited for its handler) finds its registration.
	ev := unix.EpollEvent{Events: mask, Fd: int32(idx), Pad: int32(gen)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		w.release(idx, gen)
		_ = unix.Close(fd)
		return ctx, w.fallback(cancel, "epoll_ctl", err)
	}
	return ctx, func() { w.stop(idx, gen) }
}

func (w *Watcher) fallback(cancel context.CancelCauseFunc, step string, err error) func() {
	w.unwatchable.Add(1)
	if err != nil {
		w.logger.Debug("connwatch: connection not watched", "step", step, "errno", errnoName(err))
	}
	return func() { cancel(nil) }
}

// allocLocked returns a free slot index. The table grows to the peak number of concurrent
// watches and is reused from then on.
func (w *Watcher) allocLocked() uint32 {
	if n := len(w.free); n > 0 {
		idx := w.free[n-1]
		w.free = w.free[:n-1]
		return idx
	}
	w.slots = append(w.slots, slot{fd: -1})
	return uint32(len(w.slots) - 1)
}

// release empties slot idx if it still belongs to generation gen, and returns its fd and
// cancel func; ok is false when an earlier call already released it.
func (w *Watcher) release(idx, gen uint32) (fd int, cancel context.CancelCauseFunc, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.slots[idx]
	if !s.used || s.gen != gen {
		return -1, nil, false
	}
	fd, cancel = int(s.fd), s.cancel
	s.used, s.fired, s.fd, s.cancel = false, false, -1, nil
	w.free = append(w.free, idx)
	w.watching--
	return fd, cancel, true
}

func (w *Watcher) stop(idx, gen uint32) {
	w.life.RLock()
	defer w.life.RUnlock()
	fd, cancel, ok := w.release(idx, gen)
	if !ok {
		return
	}
	// The slot may already be reused by now; an event of this registration that is still in
	// flight carries the old generation and is dropped by handle.
	if !w.closed {
		// Deregister before closing: epoll keys a registration by open file description, and
		// the HTTP server's own fd keeps that description alive, so closing only our dup
		// would leave the registration behind.
		if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
			w.logger.Warn("connwatch: epoll_ctl del failed", "errno", errnoName(err))
		}
	}
	if err := unix.Close(fd); err != nil {
		w.logger.Warn("connwatch: close of watched dup failed", "errno", errnoName(err))
	}
	cancel(nil)
}

func (w *Watcher) run() {
	defer close(w.loopDone)
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			w.logger.Error("connwatch: epoll_wait failed, disconnects are no longer detected", "errno", errnoName(err))
			return
		}
		for i := range events[:n] {
			if events[i].Fd == wakeTag {
				return
			}
			w.handle(uint32(events[i].Fd), uint32(events[i].Pad), events[i].Events)
		}
	}
}

// handle acts on one event. It holds mu while it looks at the socket so that stop cannot
// close the dup under the peek or the re-arm.
func (w *Watcher) handle(idx, gen, events uint32) {
	w.mu.Lock()
	if int(idx) >= len(w.slots) {
		w.mu.Unlock()
		return
	}
	s := &w.slots[idx]
	if !s.used || s.gen != gen || s.fired {
		w.mu.Unlock()
		return
	}
	reason, gone := w.classify(int(s.fd), events)
	if !gone {
		ev := unix.EpollEvent{Events: rearmMask, Fd: int32(idx), Pad: int32(gen)}
		if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, int(s.fd), &ev); err != nil {
			w.logger.Warn("connwatch: epoll_ctl mod failed, half-closed connection no longer watched", "errno", errnoName(err))
		}
		w.mu.Unlock()
		if w.observe != nil {
			w.observe(reason, false)
		}
		return
	}
	s.fired = true
	cancel := s.cancel
	w.mu.Unlock()

	w.disconnects.Add(1)
	cancel(causeFor(reason))
	if w.onDisconnect != nil {
		w.onDisconnect(reason)
	}
	if w.observe != nil {
		w.observe(reason, true)
	}
}

// classify decides whether the reported events mean the client left.
func (w *Watcher) classify(fd int, events uint32) (Reason, bool) {
	if events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		return ReasonReset, true
	}
	switch w.halfClose {
	case HalfCloseIgnored:
		return ReasonClosed, false
	case HalfCloseCancelsIfDrained:
		var b [1]byte
		n, _, err := unix.Recvfrom(fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0:
			return ReasonClosed, true
		case err == nil:
			return ReasonClosed, false
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			// A FIN with nothing to read would return 0, so this is not end-of-stream.
			return ReasonClosed, false
		default:
			return ReasonReset, true
		}
	}
	return ReasonClosed, true
}

// finAlreadyIn reports whether the peer's FIN has already arrived on fd, whatever unread
// bytes precede it (poll with POLLRDHUP and no wait: nothing is consumed).
func finAlreadyIn(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLRDHUP != 0
}

// Stats returns the current counters.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	watching := w.watching
	w.mu.Unlock()
	return Stats{
		Watching:    watching,
		Disconnects: w.disconnects.Load(),
		Unwatchable: w.unwatchable.Load(),
	}
}

// Close stops the goroutine and closes the epoll instance. Contexts handed out earlier are
// not cancelled (their requests may still be answered) and are no longer watched; their stop
// funcs stay valid and must still be called to release the watcher's socket references.
// Watch after Close returns unwatched contexts. Close is idempotent.
func (w *Watcher) Close() error {
	w.life.Lock()
	defer w.life.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := unix.Write(w.wakefd, one[:]); err != nil {
		// The loop cannot be woken; leave both fds open rather than close epfd under it.
		return fmt.Errorf("connwatch: wake watcher: %s", errnoName(err))
	}
	<-w.loopDone
	return errors.Join(closeErr("epoll", unix.Close(w.epfd)), closeErr("eventfd", unix.Close(w.wakefd)))
}

func closeErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("connwatch: close %s: %s", what, errnoName(err))
}

// One cause value per reason, made up front so that cancelling allocates nothing on the
// watcher goroutine.
var (
	causeClosed = &goneError{reason: ReasonClosed}
	causeReset  = &goneError{reason: ReasonReset}
)

func causeFor(r Reason) error {
	if r == ReasonReset {
		return causeReset
	}
	return causeClosed
}

// maxUnwrap bounds how many wrapper layers socketOf looks through.
const maxUnwrap = 4

// socketOf finds the socket under conn: directly (*net.TCPConn, *net.UnixConn), under TLS
// (*tls.Conn exposes NetConn) or under fasthttp's hijack wrapper (UnsafeConn). Wrappers that
// hide their inner conn, such as fasthttp's per-IP limiter, are reported as not watchable.
func socketOf(conn net.Conn) (syscall.Conn, bool) {
	for range maxUnwrap {
		if conn == nil {
			return nil, false
		}
		if sc, ok := conn.(syscall.Conn); ok {
			return sc, true
		}
		switch c := conn.(type) {
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		case interface{ UnsafeConn() net.Conn }:
			conn = c.UnsafeConn()
		default:
			return nil, false
		}
	}
	return nil, false
}

var errNoSocket = errors.New("connection has no reachable socket")

// dupSocket returns a close-on-exec duplicate of conn's socket. The duplicate is the
// watcher's own reference to the open file description, so the fd number it registers with
// epoll cannot be closed and handed to another connection until stop closes it.
func dupSocket(conn net.Conn) (int, error) {
	sc, ok := socketOf(conn)
	if !ok {
		return -1, errNoSocket
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var dupErr error
	// Control holds a reference on the conn's fd while it runs, so it cannot be closed and
	// reused between reading the number and dup'ing it.
	if err := raw.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, dupErr
	}
	return fd, nil
}

// errnoName names an errno ("EBADF") without the message text; other errors keep their text,
// which in this package never contains request content.
func errnoName(err error) string {
	var e unix.Errno
	if errors.As(err, &e) {
		if name := unix.ErrnoName(e); name != "" {
			return name
		}
	}
	return err.Error()
}
