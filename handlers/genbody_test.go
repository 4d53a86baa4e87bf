package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/generate"
)

// panickyAnswer is a dialect's answer with a bug: building any event panics.
type panickyAnswer struct{ *completionAnswer }

func (panickyAnswer) event(*genCall, int, generate.Event) []byte {
	panic("an event that cannot be built")
}

// loggedCall is a call of one choice on /v1/completions whose server logs, as JSON, to logs.
func loggedCall(t *testing.T) (g *genCall, logs *bytes.Buffer) {
	logs = &bytes.Buffer{}
	s := &server{opts: Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)), Clock: clock.Real()}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &genCall{s: s, x: &exchange{id: "req-1", route: &Route{Path: "/v1/completions"}}, d: completions{}, ctx: ctx,
		choices: make([]genChoice, 1)}, logs
}

// readToEnd reads b whole, as the HTTP server does, and closes it: the body and the stream's
// outcome.
func readToEnd(t *testing.T, b *genBody) (body []byte, outcome string) {
	t.Helper()
	b.closed = func(o string) { outcome = o }
	body, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return body, outcome
}

// TestStreamEventPanicEndsTheStreamWithAnError: a panic while building an event ends the
// stream with the dialect's internal-error event and a failed outcome, logged by the panic's
// type only; the process goes on.
func TestStreamEventPanicEndsTheStreamWithAnError(t *testing.T) {
	g, logs := loggedCall(t)
	events := make(chan indexed, 1)
	events <- indexed{0, generate.Event{HasToken: true, Trimmed: "secret-ish text"}}
	b := &genBody{g: g, ans: panickyAnswer{&completionAnswer{}}, events: events, pace: pace{stall: time.Second, keepAlive: time.Minute, interval: 1}}
	body, outcome := readToEnd(t, b)
	if !bytes.HasPrefix(body, []byte("data: ")) || !bytes.Contains(body, []byte(`"error"`)) || outcome != OutcomeFailed {
		t.Fatalf("body %q, outcome %q: want one error event and a failed outcome", body, outcome)
	}
	if !strings.Contains(logs.String(), "stream panicked") || strings.Contains(logs.String(), "cannot be built") ||
		strings.Contains(string(body), "secret-ish") {
		t.Fatalf("log %q, body %q: the panic logged by type only, no text anywhere", logs.String(), body)
	}
}

// panickyStream is a stream with a bug: reading past its first event panics.
type panickyStream struct{}

func (panickyStream) Next(context.Context) (generate.Event, error) {
	panic("a token that cannot be read")
}
func (panickyStream) PromptTokens() int                 { return 1 }
func (panickyStream) Seed() (seed uint64, sampled bool) { return 0, false }

// TestStreamReadPanicEndsTheStreamWithAnError: a panic reading one of a call's streams (on
// the goroutine that merges them) ends the stream with the dialect's error event and a failed
// outcome, logged by type only, and the process goes on.
func TestStreamReadPanicEndsTheStreamWithAnError(t *testing.T) {
	g, logs := loggedCall(t)
	g.streams, g.first = []TokenStream{panickyStream{}}, []generate.Event{{HasToken: true, Index: 1, Trimmed: "a"}}
	body, outcome := readToEnd(t, newGenBody(g, textAnswer{}, nil, pace{stall: time.Second, keepAlive: time.Minute, interval: 1}, nil))
	if !bytes.HasPrefix(body, []byte("data: a\n\ndata: ")) || !bytes.Contains(body, []byte(`"error"`)) || outcome != OutcomeFailed {
		t.Fatalf("body %q, outcome %q: want the first token, one error event and a failed outcome", body, outcome)
	}
	if !strings.Contains(logs.String(), "stream panicked") || strings.Contains(logs.String(), "cannot be read") {
		t.Fatalf("log %q: the panic logged by type only", logs.String())
	}
}

// chanStream is a call's one stream, fed by a test: an awaiter, as *generate.Stream is.
type chanStream chan generate.Event

