package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/logtest"
)

// scrapeSum is the sum of the samples of family name whose labels contain every one of parts.
func scrapeSum(t *testing.T, url, name string, parts ...string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, line := range strings.Split(string(data), "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(series, name+"{") || !containsAll(series, parts) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		sum += v
	}
	return sum
}

// TestShutdownKeepsItsGrace: with a one-second grace and a document of seconds' work in
// flight, SIGTERM ends the process within the grace plus a second, and the document's client
// gets a 503 not_ready (shutting_down) answer, not a dropped connection.
func TestShutdownKeepsItsGrace(t *testing.T) {
	// Not parallel: the child's exit after SIGTERM is timed against its grace.
	if testing.Short() {
		t.Skip("seconds of inference")
	}
	const grace = time.Second
	p := startProcess(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_SHUTDOWN_TIMEOUT_S=1", "SLUICE_REQUEST_TIMEOUT_MS=120000")
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(p.url+"/analyze", "application/json",
			strings.NewReader(`{"text":"`+strings.Repeat(".", 100000)+`"}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- answer{resp.StatusCode, string(body), err}
	}()
	// Under way: some of its chunks have run.
	for i := 0; scrapeSum(t, p.url, "sluice_batcher_batches_total", `queue="analyze"`) < 2; i++ {
		if i == 2000 { // each scrape is a request to the server: a hang guard, as waitForMetric's
			t.Fatal("the document's chunks never ran")
		}
		runtime.Gosched()
	}
	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a := <-answered
	if a.err != nil || a.status != http.StatusServiceUnavailable || !containsAll(a.body, []string{"not_ready", "shutting_down"}) {
		t.Fatalf("in-flight request at the end of the grace: %d %q %v", a.status, a.body, a.err)
	}
	<-p.exited
	took := time.Since(signalled)
	if p.waitErr != nil {
		t.Fatalf("exit: %v", p.waitErr)
	}
	// The promise under test is itself a time: this bounds it with the second it allows.
	if took > grace+time.Second {
		t.Fatalf("process exited %v after SIGTERM, grace %v", took, grace)
	}
	t.Logf("exited %v after SIGTERM", took)
}

// failingListener is a listener whose Accept fails, with an error that is not a timeout,
// once fail is closed: a listener as a process out of descriptors or a revoked socket sees it.
type failingListener struct {
	net.Listener
	fail chan struct{}
}

func (l failingListener) Accept() (net.Conn, error) {
	type accepted struct {
		c   net.Conn
		err error
	}
	got := make(chan accepted, 1)
	go func() {
		c, err := l.Listener.Accept()
		got <- accepted{c, err}
	}()
	select {
	case a := <-got:
		return a.c, a.err
	case <-l.fail:
		_ = l.Listener.Close() // the Accept above returns; what it might have taken is closed
		if a := <-got; a.c != nil {
			a.c.Close()
		}
		return nil, errors.New("accept: the listener failed")
	}
}

// TestAFailedListenerDrainsWhatItTook: when the HTTP listener fails, the request in flight on
// a connection it took is answered as a SIGTERM's grace would answer it, and serve then
// reports the failure.
func TestAFailedListenerDrainsWhatItTook(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seconds of inference")
	}
	cfg, err := LoadConfig([]string{"SLUICE_ADDR=127.0.0.1:0", "SLUICE_DEVICE=cpu", "SLUICE_INTRA_OP_THREADS=1",
		"SLUICE_QUANTIZE=off", "SLUICE_DATA_DIR=" + t.TempDir(), "SLUICE_GENERATE_MODEL=none",
		"SLUICE_SHUTDOWN_TIMEOUT_S=600", "SLUICE_REQUEST_TIMEOUT_MS=600000"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	srv, err := newServer(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)), clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	fail := make(chan struct{})
	srv.listen = func(network, address string) (net.Listener, error) {
		ln, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		return failingListener{ln, fail}, nil
	}
	ready := make(chan net.Addr, 1)
	stopped := make(chan error, 1)
	go func() { stopped <- srv.serve(context.Background(), ready) }()
	url := "http://" + (<-ready).String()

	type answer struct {
		status int
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(url+"/analyze", "application/json", strings.NewReader(`{"text":"`+strings.Repeat("Pat Smith. ", 9000)+`"}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered <- answer{resp.StatusCode, err}
	}()
	for i := 0; scrapeSum(t, url, "sluice_batcher_batches_total", `queue="analyze"`) < 1; i++ {
		if i == 2000 {
			t.Fatal("the document's chunks never ran")
		}
		runtime.Gosched()
	}
	http.DefaultClient.CloseIdleConnections() // the scrapes' connection would hold the drain open
	close(fail)
	if a := <-answered; a.err != nil || a.status != http.StatusOK {
		t.Fatalf("the request in flight when the listener failed: %d %v\n%s", a.status, a.err, logs.String())
	}
	if err := <-stopped; err == nil || !strings.Contains(err.Error(), "the listener failed") {
		t.Fatalf("serve returned %v; want the listener's failure", err)
	}
	// The HTTP server waited for the connection: its shutdown did not end early (as it does
	// on a listener's Close that fails) with the connection still open.
	if strings.Contains(logs.String(), "HTTP connections still open") {
		t.Fatalf("the shutdown did not wait for the request in flight:\n%s", logs.String())
	}
}

// TestCloseEndsWithinTheFlushWindow: a release that never ends (an unreachable NATS, a webhook
// that hangs) holds close for flushWindow, no longer, and close says so.
func TestCloseEndsWithinTheFlushWindow(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(0, 0))
	logs := &logtest.Buffer{}
	s := &server{logger: slog.New(slog.NewJSONHandler(logs, nil)), clock: clk}
	s.closeOnce.Do(func() { s.closed = make(chan struct{}) }) // released by nobody
	armed := clk.TimerCreated()
	returned := make(chan struct{})
	go func() { s.close(); close(returned) }()
	<-armed
	clk.Advance(flushWindow - time.Nanosecond)
	if clk.Pending() != 1 {
		t.Fatal("close's timer fired before the flush window had passed")
	}
	clk.Advance(time.Nanosecond)
	select {
	case <-returned:
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("close did not return at the end of the flush window")
	}
	if !strings.Contains(logs.String(), "state not flushed within the window") {
		t.Fatalf("close said nothing of what it left:\n%s", logs.String())
	}
}
