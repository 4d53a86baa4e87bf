package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/natsbox"
)

// deidentifyUntil has workers send /pii/deidentify, each with a request id of its own, until
// stop is set; it returns the ids answered 200. enough is closed once want were answered.
func deidentifyUntil(t *testing.T, url string, workers int, next *atomic.Int64, stop *atomic.Bool, want int64, enough chan struct{}) []string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var answered []string
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for !stop.Load() {
				id := fmt.Sprintf("%032x", next.Add(1))
				req, _ := http.NewRequest("POST", url+"/pii/deidentify",
					strings.NewReader(`{"text":"Maria Lopez, DOB 03/14/1962, was seen at Mercy Hospital; call (415) 555-0132."}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Request-ID", id)
				resp, err := client.Do(req)
				if err != nil {
					continue // the server was killed under it
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && resp.Header.Get("X-Request-ID") == id {
					mu.Lock()
					answered = append(answered, id)
					n := int64(len(answered))
					mu.Unlock()
					if n >= want && enough != nil {
						once.Do(func() { close(enough) })
					}
				}
			}
		})
	}
	wg.Wait()
	return answered
}

// readAudit pages through GET /privacy-gateway/audit; every page must verify.
func readAudit(t *testing.T, url string) []audit.Stored {
	t.Helper()
	var out []audit.Stored
	cursor := ""
	for {
		resp, err := http.Get(url + "/privacy-gateway/audit?limit=1000" + cursor)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Records    []audit.Stored
			Verified   bool
			Breaks     []audit.Break
			NextCursor *uint64 `json:"next_cursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !page.Verified {
			t.Fatalf("audit page: %d, %v, breaks %+v", resp.StatusCode, err, page.Breaks)
		}
		out = append(out, page.Records...)
		if page.NextCursor == nil {
			return out
		}
		cursor = fmt.Sprintf("&cursor=%d", *page.NextCursor)
	}
}

// TestAuditSurvivesSIGKILL: the real binary de-identifies under concurrent load and is killed
// with SIGKILL mid-load; started again on the same data directory, it continues its chain.
// Every request answered 200, before the kill or after, has its record (matched by request
// id), every chain verifies through the endpoint, and `sluice audit verify` agrees offline.
func TestAuditSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"SLUICE_DATA_DIR=" + dir, "SLUICE_REPLICA_ID=r1", "SLUICE_GENERATE_MODEL=none"}
	var next atomic.Int64
	p := startProcess(t, env...)
	var stop atomic.Bool
	enough := make(chan struct{})
	done := make(chan []string, 1)
	go func() { done <- deidentifyUntil(t, p.url, 8, &next, &stop, 150, enough) }()
	select {
	case <-enough:
	case <-p.exited:
		t.Fatal("the server exited under load")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil { // mid-load: eight requests in flight
		t.Fatal(err)
	}
	<-p.exited
	stop.Store(true)
	before := <-done
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the first process ended with %v, not SIGKILL", p.cmd.ProcessState)
	}

	p = startProcess(t, env...)
	stop.Store(false)
	after := deidentifyUntilN(t, p.url, &next, 40)
	records := readAudit(t, p.url)
	byID := map[string]audit.Stored{}
	for _, r := range records {
		if r.Replica != "r1" || r.Route != "/pii/deidentify" || strings.Contains(fmt.Sprint(r.Record), "Maria") {
			t.Fatalf("record %+v", r)
		}
		byID[r.RequestID] = r
	}
	var lastBefore uint64
	for _, id := range before {
		r, ok := byID[id]
		if !ok || r.HTTPStatus != 200 || r.Status != "served" {
			t.Fatalf("request %s was answered 200 before the kill but its record is %+v (found %v)", id, r, ok)
		}
		lastBefore = max(lastBefore, r.Seq)
	}
	for _, id := range after {
		if r, ok := byID[id]; !ok || r.Seq <= lastBefore {
			t.Fatalf("request %s after the restart: record %+v (found %v), chain before the kill ended at %d", id, r, ok, lastBefore)
		}
	}
	if n := len(records); n < len(before)+len(after) || n > len(before)+len(after)+8 {
		t.Errorf("%d records for %d answers and at most 8 requests the kill cut", n, len(before)+len(after))
	}
	t.Logf("%d answered before the kill, %d after; %d records", len(before), len(after), len(records))

	// Offline, with the server stopped, the binary verifies the same stream.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	out, err := exec.Command(serverBinary(t), "audit", "verify", "-data-dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("replica r1: %d records, chain 1 to %d: verified", len(records), len(records))) {
		t.Fatalf("sluice audit verify: %v\n%s", err, out)
	}
}

