package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/generate"
)

// genBody is a generation stream's body as the HTTP server reads it: each Read waits for the
// call's next events, or for the keep-alive's quiet, and returns them as server-sent events,
// which the connection's own goroutine writes to the socket and flushes (as one chunk, or
// several past the server's 4 KiB copy buffer). No writer goroutine and no pipe stand between
// a token and its socket, and a call of one choice reads its stream directly (direct), with
// no goroutine of its own: on a server with one core, a hand-off per token per stream is a
// share of the step. The choices of a call of several are merged by a goroutine each
// (genCall.events).
//
// After its first event, which goes out at once, a stream can be written a few events at a
// time (pace.interval): a write per token per stream is the largest cost of a step beside the
// model's pass on a server of one core, and a client that reads several events in one chunk
// reads the same stream. An event is held at most maxHold, and the stream's end and its error
// send what is held before them.
//
// A stream that ends early, for any reason, ends with the dialect's error event, never a bare
// close. The server closes the body when the response is done; a body closed before its end
// was handed out is a client that left, or whose socket took nothing for the stall limit:
// its generation stops and it is counted. The HTTP server reads and closes it from the
// connection's goroutine; an in-process caller may close it from another while a read waits
// (that read then fails, as a read of a closed pipe does).
type genBody struct {
	g      *genCall
	ans    answer
	events <-chan indexed // nil once every choice has finished
	// direct is the call's one stream, read without a goroutine between (nil once finished,
	// and for a call read through events); firstOut: its first event, which began awaited,
	// was handed on. waitCtx is the call's context, also ended by Close, for its waits.
	direct     awaiter
	firstOut   bool
	waitCtx    context.Context
	cancelWait context.CancelFunc
	conn       net.Conn // nil for an in-process caller
	pace       pace
	closed     func(outcome string)
	stop       chan struct{} // closed by Close: a read waiting for an event gives up

	mu       sync.Mutex // a read, or Close's accounting
	stopOnce sync.Once
	quiet    clock.Timer
	lastSent time.Time   // when the last write (events or keep-alive) was handed out
	wrote    bool        // an event was handed out: the next are held to pace.interval
	held     int         // events held in out
	heldLen  int         // the bytes of out they take
	hold     clock.Timer // armed when the first of them was held (nil: none is)
	out      []byte      // the events being handed out
	off      int
	ended    bool   // out holds the stream's last bytes
	eof      bool   // every byte was handed out
	outcome  string // how the stream ended, once ended
	deadline time.Time
	done     bool
}

// pace is how a stream's body writes: the stall limit of one write, the quiet after which it
// sends a keep-alive, and how many events go in one write after the first (1: each at once).
type pace struct {
	stall, keepAlive time.Duration
	interval         int
}

// maxHold bounds how long an event waits for the others of its write: a stream paused
// (preempted, or an external model's that slows) sends what it holds rather than keep it
// until the keep-alive. Many steps of a served model, and below what a reader notices.
const maxHold = 100 * time.Millisecond

// newGenBody is the body of g's stream: a call of one choice whose stream is an awaiter is
// read directly, any other through g.events.
func newGenBody(g *genCall, ans answer, conn net.Conn, p pace, closed func(outcome string)) *genBody {
	b := &genBody{g: g, ans: ans, conn: conn, pace: p, closed: closed, stop: make(chan struct{})}
	if st, ok := g.streams[0].(awaiter); ok && len(g.streams) == 1 {
		b.direct = st
		b.waitCtx, b.cancelWait = context.WithCancel(g.ctx)
	} else {
		b.events = g.events()
	}
	return b
}

// Read hands out the rest of the current events, or waits for the next. Each read that hands
// bytes out sets the socket's write deadline to the stall limit: the HTTP server's write
// timeout, one deadline for a whole answer, would cut a long stream its reader is still
// reading, and a reader that takes nothing must still let go of the connection.
func (b *genBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || b.stopping() {
		return 0, io.ErrClosedPipe // as a closed pipe's reader, even mid-event
	}
	for b.off == len(b.out) {
		if b.ended {
			b.eof = true
			return 0, io.EOF
		}
		b.out, b.off = b.out[:0], 0
		if b.fill(); b.stopping() {
			return 0, io.ErrClosedPipe
		}
	}
	if b.conn != nil {
		b.deadline = time.Now().Add(b.pace.stall)
		_ = b.conn.SetWriteDeadline(b.deadline)
	}
	n := copy(p, b.out[b.off:])
	b.off += n
	return n, nil
}