func (c chanStream) Next(ctx context.Context) (generate.Event, error) {
	ev, _, err := c.NextOrWake(ctx, nil)
	return ev, err
}

func (c chanStream) NextOrWake(ctx context.Context, wake <-chan time.Time) (generate.Event, bool, error) {
	select {
	case ev := <-c:
		return ev, false, nil
	case <-wake:
		return generate.Event{}, true, nil
	case <-ctx.Done():
		return generate.Event{}, false, ctx.Err()
	}
}

func (chanStream) PromptTokens() int                 { return 1 }
func (chanStream) Seed() (seed uint64, sampled bool) { return 0, false }

// mergedStream is a chanStream that is no awaiter: the body reads it through g.events, as it
// reads an external model's stream and the choices of a call of several.
type mergedStream struct{ c chanStream }

func (m mergedStream) Next(ctx context.Context) (generate.Event, error) { return m.c.Next(ctx) }
func (m mergedStream) PromptTokens() int                                { return 1 }
func (m mergedStream) Seed() (seed uint64, sampled bool)                { return 0, false }

// textAnswer sends each token's text as an event's data, and ends with "end".
type textAnswer struct{}

func (textAnswer) whole(*genCall) any { return nil }
func (textAnswer) event(_ *genCall, _ int, ev generate.Event) []byte {
	if ev.Trimmed == "" {
		return nil
	}
	return []byte(ev.Trimmed)
}
func (textAnswer) end(*genCall) [][]byte { return [][]byte{[]byte("end")} }

// streamBody is the body of a call of one choice whose first event is first and whose next
// events the test sends on the returned channel, read directly or (merged) through
// g.events, on a fake clock; ctx is the call's context, outcome gets the stream's.
func streamBody(t *testing.T, merged bool, keepAlive time.Duration, first generate.Event, opts ...func(*Options)) (b *genBody, events chanStream, fake *clock.Fake, ctx context.Context, outcome chan string) {
	t.Helper()
	return pacedBody(t, merged, pace{stall: time.Second, keepAlive: keepAlive, interval: 1}, first, opts...)
}