// deidentifyUntilN sends /pii/deidentify until n were answered 200.
func deidentifyUntilN(t *testing.T, url string, next *atomic.Int64, n int64) []string {
	var stop atomic.Bool
	enough := make(chan struct{})
	done := make(chan []string, 1)
	go func() { done <- deidentifyUntil(t, url, 4, next, &stop, n, enough) }()
	<-enough
	stop.Store(true)
	return <-done
}

// `sluice audit verify` on a data directory: exit 0 and each replica's count on an intact
// stream, exit 1 naming the break once one record has been published again altered, exit 2
// where there is no store or it is in use.
func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	box, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: dir, Replicas: 1}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for _, replica := range []string{"a", "b"} {
		l, err := audit.Open(context.Background(), box, replica, audit.Config{Enabled: true, AckTimeout: 5 * time.Second}, clock.Real(), nil, quiet)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if _, err := l.Append(context.Background(), audit.Record{RequestID: fmt.Sprint(i), Route: "/pii/deidentify", Status: "served"}); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
	}
	verify := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := auditCommand(append([]string{"verify"}, args...), []string{"SLUICE_DATA_DIR=" + dir}, &out, &out)
		return code, out.String()
	}
	if code, out := verify("-data-dir", dir); code != 2 || !strings.Contains(out, "in use") {
		t.Errorf("a directory in use: %d\n%s", code, out)
	}
	// Record 4 of b (stream sequence 14), published again with its status altered.
	st, err := box.JetStream().Stream(context.Background(), audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(context.Background(), 14)
	if err != nil {
		t.Fatal(err)
	}
	box.Close()
	if code, out := verify(); code != 0 || !strings.Contains(out, "replica a: 10 records, chain 1 to 10: verified") ||
		!strings.Contains(out, "replica b: 10 records, chain 1 to 10: verified") {
		t.Fatalf("intact: %d\n%s", code, out)
	}
	box, err = natsbox.Open(context.Background(), natsbox.Config{DataDir: dir, Replicas: 1}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Decode(m.Data)
	if err != nil || r.Replica != "b" || r.Seq != 4 {
		t.Fatalf("stream sequence 14: %+v, %v", r, err)
	}
	r.Status = "failed"
	data, _ := audit.Encode(r)
	if _, err := box.JetStream().Publish(context.Background(), m.Subject, data); err != nil {
		t.Fatal(err)
	}
	box.Close()
	code, out := verify("-data-dir", dir)
	if code != 1 || !strings.Contains(out, "replica b: 11 records, chain 1 to 10: BROKEN") ||
		!strings.Contains(out, "first break: replica b, stream sequence 21, record 4: sequence") || !strings.Contains(out, "replica a: 10 records, chain 1 to 10: verified") {
		t.Errorf("altered: %d\n%s", code, out)
	}
	if code, out := verify("-data-dir", t.TempDir()); code != 2 || !strings.Contains(out, "no JetStream store") {
		t.Errorf("an empty directory: %d\n%s", code, out)
	}
	if code, _ := verify("-data-dir", dir, "-nats-url", "nats://x:4222"); code != 2 {
		t.Errorf("both a directory and a URL: %d", code)
	}
}