// fill puts the next events in out, or ends the stream. A panic while building one (a
// dialect's bug) ends the stream with the internal error's event after those held, logged by
// the panic's type only, whose value may hold request text, as the NDJSON streams do.
func (b *genBody) fill() {
	defer func() {
		if p := recover(); p != nil {
			b.g.panicked(p)
			b.out, b.off = b.out[:b.heldLen], 0
			b.endEarly(errStreamPanicked)
		}
	}()
	b.next()
}

var errStreamPanicked = errors.New("handlers: a stream's event could not be built")

// panicked logs a panic while reading the call's streams or building their events, by the
// panic's type only: its value may hold request text.
func (g *genCall) panicked(p any) {
	g.s.opts.Logger.Error("stream panicked", slog.String("request_id", g.x.id),
		slog.String("route", g.x.route.Path), slog.String("panic_type", fmt.Sprintf("%T", p)))
}

// next puts the next events in out: a choice's tokens (the events the dialect sends; after
// the first, held until pace.interval of them or maxHold), the keep-alive after a quiet while,
// or the stream's end. The keep-alive's timer is armed once a quiet while, not once a token:
// when it fires after a write, it waits the rest.
func (b *genBody) next() {
	g := b.g
	clk := g.s.opts.Clock
	if b.quiet == nil {
		b.quiet, b.lastSent = clk.NewTimer(b.pace.keepAlive), clk.Now()
	}
	for b.events != nil || b.direct != nil {
		it, w := b.wait()
		switch w {
		case waitStopped:
			return
		case waitFinished:
			continue
		case waitHeld:
			b.sent()
			return
		case waitQuiet:
			if left := b.pace.keepAlive - clk.Now().Sub(b.lastSent); left > 0 {
				b.quiet = clk.NewTimer(left)
				continue
			}
			// Nothing sent for a while (a long prefill, a preempted sequence): a comment tells
			// proxies and clients with idle timeouts that the stream is alive.
			b.frame(": keep-alive", nil, "\n\n")
			b.quiet = clk.NewTimer(b.pace.keepAlive)
			b.sent()
			return
		}
		if err := endedEarly(it.ev); err != nil {
			b.endEarly(err)
			return
		}
		g.choices[it.i].add(it.ev)
		if data := b.ans.event(g, it.i, it.ev); data != nil {
			b.frame("data: ", data, "\n\n")
			if b.held++; b.wrote && b.held < b.pace.interval {
				if b.heldLen = len(b.out); b.hold == nil {
					b.hold = clk.NewTimer(min(maxHold, b.pace.keepAlive))
				}
				continue
			}
			b.wrote = true
			b.sent()
			return
		}
	}
	b.stopTimers()
	if err := g.unfinished(); err != nil {
		b.endEarly(err)
		return
	}
	for _, data := range b.ans.end(g) {
		b.frame("data: ", data, "\n\n")
	}
	b.ended, b.outcome = true, OutcomeServed
}

// sent marks what out holds as handed out now.
func (b *genBody) sent() {
	b.lastSent, b.held, b.heldLen = b.g.s.opts.Clock.Now(), 0, 0
	if b.hold != nil {
		b.hold.Stop()
		b.hold = nil
	}
}

// stopTimers stops the keep-alive's timer and the hold's: the stream has ended.
func (b *genBody) stopTimers() {
	if b.quiet != nil {
		b.quiet.Stop()
	}
	if b.hold != nil {
		b.hold.Stop()
	}
}

// awaiter is a TokenStream that waits for its next event and a wake-up at once
// (*generate.Stream).
type awaiter interface {
	NextOrWake(ctx context.Context, wake <-chan time.Time) (ev generate.Event, woke bool, err error)
}

// waited is how a wait for the call's next event ended.
type waited uint8

const (
	waitEvent    waited = iota
	waitQuiet           // the keep-alive's timer fired first
	waitHeld            // the events held waited maxHold
	waitStopped         // Close was called
	waitFinished        // no event will come: every choice finished, or the call's context ended
)

