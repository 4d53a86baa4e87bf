package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/natsbox"
	"github.com/sluice-serving/sluice/natsbox/natstest"
)

func testConfig(t *testing.T, key bool) Config {
	cfg := Config{Enabled: true, MaxDocuments: 100, MaxBytes: 1 << 20, MaxPerTenant: 2, MaxKeptPerTenant: 1000, MaxQueuedDocuments: 1000,
		Workers: 2, Batch: 4, AckWait: 2 * time.Second, MaxAttempts: 3, Retention: time.Hour, WebhookAllowPrivate: true,
		WebhookTimeout: 5 * time.Second}
	if key {
		cfg.KeyFile = filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(cfg.KeyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func openBox(t *testing.T) *natsbox.Box {
	box, _ := openBoxIn(t)
	return box
}

func openBoxIn(t *testing.T) (*natsbox.Box, string) {
	dir := t.TempDir()
	box, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: dir, Replicas: 1, Replica: "t"}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	return box, dir
}

// openExternalBox is a Box on a NATS server of its own, as a fleet's replica connects to one
// (SLUICE_NATS_URL): not the process's alone, as the embedded server is.
func openExternalBox(t *testing.T) *natsbox.Box {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	box, err := natsbox.Open(context.Background(), natsbox.Config{URL: ns.ClientURL(), Replicas: 1, Replica: "t"}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	return box
}

// upper is a stand-in processor: it "redacts" every word that starts with a capital.
func upper(calls *sync.Map) Processor {
	return func(_ context.Context, _ *Record, d Document) (Outcome, error) {
		if calls != nil {
			v, _ := calls.LoadOrStore(d.ID, new(atomic.Int32))
			v.(*atomic.Int32).Add(1)
		}
		if strings.Contains(d.Text, "fail") {
			return Outcome{}, Permanent(errors.New("bad document"))
		}
		var spans []Span
		words := strings.Fields(d.Text)
		for i, w := range words {
			if w[0] >= 'A' && w[0] <= 'Z' {
				spans = append(spans, Span{Start: i, End: i + 1, Label: "NAME", TextHash: Hash(w), Confidence: 0.9})
				words[i] = "[NAME]"
			}
		}
		return Outcome{Text: strings.Join(words, " "), Spans: spans}, nil
	}
}

func open(t *testing.T, box *natsbox.Box, cfg Config, p Processor) *Manager {
	return openWith(t, box, cfg, p, nil)
}

func openWith(t *testing.T, box *natsbox.Box, cfg Config, p Processor, met *Metrics) *Manager {
	m, err := Open(context.Background(), box, cfg, clock.Real(), met, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		if err := m.Start(Work{Process: p}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(m.Close)
	return m
}

func waitStatus(t *testing.T, m *Manager, tenant, id string, want Status) *Record {
	var rec *Record
	natstest.WaitFor(t, 30*time.Second, "the job to be "+string(want), func() bool {
		var err error
		rec, err = m.Get(context.Background(), tenant, id)
		return err == nil && rec.Status == want
	})
	return rec
}

// TestJobsTwoReplicasEncryptedAtRest: two managers share one queue; every document has one
// result; nothing at rest holds a document's text.
func TestJobsTwoReplicasEncryptedAtRest(t *testing.T) {
	box, dir := openBoxIn(t)
	cfg := testConfig(t, true)
	var calls sync.Map
	metA, metB := NewMetrics(prometheus.NewRegistry()), NewMetrics(prometheus.NewRegistry())
	a := openWith(t, box, cfg, upper(&calls), metA)
	openWith(t, box, cfg, upper(&calls), metB)
	docs := make([]Document, 30)
	for i := range docs {
		docs[i] = Document{ID: fmt.Sprintf("note-%d", i), Text: fmt.Sprintf("Patient Zanzibar%d seen today", i)}
	}
	docs[7].Text = "this one will fail"
	rec, err := a.Create(context.Background(), "acme", Spec{Documents: docs, Options: json.RawMessage(`{"method":"mask"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Durable || rec.Status != Queued || rec.DocumentCount != 30 {
		t.Fatalf("created %+v", rec)
	}
	rec = waitStatus(t, a, "acme", rec.ID, Done)
	if rec.ProcessedCount != 29 || rec.FailedCount != 1 || rec.LabelHistogram["NAME"] != 2*29 || rec.ProgressPercent() != 100 {
		t.Fatalf("finished %+v", rec)
	}
	both := func(f func(*Metrics) float64) float64 { return f(metA) + f(metB) }
	docsOf := func(outcome string) float64 {
		return both(func(m *Metrics) float64 { return testutil.ToFloat64(m.documents.WithLabelValues(outcome)) })
	}
	jobsOf := func(status string) float64 {
		return both(func(m *Metrics) float64 { return testutil.ToFloat64(m.jobs.WithLabelValues(status)) })
	}
	// The record says done before the worker that finished it counts its metrics.
	natstest.WaitFor(t, 10*time.Second, "the metrics of the job's counts", func() bool {
		return docsOf("processed") == 29 && docsOf("failed") == 1 && jobsOf("created") == 1 && jobsOf("done") == 1
	})
	res, next, err := a.Results(context.Background(), "acme", rec.ID, 0, 1000)
	if err != nil || next != -1 || len(res) != 30 {
		t.Fatalf("results: %d, next %d, %v", len(res), next, err)
	}
	for i, r := range res {
		if r.Index != i || r.DocumentID != docs[i].ID || r.TextHash != Hash(docs[i].Text) {
			t.Fatalf("result %d: %+v", i, r)
		}
		if i != 7 && (strings.Contains(r.DeidentifiedText, "Zanzibar") || len(r.Spans) != 2 || r.Spans[0].DocumentID != docs[i].ID) {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	page, next, err := a.Results(context.Background(), "acme", rec.ID, 10, 5)
	if err != nil || len(page) != 5 || page[0].Index != 10 || next != 15 {
		t.Fatalf("page: %d from %v, next %d, %v", len(page), page, next, err)
	}
	// At rest: the store's files hold no text of any document.
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "Zanzibar") || strings.Contains(string(b), "note-3") {
			t.Errorf("%s holds a document's text or id in the clear", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another tenant sees none of it.
	if _, err := a.Get(context.Background(), "other", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another tenant's Get: %v", err)
	}
	if l, _ := a.List(context.Background(), "other"); len(l) != 0 {
		t.Fatalf("another tenant lists %d jobs", len(l))
	}
	if l, _ := a.List(context.Background(), "acme"); len(l) != 1 {
		t.Fatalf("the tenant lists %d jobs", len(l))
	}
}

// TestJobsWithoutKeyLiveInMemory: no key, the API says the job is not durable, and no file of
// the store holds its text.
func TestJobsWithoutKeyLiveInMemory(t *testing.T) {
	box := openBox(t)
	m := open(t, box, testConfig(t, false), upper(nil))
	rec, err := m.Create(context.Background(), "", Spec{Documents: []Document{{ID: "a", Text: "Hello Quetzalcoatl"}}})
	if err != nil || rec.Durable {
		t.Fatalf("%+v %v", rec, err)
	}
	waitStatus(t, m, "", rec.ID, Done)
}

// TestJobsBoundsAndCancel: too many documents or bytes is 413, too many unfinished jobs 429;
// a cancelled job is cancelled, its documents are not processed, and its webhook is marked as
// one that will not come.
func TestJobsBoundsAndCancel(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	m := open(t, box, cfg, nil) // no workers: jobs stay queued
	var b *Bound
	if _, err := m.Create(context.Background(), "t", Spec{Documents: make([]Document, 101)}); !errors.As(err, &b) || b.Status != 413 {
		t.Fatalf("101 documents: %v", err)
	}
	if _, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "x", Text: strings.Repeat("a", 1<<20+1)}}}); !errors.As(err, &b) || b.Status != 413 {
		t.Fatalf("too many bytes: %v", err)
	}
	one := Spec{Documents: []Document{{ID: "x", Text: "Hello Quetzalcoatl"}}}
	first, err := m.Create(context.Background(), "t", Spec{Documents: one.Documents, Webhook: &Webhook{URL: "http://127.0.0.1:9/hook"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(context.Background(), "t", one); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(context.Background(), "t", one); !errors.As(err, &b) || b.Status != 429 || b.RetryAfter <= 0 {
		t.Fatalf("a third job: %v", err)
	}
	if _, err := m.Cancel(context.Background(), "u", first.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another tenant's cancel: %v", err)
	}
	rec, err := m.Cancel(context.Background(), "t", first.ID)
	if err != nil || rec.Status != Cancelled || rec.WebhookDelivery == nil || rec.WebhookDelivery.Status != "skipped" {
		t.Fatalf("cancel: %+v %v", rec, err)
	}
	if _, err := m.Create(context.Background(), "t", one); err != nil {
		t.Fatalf("after a cancel, a place is free: %v", err)
	}
	var calls sync.Map
	if err := m.Start(Work{Process: upper(&calls)}); err != nil {
		t.Fatal(err)
	}
	l, _ := m.List(context.Background(), "t")
	for _, r := range l {
		if r.ID != first.ID {
			waitStatus(t, m, "t", r.ID, Done)
		}
	}
	if rec, _ := m.Get(context.Background(), "t", first.ID); rec.Status != Cancelled || rec.ProcessedCount != 0 || rec.WebhookDelivery.Status != "skipped" {
		t.Fatalf("the cancelled job: %+v", rec)
	}
}

// verify is the receiver's own check of OpenMed's signature, written apart from Sign and
// Canonical, over the target as the request line carried it.
func verify(r *http.Request, body []byte, secret string) bool {
	sum := sha256.Sum256(body)
	lines := []string{"OPENMED-HMAC-SHA256-V1", r.Method, r.RequestURI, r.Header.Get("X-OpenMed-Timestamp"),
		r.Header.Get("X-OpenMed-Nonce"), "sha256:" + hex.EncodeToString(sum[:])}
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, strings.Join(lines, "\n"))
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(r.Header.Get("X-OpenMed-Signature")))
}

// TestJobsWebhookSignedRetriedOnce: the receiver fails the first attempt and accepts the
// second; both are signed, with different nonces, and no document text is in the body.
func TestJobsWebhookSignedRetriedOnce(t *testing.T) {
	var mu sync.Mutex
	var nonces []string
	var bad atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !verify(r, body, "s3cret") || r.Header.Get("X-OpenMed-Event") != "job.done" || strings.Contains(string(body), "Quetzalcoatl") {
			bad.Add(1)
		}
		mu.Lock()
		nonces = append(nonces, r.Header.Get("X-OpenMed-Nonce"))
		n := len(nonces)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(204)
	}))
	defer srv.Close()
	box := openBox(t)
	m := open(t, box, testConfig(t, true), upper(nil))
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello Quetzalcoatl"}},
		Webhook: &Webhook{URL: srv.URL + "/hook?x=1", Secret: "s3cret", MaxAttempts: 4, BackoffSeconds: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, "the webhook delivered", func() bool {
		r, err := m.Get(context.Background(), "t", rec.ID)
		return err == nil && r.WebhookDelivery != nil && r.WebhookDelivery.Status == "delivered"
	})
	r, _ := m.Get(context.Background(), "t", rec.ID)
	mu.Lock()
	defer mu.Unlock()
	if bad.Load() != 0 || len(nonces) != 2 || nonces[0] == nonces[1] || r.WebhookDelivery.Attempts != 2 || r.WebhookDelivery.LastStatusCode != 204 {
		t.Fatalf("bad %d, nonces %v, delivery %+v", bad.Load(), nonces, r.WebhookDelivery)
	}
}

// TestJobsWebhookSignsTheTargetSent: a URL that ends in an empty query is sent with its '?'
// on the request line, and signed so; a receiver that checks what it received accepts it.
func TestJobsWebhookSignsTheTargetSent(t *testing.T) {
	var mu sync.Mutex
	targets := map[string]bool{} // the request line's target: whether its signature held
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ok := verify(r, body, "s3cret")
		mu.Lock()
		targets[r.RequestURI] = ok
		mu.Unlock()
		if !ok {
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(204)
	}))
	defer srv.Close()
	box := openBox(t)
	m := open(t, box, testConfig(t, true), upper(nil))
	for _, u := range []string{srv.URL + "/hook?", srv.URL + "?"} {
		rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello"}},
			Webhook: &Webhook{URL: u, Secret: "s3cret", MaxAttempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var r *Record
		natstest.WaitFor(t, 30*time.Second, "the webhook's outcome", func() bool {
			r, err = m.Get(context.Background(), "t", rec.ID)
			return err == nil && r.WebhookDelivery != nil && r.WebhookDelivery.Status != "pending"
		})
		if r.WebhookDelivery.Status != "delivered" {
			mu.Lock()
			t.Errorf("%s: delivery %+v; targets received (signature held) %v", u, r.WebhookDelivery, targets)
			mu.Unlock()
		}
	}
}

// TestJobsWebhookPrivateRefused: without the setting, a loopback webhook is refused up front.
func TestJobsWebhookPrivateRefused(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.WebhookAllowPrivate = false
	m := open(t, box, cfg, nil)
	for _, u := range []string{"http://127.0.0.1:9/x", "http://169.254.169.254/", "http://10.0.0.1/", "ftp://example.com/",
		"http://[64:ff9b::a00:1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:7f00:1::]/", "http://[64:ff9b:1::1]/"} { // 10.0.0.1, the metadata address and loopback through NAT64 and 6to4
		var b *Bound
		if _, err := m.Create(context.Background(), "t", Spec{Webhook: &Webhook{URL: u}}); !errors.As(err, &b) || b.Status != 422 {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestAWebhookPortNoConnectionCanUseIsRefused: a port past 65535, or 0, is refused when the
// job is made; url.Parse took any digits, and every attempt then failed to connect.
func TestAWebhookPortNoConnectionCanUseIsRefused(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, true), nil)
	for _, u := range []string{"http://8.8.8.8:99999/hook", "http://8.8.8.8:0/hook", "https://[2001:4860:4860::8888]:65536/"} {
		var b *Bound
		if _, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "x"}}, Webhook: &Webhook{URL: u, MaxAttempts: 1}}); !errors.As(err, &b) || b.Status != 422 || b.Field != "webhook.url" {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestPublicAddressesThroughTranslatorsAreAllowed: NAT64 and 6to4 addresses of public IPv4
// ones stay reachable.
func TestPublicAddressesThroughTranslatorsAreAllowed(t *testing.T) {
	for _, a := range []string{"64:ff9b::808:808", "2002:808:808::1", "2001:4860:4860::8888", "8.8.8.8"} {
		if forbidden(netip.MustParseAddr(a)) {
			t.Errorf("%s refused", a)
		}
	}
}

// TestSpecialPurposeAddressesAreRefused: the ranges the public internet does not route, which
// clouds and clusters hand out inside (benchmarking, reserved, ...), are as internal as private
// ones, directly or through NAT64.
func TestSpecialPurposeAddressesAreRefused(t *testing.T) {
	for _, a := range []string{"198.18.0.1", "198.19.255.1", "240.0.0.1", "255.255.255.255", "192.0.0.8", "0.1.2.3",
		"100.64.0.1", "192.0.2.10", "203.0.113.5", "2001:db8::1", "100::1", "64:ff9b::c612:1", "2001:2::1", "3fff::1", "2001:0:4136:e378::1",
		"5f00::1", "100:0:0:1::1", "2001:5::1", "2001:10::1", "2001:1ff::1"} { // SRv6, the dummy prefix, IETF assignments (ORCHID among them)
		if !forbidden(netip.MustParseAddr(a)) {
			t.Errorf("%s allowed", a)
		}
	}
}

// TestJobsKeepTheFirstStoredResult: a document whose result was stored by a run that died
// before counting it (a crash between the two) is counted with that result when it runs
// again, even though the second run fails: the results and the counts agree.
func TestJobsKeepTheFirstStoredResult(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	m := open(t, box, cfg, nil)
	rec, err := m.Create(context.Background(), "acme", Spec{Documents: []Document{{ID: "only", Text: "Patient Zanzibar seen"}},
		Options: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	k := docKey(rec.ID, 0)
	first, _ := json.Marshal(Result{Index: 0, DocumentID: "only", DeidentifiedText: "Patient [NAME] seen",
		Spans: []Span{{Start: 8, End: 16, Label: "NAME", DocumentID: "only"}}})
	if _, err := m.results.Put(context.Background(), k, m.seal.seal(k, first)); err != nil {
		t.Fatal(err)
	}
	failing := func(context.Context, *Record, Document) (Outcome, error) {
		return Outcome{}, Permanent(errors.New("the second run fails"))
	}
	if err := m.Start(Work{Process: failing}); err != nil {
		t.Fatal(err)
	}
	rec = waitStatus(t, m, "acme", rec.ID, Done)
	if rec.ProcessedCount != 1 || rec.FailedCount != 0 || rec.LabelHistogram["NAME"] != 1 {
		t.Fatalf("counted %+v", rec)
	}
	res, _, err := m.Results(context.Background(), "acme", rec.ID, 0, 10)
	if err != nil || len(res) != 1 || res[0].Error != "" || res[0].DeidentifiedText != "Patient [NAME] seen" {
		t.Fatalf("results %+v, %v", res, err)
	}
}

// TestJobsSettleEachRunsCharge: a run whose result is stored is settled kept; a run that finds
// an earlier run's result stored is settled not kept (its charge refunded), and that result
// counts.
func TestJobsSettleEachRunsCharge(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	m := open(t, box, cfg, nil)
	rec, err := m.Create(context.Background(), "acme", Spec{Documents: []Document{{ID: "a", Text: "one"}, {ID: "b", Text: "two"}},
		Options: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	k := docKey(rec.ID, 1)
	earlier, _ := json.Marshal(Result{Index: 1, DocumentID: "b", DeidentifiedText: "earlier", Spans: []Span{}})
	if _, err := m.results.Put(context.Background(), k, m.seal.seal(k, earlier)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	kept := map[string]bool{}
	if err := m.Start(Work{Process: func(_ context.Context, _ *Record, d Document) (Outcome, error) {
		return Outcome{Text: "now", Spans: []Span{}, Settle: func(k bool) { mu.Lock(); kept[d.ID] = k; mu.Unlock() }}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, m, "acme", rec.ID, Done)
	res, _, err := m.Results(context.Background(), "acme", rec.ID, 0, 10)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || len(res) != 2 || res[0].DeidentifiedText != "now" || res[1].DeidentifiedText != "earlier" ||
		len(kept) != 2 || !kept["a"] || kept["b"] {
		t.Fatalf("results %+v, %v; settled %v", res, err, kept)
	}
}

// startCounting starts m's work with a process that counts its runs, each a success.
func startCounting(t *testing.T, m *Manager) *atomic.Int32 {
	t.Helper()
	var runs atomic.Int32
	if err := m.Start(Work{Process: func(context.Context, *Record, Document) (Outcome, error) {
		runs.Add(1)
		return Outcome{Text: "fine", Spans: []Span{}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	return &runs
}

// limitResults makes m's results bucket hold at most maxBytes.
func limitResults(t *testing.T, box *natsbox.Box, m *Manager, maxBytes int64) {
	t.Helper()
	st, err := box.JetStream().Stream(context.Background(), "KV_"+m.n.results)
	if err != nil {
		t.Fatal(err)
	}
	sc := st.CachedInfo().Config
	sc.MaxBytes = maxBytes
	if _, err := box.JetStream().UpdateStream(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
}

// TestJobsAResultTheStoreRefusesIsATry: a run whose result the store refuses (full) counts as
// a try, so that the document runs MaxAttempts times, then fails saying why, where it ran
// every second for as long as the queue kept it.
func TestJobsAResultTheStoreRefusesIsATry(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxAttempts = 2
	m := open(t, box, cfg, nil)
	limitResults(t, box, m, 4<<10) // room for a failure's result, not for a de-identified text
	rec, err := m.Create(context.Background(), "acme", Spec{Documents: []Document{{ID: "a", Text: "one"}, {ID: "b", Text: "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	var calls sync.Map
	if err := m.Start(Work{Process: func(ctx context.Context, rec *Record, d Document) (Outcome, error) {
		v, _ := calls.LoadOrStore(d.ID, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
		return Outcome{Text: strings.Repeat("x", 8<<10), Spans: []Span{}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, m, "acme", rec.ID, Failed)
	for _, id := range []string{"a", "b"} {
		if v, _ := calls.Load(id); v == nil || v.(*atomic.Int32).Load() != int32(cfg.MaxAttempts) {
			t.Errorf("document %s ran %v times, want %d", id, v, cfg.MaxAttempts)
		}
	}
	res, _, err := m.Results(context.Background(), "acme", rec.ID, 0, 10)
	if err != nil || len(res) != 2 || res[0].Error != "the document's result could not be stored" || res[1].Error != res[0].Error {
		t.Fatalf("results %+v, %v", res, err)
	}
}

// TestJobsAFullStoreStillEndsTheJob: a results bucket with no room even for a failure's
// error still ends the job: once the document's tries are spent it is counted as failed in
// the job's record, without a result. Its failure used to be written to the same full bucket,
// refused, and given back for ever, the job running (and counted among its tenant's
// unfinished) until it expired.
func TestJobsAFullStoreStillEndsTheJob(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxAttempts = 1
	m := open(t, box, cfg, nil)
	ctx := context.Background()
	limitResults(t, box, m, 64) // no result fits
	rec, err := m.Create(ctx, "acme", Spec{Documents: []Document{{ID: "a", Text: "one"}}})
	if err != nil {
		t.Fatal(err)
	}
	runs := startCounting(t, m)
	got := waitStatus(t, m, "acme", rec.ID, Failed)
	if got.FailedCount != 1 || got.ProcessedCount != 0 || runs.Load() != 1 {
		t.Errorf("the job %+v after %d runs", got, runs.Load())
	}
	if res, _, err := m.Results(ctx, "acme", rec.ID, 0, 10); err != nil || len(res) != 0 {
		t.Errorf("results of a document whose failure did not fit: %+v, %v", res, err)
	}
}

// TestJobsAStoreAwayIsNoTry: a result the store does not answer for (its stream gone a while,
// as a cluster's without a leader answers no one) is no try: the document runs again until
// the store is back, and its result is its own. Counted, one try of a short outage failed it
// for good ("could not be stored") though it ran well.
func TestJobsAStoreAwayIsNoTry(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxAttempts = 1
	m := open(t, box, cfg, nil)
	ctx := context.Background()
	st, err := box.JetStream().Stream(ctx, "KV_"+m.n.results)
	if err != nil {
		t.Fatal(err)
	}
	sc := st.CachedInfo().Config
	if err := box.JetStream().DeleteStream(ctx, sc.Name); err != nil {
		t.Fatal(err)
	}
	rec, err := m.Create(ctx, "acme", Spec{Documents: []Document{{ID: "a", Text: "one"}}})
	if err != nil {
		t.Fatal(err)
	}
	runs := startCounting(t, m)
	natstest.WaitFor(t, 30*time.Second, "the document to run again while the store is away", func() bool { return runs.Load() >= 2 })
	if _, err := box.JetStream().CreateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, m, "acme", rec.ID, Done)
	if res, _, err := m.Results(ctx, "acme", rec.ID, 0, 10); err != nil || len(res) != 1 || res[0].Error != "" || res[0].DeidentifiedText != "fine" {
		t.Fatalf("results once the store is back: %+v, %v", res, err)
	}
}

// naked is a message that tells how long it was given back for, delivered as often as said.
type naked struct {
	jetstream.Msg
	delivered uint64
	delay     time.Duration
}

func (n *naked) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{NumDelivered: n.delivered}, nil
}

func (n *naked) NakWithDelay(d time.Duration) error {
	n.delay = d
	return nil
}

// TestJobsAStoreAwayLongerWaitsLonger: a document whose result the store does not take (no
// responders, a stream gone) waits a second more each time it comes back, up to a minute, still
// uncounted. It came back every second for as long as the store was away, every queued
// document run through the model each time.
func TestJobsAStoreAwayLongerWaitsLonger(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, true), nil)
	away := errors.New("nats: no responders available for request")
	job := newID()
	var got []time.Duration
	// First met at its third delivery (a restart forgot the others): those before are not
	// held against it.
	for _, delivered := range []uint64{3, 4, 5, 30, 62, 500} {
		msg := &naked{delivered: delivered}
		m.retry(&item{msg: msg, w: work{Job: job}}, away, m.n.results)
		got = append(got, msg.delay)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 28 * time.Second, time.Minute, time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if n := m.tries.failures(docKey(job, 0)); n != 0 {
		t.Errorf("%d tries counted while the store was away", n)
	}
	// Nor are the outage's deliveries held against it afterwards: the first run that fails
	// after it is a try, not the deliveries' backstop (it failed the document at once).
	m.fingerprint = func(_, text string) string { return Hash(text) }
	it := &item{msg: &naked{delivered: 501}, w: work{Job: job}, rec: &Record{ID: job, Tenant: "acme"}, doc: Document{ID: "a", Text: "one"}}
	m.process(context.Background(), func(context.Context, *Record, Document) (Outcome, error) {
		return Outcome{}, errors.New("transient")
	}, it)
	if it.res.Error != "" {
		t.Errorf("the first run that failed after the outage ended the document: %q", it.res.Error)
	}
}

// TestJobsOnlyTheDrainingBucketDefers: a write refused by a bucket full at its own share is a
// try even while the other bucket drains (a start left it over its share); only a refusal by
// the draining bucket itself waits without one. Either bucket draining deferred both, and a
// document whose results were full for its own jobs ran every minute for as long as the
// records drained.
func TestJobsOnlyTheDrainingBucketDefers(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, true), nil)
	m.drainMu.Lock()
	m.draining = map[string]int64{"KV_" + m.n.records: 8 << 20}
	m.drainMu.Unlock()
	full := errors.New("nats: maximum bytes exceeded")
	job := newID()
	msg := &naked{delivered: 1}
	m.retry(&item{msg: msg, w: work{Job: job}}, full, m.n.results)
	if n := m.tries.failures(docKey(job, 0)); n != 1 || msg.delay != time.Second {
		t.Errorf("the results bucket full at its share: %d tries, back after %v", n, msg.delay)
	}
	msg = &naked{delivered: 2}
	m.retry(&item{msg: msg, w: work{Job: job}}, full, m.n.records)
	if n := m.tries.failures(docKey(job, 0)); n != 1 || msg.delay != drainWait {
		t.Errorf("the draining records bucket full: %d tries, back after %v", n, msg.delay)
	}
}

// TestJobsAReplicaKeepsTheFleetsSettings: on an external cluster, a replica started with a
// shorter retention, another ack wait, a smaller queue or a share of the store leaves the
// buckets, the queue and its consumer as the fleet made them (it warns, naming the nats CLI
// command that changes them), and works with theirs: its heartbeat keeps to the consumer's AckWait, its
// jobs expire with the buckets' TTL. It used to rewrite them for every replica: a shorter
// retention trimmed every tenant's jobs, and a replica heartbeating by its own AckWait had its
// batches handed out again while it ran them.
func TestJobsAReplicaKeepsTheFleetsSettings(t *testing.T) {
	box := openExternalBox(t)
	first := testConfig(t, true)
	first.AckWait, first.Retention = 10*time.Second, 24*time.Hour
	m1 := open(t, box, first, nil)
	second := first
	second.AckWait, second.Retention, second.MaxQueuedDocuments, second.MaxStoreBytes = time.Second, time.Minute, 500, new(int64(MinStoreBytes))
	logs := &logtest.Buffer{}
	m2, err := Open(context.Background(), box, second, clock.Real(), nil, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m2.Close)
	ctx := context.Background()
	for _, kv := range []jetstream.KeyValue{m1.records, m1.results} {
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.TTL() != first.Retention || st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.MaxBytes != -1 {
			t.Errorf("bucket %s after the second replica's start: %+v", kv.Bucket(), st)
		}
	}
	if info, err := m1.stream.Info(ctx); err != nil || info.Config.MaxAge != first.Retention || info.Config.MaxBytes != -1 {
		t.Errorf("the queue after the second replica's start: %+v, %v", info, err)
	}
	if ci, err := m1.cons.Info(ctx); err != nil || ci.Config.AckWait != first.AckWait || ci.Config.MaxAckPending != first.MaxQueuedDocuments {
		t.Errorf("the consumer after the second replica's start: %+v, %v", ci, err)
	}
	if m2.cfg.AckWait != first.AckWait || m2.cfg.Retention != first.Retention || m2.cfg.MaxQueuedDocuments != second.MaxQueuedDocuments {
		t.Errorf("the second replica works with AckWait %s, Retention %s, %d queued; want the fleet's %s and %s, and its own %d",
			m2.cfg.AckWait, m2.cfg.Retention, m2.cfg.MaxQueuedDocuments, first.AckWait, first.Retention, second.MaxQueuedDocuments)
	}
	for _, field := range []string{"TTL", "MaxAge", "MaxBytes", "AckWait", "MaxAckPending"} {
		if logs.Count("'s "+field+" is not SLUICE_JOBS_") == 0 {
			t.Errorf("no warning of the held %s: %s", field, logs)
		}
	}
	for _, edit := range []string{"`nats kv edit SLUICE_JOBS_RESULTS`", "`nats stream edit SLUICE_JOBS_QUEUE`", "`nats consumer edit SLUICE_JOBS_QUEUE workers`"} {
		if logs.Count(edit) == 0 {
			t.Errorf("no warning names %s: %s", edit, logs)
		}
	}
	// The other way round: a replica of a longer AckWait keeps to the consumer's shorter one.
	third := first
	third.AckWait, third.MaxQueuedDocuments = time.Minute, 2000
	if m3 := open(t, box, third, nil); m3.cfg.AckWait != first.AckWait || m3.cfg.MaxQueuedDocuments != first.MaxQueuedDocuments {
		t.Errorf("a replica of a longer AckWait and a larger queue works with %s and %d", m3.cfg.AckWait, m3.cfg.MaxQueuedDocuments)
	}
}

// TestJobsTheEmbeddedStoreTakesTheSettings: the embedded server's store is the process's alone
// (its directory locked, no port for the nats CLI), so a process started with other settings
// applies them to the buckets, the queue and its consumer that an earlier start made: a
// shorter retention (below the queue's two minutes of duplicates), another ack wait and queue
// bound, and a share of the store, the queue then discarding new. They used to keep the old
// ones, with a warning to use a CLI that cannot reach them, and a store made before the
// share stayed unbounded.
func TestJobsTheEmbeddedStoreTakesTheSettings(t *testing.T) {
	box := openBox(t)
	before := testConfig(t, true)
	before.AckWait, before.Retention = 10*time.Second, 24*time.Hour
	m1 := open(t, box, before, nil)
	m1.Close()
	// The queue as one made before the share: unbounded, discarding old.
	ctx := context.Background()
	sc := m1.stream.CachedInfo().Config
	sc.MaxBytes, sc.Discard = -1, jetstream.DiscardOld
	if _, err := box.JetStream().UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	now := before
	now.AckWait, now.Retention, now.MaxQueuedDocuments, now.MaxStoreBytes = 3*time.Second, time.Minute, 500, new(int64(MinStoreBytes))
	m2 := open(t, box, now, nil)
	queue, results, records := now.storeShares()
	for kv, want := range map[jetstream.KeyValue]int64{m2.records: records, m2.results: results} {
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config; c.MaxAge != now.Retention || c.MaxBytes != want {
			t.Errorf("bucket %s: TTL %s, MaxBytes %d; want %s and %d", kv.Bucket(), c.MaxAge, c.MaxBytes, now.Retention, want)
		}
	}
	if info, err := m2.stream.Info(ctx); err != nil || info.Config.MaxAge != now.Retention || info.Config.MaxBytes != queue || info.Config.Discard != jetstream.DiscardNew {
		t.Errorf("the queue: %+v, %v", info, err)
	}
	if ci, err := m2.cons.Info(ctx); err != nil || ci.Config.AckWait != now.AckWait || ci.Config.MaxAckPending != now.MaxQueuedDocuments {
		t.Errorf("the consumer: %+v, %v", ci, err)
	}
	if m2.cfg.AckWait != now.AckWait || m2.cfg.Retention != now.Retention || m2.cfg.MaxQueuedDocuments != now.MaxQueuedDocuments {
		t.Errorf("the process works with AckWait %s, Retention %s, %d queued", m2.cfg.AckWait, m2.cfg.Retention, m2.cfg.MaxQueuedDocuments)
	}
}

// TestJobsASmallerShareDrainsWithoutFailingWork: an embedded server restarted with a share of
// the store smaller than what its results bucket holds (earlier jobs' results, not yet expired)
// keeps the bucket's bound at what it holds, warning, and the queued documents whose results
// do not fit wait, uncounted, until there is room; the bound comes down to the share as the
// bucket drains. The share was applied as it was: every result was refused as full, and every
// queued document ran its tries and failed without a result.
func TestJobsASmallerShareDrainsWithoutFailingWork(t *testing.T) {
	defer func(d time.Duration) { drainWait = d }(drainWait)
	drainWait = 10 * time.Millisecond
	box := openBox(t)
	before := testConfig(t, true)
	m1 := open(t, box, before, nil)
	ctx := context.Background()
	filler := strings.Repeat("r", 900<<10)
	for i := range 4 { // earlier jobs' results, 3.6 MB
		if _, err := m1.results.Put(ctx, "old."+strconv.Itoa(i), []byte(filler)); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := m1.Create(ctx, "acme", Spec{Documents: []Document{{ID: "a", Text: "one"}, {ID: "b", Text: "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	m1.Close()
	now := before
	now.MaxStoreBytes = new(int64(MinStoreBytes)) // the results' share: 3.2 MiB
	_, share, _ := now.storeShares()
	logs := &logtest.Buffer{}
	m2, err := Open(ctx, box, now, clock.Real(), nil, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m2.Close)
	bound := func() (maxBytes int64, holds uint64) {
		st, err := box.JetStream().Stream(ctx, "KV_"+m2.n.results)
		if err != nil {
			t.Fatal(err)
		}
		info := st.CachedInfo()
		return info.Config.MaxBytes, info.State.Bytes
	}
	if maxBytes, holds := bound(); maxBytes != int64(holds) || maxBytes <= share {
		t.Errorf("the results bucket's bound %d, holding %d over a share of %d", maxBytes, holds, share)
	}
	if logs.Count("holds more than its share") == 0 {
		t.Errorf("no warning of a bucket over its share: %s", logs)
	}
	runs := startCounting(t, m2)
	natstest.WaitFor(t, 30*time.Second, "the documents to run past their tries, or the job to end", func() bool {
		r, err := m2.Get(ctx, "acme", rec.ID)
		return runs.Load() > int32(4*now.MaxAttempts) || (err == nil && r.Status.Terminal())
	})
	if r, err := m2.Get(ctx, "acme", rec.ID); err != nil || r.Status != Running || r.FailedCount != 0 {
		t.Fatalf("the job while the bucket is over its share: %+v, %v", r, err)
	}
	// The earlier jobs' results expire.
	st, err := box.JetStream().Stream(ctx, "KV_"+m2.n.results)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject("$KV."+m2.n.results+".old.>")); err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, m2, "acme", rec.ID, Done)
	if res, _, err := m2.Results(ctx, "acme", rec.ID, 0, 10); err != nil || got.ProcessedCount != 2 || len(res) != 2 || res[0].DeidentifiedText != "fine" {
		t.Fatalf("the job %+v, its results %+v, %v", got, res, err)
	}
	m2.drainBounds(ctx)
	if maxBytes, _ := bound(); maxBytes != share || m2.overShare(m2.n.results) {
		t.Errorf("drained, the results bucket's bound is %d, want the share %d", maxBytes, share)
	}
}

// TestJobsASmallerQueueBoundDoesNotStallThePending: an embedded server restarted with a
// smaller SLUICE_JOBS_MAX_QUEUED_DOCUMENTS than the documents its queue holds, more of them
// pending (a throttled tenant's, given back to wait for its budget) than that, keeps the
// consumer's MaxAckPending at what the queue holds, so that the others' documents are still
// delivered; creates keep to the setting, and the bound comes down to it as the queue drains.
// It was applied as it was, and nothing was delivered to anyone while those stayed pending.
func TestJobsASmallerQueueBoundDoesNotStallThePending(t *testing.T) {
	box := openBox(t)
	before := testConfig(t, true)
	before.MaxDocuments, before.MaxQueuedDocuments = 2, 5
	var waiting atomic.Int32
	throttled := func(ctx context.Context, rec *Record, d Document) (Outcome, error) {
		if rec.Tenant == "slow" {
			waiting.Add(1)
			return Outcome{}, Later(time.Hour)
		}
		return Outcome{Text: "x", Spans: []Span{}}, nil
	}
	m1 := open(t, box, before, throttled)
	ctx := context.Background()
	var slow []string
	for range 2 {
		rec, err := m1.Create(ctx, "slow", Spec{Documents: []Document{{ID: "a", Text: "one"}, {ID: "b", Text: "two"}}})
		if err != nil {
			t.Fatal(err)
		}
		slow = append(slow, rec.ID)
	}
	natstest.WaitFor(t, 30*time.Second, "the slow tenant's documents to wait", func() bool { return waiting.Load() >= 4 })
	m1.Close()
	fast, err := m1.Create(ctx, "fast", Spec{Documents: []Document{{ID: "a", Text: "one"}}})
	if err != nil {
		t.Fatal(err)
	}
	now := before
	now.MaxQueuedDocuments = 2
	m2 := open(t, box, now, throttled)
	waitStatus(t, m2, "fast", fast.ID, Done)
	if ci, err := m2.cons.Info(ctx); err != nil || ci.Config.MaxAckPending != 5 {
		t.Errorf("the consumer while the queue holds 5: %+v, %v", ci, err)
	}
	var b *Bound
	if _, err := m2.Create(ctx, "fast", Spec{Documents: []Document{{ID: "a", Text: "one"}}}); !errors.As(err, &b) || b.Status != http.StatusServiceUnavailable {
		t.Errorf("a create past the setting while the queue drains: %v", err)
	}
	for _, id := range slow {
		if _, err := m2.Cancel(ctx, "slow", id); err != nil {
			t.Fatal(err)
		}
	}
	m2.drainBounds(ctx)
	if ci, err := m2.cons.Info(ctx); err != nil || ci.Config.MaxAckPending != now.MaxQueuedDocuments {
		t.Errorf("the consumer once the queue drained: %+v, %v", ci, err)
	}
}

// TestJobsTheHeartbeatKeepsUpWithAShortenedAckWait: the consumer's AckWait shortened under a
// running process (an operator's edit, an older replica's start during a rollout) is read
// again before a batch, at most once a beat, and the batch's heartbeat is a third of it. It
// was read once, at Open: the heartbeat kept to a third of the old one, and a batch running
// longer than the new one was handed out again while it ran.
func TestJobsTheHeartbeatKeepsUpWithAShortenedAckWait(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.AckWait = 6 * time.Second
	clk := clock.NewFake(time.Now())
	ctx := context.Background()
	m, err := Open(ctx, box, cfg, clk, nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	cc := m.cons.CachedInfo().Config
	cc.AckWait = 1500 * time.Millisecond
	if _, err := box.JetStream().UpdateConsumer(ctx, m.n.stream, cc); err != nil {
		t.Fatal(err)
	}
	clk.Advance(cfg.AckWait / 3) // a beat since Open read it
	rec, err := m.Create(ctx, "acme", Spec{Documents: []Document{{ID: "a", Text: "one"}}})
	if err != nil {
		t.Fatal(err)
	}
	var beat atomic.Int64
	if err := m.Start(Work{Process: func(ctx context.Context, rec *Record, d Document) (Outcome, error) {
		beat.Store(int64(m.beat()))
		return Outcome{Text: "x", Spans: []Span{}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, m, "acme", rec.ID, Done)
	if got := time.Duration(beat.Load()); got != cc.AckWait/3 {
		t.Errorf("the batch's heartbeat every %s under an AckWait shortened to %s", got, cc.AckWait)
	}
}

// TestJobsLeaveTheAuditItsRoom: one tenant's queued documents fill the jobs' share of the store
// (MaxStoreBytes), not the store: its next create is refused 503, saying so, and the audit that
// shares the store still takes records. They used to fill it, and then every tenant's audited
// request was a 503.
func TestJobsLeaveTheAuditItsRoom(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	box, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: t.TempDir(), Replicas: 1, Replica: "t",
		MaxStoreBytes: 16 << 20}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	trail, err := audit.Open(context.Background(), box, "t", audit.Config{Enabled: true, AckTimeout: 5 * time.Second}, clock.Real(), nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(trail.Close)
	cfg := testConfig(t, true)
	cfg.MaxPerTenant, cfg.MaxStoreBytes = 100, new(int64(MinStoreBytes))
	m := open(t, box, cfg, nil) // no workers: the documents stay queued
	docs := []Document{{ID: "a", Text: strings.Repeat("x", 300<<10)}, {ID: "b", Text: strings.Repeat("y", 300<<10)}}
	var refused error
	for range 100 {
		if _, refused = m.Create(context.Background(), "greedy", Spec{Documents: docs}); refused != nil {
			break
		}
	}
	var b *Bound
	if !errors.As(refused, &b) || b.Status != http.StatusServiceUnavailable || !strings.Contains(b.Message, "SLUICE_JOBS_MAX_STORE_BYTES") {
		t.Fatalf("a create past the jobs' share of the store: %v", refused)
	}
	if _, err := trail.Append(context.Background(), audit.Record{Route: "/pii/deidentify", Status: "served"}); err != nil {
		t.Fatalf("an audit record once the jobs' share is full: %v", err)
	}
}

// TestJobsAFullStoreIsNotTheJobsShare: jobs without a share of their own that fill the whole
// store are refused 503 saying the store is full, not naming SLUICE_JOBS_MAX_STORE_BYTES, a
// setting the operator may never have set and whose raising would not help.
func TestJobsAFullStoreIsNotTheJobsShare(t *testing.T) {
	box, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: t.TempDir(), Replicas: 1, Replica: "t",
		MaxStoreBytes: 8 << 20}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	cfg := testConfig(t, true)
	cfg.MaxPerTenant = 100
	m := open(t, box, cfg, nil) // no workers: the documents stay queued
	docs := []Document{{ID: "a", Text: strings.Repeat("x", 300<<10)}, {ID: "b", Text: strings.Repeat("y", 300<<10)}}
	var refused error
	for range 100 {
		if _, refused = m.Create(context.Background(), "greedy", Spec{Documents: docs}); refused != nil {
			break
		}
	}
	var b *Bound
	if !errors.As(refused, &b) || b.Status != http.StatusServiceUnavailable || strings.Contains(b.Message, "SLUICE_JOBS_MAX_STORE_BYTES") ||
		!strings.Contains(b.Message, "store is full") {
		t.Fatalf("a create past the whole store: %v", refused)
	}
}

// TestJobsValuesOverTheMessageLimit: a document whose JSON is over what one message of the
// job store holds is a 413 at Create (its text under MaxBytes, but each "<" written as six
// bytes), not a job that can never be stored; and a result over it makes the document fail,
// saying why, where it used to go back to the queue on every try.
func TestJobsValuesOverTheMessageLimit(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxBytes = 4 << 20
	var runs atomic.Int32
	m := open(t, box, cfg, func(_ context.Context, _ *Record, d Document) (Outcome, error) {
		runs.Add(1)
		if d.ID == "big" {
			return Outcome{Text: strings.Repeat("x", 1<<20), Spans: []Span{}}, nil
		}
		return Outcome{Text: d.Text, Spans: []Span{}}, nil
	})
	escaped := Document{ID: "angles", Text: strings.Repeat("<", 200<<10)} // 200 KiB of text, 1.2 MB of JSON
	var b *Bound
	if _, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "fine"}, escaped}}); !errors.As(err, &b) ||
		b.Status != 413 || !strings.Contains(b.Message, "document 1 ") {
		t.Fatalf("a document over the message limit: %v", err)
	}
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "big", Text: "grows"}, {ID: "small", Text: "stays"}}})
	if err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, m, "t", rec.ID, Done)
	res, _, err := m.Results(context.Background(), "t", rec.ID, 0, 10)
	if err != nil || done.FailedCount != 1 || len(res) != 2 {
		t.Fatalf("record %+v, results %+v, %v", done, res, err)
	}
	for _, r := range res {
		if (r.DocumentID == "big") != strings.Contains(r.Error, "over the job store's") || (r.DocumentID == "big" && r.DeidentifiedText != "") {
			t.Errorf("result of %s: error %q, %d bytes of text", r.DocumentID, r.Error, len(r.DeidentifiedText))
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the processor ran %d times for two documents", n)
	}
}

// TestJobsWebhooksAreNotLost: a job of no documents, finished when it is created, has its
// webhook posted; a delivery that a process stops in the middle of (its receiver failing,
// the process closing between attempts) is taken up by the next process on the same store,
// and posted once the receiver answers.
func TestJobsWebhooksAreNotLost(t *testing.T) {
	var failing atomic.Bool
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		if failing.Load() {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(204)
	}))
	defer srv.Close()
	box := openBox(t)
	cfg := testConfig(t, true)
	delivered := func(m *Manager, id string) func() bool {
		return func() bool {
			r, err := m.Get(context.Background(), "t", id)
			return err == nil && r.WebhookDelivery != nil && r.WebhookDelivery.Status == "delivered"
		}
	}
	m := open(t, box, cfg, upper(nil))
	empty, err := m.Create(context.Background(), "t", Spec{Webhook: &Webhook{URL: srv.URL, MaxAttempts: 1}})
	if err != nil || empty.Status != Done {
		t.Fatalf("an empty job: %+v %v", empty, err)
	}
	natstest.WaitFor(t, 30*time.Second, "the empty job's webhook delivered", delivered(m, empty.ID))

	failing.Store(true)
	before := posts.Load()
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello Quetzalcoatl"}},
		Webhook: &Webhook{URL: srv.URL, MaxAttempts: 5, BackoffSeconds: 30}})
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, "the first attempt", func() bool { return posts.Load() > before })
	m.Close() // between attempts: the rest of them are the next process's
	if r, _ := m.Get(context.Background(), "t", rec.ID); r.WebhookDelivery.Status != "pending" || r.WebhookClaim != nil {
		t.Fatalf("after a close mid-delivery: %+v, claim %v", r.WebhookDelivery, r.WebhookClaim)
	}
	failing.Store(false)
	next := open(t, box, cfg, upper(nil))
	natstest.WaitFor(t, 30*time.Second, "the webhook delivered by the next process", delivered(next, rec.ID))
}

// TestJobsWebhookCutOffIsNotAnAttempt: a process that closes while its only attempt is being
// posted has no outcome for it: the delivery stays pending, unclaimed, and the next process
// posts it. A claim given back is only this process's own: one another process holds stays.
func TestJobsWebhookCutOffIsNotAnAttempt(t *testing.T) {
	var hang atomic.Bool
	hang.Store(true)
	arrived := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read whole, the server notices the sender leave
		arrived <- struct{}{}
		if hang.Load() {
			<-r.Context().Done() // until the sender gives up
			return
		}
		w.WriteHeader(204)
	}))
	defer srv.Close()
	box := openBox(t)
	cfg := testConfig(t, true)
	m := open(t, box, cfg, upper(nil))
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello"}},
		Webhook: &Webhook{URL: srv.URL, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	<-arrived
	m.Close()
	r, _ := m.Get(context.Background(), "t", rec.ID)
	if r.WebhookDelivery.Status != "pending" || r.WebhookClaim != nil {
		t.Fatalf("after a close mid-post: %+v, claim %v", r.WebhookDelivery, r.WebhookClaim)
	}
	k := recordKey("t", rec.ID)
	other := time.Now().Add(time.Hour).UTC()
	if _, _, err := m.change(context.Background(), k, func(r *Record) bool { r.WebhookClaim = &other; return true }); err != nil {
		t.Fatal(err)
	}
	mine := time.Now().UTC()
	m.unclaim(k, &mine)
	if r, _ := m.Get(context.Background(), "t", rec.ID); r.WebhookClaim == nil || !r.WebhookClaim.Equal(other) {
		t.Fatalf("another process's claim was given back: %v", r.WebhookClaim)
	}
	m.unclaim(k, &other)
	hang.Store(false)
	next := open(t, box, cfg, upper(nil))
	natstest.WaitFor(t, 30*time.Second, "the webhook delivered by the next process", func() bool {
		r, err := next.Get(context.Background(), "t", rec.ID)
		return err == nil && r.WebhookDelivery.Status == "delivered" && r.WebhookDelivery.Attempts == 1
	})
}

// TestJobsWebhookOfADeadProcessIsTakenOver: a delivery claimed by a process that died (its
// claim in the record, passed, the webhook still pending) is posted by a live one's sweep;
// one whose claim has not passed is left to its holder.
func TestJobsWebhookOfADeadProcessIsTakenOver(t *testing.T) {
	srv, posts := receiver(t)
	box := openBox(t)
	cfg := testConfig(t, true)
	m := open(t, box, cfg, nil) // no workers yet: nothing delivers
	ctx := context.Background()
	finished := func(claim time.Time) string {
		rec, err := m.Create(ctx, "t", Spec{Webhook: &Webhook{URL: srv.URL, MaxAttempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.change(ctx, recordKey("t", rec.ID), func(r *Record) bool { r.WebhookClaim = &claim; return true }); err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	dead, alive := finished(time.Now().Add(-time.Minute).UTC()), finished(time.Now().Add(time.Hour).UTC())
	if err := m.Start(Work{Process: upper(nil)}); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, "the dead process's webhook delivered", func() bool {
		r, err := m.Get(ctx, "t", dead)
		return err == nil && r.WebhookDelivery.Status == "delivered"
	})
	m.Close()
	if r, _ := m.Get(ctx, "t", alive); r.WebhookDelivery.Status != "pending" || posts.Load() != 1 {
		t.Fatalf("a live claim: %+v, %d posts", r.WebhookDelivery, posts.Load())
	}
}

// TestJobsConcurrentCreatesKeepTheTenantsBound: ten creates at once for a tenant that may
// have one unfinished job: one is stored, nine are 429s.
func TestJobsConcurrentCreatesKeepTheTenantsBound(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxPerTenant = 1
	m := open(t, box, cfg, nil) // no workers: jobs stay unfinished
	stored, refused := createAtOnce(t, 10, 429, func(int) error {
		_, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello"}}})
		return err
	})
	if stored != 1 || refused != 9 {
		t.Fatalf("%d stored, %d refused", stored, refused)
	}
}

// createAtOnce runs create n times at once and counts those that stored a job and those
// refused with status; any other error fails the test.
func createAtOnce(t *testing.T, n, status int, create func(i int) error) (stored, refused int32) {
	var ok, no atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var b *Bound
			switch err := create(i); {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &b) && b.Status == status:
				no.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	return ok.Load(), no.Load()
}

// TestJobsConcurrentCreatesKeepTheQueuesBound: eight tenants create a job of 40 documents at
// once where the queue holds 100: no more are stored than fit, and at least one is (refused
// creates hold no room).
func TestJobsConcurrentCreatesKeepTheQueuesBound(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxQueuedDocuments = 100
	m := open(t, box, cfg, nil) // no workers: the documents stay queued
	docs := make([]Document, 40)
	for i := range docs {
		docs[i] = Document{ID: strconv.Itoa(i), Text: "Hello"}
	}
	stored, refused := createAtOnce(t, 8, 503, func(i int) error {
		_, err := m.Create(context.Background(), fmt.Sprintf("tenant-%d", i), Spec{Documents: docs})
		return err
	})
	// A create whose documents are being acknowledged counts them twice (queued and held)
	// until it ends, so a later one may find too little room: one or two stored, never more.
	if stored < 1 || 40*stored > 100 || stored+refused != 8 {
		t.Fatalf("%d stored, %d refused", stored, refused)
	}
}

// TestJobsOrphansAreFailed: a job whose creation died after its record was stored and before
// its documents were (one that never started), and a started job whose remaining documents
// are gone from the queue, are failed by the sweep once their records have not changed for
// orphanAge; the first is abandoned without its webhook, the second's is sent. A queued job
// whose documents wait in the queue, and one created a moment ago, are left as they are.
func TestJobsOrphansAreFailed(t *testing.T) {
	srv, posts := receiver(t)
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxPerTenant = 10
	m := open(t, box, cfg, nil) // no workers: nothing is taken from the queue
	ctx := context.Background()
	spec := Spec{Documents: []Document{{ID: "a", Text: "Hello"}, {ID: "b", Text: "Hi"}},
		Webhook: &Webhook{URL: srv.URL, MaxAttempts: 1}}
	age := func(id string, status Status) {
		t.Helper()
		if _, err := m.putRecordAged(ctx, recordKey("t", id), status, time.Now().Add(-orphanAge-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	never, _, err := m.createRecord(ctx, "t", spec) // the record alone, as a creation that died
	if err != nil {
		t.Fatal(err)
	}
	started, _, err := m.createRecord(ctx, "t", spec)
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := m.Create(ctx, "t", spec)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := m.createRecord(ctx, "t", spec) // a creation still storing its documents
	if err != nil {
		t.Fatal(err)
	}
	age(never.ID, Queued)
	age(started.ID, Running)
	age(waiting.ID, Queued)
	m.sweepOnce(ctx)
	if r, _ := m.Get(ctx, "t", never.ID); r.Status != Failed || r.WebhookDelivery != nil {
		t.Errorf("the job that never started: %s, delivery %+v", r.Status, r.WebhookDelivery)
	}
	if r, _ := m.Get(ctx, "t", waiting.ID); r.Status != Queued {
		t.Errorf("the job whose documents wait: %s", r.Status)
	}
	if r, _ := m.Get(ctx, "t", fresh.ID); r.Status != Queued {
		t.Errorf("a job created a moment ago: %s", r.Status)
	}
	natstest.WaitFor(t, 30*time.Second, "the started job failed and its webhook sent", func() bool {
		m.sweepOnce(ctx)
		r, err := m.Get(ctx, "t", started.ID)
		return err == nil && r.Status == Failed && r.WebhookDelivery.Status == "delivered"
	})
	if n := posts.Load(); n != 1 {
		t.Errorf("%d webhooks posted, want the started job's", n)
	}
}

// putRecordAged sets k's status and makes its record look unchanged since at.
func (m *Manager) putRecordAged(ctx context.Context, k string, status Status, at time.Time) (uint64, error) {
	rec, rev, err := m.getRecord(ctx, k)
	if err != nil {
		return 0, err
	}
	rec.Status = status
	plain, _ := json.Marshal(rec)
	var stored map[string]any
	_ = json.Unmarshal(plain, &stored)
	stored["updated_at"] = at.UTC()
	plain, _ = json.Marshal(stored)
	return m.records.Update(ctx, k, m.seal.seal(k, plain), rev)
}

// receiver is a webhook receiver that answers every post 204 and counts them; it closes with
// the test.
func receiver(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	return srv, &posts
}

// TestJobsLongJobsKeepTheirResults: a job that ran longer than a tenth of Retention has its
// results written again once it finishes, so that they expire with its record; a short job's
// are written once. A finished job is served as gone once its oldest results may have
// expired, not with what is left of them.
func TestJobsLongJobsKeepTheirResults(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	start := time.Now()
	clk := clock.NewFake(start)
	m, err := Open(context.Background(), box, cfg, clk, nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx := context.Background()
	docs := []Document{{ID: "a", Text: "Hello Zanzibar"}, {ID: "b", Text: "Hi Quixote"}}
	long, err := m.Create(ctx, "t", Spec{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(cfg.Retention/10 + time.Minute) // the job waits in the queue
	if err := m.Start(Work{Process: upper(nil)}); err != nil {
		t.Fatal(err)
	}
	finished := start.Add(cfg.Retention/10 + time.Minute)
	natstest.WaitFor(t, 30*time.Second, "the long job done and its results written again", func() bool {
		r, err := m.Get(ctx, "t", long.ID)
		return err == nil && r.Status == Done && r.ResultsSince.Equal(finished)
	})
	writes := func() uint64 {
		st, err := m.js.Stream(ctx, "KV_"+m.n.results)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	if n := writes(); n != 4 {
		t.Fatalf("%d writes of results, want each of 2 twice", n)
	}
	short, err := m.Create(ctx, "t", Spec{Documents: docs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, m, "t", short.ID, Done)
	m.sweepOnce(ctx)
	if n := writes(); n != 5 {
		t.Fatalf("%d writes of results, want the short job's once", n)
	}
	// Retention after the long job was created, its results live on; the short job's,
	// created later, too. Past Retention from the rewrite, the long job is gone.
	clk.Advance(cfg.Retention - time.Minute)
	if _, err := m.Get(ctx, "t", long.ID); err != nil {
		t.Fatalf("the long job, Retention after it was created: %v", err)
	}
	if page, _, err := m.Results(ctx, "t", long.ID, 0, 10); err != nil || len(page) != 2 {
		t.Fatalf("its results: %d, %v", len(page), err)
	}
	clk.Advance(2 * time.Minute)
	if _, err := m.Get(ctx, "t", long.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the long job, Retention after its results were written again: %v", err)
	}
	if _, _, err := m.Results(ctx, "t", short.ID, 0, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the short job's results, Retention after it was created: %v", err)
	}
	if recs, err := m.List(ctx, "t"); err != nil || len(recs) != 0 {
		t.Fatalf("listed: %d, %v", len(recs), err)
	}
}

// TestJobsADocumentCountedWithoutAResultIsNoGap: a long job one of whose documents was
// counted failed without a stored result (its tries spent on a full store) has its other
// results kept and its details kept once read. Both took every counted document for one with
// a result: keeping stopped at the gap at every sweep, having written again the results before
// it, so that the job's results were kept no longer, and its details were read again for
// every poll.
func TestJobsADocumentCountedWithoutAResultIsNoGap(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.MaxAttempts = 1
	start := time.Now()
	clk := clock.NewFake(start)
	m, err := Open(context.Background(), box, cfg, clk, nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx := context.Background()
	rec, err := m.Create(ctx, "t", Spec{Documents: []Document{{ID: "a", Text: "Hello Zanzibar"}, {ID: "b", Text: "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(cfg.Retention/10 + time.Minute) // the job waits in the queue
	var full atomic.Bool
	if err := m.Start(Work{Process: func(ctx context.Context, job *Record, d Document) (Outcome, error) {
		if d.ID == "b" {
			if _, err := m.results.Get(ctx, docKey(job.ID, 0)); err != nil {
				return Outcome{}, Later(10 * time.Millisecond) // a's result first
			}
			if !full.Swap(true) {
				limitResults(t, box, m, 64) // then the store fills up under the job
			}
		}
		return upper(nil)(ctx, job, d)
	}}); err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, m, "t", rec.ID, Done)
	if got.ProcessedCount != 1 || got.FailedCount != 1 || !got.noResult(1) || got.noResult(0) {
		t.Fatalf("the job %+v", got)
	}
	limitResults(t, box, m, -1) // room again
	natstest.WaitFor(t, 10*time.Second, "the job's results to be kept", func() bool {
		m.sweepOnce(ctx)
		r, err := m.Get(ctx, "t", rec.ID)
		return err == nil && r.ResultsSince.After(start)
	})
	spans, docs, err := m.Details(ctx, got)
	if err != nil || len(spans) != 2 || len(docs) != 1 {
		t.Fatalf("details: %d spans, %d documents, %v", len(spans), len(docs), err)
	}
	if _, _, ok := m.details.get(rec.ID); !ok {
		t.Error("a done job's details, whose one missing result was counted without one, were not kept")
	}
}

// TestJobsWaitsARestartForgotDoNotFailADocument: a document that went back to wait many
// times (past the deliveries' backstop) in a process that then stopped is tried again in the
// next on a transient failure, not failed: the waits before it met the document are not
// held against it.
func TestJobsWaitsARestartForgotDoNotFailADocument(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	cfg.Workers, cfg.Batch = 1, 1
	var waits atomic.Int32
	over := int32(backstop*cfg.MaxAttempts + 5)
	first := open(t, box, cfg, func(context.Context, *Record, Document) (Outcome, error) {
		waits.Add(1)
		return Outcome{}, Later(0) // its budget cannot take it yet
	})
	rec, err := first.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello Zanzibar"}}})
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, "the document deferred past the backstop", func() bool { return waits.Load() > over })
	first.Close()
	var tries atomic.Int32
	second := open(t, box, cfg, func(ctx context.Context, job *Record, d Document) (Outcome, error) {
		if tries.Add(1) == 1 {
			return Outcome{}, errors.New("the model did not answer") // transient
		}
		return upper(nil)(ctx, job, d)
	})
	var got *Record
	natstest.WaitFor(t, 30*time.Second, "the job to end", func() bool {
		got, err = second.Get(context.Background(), "t", rec.ID)
		return err == nil && got.Status.Terminal()
	})
	if got.Status != Done || got.ProcessedCount != 1 || got.FailedCount != 0 {
		t.Fatalf("processed %d, failed %d after %d tries", got.ProcessedCount, got.FailedCount, tries.Load())
	}
}

// TestJobsSealedUnderAnotherKeyAreGone: after SLUICE_JOBS_KEY_FILE is replaced, the jobs
// sealed under the old key are gone to this one (404), their documents are dropped once, and
// the tenant creates and runs new jobs as before.
func TestJobsSealedUnderAnotherKeyAreGone(t *testing.T) {
	box := openBox(t)
	cfg := testConfig(t, true)
	old, err := Open(context.Background(), box, cfg, clock.Real(), nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	docs := []Document{{ID: "a", Text: "Patient Zanzibar"}, {ID: "b", Text: "Patient Quito"}, {ID: "c", Text: "Patient Lima"}}
	gone, err := old.Create(context.Background(), "acme", Spec{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()

	if err := os.WriteFile(cfg.KeyFile, []byte(strings.Repeat("cd", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	met := NewMetrics(prometheus.NewRegistry())
	m := openWith(t, box, cfg, upper(nil), met)
	if _, err := m.Get(context.Background(), "acme", gone.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old key's job: %v, want ErrNotFound", err)
	}
	fresh, err := m.Create(context.Background(), "acme", Spec{Documents: docs[:1]})
	if err != nil {
		t.Fatalf("a create after the key was replaced: %v", err)
	}
	if list, err := m.List(context.Background(), "acme"); err != nil || len(list) != 1 {
		t.Fatalf("list: %d jobs, %v", len(list), err)
	}
	waitStatus(t, m, "acme", fresh.ID, Done)
	natstest.WaitFor(t, 30*time.Second, "the old job's documents to be left to its key", func() bool {
		return testutil.ToFloat64(met.documents.WithLabelValues("deferred")) >= 3
	})
	if n := testutil.ToFloat64(met.documents.WithLabelValues("retried")); n != 0 {
		t.Fatalf("%v documents handed back at once, want none", n)
	}
}

// TestJobsReplicasOfTwoKeysRunEachOthersJobs: while a new key is rolled through the fleet,
// replicas of the old key and of the new share the queue; a document one takes whose job it
// cannot open goes back for the other, and every job finishes.
func TestJobsReplicasOfTwoKeysRunEachOthersJobs(t *testing.T) {
	defer func(d time.Duration) { sealedWait = d }(sealedWait)
	sealedWait = 10 * time.Millisecond
	box := openBox(t)
	oldCfg, newCfg := testConfig(t, true), testConfig(t, true)
	if err := os.WriteFile(newCfg.KeyFile, []byte(strings.Repeat("cd", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	oldKey, newKey := open(t, box, oldCfg, upper(nil)), open(t, box, newCfg, upper(nil))
	var docs []Document
	for i := range 12 {
		docs = append(docs, Document{ID: fmt.Sprint(i), Text: "Patient Zanzibar"})
	}
	a, err := oldKey.Create(context.Background(), "t", Spec{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	b, err := newKey.Create(context.Background(), "t", Spec{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitStatus(t, oldKey, "t", a.ID, Done); got.ProcessedCount != 12 {
		t.Fatalf("the old key's job: %d processed", got.ProcessedCount)
	}
	if got := waitStatus(t, newKey, "t", b.ID, Done); got.ProcessedCount != 12 {
		t.Fatalf("the new key's job: %d processed", got.ProcessedCount)
	}
}

// TestJobsAnAbandonedJobFailsEvenOnceRunning: a create whose documents were not all stored
// fails its job, no webhook sent, though a worker moved it to running meanwhile.
func TestJobsAnAbandonedJobFailsEvenOnceRunning(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, false), nil)
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "x"}},
		Webhook: &Webhook{URL: "https://example.invalid/hook", MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	k := recordKey("t", rec.ID)
	if _, err := m.markRunning(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if changed, err := m.abandon(context.Background(), "t", rec.ID, "not stored"); !changed || err != nil {
		t.Fatalf("abandon: %v, %v", changed, err)
	}
	got, err := m.Get(context.Background(), "t", rec.ID)
	if err != nil || got.Status != Failed || got.Webhook != nil {
		t.Fatalf("%+v, %v", got, err)
	}
}

// TestJobsARecordTooLargeIsTheRequests: a webhook secret that JSON writes six times over
// makes a record the store cannot hold: refused 413 up front, not a 503 to retry for ever.
func TestJobsARecordTooLargeIsTheRequests(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, false), nil)
	var b *Bound
	_, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "x"}},
		Webhook: &Webhook{URL: "https://example.invalid/hook", Secret: strings.Repeat("<", 200_000), MaxAttempts: 1}})
	if !errors.As(err, &b) || b.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("%v; want a 413 Bound", err)
	}
}

// TestJobsADoneJobsDetailsAreReadOnce: a done job's details, which every poll of it answers,
// are read from its results once, not on every poll.
func TestJobsADoneJobsDetailsAreReadOnce(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, true), upper(nil))
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "Hello Zanzibar"}, {ID: "b", Text: "Hello Quito"}}})
	if err != nil {
		t.Fatal(err)
	}
	rec = waitStatus(t, m, "t", rec.ID, Done)
	// A result that reads as missing (a copy that lags answered) leaves the details unkept.
	kept, err := m.results.Get(context.Background(), docKey(rec.ID, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.results.Delete(context.Background(), docKey(rec.ID, 0)); err != nil {
		t.Fatal(err)
	}
	if spans, docs, err := m.Details(context.Background(), rec); err != nil || len(spans) != 2 || len(docs) != 1 {
		t.Fatalf("with a result missing: %d spans, %d documents, %v", len(spans), len(docs), err)
	}
	if _, err := m.results.Put(context.Background(), docKey(rec.ID, 0), kept.Value()); err != nil {
		t.Fatal(err)
	}
	spans, docs, err := m.Details(context.Background(), rec)
	if err != nil || len(spans) != 4 || len(docs) != 2 {
		t.Fatalf("%d spans, %d documents, %v", len(spans), len(docs), err)
	}
	if err := m.results.Delete(context.Background(), docKey(rec.ID, 1)); err != nil { // read again, it would be missing
		t.Fatal(err)
	}
	if again, docs, err := m.Details(context.Background(), rec); err != nil || len(again) != 4 || len(docs) != 2 {
		t.Fatalf("polled again: %d spans, %d documents, %v", len(again), len(docs), err)
	}
}

// TestDetailsCacheKeepsToItsBound: past its bytes the least recently read job goes first.
func TestDetailsCacheKeepsToItsBound(t *testing.T) {
	c := newDetailsCache(3000)
	spans := make([]Span, 5) // about 500 bytes a job
	for _, job := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		c.put(job, spans, nil)
		c.get("a") // kept in use
	}
	if _, _, ok := c.get("a"); !ok {
		t.Error("the job read most lost its place")
	}
	if _, _, ok := c.get("b"); ok {
		t.Error("the least recently read job is still kept")
	}
	if c.size > c.max || len(c.byJob) != c.order.Len() {
		t.Errorf("size %d of %d, %d jobs, %d in order", c.size, c.max, len(c.byJob), c.order.Len())
	}
	c.put("huge", make([]Span, 100), nil) // over a quarter of the bound: not kept
	if _, _, ok := c.get("huge"); ok {
		t.Error("a job over a quarter of the bound was kept")
	}
}

// TestJobsListSeesAJobWhileItIsWritten: a job whose record is written while it is listed (a
// worker counting its documents) is in the list every time: a tenant's count of unfinished
// jobs, which MaxPerTenant holds to, must not miss it.
func TestJobsListSeesAJobWhileItIsWritten(t *testing.T) {
	m := open(t, openBox(t), testConfig(t, true), nil)
	rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{{ID: "a", Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _, _ = m.change(context.Background(), recordKey("t", rec.ID), func(r *Record) bool { r.LabelHistogram["x"]++; return true })
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range 200 {
		if list, err := m.List(context.Background(), "t"); err != nil || len(list) != 1 {
			t.Fatalf("list %d: %d jobs, %v", i, len(list), err)
		}
	}
}

// TestJobsDocumentsOfAKeyNoReplicaHasLeave: a document whose job no replica can open (its
// key replaced, not rolled) goes back for sealedGiveUp, then leaves the queue, whose room it
// would hold until it expired.
func TestJobsDocumentsOfAKeyNoReplicaHasLeave(t *testing.T) {
	defer func(w, g time.Duration) { sealedWait, sealedGiveUp = w, g }(sealedWait, sealedGiveUp)
	sealedWait, sealedGiveUp = time.Millisecond, 100*time.Millisecond
	box := openBox(t)
	cfg := testConfig(t, true)
	old, err := Open(context.Background(), box, cfg, clock.Real(), nil, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Create(context.Background(), "acme", Spec{Documents: []Document{{ID: "a", Text: "Patient Zanzibar"}}}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	if err := os.WriteFile(cfg.KeyFile, []byte(strings.Repeat("cd", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	met := NewMetrics(prometheus.NewRegistry())
	openWith(t, box, cfg, upper(nil), met)
	natstest.WaitFor(t, 60*time.Second, "the document to leave the queue", func() bool {
		return testutil.ToFloat64(met.documents.WithLabelValues("skipped")) == 1
	})
	if n := testutil.ToFloat64(met.documents.WithLabelValues("deferred")); n < 2 {
		t.Fatalf("deferred %v times before it left; want it to have gone back a while", n)
	}
}

// TestJobsATenantKeepsABoundedNumberOfJobs: finished jobs count too, up to
// MaxKeptPerTenant: a tenant creating empty jobs (done at once) is refused 429 past it,
// instead of each create reading a day of them; another tenant is not.
func TestJobsATenantKeepsABoundedNumberOfJobs(t *testing.T) {
	cfg := testConfig(t, false)
	cfg.MaxKeptPerTenant = 3
	m := open(t, openBox(t), cfg, nil)
	for i := range 3 {
		if rec, err := m.Create(context.Background(), "t", Spec{Documents: []Document{}}); err != nil || rec.Status != Done {
			t.Fatalf("job %d: %+v, %v", i, rec, err)
		}
	}
	var b *Bound
	if _, err := m.Create(context.Background(), "t", Spec{Documents: []Document{}}); !errors.As(err, &b) || b.Status != http.StatusTooManyRequests || b.RetryAfter <= 0 {
		t.Fatalf("a fourth job kept: %v", err)
	}
	if _, err := m.Create(context.Background(), "other", Spec{Documents: []Document{}}); err != nil {
		t.Fatalf("another tenant: %v", err)
	}
}

// TestJobsAPanickingDocumentFailsAlone: a processor that panics on one document fails that
// document, once, and the process goes on with the others; the log names the panic's type,
// never its value (which may hold the text).
func TestJobsAPanickingDocumentFailsAlone(t *testing.T) {
	box := openBox(t)
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	var calls sync.Map
	var panics atomic.Int32
	base := upper(&calls)
	m, err := Open(context.Background(), box, testConfig(t, true), clock.Real(), nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if err := m.Start(Work{Process: func(ctx context.Context, rec *Record, d Document) (Outcome, error) {
		if strings.Contains(d.Text, "Zanzibar") {
			panics.Add(1)
			panic("met " + d.Text)
		}
		return base(ctx, rec, d)
	}}); err != nil {
		t.Fatal(err)
	}
	rec, err := m.Create(context.Background(), "acme", Spec{Documents: []Document{{ID: "a", Text: "Patient Zanzibar seen"},
		{ID: "b", Text: "Patient Alder seen"}}, Options: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec = waitStatus(t, m, "acme", rec.ID, Done)
	res, _, err := m.Results(context.Background(), "acme", rec.ID, 0, 10)
	if err != nil || rec.FailedCount != 1 || rec.ProcessedCount != 1 || len(res) != 2 || res[0].Error == "" || res[1].Error != "" {
		t.Fatalf("record %+v, results %+v, %v", rec, res, err)
	}
	if n := panics.Load(); n != 1 {
		t.Fatalf("the panicking document was run %d times, want once (a panic is no failure that may pass)", n)
	}
	if !strings.Contains(logs.String(), `"panic_type":"string"`) || strings.Contains(logs.String(), "Zanzibar") {
		t.Fatalf("log: %s", logs.String())
	}
}
