package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/logtest"
)

// openMedJobs is OpenMed's Go client's job calls, rebuilt from its documented wire names:
// CreateJob posts documents and options to /jobs, GetJob reads /jobs/{id}; apiKey, when set,
// goes in X-API-Key as the client sends it.
type openMedJobs struct{ base, apiKey string }

func (c openMedJobs) do(method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("X-API-Key", c.apiKey)
	}
	return http.DefaultClient.Do(req)
}

type omDocument struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	SubjectID string `json:"subject_id,omitempty"`
}

type omWebhook struct {
	URL            string  `json:"url"`
	Secret         string  `json:"secret"`
	MaxAttempts    int     `json:"max_attempts"`
	BackoffSeconds float64 `json:"backoff_seconds"`
}

type omCreateJob struct {
	Documents []omDocument `json:"documents"`
	Method    string       `json:"method,omitempty"`
	Webhook   *omWebhook   `json:"webhook,omitempty"`
}

type omJob struct {
	ID              string         `json:"id"`
	Status          string         `json:"status"`
	ProgressPercent float64        `json:"progress_percent"`
	DocumentCount   int            `json:"document_count"`
	StatusURL       string         `json:"status_url"`
	ProcessedCount  int            `json:"processed_count"`
	FailedCount     int            `json:"failed_count"`
	LabelHistogram  map[string]int `json:"label_histogram"`
	Durable         bool           `json:"durable"`
	Spans           []struct {
		DocumentID string  `json:"document_id"`
		Start      int     `json:"start"`
		End        int     `json:"end"`
		Label      string  `json:"label"`
		TextHash   string  `json:"text_hash"`
		Confidence float64 `json:"confidence"`
	} `json:"spans"`
	Documents []struct {
		ID       string `json:"id"`
		Length   int    `json:"length"`
		TextHash string `json:"text_hash"`
	} `json:"documents"`
	WebhookDelivery *struct {
		Status   string `json:"status"`
		Attempts int    `json:"attempts"`
	} `json:"webhook_delivery"`
}

func (c openMedJobs) CreateJob(req omCreateJob) (omJob, int, error) {
	body, _ := json.Marshal(req)
	resp, err := c.do(http.MethodPost, "/jobs", body)
	if err != nil {
		return omJob{}, 0, err
	}
	defer resp.Body.Close()
	var j omJob
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return j, resp.StatusCode, fmt.Errorf("CreateJob: %d %s", resp.StatusCode, b)
	}
	return j, resp.StatusCode, json.Unmarshal(b, &j)
}

func (c openMedJobs) GetJob(id string) (omJob, error) {
	resp, err := c.do(http.MethodGet, "/jobs/"+id, nil)
	if err != nil {
		return omJob{}, err
	}
	defer resp.Body.Close()
	var j omJob
	if resp.StatusCode != http.StatusOK {
		return j, fmt.Errorf("GetJob: %d", resp.StatusCode)
	}
	return j, json.NewDecoder(resp.Body).Decode(&j)
}

// waitJob polls GetJob until cond holds or the guard passes.
func waitJob(t *testing.T, c openMedJobs, id string, guard time.Duration, cond func(omJob) bool) omJob {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		j, err := c.GetJob(id)
		if err == nil && cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %+v, %v", id, j, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the condition, not waiting for a state
	}
}

type jobResultLine struct {
	Index            int    `json:"index"`
	DocumentID       string `json:"document_id"`
	DeidentifiedText string `json:"deidentified_text"`
	Error            string `json:"error"`
}

