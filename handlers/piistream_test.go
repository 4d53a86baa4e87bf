package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
)

// failingAfter is the fake extractor whose calls after the first n fail, as an engine error
// would in the middle of a stream.
type failingAfter struct {
	*fakeExtractor
	n      int
	panics bool  // a bug: the call panics instead of failing
	err    error // what the failing calls return; nil: an engine's error
}

func (f *failingAfter) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	if f.callCount() >= f.n {
		f.set(func(x *fakeExtractor) { x.calls++ })
		if f.panics {
			panic("engine: " + canary)
		}
		if f.err != nil {
			return nil, extract.Stats{}, f.err
		}
		return nil, extract.Stats{}, errors.New("engine: " + canary)
	}
	return f.fakeExtractor.Extract(ctx, p, text, opts)
}

// TestAStreamThatFailsEndsWithAnErrorLine: both PII streams, whose second window fails, send
// the first window's lines, then one error line in the error envelope's shape (no request text
// in it), and nothing after.
func TestAStreamThatFailsEndsWithAnErrorLine(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(map[bool]string{false: "error", true: "panic"}[panics], func(t *testing.T) { streamFailure(t, panics) })
	}
}

// TestALaterWindowTheQueueRefusesIsARefusal: a stream whose second window the queue has no
// room or time for ends with the queue's refusal (backpressure, counted as refused or
// expired), not an internal error logged as a failure.
func TestALaterWindowTheQueueRefusesIsARefusal(t *testing.T) {
	for _, cause := range []error{admission.ErrQueueFull, admission.ErrExpired} {
		f := streamFixture(t, func(x *fakeExtractor) Extractor { return &failingAfter{fakeExtractor: x, n: 1, err: cause} },
			func(ep Endpoint, r *deid.Redactor) []Route { return []Route{PIIExtractStream(ep, r)} })
		body, _ := json.Marshal(map[string]any{"text": strings.Repeat("Alice went home. ", 400), "window_chars": 256})
		resp := f.do(t, "POST", "/pii/extract/stream", string(body))
		lines := strings.Split(strings.TrimSpace(resp.raw), "\n")
		var last struct {
			Type  string         `json:"type"`
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "error" || last.Error["code"] != CodeBackpressure {
			t.Fatalf("%v: last line %s", cause, lines[len(lines)-1])
		}
		if strings.Contains(f.logs.String(), "work failed") {
			t.Fatalf("%v: logged as a failure: %s", cause, f.logs.String())
		}
	}
}

// streamFailure is TestAStreamThatFailsEndsWithAnErrorLine with an extractor that fails or,
// as a bug would, panics: the process answers the next request either way.
func streamFailure(t *testing.T, panics bool) {
	f := streamFixture(t, func(x *fakeExtractor) Extractor { return &failingAfter{fakeExtractor: x, n: 1, panics: panics} },
		func(ep Endpoint, r *deid.Redactor) []Route {
			return []Route{PIIExtractStream(ep, r), PIIDeidentifyStream(ep, r)}
		})
	text := strings.Repeat("Alice "+canary+" went home. ", 400) // over one 4,096-character window
	for _, path := range []string{"/pii/extract/stream", "/pii/deidentify/stream"} {
		body, _ := json.Marshal(map[string]any{"text": text, "window_chars": 256})
		if path == "/pii/deidentify/stream" {
			body, _ = json.Marshal(map[string]any{"text": text})
		}
		resp := f.do(t, "POST", path, string(body))
		if resp.status != 200 || resp.header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("%s: status %d %s", path, resp.status, resp.header.Get("Content-Type"))
		}
		lines := strings.Split(strings.TrimSpace(resp.raw), "\n")
		var last struct {
			Type  string         `json:"type"`
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || len(lines) < 2 {
			t.Fatalf("%s: %d lines, last %q", path, len(lines), lines[len(lines)-1])
		}
		if last.Type != "error" || last.Error["code"] != CodeInternal || last.Error["request_id"] == "" ||
			strings.Contains(lines[len(lines)-1], canary) {
			t.Fatalf("%s: last line %s", path, lines[len(lines)-1])
		}
		for _, l := range lines[:len(lines)-1] {
			if strings.Contains(l, `"type":"error"`) || strings.Contains(l, `"type":"final"`) {
				t.Fatalf("%s: line before the error: %s", path, l)
			}
		}
		f.pii.set(func(x *fakeExtractor) { x.calls = 0 })
	}
	if r := f.do(t, "POST", "/pii/extract", `{"text":"Alice"}`); r.status != 200 {
		t.Fatalf("after the failed streams: %d", r.status)
	}
	if strings.Contains(f.logs.String(), canary) {
		t.Fatal("the logs hold request text")
	}
}

// TestDeidentifyStreamChunksAreChunkSizeCharacters: chunk_size sets the de-identification
// stream's chunks (it changed nothing): each covers chunk_size characters of the text, more
// where a name would be cut, the last fewer; every size gives the same text, names masked.
func TestDeidentifyStreamChunksAreChunkSizeCharacters(t *testing.T) {
	f := streamFixture(t, nil, func(ep Endpoint, r *deid.Redactor) []Route { return []Route{PIIDeidentifyStream(ep, r)} })
	text := strings.Repeat("Alice went home to rest. ", 40) // 1,000 characters, a name every 25
	text = strings.TrimSpace(text)
	joined := map[int]string{}
	for _, size := range []int{99, 100, 102, 200, 5000} { // 102 ends inside a name: the chunk takes it whole
		body, _ := json.Marshal(map[string]any{"text": text, "method": "mask", "chunk_size": size})
		resp := f.do(t, "POST", "/pii/deidentify/stream", string(body))
		var chunks []string
		for _, l := range strings.Split(strings.TrimSpace(resp.raw), "\n") {
			var ev struct {
				Type         string `json:"type"`
				RedactedText string `json:"redacted_text"`
			}
			_ = json.Unmarshal([]byte(l), &ev)
			if ev.Type == "chunk" {
				chunks = append(chunks, ev.RedactedText)
			}
		}
		want := (len(text) + size - 1) / size // one fewer where a chunk took a name whole
		if resp.status != 200 || len(chunks) != want && len(chunks) != want-1 {
			t.Fatalf("chunk_size %d: status %d, %d chunks, want %d: %.300s", size, resp.status, len(chunks), want, resp.raw)
		}
		for i, ch := range chunks {
			if strings.Contains(ch, "Alice") || i < len(chunks)-1 && strings.Count(ch, "[") != strings.Count(ch, "]") {
				t.Fatalf("chunk_size %d, chunk %d splits or keeps a name: %q", size, i, ch)
			}
		}
		joined[size] = strings.Join(chunks, "")
	}
	for size, got := range joined {
		if got != joined[5000] {
			t.Fatalf("chunk_size %d gives another text:\n%s\n%s", size, got, joined[5000])
		}
	}
}

// TestAFinalLineWithNothingFoundHasItsList: a stream that finds nothing ends with an empty
// list, as the routes that do not stream answer, not a missing key or null.
func TestAFinalLineWithNothingFoundHasItsList(t *testing.T) {
	r, err := deid.New(deid.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *fixtureOptions) {
		o.extra = []Route{PIIExtractStream(o.pii, r), PIIDeidentifyStream(o.pii, r)}
	})
	for path, want := range map[string]string{"/pii/extract/stream": `"final_spans":[]`, "/pii/deidentify/stream": `"spans":[]`} {
		resp := f.do(t, "POST", path, `{"text":"nobody went home."}`)
		lines := strings.Split(strings.TrimSpace(resp.raw), "\n")
		if last := lines[len(lines)-1]; resp.status != 200 || !strings.Contains(last, `"type":"final"`) || !strings.Contains(last, want) {
			t.Errorf("%s: %d, last line %s; want %s", path, resp.status, last, want)
		}
	}
}

