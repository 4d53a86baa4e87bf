//go:build linux

package connwatch

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hangGuard only stops a broken test from hanging; no assertion depends on it.
const hangGuard = 10 * time.Second

// event is one decision the watcher goroutine reported through the test observer.
type event struct {
	reason Reason
	gone   bool
}

// harness is a watcher plus a loopback listener, with every decision the watcher makes
// delivered on events.
type harness struct {
	t      *testing.T
	w      *Watcher
	ln     *net.TCPListener
	events chan event
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := &harness{t: t, events: make(chan event, 1024)}
	opts = append(opts, func(o *options) {
		o.observe = func(r Reason, gone bool) { h.events <- event{r, gone} }
	})
	w, err := New(nil, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.w = w
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	h.ln = ln
	t.Cleanup(func() {
		_ = ln.Close()
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// pair dials the listener and returns both ends; both are closed at cleanup.
func (h *harness) pair() (client, server *net.TCPConn) {
	h.t.Helper()
	c := h.dial()
	return c, h.accept()
}

// dial connects a client; the kernel completes the handshake into the listen backlog, so
// the server side exists before accept gives it an fd.
func (h *harness) dial() *net.TCPConn {
	h.t.Helper()
	c, err := net.DialTCP("tcp", nil, h.ln.Addr().(*net.TCPAddr))
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (h *harness) accept() *net.TCPConn {
	h.t.Helper()
	s, err := h.ln.AcceptTCP()
	if err != nil {
		h.t.Fatalf("accept: %v", err)
	}
	h.t.Cleanup(func() { _ = s.Close() })
	return s
}

// nextEvent returns the watcher's next decision.
func (h *harness) nextEvent(what string) event {
	h.t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(hangGuard):
		h.t.Fatalf("%s: no event from the watcher (hang guard)", what)
		return event{}
	}
}

// barrier watches a fresh connection, resets its client (a reset cancels under every
// half-close policy) and waits until that cancel has
// been delivered and its event drained. Events of connections closed before the barrier's
// reach the loop's ready list first, so after barrier returns a test can assert that they
// produced nothing.
func (h *harness) barrier() {
	h.t.Helper()
	c, s := h.pair()
	ctx, stop := h.w.Watch(context.Background(), s)
	defer stop()
	reset(h.t, c)
	waitDone(h.t, ctx, "barrier")
	if e := h.nextEvent("barrier"); !e.gone {
		h.t.Fatalf("barrier: first event after the barrier's close is %+v, want its own cancel", e)
	}
}

// assertNoEvents fails if the watcher made any decision that the test has not consumed.
func (h *harness) assertNoEvents(what string) {
	h.t.Helper()
	select {
	case e := <-h.events:
		h.t.Fatalf("%s: unexpected watcher event %+v", what, e)
	default:
	}
}

func waitDone(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(hangGuard):
		t.Fatalf("%s: context not cancelled (hang guard)", what)
	}
}

func assertAlive(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	if err := ctx.Err(); err != nil {
		t.Fatalf("%s: context cancelled (%v, cause %v), want alive", what, err, context.Cause(ctx))
	}
}

func assertGone(t *testing.T, ctx context.Context, want Reason) {
	t.Helper()
	waitDone(t, ctx, "disconnect")
	cause := context.Cause(ctx)
	if !errors.Is(cause, ErrClientGone) {
		t.Fatalf("cause = %v, want ErrClientGone", cause)
	}
	if got, ok := DisconnectReason(ctx); !ok || got != want {
		t.Fatalf("DisconnectReason = %v, %v; want %v, true", got, ok, want)
	}
}

// kernelRegistrations counts the sockets the kernel holds in the watcher's epoll interest
// list (the wake eventfd excluded), read from /proc/self/fdinfo.
func kernelRegistrations(t *testing.T, w *Watcher) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", w.epfd))
	if err != nil {
		t.Fatalf("read epoll fdinfo: %v", err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		var tfd int
		if _, err := fmt.Sscanf(line, "tfd: %d", &tfd); err == nil && tfd != w.wakefd {
			n++
		}
	}
	return n
}

func assertRegistrations(t *testing.T, w *Watcher, want int) {
	t.Helper()
	if got := w.Stats().Watching; got != want {
		t.Fatalf("Stats.Watching = %d, want %d", got, want)
	}
	if got := kernelRegistrations(t, w); got != want {
		t.Fatalf("kernel epoll registrations = %d, want %d", got, want)
	}
}

func fdOf(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn: %v", err)
	}
	fd := -1
	if err := raw.Control(func(s uintptr) { fd = int(s) }); err != nil {
		t.Fatalf("Control: %v", err)
	}
	return fd
}

func reset(t *testing.T, c *net.TCPConn) {
	t.Helper()
	if err := c.SetLinger(0); err != nil {
		t.Fatalf("SetLinger: %v", err)
	}
	_ = c.Close()
}

func TestClientCloseCancels(t *testing.T) {
	var mu sync.Mutex
	var seen []Reason
	h := newHarness(t, WithOnDisconnect(func(r Reason) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
	}))
	c, s := h.pair()
	ctx, stop := h.w.Watch(context.Background(), s)
	assertRegistrations(t, h.w, 1)

	_ = c.Close()
	assertGone(t, ctx, ReasonClosed)
	h.nextEvent("close")
	mu.Lock()
	if len(seen) != 1 || seen[0] != ReasonClosed {
		t.Errorf("OnDisconnect saw %v, want [closed]", seen)
	}
	mu.Unlock()
	if got := h.w.Stats().Disconnects; got != 1 {
		t.Errorf("Stats.Disconnects = %d, want 1", got)
	}

	type key struct{}
	child, cancelChild := context.WithCancel(context.WithValue(ctx, key{}, 1))
	defer cancelChild()
	if got, ok := DisconnectReason(child); !ok || got != ReasonClosed {
		t.Errorf("derived context: DisconnectReason = %v, %v", got, ok)
	}

	stop()
	stop() // idempotent
	assertRegistrations(t, h.w, 0)
	if got, ok := DisconnectReason(ctx); !ok || got != ReasonClosed {
		t.Errorf("after stop DisconnectReason = %v, %v; the first cause must stay", got, ok)
	}
}

func TestClientResetCancels(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	ctx, stop := h.w.Watch(context.Background(), s)
	defer stop()
	reset(t, c)
	assertGone(t, ctx, ReasonReset)
}

// TestFINBeforeWatchIsAHalfClose: a FIN that is already there when the watch begins is a
// client that shut its side after its request and waits for the answer: it does not cancel,
// and a reset afterwards still does.
func TestFINBeforeWatchIsAHalfClose(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	// Reading EOF proves the FIN has arrived before the watch begins.
	if _, err := s.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("server read = %v, want EOF", err)
	}
	ctx, stop := h.w.Watch(context.Background(), s)
	defer stop()
	h.barrier()
	h.assertNoEvents("FIN before the watch")
	assertAlive(t, ctx, "FIN before the watch")
	reset(t, c)
	assertGone(t, ctx, ReasonReset)
}

