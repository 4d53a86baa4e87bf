package main

import (
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