// subjectLine finds a name only on the subject line ("RE: Zorblat"), as a model that misses
// it later in the note would.
type subjectLine struct{ *fakeExtractor }

func (f subjectLine) Extract(_ context.Context, _ admission.Priority, text string, _ entities.Options) ([]entities.Entity, extract.Stats, error) {
	var ents []entities.Entity
	if i := strings.Index(text, "RE: Zorblat"); i >= 0 {
		ents = append(ents, entities.Entity{Label: "last_name", Start: i + 4, End: i + 11, Score: 0.9})
	}
	return ents, extract.Stats{Tokens: 3, Windows: 1}, nil
}

// TestAStreamRedactsANameItFoundInAnEarlierWindow: a name found in the first window is looked
// for in every later one, as the route that does not stream looks for it in the whole text.
func TestAStreamRedactsANameItFoundInAnEarlierWindow(t *testing.T) {
	f := streamFixture(t, func(x *fakeExtractor) Extractor { return subjectLine{x} },
		func(ep Endpoint, r *deid.Redactor) []Route {
			return []Route{PIIDeidentify(ep, r), PIIDeidentifyStream(ep, r)}
		})
	text := "RE: Zorblat came in. " + strings.Repeat("Nothing much happened today. ", 300) + "Consulted with Zorblat again."
	body, _ := json.Marshal(map[string]any{"text": text, "method": "mask"})
	whole := f.do(t, "POST", "/pii/deidentify", string(body))
	var out struct {
		Text string `json:"deidentified_text"`
	}
	if err := json.Unmarshal([]byte(whole.raw), &out); err != nil || strings.Contains(out.Text, "Zorblat") {
		t.Fatalf("/pii/deidentify: %d %v ...%s", whole.status, err, out.Text[max(len(out.Text)-100, 0):])
	}
	resp := f.do(t, "POST", "/pii/deidentify/stream", string(body))
	streamed := streamedText(resp.raw)
	if resp.status != 200 || streamed != out.Text {
		t.Fatalf("the stream: %d ...%s", resp.status, streamed[max(len(streamed)-100, 0):])
	}
}