// wait waits for the call's next event, Close, or a timer: the hold's while events are held,
// else the keep-alive's.
func (b *genBody) wait() (indexed, waited) {
	wake, woke := b.quiet, waitQuiet
	if b.hold != nil {
		wake, woke = b.hold, waitHeld
	}
	if st := b.direct; st != nil {
		ev := b.g.first[0]
		if b.firstOut {
			var fired bool
			var err error
			switch ev, fired, err = st.NextOrWake(b.waitCtx, wake.C()); {
			case fired:
				return indexed{}, woke
			case err != nil && b.stopping():
				return indexed{}, waitStopped
			case err != nil: // the call's context ended
				b.direct = nil
				return indexed{}, waitFinished
			}
		}
		b.firstOut = true
		if ev.Done {
			b.direct = nil
		}
		return indexed{0, ev}, waitEvent
	}
	select {
	case it, ok := <-b.events:
		if !ok {
			b.events = nil
			return indexed{}, waitFinished
		}
		return it, waitEvent
	case <-b.stop:
		return indexed{}, waitStopped
	case <-wake.C():
		return indexed{}, woke
	}
}

// endEarly makes the dialect's error event the stream's last; an answer that ends a request
// of its own (the privacy gateway's, whose record must be stored before the answer ends) is
// told first.
func (b *genBody) endEarly(err error) {
	g := b.g
	b.stopTimers()
	e := g.s.failure(g.x, g.ctx, err)
	// The answer's record is the call's outcome: a client that left while the model was
	// between tokens is aborted, not the model's failure.
	g.outcome, g.aborted = e.Outcome, e.aborted
	if f, ok := b.ans.(interface{ failing(g *genCall) }); ok {
		f.failing(g)
	}
	_, body := g.d.reply(e, g.x.id)
	if data, merr := marshal(body); merr == nil {
		b.frame("data: ", data, "\n\n")
	}
	b.ended, b.outcome = true, e.Outcome
	// The error event is written if the socket takes it; the stream's outcome is the error's
	// either way, and nothing more is read from the streams.
	b.events, b.direct = nil, nil
}

func (b *genBody) stopping() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

func (b *genBody) frame(prefix string, data []byte, end string) {
	b.out = append(b.out, prefix...)
	b.out = append(b.out, data...)
	b.out = append(b.out, end...)
}

// Close ends the call when the server is done with the response: the access log, the budget's
// settlement and the call's context. A stream whose end was not all handed out (or read at
// all) lost its client, unless it had ended early: its outcome is then the error's, whether
// or not the error's event got through.
func (b *genBody) Close() error {
	b.stopOnce.Do(func() {
		if b.stop != nil {
			close(b.stop)
		}
		if b.cancelWait != nil {
			b.cancelWait()
		}
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	b.stopTimers()
	outcome := b.outcome
	if !b.eof && !(b.ended && outcome != OutcomeServed) {
		stalled := !b.deadline.IsZero() && !time.Now().Before(b.deadline)
		outcome = b.gone(stalled)
	}
	b.closed(outcome)
	return nil
}

// gone counts a client the stream could not reach and stops its generation, unless the
// server is set to ignore departures, when the rest of the events runs to its end unread.
func (b *genBody) gone(stalled bool) string {
	g := b.g
	reason, cause := "client_closed", error(context.Canceled)
	if stalled {
		reason, cause = "client_stalled", generate.ErrClientStalled
	}
	g.aborted = g.s.countAborted(g.ctx, g.x.route, reason)
	if g.s.opts.IgnoreDisconnects && (b.events != nil || b.direct != nil) {
		// The generation runs to its end unread, without holding the connection for it.
		events, direct, closed := b.events, b.direct, b.closed
		b.closed = func(string) {}
		go func() {
			for direct != nil {
				if ev, _, err := direct.NextOrWake(g.ctx, nil); err != nil || ev.Done {
					break
				}
			}
			if events != nil {
				for range events {
				}
			}
			closed(OutcomeAborted)
		}()
		return OutcomeAborted
	}
	g.stalled(cause)
	return OutcomeAborted
}

var _ io.ReadCloser = (*genBody)(nil)