func TestClientResetBeforeWatchCancels(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	reset(t, c)
	if _, err := s.Read(make([]byte, 1)); err == nil {
		t.Fatal("server read after the reset succeeded")
	}
	ctx, stop := h.w.Watch(context.Background(), s)
	defer stop()
	assertGone(t, ctx, ReasonReset)
}

func TestStopDeregisters(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	ctx, stop := h.w.Watch(context.Background(), s)
	assertRegistrations(t, h.w, 1)

	stop()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after stop ctx.Err() = %v, want Canceled", ctx.Err())
	}
	if _, ok := DisconnectReason(ctx); ok {
		t.Fatal("stop must not look like a disconnect")
	}
	assertRegistrations(t, h.w, 0)

	_ = c.Close()
	h.barrier()
	h.assertNoEvents("after stop and client close")
	if got := h.w.Stats().Disconnects; got != 1 {
		t.Fatalf("Stats.Disconnects = %d, want 1 (the barrier's only)", got)
	}
}

func TestStopReleasesSocket(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	_, stop := h.w.Watch(context.Background(), s)
	stop()
	_ = s.Close()
	// If the watcher still held its dup, the socket would stay open and the client would
	// never read EOF.
	if err := c.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("client read = %v, want EOF once the server closed", err)
	}
}

