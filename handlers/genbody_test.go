package handlers

import (
	"bytes"
	"context"
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

// TestStreamEventPanicEndsTheStreamWithAnError: a panic while building an event ends the
// stream with the dialect's internal-error event and a failed outcome, logged by the panic's
// type only; the process goes on.
func TestStreamEventPanicEndsTheStreamWithAnError(t *testing.T) {
	var logs bytes.Buffer
	s := &server{opts: Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Clock: clock.Real()}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &genCall{s: s, x: &exchange{id: "req-1", route: &Route{Path: "/v1/completions"}}, d: completions{}, ctx: ctx,
		choices: make([]genChoice, 1)}
	events := make(chan indexed, 1)
	events <- indexed{0, generate.Event{HasToken: true, Trimmed: "secret-ish text"}}
	var outcome string
	b := &genBody{g: g, ans: panickyAnswer{&completionAnswer{}}, events: events, stall: time.Second, keepAlive: time.Minute,
		closed: func(o string) { outcome = o }}
	body, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(body, []byte("data: ")) || !bytes.Contains(body, []byte(`"error"`)) || outcome != OutcomeFailed {
		t.Fatalf("body %q, outcome %q: want one error event and a failed outcome", body, outcome)
	}
	if !strings.Contains(logs.String(), "stream panicked") || strings.Contains(logs.String(), "cannot be built") ||
		strings.Contains(string(body), "secret-ish") {
		t.Fatalf("log %q, body %q: the panic logged by type only, no text anywhere", logs.String(), body)
	}
}

// TestClosingAStreamWhileAReadWaits: an in-process caller that closes a stream from another
// goroutine while a read waits for the next event gets that read back failed, and the stream
// ends as a departed client's: its call's context cancelled, its outcome aborted, its
// keep-alive timer stopped.
func TestClosingAStreamWhileAReadWaits(t *testing.T) {
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	s := &server{opts: Options{Logger: slog.New(slog.DiscardHandler), Clock: fake}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	g := &genCall{s: s, x: &exchange{id: "req-2", route: &Route{Path: "/v1/completions"}}, d: completions{}, ctx: ctx,
		stalled: cancel, choices: make([]genChoice, 1)}
	outcome := make(chan string, 1)
	b := &genBody{g: g, ans: &completionAnswer{}, events: make(chan indexed), stall: time.Second, keepAlive: time.Hour,
		closed: func(o string) { outcome <- o }, stop: make(chan struct{})}
	armed := fake.TimerCreated()
	read := make(chan error, 1)
	go func() {
		_, err := b.Read(make([]byte, 64))
		read <- err
	}()
	<-armed // the read holds the stream and waits for an event or the keep-alive
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	if err := <-read; err == nil {
		t.Fatal("a read waiting when the stream was closed returned no error")
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
}