// jobResults reads every page of a finished job's results.
func jobResults(t *testing.T, base, id string) []jobResultLine {
	t.Helper()
	var out []jobResultLine
	offset := "0"
	for offset != "" {
		resp, err := http.Get(base + "/jobs/" + id + "/results?limit=64&offset=" + offset)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("results: %v %v", resp, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l jobResultLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		resp.Body.Close()
		offset = resp.Header.Get("X-Next-Offset")
	}
	return out
}

func jobKey(t *testing.T) string {
	t.Cleanup(http.DefaultClient.CloseIdleConnections) // registered first: runs after the servers stop
	p := filepath.Join(t.TempDir(), "jobs.key")
	if err := os.WriteFile(p, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJobThroughTheRealServer: OpenMed's CreateJob and GetJob against the binary with the real
// PII model; the job runs to done, its spans and documents are reported, its results hold the
// de-identified texts, and its webhook arrives signed (checked by the receiver's own
// implementation of OpenMed's canonical string) with no text in it.
func TestJobThroughTheRealServer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hooks []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		canonical := strings.Join([]string{"OPENMED-HMAC-SHA256-V1", r.Method, r.URL.RequestURI(),
			r.Header.Get("X-OpenMed-Timestamp"), r.Header.Get("X-OpenMed-Nonce"), "sha256:" + hex.EncodeToString(sum[:])}, "\n")
		mac := hmac.New(sha256.New, []byte("shared"))
		mac.Write([]byte(canonical))
		ok := hmac.Equal([]byte("sha256="+hex.EncodeToString(mac.Sum(nil))), []byte(r.Header.Get("X-OpenMed-Signature")))
		mu.Lock()
		hooks = append(hooks, fmt.Sprintf("%v %s %s", ok, r.Header.Get("X-OpenMed-Event"), body))
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer receiver.Close()
	p := startProcess(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_REPLICA_ID=j1", "SLUICE_JOBS_KEY_FILE="+jobKey(t),
		"SLUICE_JOBS_WEBHOOK_ALLOW_PRIVATE=true")
	c := openMedJobs{base: p.url}
	docs := []omDocument{
		{ID: "note-1", Text: "Patient Maria Garcia was seen on 03/04/2021 by Dr. John Smith.", SubjectID: "mrn-1"},
		{ID: "note-2", Text: "Call Maria Garcia at 555-123-4567 about her results.", SubjectID: "mrn-1"},
		{ID: "note-3", Text: "No identifiers here."},
	}
	created, code, err := c.CreateJob(omCreateJob{Documents: docs, Method: "replace",
		Webhook: &omWebhook{URL: receiver.URL + "/hook?src=sluice", Secret: "shared", MaxAttempts: 3, BackoffSeconds: 0.05}})
	if err != nil || code != 202 || created.Status != "queued" || created.DocumentCount != 3 ||
		created.StatusURL != "/jobs/"+created.ID || !created.Durable {
		t.Fatalf("CreateJob: %+v %d %v", created, code, err)
	}
	j := waitJob(t, c, created.ID, 60*time.Second, func(j omJob) bool { return j.Status == "done" })
	if j.ProcessedCount != 3 || j.FailedCount != 0 || j.ProgressPercent != 100 || len(j.Documents) != 3 || len(j.Spans) == 0 {
		t.Fatalf("done: %+v", j)
	}
	// Text hashes are keyed (the tenant's, as the streams' are): a bare SHA-256 of a name, sent
	// to a webhook, is a dictionary lookup away from it.
	bare := func(text string) string { sum := sha256.Sum256([]byte(text)); return hex.EncodeToString(sum[:]) }
	for _, s := range j.Spans {
		if !strings.HasPrefix(s.TextHash, "hmac-sha256:") || s.DocumentID == "" || s.End <= s.Start {
			t.Fatalf("span %+v", s)
		}
	}
	for i, d := range j.Documents {
		if !strings.HasPrefix(d.TextHash, "hmac-sha256:") || strings.Contains(d.TextHash, bare(docs[i].Text)) {
			t.Fatalf("document %+v", d)
		}
	}
	res := jobResults(t, p.url, j.ID)
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if r.Index != i || r.DocumentID != docs[i].ID || strings.Contains(r.DeidentifiedText, "Maria") || r.DeidentifiedText == "" {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	j = waitJob(t, c, created.ID, 30*time.Second, func(j omJob) bool {
		return j.WebhookDelivery != nil && j.WebhookDelivery.Status == "delivered"
	})
	mu.Lock()
	defer mu.Unlock()
	if len(hooks) != 1 || !strings.HasPrefix(hooks[0], "true job.done ") || strings.Contains(hooks[0], "Maria") ||
		strings.Contains(hooks[0], bare("Maria Garcia")) || strings.Contains(hooks[0], bare(docs[1].Text)) {
		t.Fatalf("webhooks: %q", hooks)
	}
	// A bad field of the webhook, or of a document, is named where it is; a document's
	// unknown field too; a body of many mistakes lists the first hundred; more documents than
	// a job holds is a 413 before any is read.
	many := func(n int) string { return `{"documents":[` + strings.Repeat(`{},`, n-1) + `{}]}` }
	for _, c := range []struct {
		body   string
		status int
		field  string
	}{
		{`{"documents":[{"id":"a","text":"x"}],"webhook":{"url":"http://x.example/","max_attempts":"three"}}`, 422, `"body.webhook.max_attempts"`},
		// A refused webhook address in the same envelope, its field named (its details were null).
		{`{"documents":[{"id":"a","text":"x"}],"webhook":{"url":"gopher://x.example/"}}`, 422, `"field":"body.webhook.url"`},
		{`{"documents":[{"id":"a","text":"x"}],"webhook":{"url":"http://x.example:99999/"}}`, 422, `"field":"body.webhook.url","message":"Value error, has a port outside 1-65535"`},
		{`{"documents":[{"id":"a","text":"x","subject_id":""}]}`, 422, `"body.documents.0.subject_id"`},
		{`{"documents":[{"id":"a","text":"x"},{"id":"b","text":"y","subjectid":"p-1"}]}`, 422, `"field":"body.documents.1","message":"Extra inputs are not permitted`},
		{`{"documents":[{"id":"a","text":"x"},"y"]}`, 422, `"field":"body.documents.1","message":"Input should be a valid JSON object"`},
		{`{"documents":[{"id":"a","text":"x","extra":1},{"text":"y"}]}`, 422, `"field":"body.documents.1.id"`}, // beside the first's
		{many(3000), 422, `"type":"too_many_errors"`},
		{many(10001), 413, `at most 10000 documents`},
	} {
		resp, err := http.Post(p.url+"/jobs", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(answer), c.field) || len(answer) > 64<<10 {
			t.Errorf("%.80s: %d %.300s (%d bytes); want %d naming %s", c.body, resp.StatusCode, answer, len(answer), c.status, c.field)
		}
	}
	// Cancel: a finished job stays done; an unknown id is 404.
	req, _ := http.NewRequest(http.MethodDelete, p.url+"/jobs/"+strings.Repeat("0", 32), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("DELETE an unknown job: %d", resp.StatusCode)
	}
}

// TestJobSurvivesSIGKILL: the binary is killed with SIGKILL in the middle of a job of 300
// documents; started again on the same data directory and key, it finishes the job, and every
// document has exactly one result.
func TestJobSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	dir, key := t.TempDir(), jobKey(t)
	env := []string{"SLUICE_DATA_DIR=" + dir, "SLUICE_REPLICA_ID=k1", "SLUICE_GENERATE_MODEL=none", "SLUICE_JOBS_KEY_FILE=" + key,
		"SLUICE_JOBS_WORKERS=1", "SLUICE_JOBS_ACK_WAIT_MS=2000"}
	p := startProcess(t, env...)
	c := openMedJobs{base: p.url}
	docs := make([]omDocument, 300)
	for i := range docs {
		docs[i] = omDocument{ID: fmt.Sprintf("n%03d", i), Text: fmt.Sprintf("Patient Maria Garcia, MRN %06d, seen on 03/04/2021 in Springfield by Dr. Smith.", i)}
	}
	created, _, err := c.CreateJob(omCreateJob{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	mid := waitJob(t, c, created.ID, 120*time.Second, func(j omJob) bool { return j.ProcessedCount >= 20 })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	if mid.ProcessedCount >= len(docs) {
		t.Fatalf("the job finished before the kill (%d): nothing was proven", mid.ProcessedCount)
	}
	p = startProcess(t, env...)
	c = openMedJobs{base: p.url}
	j := waitJob(t, c, created.ID, 180*time.Second, func(j omJob) bool { return j.Status == "done" })
	if j.ProcessedCount != len(docs) || j.FailedCount != 0 || len(j.Documents) != len(docs) {
		t.Fatalf("after the restart: processed %d, failed %d, %d documents", j.ProcessedCount, j.FailedCount, len(j.Documents))
	}
	res := jobResults(t, p.url, j.ID)
	seen := map[string]int{}
	for i, r := range res {
		seen[r.DocumentID]++
		if r.Index != i || r.DocumentID != docs[i].ID || r.Error != "" || strings.Contains(r.DeidentifiedText, "Maria") {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if len(res) != len(docs) || len(seen) != len(docs) {
		t.Fatalf("%d results for %d documents (%d distinct)", len(res), len(docs), len(seen))
	}
	t.Logf("killed at %d of %d processed; all %d results present once after the restart", mid.ProcessedCount, len(docs), len(res))
}

// jobStandIns is what a finished job's result did to one document: each span's replacement by
// "label|original", and the days its dates moved (0 without dates).
type jobStandIns struct {
	byOriginal map[string]string
	shift      int
}

// standInsOf reads the replacements out of a result: the text between spans is kept as it
// was, so the de-identified text is those pieces with the replacements between them.
func standInsOf(t *testing.T, original, deidentified string, spans []jobSpan) jobStandIns {
	t.Helper()
	runes := []rune(original)
	pattern, at := "(?s)^", 0
	for _, s := range spans {
		if s.Start < at || s.End > len(runes) {
			t.Fatalf("spans out of order: %+v", spans)
		}
		pattern += regexp.QuoteMeta(string(runes[at:s.Start])) + "(.*?)"
		at = s.End
	}
	m := regexp.MustCompile(pattern + regexp.QuoteMeta(string(runes[at:])) + "$").FindStringSubmatch(deidentified)
	if m == nil {
		t.Fatalf("the de-identified text does not keep the text between its %d spans", len(spans))
	}
	out := jobStandIns{byOriginal: map[string]string{}}
	for i, s := range spans {
		from := string(runes[s.Start:s.End])
		out.byOriginal[s.Label+"|"+from] = m[i+1]
		if s.Label != "date" {
			continue
		}
		a, err1 := time.Parse("01/02/2006", from)
		b, err2 := time.Parse("01/02/2006", m[i+1])
		if err1 != nil || err2 != nil {
			t.Fatalf("a date of %d characters became one of %d", len(from), len(m[i+1]))
		}
		days := int(b.Sub(a).Hours() / 24)
		if days == 0 || out.shift != 0 && days != out.shift {
			t.Fatalf("the dates of one document moved %d and %d days", out.shift, days)
		}
		out.shift = days
	}
	return out
}

type jobSpan struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	Label string `json:"label"`
}

// TestTwoJobsOfOneSubject: two notes of one patient, each in its own job, get the same stand-ins
// for the names the model finds in both and the same date shift; the same two notes without
// subject_id, in the same two jobs, do not. The real binary, PII model and job queue.
func TestTwoJobsOfOneSubject(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_REPLICA_ID=s1", "SLUICE_JOBS_KEY_FILE="+jobKey(t),
		"SLUICE_DEID_HASH_KEY=a key of sixteen bytes")
	c := openMedJobs{base: p.url}
	one := "Patient Alan Brooks was seen on 03/14/2021. Follow-up with Dr. Smith on 04/02/2021."
	two := "Maria Lopez called about Alan Brooks on 05/20/2021; his wife drove him."
	run := func(note string) (subject, none jobStandIns) {
		t.Helper()
		created, _, err := c.CreateJob(omCreateJob{Method: "replace", Documents: []omDocument{
			{ID: "with", Text: note, SubjectID: "mrn-0042"}, {ID: "without", Text: note}}})
		if err != nil {
			t.Fatal(err)
		}
		waitJob(t, c, created.ID, 60*time.Second, func(j omJob) bool { return j.Status == "done" })
		resp, err := http.Get(p.url + "/jobs/" + created.ID + "/results")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("results: %v %v", resp, err)
		}
		defer resp.Body.Close()
		var got []jobStandIns
		for dec := json.NewDecoder(resp.Body); dec.More(); {
			var l struct {
				DeidentifiedText string    `json:"deidentified_text"`
				Spans            []jobSpan `json:"spans"`
			}
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			got = append(got, standInsOf(t, note, l.DeidentifiedText, l.Spans))
		}
		if len(got) != 2 {
			t.Fatalf("%d results", len(got))
		}
		return got[0], got[1]
	}
	x, xNone := run(one)
	y, yNone := run(two)
	shared := 0
	for k, v := range x.byOriginal {
		if w, ok := y.byOriginal[k]; ok && !strings.HasPrefix(k, "date|") {
			shared++
			if v != w {
				t.Errorf("%s: one stand-in in one job, another in the other", k)
			}
		}
	}
	if shared < 2 || x.shift == 0 || x.shift != y.shift {
		t.Fatalf("the model found %d names in both notes; the dates moved %d and %d days", shared, x.shift, y.shift)
	}
	if xNone.byOriginal["first_name|Alan"] == yNone.byOriginal["first_name|Alan"] && xNone.shift == yNone.shift {
		t.Fatalf("without a subject the two jobs agree")
	}
}

// TestJobDocumentsDrawOnTheTenantsBudget: a job's documents are charged, as they run, to the
// budget its submitting key carries. A document the budget cannot take yet goes back to the
// queue and runs once the bucket has refilled; one larger than the whole token burst fails;
// the documents drain the bucket, and the tenant's next interactive request is refused 429.
func TestJobDocumentsDrawOnTheTenantsBudget(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path, budgetKey("slow-secret-1", "slow", `{"tokens_per_minute":6,"token_burst":100}`),
		budgetKey("quick-secret-1", "quick", `{"tokens_per_minute":3000,"token_burst":100}`))
	p := startProcess(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_API_KEYS_FILE="+path, "SLUICE_JOBS_KEY_FILE="+jobKey(t))
	fits := strings.Repeat("Seen by Dr. Okafor on 03/14/2024. ", 10) // 340 bytes: 85 tokens estimated
	tooLarge := strings.Repeat("Call Maria at (415) 555-0132. ", 15) // 450 bytes: 113 tokens, over the burst of 100
	run := func(c openMedJobs, docs ...omDocument) omJob {
		created, _, err := c.CreateJob(omCreateJob{Documents: docs})
		if err != nil {
			t.Fatal(err)
		}
		return waitJob(t, c, created.ID, time.Minute, func(j omJob) bool { return j.Status == "done" || j.Status == "failed" })
	}
	// Quick's bucket holds one document at a time and refills one in under two seconds.
	quick := openMedJobs{base: p.url, apiKey: "quick-secret-1"}
	if done := run(quick, omDocument{ID: "a", Text: fits}, omDocument{ID: "b", Text: fits}); done.ProcessedCount != 2 {
		t.Fatalf("quick's job: %+v", done)
	}
	if waited := scrapeSum(t, p.url, "sluice_jobs_documents_total", `outcome="deferred"`); waited < 1 {
		t.Fatalf("no document waited for its budget (%v)", waited)
	}
	slow := openMedJobs{base: p.url, apiKey: "slow-secret-1"}
	if done := run(slow, omDocument{ID: "fits", Text: fits}, omDocument{ID: "large", Text: tooLarge}); done.Status != "done" ||
		done.ProcessedCount != 1 || done.FailedCount != 1 {
		t.Fatalf("slow's job: %+v", done)
	}
	// 15 tokens left (a tenth of a token a second refills): a 19-token request is refused.
	resp, err := slow.do(http.MethodPost, "/pii/extract", []byte(`{"text":"Call Maria at (415) 555-0132 about the results from 03/14/2024."}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the tenant's request after its job: %d, want 429", resp.StatusCode)
	}
}

// TestShutdownGivesJobDocumentsBack: SIGTERM while a job runs and a stream keeps the drain
// going: the job's workers stop first and give their documents back, rather than failing
// them against models that are closing (each failure counts at once here, with
// SLUICE_JOBS_MAX_ATTEMPTS=1); the next start finishes the job with none failed.
func TestShutdownGivesJobDocumentsBack(t *testing.T) {
	t.Parallel()
	env := []string{"SLUICE_ADDR=127.0.0.1:0", "SLUICE_DEVICE=cpu", "SLUICE_INTRA_OP_THREADS=1", "SLUICE_QUANTIZE=off",
		"SLUICE_DATA_DIR=" + t.TempDir(), "SLUICE_JOBS_KEY_FILE=" + jobKey(t), "SLUICE_JOBS_WORKERS=1", "SLUICE_JOBS_MAX_ATTEMPTS=1",
		"SLUICE_BENCH_STEP_DELAY_MS=60", "SLUICE_SHUTDOWN_TIMEOUT_S=30"}
	start := func() (*testServer, context.CancelFunc, chan int) {
		ctx, cancel := context.WithCancel(context.Background())
		ready, done, logs := make(chan net.Addr, 1), make(chan int, 1), &logtest.Buffer{}
		go func() { done <- run(ctx, env, logs, logs, ready) }()
		select {
		case addr := <-ready:
			return &testServer{url: "http://" + addr.String(), logs: logs}, cancel, done
		case code := <-done:
			cancel()
			t.Fatalf("exited with %d:\n%s", code, logs.String())
		}
		return nil, nil, nil
	}
	srv, stop, done := start()
	c := openMedJobs{base: srv.url}
	docs := make([]omDocument, 1000)
	for i := range docs {
		docs[i] = omDocument{ID: fmt.Sprintf("n%04d", i), Text: fmt.Sprintf("Patient Maria Garcia, MRN %06d, seen by Dr. Smith.", i)}
	}
	// A stream of 40 steps of 60 ms keeps the drain going for seconds.
	resp, err := http.Post(srv.url+"/v1/completions", "application/json",
		strings.NewReader(`{"model":"tiny-lm","prompt":"The patient","max_tokens":40,"ignore_eos":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the stream: %d", resp.StatusCode)
	}
	first := bufio.NewReader(resp.Body)
	if _, err := first.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	created, _, err := c.CreateJob(omCreateJob{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, created.ID, 60*time.Second, func(j omJob) bool { return j.ProcessedCount >= 10 })
	stop() // what SIGTERM does in main
	_, _ = io.Copy(io.Discard, first)
	if code := <-done; code != 0 {
		t.Fatalf("the first process exited with %d", code)
	}
	srv, stop, done = start()
	defer func() { stop(); <-done }()
	c = openMedJobs{base: srv.url}
	j := waitJob(t, c, created.ID, 120*time.Second, func(j omJob) bool { return j.Status == "done" || j.Status == "failed" })
	if j.ProcessedCount != len(docs) || j.FailedCount != 0 {
		t.Fatalf("after the restart: processed %d, failed %d of %d", j.ProcessedCount, j.FailedCount, len(docs))
	}
}

// TestAWebhookOutlivesSIGKILL: the process delivering a job's webhook is killed with SIGKILL
// while its receiver holds the attempt open; started again on the same data directory and key,
// the server takes the delivery over once the dead process's claim has passed (its attempts'
// time and a minute), and the receiver gets job.done once more, answered this time. Minutes
// long: it runs with LONG_TESTS set (make durability).
func TestAWebhookOutlivesSIGKILL(t *testing.T) {
	t.Parallel()
	if os.Getenv("LONG_TESTS") == "" {
		t.Skip("minutes long: runs with LONG_TESTS set (make durability)")
	}
	held := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var answered []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case <-held:
		default:
			close(held) // the first attempt: held open until the test ends
			<-release
			return
		}
		mu.Lock()
		answered = append(answered, r.Header.Get("X-OpenMed-Event")+" "+string(body))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	defer close(release)
	dir, key := t.TempDir(), jobKey(t)
	env := []string{"SLUICE_DATA_DIR=" + dir, "SLUICE_REPLICA_ID=w1", "SLUICE_GENERATE_MODEL=none", "SLUICE_JOBS_KEY_FILE=" + key,
		"SLUICE_JOBS_WEBHOOK_ALLOW_PRIVATE=true", "SLUICE_JOBS_WEBHOOK_TIMEOUT_MS=5000"}
	p := startProcess(t, env...)
	c := openMedJobs{base: p.url}
	created, code, err := c.CreateJob(omCreateJob{Documents: []omDocument{{ID: "a", Text: "Patient Maria Garcia was seen on 03/04/2021."}},
		Webhook: &omWebhook{URL: receiver.URL + "/hook", Secret: "shared", MaxAttempts: 2, BackoffSeconds: 0.05}})
	if err != nil || code != 202 {
		t.Fatalf("CreateJob: %d %v", code, err)
	}
	select {
	case <-held:
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("the webhook's first attempt never came")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	// Its claim: two attempts of five seconds, a backoff and a minute to spare; the next start
	// sweeps the records at once and each minute after.
	p = startProcess(t, env...)
	c = openMedJobs{base: p.url}
	j := waitJob(t, c, created.ID, 10*time.Minute, func(j omJob) bool {
		return j.WebhookDelivery != nil && j.WebhookDelivery.Status != "pending"
	})
	mu.Lock()
	defer mu.Unlock()
	if j.WebhookDelivery.Status != "delivered" || len(answered) != 1 || !strings.HasPrefix(answered[0], "job.done ") ||
		strings.Contains(answered[0], "Maria") {
		t.Fatalf("after the restart: %+v, answered %q", j.WebhookDelivery, answered)
	}
}