func TestPipelinedDataDoesNotCancel(t *testing.T) {
	for _, p := range []HalfClose{HalfCloseCancels, HalfCloseCancelsIfDrained, HalfCloseIgnored} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			h := newHarness(t, WithHalfClose(p))
			c, s := h.pair()
			ctx, stop := h.w.Watch(context.Background(), s)
			defer stop()

			const next = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"
			if _, err := c.Write([]byte(next)); err != nil {
				t.Fatal(err)
			}
			h.barrier()
			h.assertNoEvents("after pipelined data")
			assertAlive(t, ctx, "after pipelined data")

			// The bytes are all still there for the HTTP server.
			got, err := bufio.NewReader(s).ReadString('\n')
			if err != nil || got != "GET /next HTTP/1.1\r\n" {
				t.Fatalf("server read %q, %v", got, err)
			}
			reset(t, c)
			assertGone(t, ctx, ReasonReset)
		})
	}
}

func TestHalfClosePolicies(t *testing.T) {
	cases := []struct {
		name     string
		policy   HalfClose
		sendMore bool // pipelined bytes ahead of the FIN
		cancels  bool // whether the FIN alone cancels
	}{
		{"cancels", HalfCloseCancels, false, true},
		{"cancels with unread data", HalfCloseCancels, true, true},
		{"if drained, nothing unread", HalfCloseCancelsIfDrained, false, true},
		{"if drained, unread data", HalfCloseCancelsIfDrained, true, false},
		{"ignored", HalfCloseIgnored, false, false},
		{"ignored with unread data", HalfCloseIgnored, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithHalfClose(tc.policy))
			c, s := h.pair()
			ctx, stop := h.w.Watch(context.Background(), s)
			defer stop()
			if tc.sendMore {
				if _, err := c.Write([]byte("more")); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			e := h.nextEvent("half-close")
			if e.gone != tc.cancels || e.reason != ReasonClosed {
				t.Fatalf("half-close decided %+v, want gone=%v reason=closed", e, tc.cancels)
			}
			if tc.cancels {
				assertGone(t, ctx, ReasonClosed)
				return
			}
			assertAlive(t, ctx, "after half-close")
			if tc.sendMore {
				// The peek must not have consumed anything.
				b := make([]byte, 4)
				if _, err := io.ReadFull(s, b); err != nil || string(b) != "more" {
					t.Fatalf("server read %q, %v", b, err)
				}
			}
			// Re-armed for resets: an abortive close still cancels.
			reset(t, c)
			assertGone(t, ctx, ReasonReset)
		})
	}
}

func TestManyConcurrentWatches(t *testing.T) {
	h := newHarness(t)
	const n = 64
	type watched struct {
		c    *net.TCPConn
		ctx  context.Context
		stop func()
	}
	all := make([]watched, n)
	for i := range all {
		c, s := h.pair()
		all[i].c = c
		all[i].ctx, all[i].stop = h.w.Watch(context.Background(), s) // stopped below
	}
	assertRegistrations(t, h.w, n)

	var wg sync.WaitGroup
	for i := 0; i < n; i += 2 {
		wg.Go(func() {
			_ = all[i].c.Close()
			waitDone(t, all[i].ctx, "even conn")
			all[i].stop()
		})
	}
	wg.Wait()
	for i := 0; i < n; i += 2 {
		assertGone(t, all[i].ctx, ReasonClosed)
	}
	for range n / 2 {
		h.nextEvent("even conns")
	}
	h.barrier()
	h.assertNoEvents("odd conns stayed")
	for i := 1; i < n; i += 2 {
		assertAlive(t, all[i].ctx, fmt.Sprintf("conn %d", i))
	}
	for i := 1; i < n; i += 2 {
		wg.Go(func() { all[i].stop() })
	}
	wg.Wait()
	assertRegistrations(t, h.w, 0)
}