// TestADenyTermTheWindowsEndCutsIsFound: the window's tail holds the longest deny term,
// whatever the request's context and entity lengths, so a term cut by one window's end is
// found whole in the next; a window too small to hold it twice is refused.
func TestADenyTermTheWindowsEndCutsIsFound(t *testing.T) {
	f := streamFixture(t, nil, func(ep Endpoint, r *deid.Redactor) []Route { return []Route{PIIExtractStream(ep, r)} })
	body, _ := json.Marshal(map[string]any{"text": strings.Repeat("x", 58) + " John Smith went home to rest for the weekend.",
		"window_chars": 64, "tokenizer_context_chars": 0, "max_entity_chars": 1, "deny_list": []string{"John Smith"}})
	resp := f.do(t, "POST", "/pii/extract/stream", string(body))
	if resp.status != 200 || !strings.Contains(resp.raw, `"label":"deny_list"`) {
		t.Fatalf("%d: %s", resp.status, resp.raw)
	}
	body, _ = json.Marshal(map[string]any{"text": "Seen today.", "window_chars": 64, "deny_list": []string{strings.Repeat("z", 40)}})
	if resp := f.do(t, "POST", "/pii/extract/stream", string(body)); resp.status != 422 || !strings.Contains(resp.raw, "window_chars") {
		t.Fatalf("a window under twice the longest term: %d %s", resp.status, resp.raw)
	}
}

// urlFinder is a PII model that finds URLs, however long, and nothing else.
type urlFinder struct{ *fakeExtractor }

var auditURL = regexp.MustCompile(`https?://\S+`)

func (f urlFinder) Extract(_ context.Context, _ admission.Priority, text string, _ entities.Options) ([]entities.Entity, extract.Stats, error) {
	var ents []entities.Entity
	for _, m := range auditURL.FindAllStringIndex(text, -1) {
		ents = append(ents, entities.Entity{Label: "url", Start: m[0], End: m[1], Score: 0.99})
	}
	return ents, extract.Stats{Tokens: 3, Windows: 1}, nil
}