// pacedBody is streamBody's body written at p.
func pacedBody(t *testing.T, merged bool, p pace, first generate.Event, opts ...func(*Options)) (b *genBody, events chanStream, fake *clock.Fake, ctx context.Context, outcome chan string) {
	t.Helper()
	fake = clock.NewFake(time.Unix(1_700_000_000, 0))
	s := &server{opts: Options{Logger: slog.New(slog.DiscardHandler), Clock: fake}}
	for _, o := range opts {
		o(&s.opts)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	events = make(chanStream, 1) // a send the body does not take fails the test, not hangs it
	var st TokenStream = events
	if merged {
		st = mergedStream{events}
	}
	g := &genCall{s: s, x: &exchange{id: "req-2", route: &Route{Path: "/v1/completions"}}, d: completions{}, ctx: ctx,
		stalled: cancel, choices: make([]genChoice, 1), streams: []TokenStream{st}, first: []generate.Event{first}}
	outcome = make(chan string, 1)
	b = newGenBody(g, textAnswer{}, nil, p, func(o string) { outcome <- o })
	if (b.direct != nil) == merged {
		t.Fatalf("merged %v: the body reads its stream directly: %v", merged, b.direct != nil)
	}
	return b, events, fake, ctx, outcome
}

// onBothReads runs a stream body's test on a stream read directly and on one read through
// g.events.
func onBothReads(t *testing.T, test func(t *testing.T, merged bool)) {
	for _, merged := range []bool{false, true} {
		t.Run(fmt.Sprintf("merged=%v", merged), func(t *testing.T) { test(t, merged) })
	}
}

// readAsync reads b once on another goroutine.
func readAsync(b *genBody) <-chan string {
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		n, err := b.Read(buf)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	return got
}

// TestClosingAStreamWhileAReadWaits: an in-process caller that closes a stream from another
// goroutine while a read waits for the next event gets that read back failed, and the stream
// ends as a departed client's: its call's context cancelled, its outcome aborted, its
// keep-alive timer stopped.
func TestClosingAStreamWhileAReadWaits(t *testing.T) {
	onBothReads(t, func(t *testing.T, merged bool) {
		// A first event with nothing to send: the read goes on to wait for the next.
		b, _, fake, ctx, outcome := streamBody(t, merged, time.Hour, generate.Event{HasToken: true, Index: 1})
		armed := fake.TimerCreated()
		read := readAsync(b)
		<-armed // the read holds the stream and waits for an event or the keep-alive
		closed := make(chan error, 1)
		go func() { closed <- b.Close() }()
		if got := <-read; !strings.HasPrefix(got, "error: ") {
			t.Fatalf("a read waiting when the stream was closed returned %q", got)
		}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if o := <-outcome; o != OutcomeAborted || ctx.Err() == nil {
			t.Fatalf("outcome %q, call context %v: want aborted and cancelled", o, ctx.Err())
		}
		if n := fake.Pending(); n != 0 {
			t.Fatalf("%d timers outlived Close: the keep-alive was not stopped", n)
		}
		if _, err := b.Read(make([]byte, 64)); err == nil {
			t.Fatal("a read after Close returned no error")
		}
	})
}

// TestKeepAliveCountsFromTheLastEvent: the keep-alive comment goes out after keepAlive with
// nothing sent, counted from the last event, not from when its timer was armed (which is once
// a quiet while, not once a token).
func TestKeepAliveCountsFromTheLastEvent(t *testing.T) {
	onBothReads(t, func(t *testing.T, merged bool) {
		b, events, fake, _, _ := streamBody(t, merged, 10*time.Second, tok("a"))
		if got := <-readAsync(b); got != "data: a\n\n" {
			t.Fatalf("first read %q", got)
		}
		read := readAsync(b)
		fake.Advance(6 * time.Second)
		events <- tok("b")
		if got := <-read; got != "data: b\n\n" {
			t.Fatalf("second read %q", got)
		}
		armed := fake.TimerCreated()
		read = readAsync(b)
		fake.Advance(4 * time.Second) // the timer armed with the first event fires, 4 s after "b"
		<-armed                       // and is armed again for the 6 s left
		fake.Advance(5 * time.Second)
		events <- tok("c")
		if got := <-read; got != "data: c\n\n" {
			t.Fatalf("after 9 s of quiet the read gave %q, want the next event", got)
		}
		read = readAsync(b)
		fake.Advance(10 * time.Second)
		if got := <-read; got != ": keep-alive\n\n" {
			t.Fatalf("after 10 s of quiet the read gave %q, want the keep-alive", got)
		}
		read = readAsync(b)
		events <- generate.Event{HasToken: true, Trimmed: "d", Done: true, Finish: generate.FinishLength}
		if got := <-read; got != "data: d\n\n" {
			t.Fatalf("last event's read %q", got)
		}
		if got := <-readAsync(b); got != "data: end\n\n" {
			t.Fatalf("end's read %q", got)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIgnoredDepartureRunsTheStreamToItsEnd: with departures ignored (a benchmark's setting),
// a stream whose client left is read to its end unread, its call's context left alone, and
// its outcome told then.
func TestIgnoredDepartureRunsTheStreamToItsEnd(t *testing.T) {
	onBothReads(t, func(t *testing.T, merged bool) {
		b, events, _, ctx, outcome := streamBody(t, merged, time.Hour, tok("a"),
			func(o *Options) { o.IgnoreDisconnects = true })
		if got := <-readAsync(b); got != "data: a\n\n" {
			t.Fatalf("first read %q", got)
		}
		if err := b.Close(); err != nil { // the client left
			t.Fatal(err)
		}
		events <- tok("b")
		select {
		case o := <-outcome:
			t.Fatalf("outcome %q before the stream ended", o)
		default:
		}
		events <- generate.Event{HasToken: true, Trimmed: "c", Done: true, Finish: generate.FinishLength}
		if o := <-outcome; o != OutcomeAborted || ctx.Err() != nil {
			t.Fatalf("outcome %q, call context %v: want aborted, the context alone", o, ctx.Err())
		}
	})
}

// nextRead is what a read gives, failing the test at the hang guard (which only stops a
// broken body from hanging its test; no assertion depends on it).
func nextRead(t *testing.T, read <-chan string) string {
	t.Helper()
	select {
	case got := <-read:
		return got
	case <-time.After(hangGuard):
		t.Fatal("the read still waits (hang guard)")
		return ""
	}
}

// feed sends evs on events in order from another goroutine, so that a body that stops taking
// them fails its test rather than hanging it. Each send waits for the body to take the event
// before it (events holds one).
func feed(t *testing.T, events chanStream, evs ...generate.Event) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for _, ev := range evs {
			select {
			case events <- ev:
			case <-done:
				return
			}
		}
	}()
}

// tok is a token event whose text is text.
func tok(text string) generate.Event { return generate.Event{HasToken: true, Trimmed: text} }

// pacedAfterFirst is pacedBody's body with the first event, "a", read: written alone.
func pacedAfterFirst(t *testing.T, merged bool, p pace) (b *genBody, events chanStream, fake *clock.Fake, ctx context.Context, outcome chan string) {
	t.Helper()
	b, events, fake, ctx, outcome = pacedBody(t, merged, p, tok("a"))
	if got := nextRead(t, readAsync(b)); got != "data: a\n\n" {
		t.Fatalf("first read %q, want the first event alone", got)
	}
	return b, events, fake, ctx, outcome
}

// closeWithoutTimers closes b and fails the test if a timer outlived it.
func closeWithoutTimers(t *testing.T, b *genBody, fake *clock.Fake) {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fake.Pending(); n != 0 {
		t.Fatalf("%d timers outlived Close", n)
	}
}

// TestStreamIntervalHoldsEventsAfterTheFirst: with an interval of 3, the first event is one
// write, the next three are the second, and the stream's end sends the events held with it.
// Events that send nothing do not count.
func TestStreamIntervalHoldsEventsAfterTheFirst(t *testing.T) {
	onBothReads(t, func(t *testing.T, merged bool) {
		b, events, fake, _, _ := pacedAfterFirst(t, merged, pace{stall: time.Second, keepAlive: time.Hour, interval: 3})
		feed(t, events, tok("b"), tok(""), tok("c"), tok("d"),
			tok("e"), generate.Event{HasToken: true, Trimmed: "f", Done: true, Finish: generate.FinishLength})
		if got := nextRead(t, readAsync(b)); got != "data: b\n\ndata: c\n\ndata: d\n\n" {
			t.Fatalf("second read %q, want the next three events in one", got)
		}
		if got := nextRead(t, readAsync(b)); got != "data: e\n\ndata: f\n\ndata: end\n\n" {
			t.Fatalf("last read %q, want the two events held and the end", got)
		}
		closeWithoutTimers(t, b, fake)
	})
}

// TestHeldEventsWaitAtMostMaxHold: a stream whose events are held and whose next are slow (a
// preempted sequence, an external model's that slows) sends what it holds once the first of
// them has waited maxHold, not before, and its keep-alive then counts from that write.
func TestHeldEventsWaitAtMostMaxHold(t *testing.T) {
	onBothReads(t, func(t *testing.T, merged bool) {
		b, events, fake, _, _ := pacedAfterFirst(t, merged, pace{stall: time.Second, keepAlive: 10 * time.Second, interval: 4})
		armed := fake.TimerCreated()
		read := readAsync(b)
		send := func(evs ...generate.Event) {
			for _, ev := range evs {
				select {
				case events <- ev:
				case got := <-read:
					t.Fatalf("the read gave %q before the hold's while, want the events held", got)
				}
			}
		}
		send(tok("b"))
		select { // "b" is held
		case <-armed:
		case <-time.After(hangGuard):
			t.Fatal("no timer holds the event (hang guard)")
		}
		fake.Advance(maxHold - time.Millisecond)
		// Three events that send nothing behind "c": the last goes in only once the body has
		// taken "c", through the goroutine and channel between when merged.
		send(tok("c"), tok(""), tok(""), tok(""))
		fake.Advance(time.Millisecond)
		if got := nextRead(t, read); got != "data: b\n\ndata: c\n\n" {
			t.Fatalf("after the hold's while the read gave %q, want the two events held", got)
		}
		// The keep-alive counts from that write: its timer, armed with the first event, fires
		// maxHold/2 short of a quiet while and is armed again, and an event then is held.
		armed = fake.TimerCreated()
		read = readAsync(b)
		fake.Advance(10*time.Second - maxHold/2)
		select {
		case <-armed:
		case <-time.After(hangGuard):
			t.Fatal("the keep-alive's timer was not armed again (hang guard)")
		}
		send(tok("d"), tok(""), tok(""), tok(""), tok(""))
		fake.Advance(maxHold)
		if got := nextRead(t, read); got != "data: d\n\n" {
			t.Fatalf("after a write and less than a quiet while the read gave %q, want the event held", got)
		}
		closeWithoutTimers(t, b, fake)
	})
}

// TestClosingWhileEventsAreHeld: a stream closed with events held (its client left) ends as a
// departed client's, its timers stopped.
func TestClosingWhileEventsAreHeld(t *testing.T) {
	onBothReads(t, func(t *testing.T, merged bool) {
		b, events, fake, ctx, outcome := pacedAfterFirst(t, merged, pace{stall: time.Second, keepAlive: time.Hour, interval: 4})
		armed := fake.TimerCreated()
		read := readAsync(b)
		events <- tok("b")
		select { // "b" is held
		case <-armed:
		case <-time.After(hangGuard):
			t.Fatal("no timer holds the event (hang guard)")
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if got := nextRead(t, read); !strings.HasPrefix(got, "error: ") {
			t.Fatalf("a read holding an event when the stream was closed returned %q", got)
		}
		if o := <-outcome; o != OutcomeAborted || ctx.Err() == nil {
			t.Fatalf("outcome %q, call context %v: want aborted and cancelled", o, ctx.Err())
		}
		if n := fake.Pending(); n != 0 {
			t.Fatalf("%d timers outlived Close", n)
		}
	})
}

// boomAnswer is textAnswer with a bug: building the event of the text "boom" panics.
type boomAnswer struct{ textAnswer }

func (a boomAnswer) event(g *genCall, i int, ev generate.Event) []byte {
	if ev.Trimmed == "boom" {
		panic("an event that cannot be built")
	}
	return a.textAnswer.event(g, i, ev)
}

// TestEventsHeldGoOutBeforeAnEarlyEnd: a stream that ends early with events held (its error,
// or a panic building the next event) writes them, then its error event, then nothing.
func TestEventsHeldGoOutBeforeAnEarlyEnd(t *testing.T) {
	for name, last := range map[string]generate.Event{
		"error": {Err: errors.New("the engine failed")},
		"panic": {HasToken: true, Trimmed: "boom"},
	} {
		t.Run(name, func(t *testing.T) {
			onBothReads(t, func(t *testing.T, merged bool) {
				b, events, fake, _, outcome := pacedAfterFirst(t, merged, pace{stall: time.Second, keepAlive: time.Hour, interval: 4})
				b.ans = boomAnswer{}
				feed(t, events, tok("b"), tok("c"), last)
				got := nextRead(t, readAsync(b))
				if !strings.HasPrefix(got, "data: b\n\ndata: c\n\ndata: {") || !strings.Contains(got, `"error"`) {
					t.Fatalf("read %q, want the two events held and the error event", got)
				}
				if got := nextRead(t, readAsync(b)); got != "error: EOF" {
					t.Fatalf("read after the error %q, want the end", got)
				}
				closeWithoutTimers(t, b, fake)
				if o := <-outcome; o != OutcomeFailed {
					t.Fatalf("outcome %q, want failed", o)
				}
			})
		})
	}
}