// TestFDReuse covers a connection closed, and its fd number handed to a new connection,
// while or after it was watched: the old client's departure must never cancel the new
// request, and the old registration's stop must never deregister the new one.
func TestFDReuse(t *testing.T) {
	t.Run("stopped before close", func(t *testing.T) {
		h := newHarness(t)
		oldC, oldS := h.pair()
		oldFD := fdOf(t, oldS)
		_, oldStop := h.w.Watch(context.Background(), oldS)
		newC := h.dial()
		oldStop()
		_ = oldS.Close()
		newS := h.accept() // accept takes the lowest free number: the old one
		assertReused(t, oldFD, fdOf(t, newS))
		ctx, stop := h.w.Watch(context.Background(), newS)
		defer stop()

		_ = oldC.Close()
		h.barrier()
		h.assertNoEvents("old client left")
		assertAlive(t, ctx, "new request after old client left")
		oldStop() // a late second call must not touch the new registration
		assertRegistrations(t, h.w, 1)

		_ = newC.Close()
		assertGone(t, ctx, ReasonClosed)
	})

	t.Run("closed while still watched", func(t *testing.T) {
		// The HTTP server closes its fd before the handler's stop runs; the number is free
		// for the next accept while the old registration still exists.
		h := newHarness(t)
		oldC, oldS := h.pair()
		oldFD := fdOf(t, oldS)
		oldCtx, oldStop := h.w.Watch(context.Background(), oldS)
		newC := h.dial()
		_ = oldS.Close()
		newS := h.accept()
		assertReused(t, oldFD, fdOf(t, newS))
		ctx, stop := h.w.Watch(context.Background(), newS)
		defer stop()
		assertRegistrations(t, h.w, 2)

		// The watcher's dup still holds the old socket, so the old client's FIN is seen there
		// and cancels the old request only.
		_ = oldC.Close()
		assertGone(t, oldCtx, ReasonClosed)
		h.nextEvent("old client")
		assertAlive(t, ctx, "new request after old client left")

		oldStop()
		assertRegistrations(t, h.w, 1)
		h.barrier()
		h.assertNoEvents("after old stop")
		assertAlive(t, ctx, "new request after old stop")

		_ = newC.Close()
		assertGone(t, ctx, ReasonClosed)
	})
}

// assertReused makes sure the test built the situation it is about: the kernel hands out
// the lowest free fd number, and nothing else in the test opens files meanwhile.
func assertReused(t *testing.T, oldFD, newFD int) {
	t.Helper()
	if oldFD != newFD {
		t.Fatalf("setup: new connection got fd %d, want the old one's %d reused", newFD, oldFD)
	}
}

func TestStaleStopAfterSlotReuse(t *testing.T) {
	h := newHarness(t)
	_, s1 := h.pair()
	_, stop1 := h.w.Watch(context.Background(), s1)
	stop1()

	c2, s2 := h.pair()
	ctx2, stop2 := h.w.Watch(context.Background(), s2) // takes the slot stop1 released
	defer stop2()
	if n, _ := slotTable(h.w); n != 1 {
		t.Fatalf("slot table has %d entries, want the freed slot reused", n)
	}
	stop1()
	assertRegistrations(t, h.w, 1)
	assertAlive(t, ctx2, "after stale stop")
	_ = c2.Close()
	assertGone(t, ctx2, ReasonClosed)
}

func TestParentCancelPropagates(t *testing.T) {
	h := newHarness(t)
	_, s := h.pair()
	parent, cancel := context.WithCancel(context.Background())
	ctx, stop := h.w.Watch(parent, s)
	defer stop()
	cancel()
	waitDone(t, ctx, "parent cancel")
	if _, ok := DisconnectReason(ctx); ok {
		t.Fatal("a parent's cancel must not look like a disconnect")
	}
}

func TestParentAlreadyDoneSkipsRegistration(t *testing.T) {
	h := newHarness(t)
	_, s := h.pair()
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	ctx, stop := h.w.Watch(parent, s)
	defer stop()
	if ctx.Err() == nil {
		t.Fatal("context of a cancelled parent is alive")
	}
	assertRegistrations(t, h.w, 0)
	if got := h.w.Stats().Unwatchable; got != 0 {
		t.Fatalf("Unwatchable = %d; a finished request is not an unwatchable one", got)
	}
}

func TestUnwatchableConnFallsBack(t *testing.T) {
	h := newHarness(t)
	a, b := net.Pipe()
	defer a.Close()
	ctx, stop := h.w.Watch(context.Background(), b)
	_ = a.Close()
	_ = b.Close()
	assertAlive(t, ctx, "unwatchable conn")
	st := h.w.Stats()
	if st.Unwatchable != 1 || st.Watching != 0 {
		t.Fatalf("Stats = %+v, want Unwatchable 1, Watching 0", st)
	}
	stop()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after stop ctx.Err() = %v", ctx.Err())
	}
}