// TestAStreamNeverCutsASpanAtTheWindowsEnd: a URL longer than the stream's window (a signed
// link with a patient's name in its query) is masked whole by the de-identification stream, as
// /pii/deidentify masks it, and the extraction stream's final span is the whole URL. The window
// it filled was made final up to its end, the span cut there, and the rest of the URL, which
// the next window no longer read as one, went out in clear (an auditor's find).
func TestAStreamNeverCutsASpanAtTheWindowsEnd(t *testing.T) {
	f := streamFixture(t, func(x *fakeExtractor) Extractor { return urlFinder{x} }, func(ep Endpoint, r *deid.Redactor) []Route {
		return []Route{PIIDeidentify(ep, r), PIIDeidentifyStream(ep, r), PIIExtractStream(ep, r)}
	})
	url := "https://portal.example.org/r?t=" + strings.Repeat("a", 5000) + "&patient=Zorblat+Quexley"
	text := "Ref " + url + " ok."
	body, _ := json.Marshal(map[string]any{"text": text, "method": "mask", "use_safety_sweep": false})
	var whole struct {
		Text string `json:"deidentified_text"`
	}
	resp := f.do(t, "POST", "/pii/deidentify", string(body))
	if err := json.Unmarshal([]byte(resp.raw), &whole); err != nil || whole.Text != "Ref [url] ok." {
		t.Fatalf("/pii/deidentify: %d %q", resp.status, whole.Text)
	}
	resp = f.do(t, "POST", "/pii/deidentify/stream", string(body))
	if got := streamedText(resp.raw); got != whole.Text {
		t.Fatalf("the stream differs from /pii/deidentify: ...%q", got[max(0, len(got)-60):])
	}

	body, _ = json.Marshal(map[string]any{"text": text})
	lines := strings.Split(strings.TrimSpace(f.do(t, "POST", "/pii/extract/stream", string(body)).raw), "\n")
	var final struct {
		Spans []struct {
			Text string `json:"text"`
		} `json:"final_spans"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || len(final.Spans) != 1 || final.Spans[0].Text != url {
		t.Fatalf("/pii/extract/stream's final spans: %d, the last line ...%.200s", len(final.Spans), lines[len(lines)-1])
	}
}

// streamedText is a de-identification stream's chunks joined: the redacted text it sent.
func streamedText(raw string) string {
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(raw), "\n") {
		var ev struct {
			Type         string `json:"type"`
			RedactedText string `json:"redacted_text"`
		}
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "chunk" {
			out.WriteString(ev.RedactedText)
		}
	}
	return out.String()
}

// streamFixture is a fixture with room for long texts, serving routes over its PII endpoint
// and a redactor; wrap, when set, stands in for its PII model.
func streamFixture(t *testing.T, wrap func(*fakeExtractor) Extractor, routes func(ep Endpoint, r *deid.Redactor) []Route) *fixture {
	t.Helper()
	r, err := deid.New(deid.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxBodyBytes, o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1<<20, 1<<19, 1<<19
		if wrap != nil {
			o.pii.Models["pii"] = wrap(o.pii.Models["pii"].(*fakeExtractor))
		}
		o.extra = routes(o.pii, r)
	})
}

// TestAStreamsLinesAreHeldToItsRequestsDeadline: a line the reader does not take is given up
// at the request's deadline when that comes before the stall limit (a reader taking one
// character's chunk just inside the stall limit held the stream for hours); the error line
// that ends a stream whose deadline passed still has the stall limit to be read.
func TestAStreamsLinesAreHeldToItsRequestsDeadline(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	out := &lineWriter{w: bufio.NewWriter(server), conn: server, stall: time.Hour, end: time.Now().Add(20 * time.Millisecond)}
	wrote := make(chan error, 1)
	go func() { wrote <- out.line([]byte(`{"type":"chunk"}`)) }()
	select {
	case err := <-wrote:
		if !errors.Is(err, errReaderStalled) {
			t.Fatalf("a line past the request's deadline: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("a line the reader does not take waited for the stall limit, past the request's deadline")
	}

	server, client = net.Pipe()
	defer client.Close()
	out = &lineWriter{w: bufio.NewWriter(server), conn: server, stall: time.Hour, end: time.Now().Add(-time.Second)}
	read := make(chan string, 1)
	go func() { line, _ := bufio.NewReader(client).ReadString('\n'); read <- line }()
	streamError(&exchange{id: "r1"}, out, &apiError{Code: CodeTimeout, Message: "timed out", Outcome: OutcomeTimedOut})
	if line := <-read; !strings.Contains(line, `"type":"error"`) {
		t.Fatalf("the error line after the deadline: %q", line)
	}
}

// lateWindows finishes its windows after the first just inside the request's deadline, as a
// slow model's last window may.
type lateWindows struct{ *fakeExtractor }

func (l *lateWindows) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	if dl, ok := ctx.Deadline(); ok && l.callCount() >= 1 {
		time.Sleep(time.Until(dl) - 3*time.Millisecond) // the model's time, not a wait for state
	}
	return l.fakeExtractor.Extract(ctx, p, text, opts)
}

// TestAStreamWhoseWorkEndsInTimeIsWrittenWhole: a stream whose last window ends just inside its
// deadline, read promptly, is written to its final line, though its thousands of one-character
// chunks are written after the deadline (the lines held to the deadline alone were cut there,
// with no final line and no error).
func TestAStreamWhoseWorkEndsInTimeIsWrittenWhole(t *testing.T) {
	r, err := deid.New(deid.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxBodyBytes, o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1<<20, 1<<19, 1<<19
		o.Limits.RequestTimeout = 300 * time.Millisecond
		o.pii.Models["pii"] = &lateWindows{o.pii.Models["pii"].(*fakeExtractor)}
		o.extra = []Route{PIIDeidentifyStream(o.pii, r)}
	})
	body, _ := json.Marshal(map[string]any{"text": strings.Repeat("x went home. ", 600), "chunk_size": 1})
	lines := strings.Split(strings.TrimSpace(f.do(t, "POST", "/pii/deidentify/stream", string(body)).raw), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"type":"final"`) {
		t.Fatalf("%d lines, the last %.300s", len(lines), last)
	}
}