func TestTLSWrappedConn(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	// No handshake is needed: the watcher only looks through NetConn to the socket.
	ctx, stop := h.w.Watch(context.Background(), tls.Server(s, &tls.Config{}))
	defer stop()
	assertRegistrations(t, h.w, 1)
	_ = c.Close()
	assertGone(t, ctx, ReasonClosed)
}

func TestClose(t *testing.T) {
	h := newHarness(t)
	c, s := h.pair()
	ctx, stop := h.w.Watch(context.Background(), s)
	if err := h.w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	assertAlive(t, ctx, "after Close")

	_, s2 := h.pair()
	ctx2, stop2 := h.w.Watch(context.Background(), s2)
	if got := h.w.Stats().Unwatchable; got != 1 {
		t.Fatalf("Watch after Close: Unwatchable = %d, want 1", got)
	}
	stop2()
	waitDone(t, ctx2, "stop after Close")

	stop()
	if got := h.w.Stats().Watching; got != 0 {
		t.Fatalf("Watching = %d after stop", got)
	}
	// stop after Close still released the dup: closing the server side reaches the client.
	_ = s.Close()
	if err := c.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("client read = %v, want EOF", err)
	}
}

func TestDisconnectReasonOfOtherContexts(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	if _, ok := DisconnectReason(ctx); ok {
		t.Fatal("live context reported as disconnected")
	}
	cancel(errors.New("other"))
	if _, ok := DisconnectReason(ctx); ok {
		t.Fatal("other cause reported as disconnected")
	}
}

// TestLateEventForReusedSlot delivers by hand what epoll_wait can return in the instant
// between a stop and the next Watch taking the same slot: an event of the old registration.
// It must not touch the new one.
func TestLateEventForReusedSlot(t *testing.T) {
	h := newHarness(t)
	_, s1 := h.pair()
	_, stop1 := h.w.Watch(context.Background(), s1)
	_, oldGen := slotTable(h.w)
	stop1()
	_, s2 := h.pair()
	ctx2, stop2 := h.w.Watch(context.Background(), s2)
	defer stop2()
	if n, gen := slotTable(h.w); n != 1 || gen == oldGen {
		t.Fatalf("setup: want slot 0 reused with a new generation")
	}

	h.w.handle(0, oldGen, unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR)
	assertAlive(t, ctx2, "after a late event of the old registration")
	h.assertNoEvents("late event")
	if got := h.w.Stats().Disconnects; got != 0 {
		t.Fatalf("Disconnects = %d, want 0", got)
	}
	// An index past the table (no registration ever had it) is ignored too.
	h.w.handle(7, 1, unix.EPOLLHUP)
	h.assertNoEvents("unknown index")
}

// slotTable returns the size of the watcher's slot table and slot 0's generation.
func slotTable(w *Watcher) (n int, gen0 uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.slots) > 0 {
		gen0 = w.slots[0].gen
	}
	return len(w.slots), gen0
}

// TestStopRacesDisconnect lets stop and the client's departure race on many connections at
// once, for the race detector and for the bookkeeping: every context ends, and no slot or
// kernel registration is left behind.
func TestStopRacesDisconnect(t *testing.T) {
	h := newHarness(t)
	const n = 48
	clients := make([]*net.TCPConn, n)
	ctxs := make([]context.Context, n)
	stops := make([]func(), n)
	for i := range n {
		c, s := h.pair()
		clients[i] = c
		ctxs[i], stops[i] = h.w.Watch(context.Background(), s)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%3 == 0 {
				reset(t, clients[i])
			} else {
				_ = clients[i].Close()
			}
		})
		wg.Go(stops[i])
	}
	wg.Wait()
	for i := range n {
		waitDone(t, ctxs[i], fmt.Sprintf("conn %d", i))
	}
	assertRegistrations(t, h.w, 0)
	st := h.w.Stats()
	if st.Disconnects > n {
		t.Fatalf("Disconnects = %d for %d connections", st.Disconnects, n)
	}
	t.Logf("%d of %d departures beat their stop", st.Disconnects, n)
}
