package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// OpenMed's Go client's NDJSON streams (ExtractPIIStream, DeidentifyStream), rebuilt from its
// documented wire names and checks: Accept application/x-ndjson; a 2xx answer must be
// application/x-ndjson or application/ndjson; lines of at most 4 MiB, each a JSON object with
// a non-empty type.

type omExtractStreamRequest struct {
	Text                  string   `json:"text"`
	ModelName             string   `json:"model_name,omitempty"`
	ConfidenceThreshold   *float64 `json:"confidence_threshold,omitempty"`
	UseSmartMerging       *bool    `json:"use_smart_merging,omitempty"`
	Lang                  string   `json:"lang,omitempty"`
	NormalizeAccents      *bool    `json:"normalize_accents,omitempty"`
	KeepAlive             any      `json:"keep_alive,omitempty"`
	ChunkSize             int      `json:"chunk_size,omitempty"`
	WindowChars           int      `json:"window_chars,omitempty"`
	TokenizerContextChars *int     `json:"tokenizer_context_chars,omitempty"`
	MaxEntityChars        int      `json:"max_entity_chars,omitempty"`
	IncludeText           *bool    `json:"include_text,omitempty"`
}

type omExtractStreamSpan struct {
	ID        string  `json:"id"`
	Label     string  `json:"label"`
	Start     int     `json:"start"`
	End       int     `json:"end"`
	ByteStart *int    `json:"byte_start"`
	ByteEnd   *int    `json:"byte_end"`
	Score     float64 `json:"score"`
	Text      *string `json:"text,omitempty"`
}

type omExtractStreamEvent struct {
	Type        string                `json:"type"`
	EntityID    *string               `json:"entity_id,omitempty"`
	Span        *omExtractStreamSpan  `json:"span,omitempty"`
	Reason      *string               `json:"reason,omitempty"`
	FinalSpans  []omExtractStreamSpan `json:"final_spans,omitempty"`
	LatencyMS   *float64              `json:"latency_ms,omitempty"`
	WindowChars *int                  `json:"window_chars,omitempty"`
	Audit       map[string]any        `json:"audit"`
}

type omDeidentifyStreamRequest struct {
	omDeidentifyRequest
	ChunkSize int `json:"chunk_size,omitempty"`
}

type omDeidentifyStreamEvent struct {
	Type         string            `json:"type"`
	Index        *int              `json:"index,omitempty"`
	RedactedText string            `json:"redacted_text,omitempty"`
	Audit        map[string]any    `json:"audit,omitempty"`
	Spans        []map[string]any  `json:"spans,omitempty"`
	Mapping      map[string]string `json:"mapping,omitempty"`
	Error        *omErrorBody      `json:"error,omitempty"`
}

// omStream is the client's stream: Next decodes the next line into its event.
type omStream struct {
	body    io.ReadCloser
	scanner *bufio.Scanner
}

func omOpenStream(t *testing.T, base, path string, req any) (*omStream, *omAPIError) {
	t.Helper()
	raw, _ := json.Marshal(req)
	hr, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(raw))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var env struct {
			Error omErrorBody `json:"error"`
		}
		if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "application/json" || json.Unmarshal(body, &env) != nil || env.Error.Code == "" {
			t.Fatalf("%s: status %d without an error envelope", path, resp.StatusCode)
		}
		return nil, &omAPIError{StatusCode: resp.StatusCode, Error: env.Error}
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "application/x-ndjson" && media != "application/ndjson" {
		resp.Body.Close()
		t.Fatalf("%s returned a non-NDJSON response (%s)", path, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	return &omStream{body: resp.Body, scanner: sc}, nil
}

// next decodes the next event into ev; false at the end of the stream.
func (s *omStream) next(t *testing.T, ev any) bool {
	t.Helper()
	if !s.scanner.Scan() {
		if err := s.scanner.Err(); err != nil {
			t.Fatal(err)
		}
		return false
	}
	line := s.scanner.Bytes()
	var head struct {
		Type string `json:"type"`
	}
	if len(bytes.TrimSpace(line)) == 0 || line[0] != '{' || json.Unmarshal(line, &head) != nil || head.Type == "" {
		t.Fatalf("stream event has no type: %.80q", line)
	}
	if err := json.Unmarshal(line, ev); err != nil {
		t.Fatal(err)
	}
	return true
}

func (s *omStream) close() { s.body.Close() }

// longNote is about n characters of notes, each with its own identifiers.
func longNote(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("Visit " + strconv.Itoa(i) + ": Maria Gonzalez was seen on 01/31/2024 and can be reached at (415) 555-0132. ")
		b.WriteString("She reports no new symptoms and the plan is unchanged for now. ")
	}
	return strings.TrimSpace(b.String()[:n])
}

// TestRebuiltOpenMedGoClientStreamsDeidentification: the stream's chunks joined are the
// answer /pii/deidentify gives the same text, its final line carries the spans and the mapping
// that restores the text, for a long note cut into many windows.
func TestRebuiltOpenMedGoClientStreamsDeidentification(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	text := longNote(20000)
	days := 3
	for _, req := range []omDeidentifyRequest{
		{Text: text, Method: "mask", KeepMapping: true},
		{Text: text, Method: "shift_dates", DateShiftDays: &days},
		{Text: text, Method: "hash"},
	} {
		whole, apiErr := omDeidentify(t, srv.url, req)
		if apiErr != nil {
			t.Fatalf("%+v", apiErr)
		}
		st, apiErr := omOpenStream(t, srv.url, "/pii/deidentify/stream", omDeidentifyStreamRequest{omDeidentifyRequest: req, ChunkSize: 512})
		if apiErr != nil {
			t.Fatalf("%+v", apiErr)
		}
		var joined strings.Builder
		var final omDeidentifyStreamEvent
		chunks := 0
		for {
			var ev omDeidentifyStreamEvent
			if !st.next(t, &ev) {
				break
			}
			switch ev.Type {
			case "chunk":
				if ev.Index == nil || *ev.Index != chunks {
					t.Fatalf("chunk index %v, want %d", ev.Index, chunks)
				}
				chunks++
				joined.WriteString(ev.RedactedText)
			case "final":
				final = ev
			default:
				t.Fatalf("event %q: %+v", ev.Type, ev.Error)
			}
		}
		st.close()
		if joined.String() != whole.DeidentifiedText {
			t.Fatalf("%s: the stream's text differs from the answer's", req.Method)
		}
		if chunks < 4 || len(final.Spans) != len(whole.PIIEntities) || final.Audit["redacted_text_hash"] == nil {
			t.Fatalf("%s: %d chunks, %d spans (answer: %d)", req.Method, chunks, len(final.Spans), len(whole.PIIEntities))
		}
		for i, sp := range final.Spans {
			if int(sp["start"].(float64)) != *whole.PIIEntities[i].Start || sp["replacement"] != *whole.PIIEntities[i].RedactedText {
				t.Fatalf("%s: span %d differs: %v", req.Method, i, sp)
			}
		}
		if req.KeepMapping {
			for k, v := range whole.Mapping {
				if final.Mapping[k] != v {
					t.Errorf("mapping %q: stream %q, answer %q", k, final.Mapping[k], v)
				}
			}
			got := restoreMapping(omDeidentifyResponse{DeidentifiedText: joined.String(), PIIEntities: whole.PIIEntities, Mapping: final.Mapping})
			if len(final.Mapping) != len(whole.Mapping) || got != text {
				t.Fatalf("the stream's mapping does not restore the text: %.200q", got)
			}
		}
	}
}

// TestRebuiltOpenMedGoClientStreamsExtraction: every span the stream makes final is an entity
// the text has, with offsets that slice it, emitted before it was final; the final line has
// them all, and the audit copy carries hashes, not text.
func TestRebuiltOpenMedGoClientStreamsExtraction(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	text := longNote(12000)
	st, apiErr := omOpenStream(t, srv.url, "/pii/extract/stream", omExtractStreamRequest{Text: text, WindowChars: 2048})
	if apiErr != nil {
		t.Fatalf("%+v", apiErr)
	}
	defer st.close()
	runes := []rune(text)
	emitted := map[string]bool{}
	var final omExtractStreamEvent
	for {
		var ev omExtractStreamEvent
		if !st.next(t, &ev) {
			break
		}
		switch ev.Type {
		case "emit":
			emitted[*ev.EntityID] = true
		case "retract":
			delete(emitted, *ev.EntityID)
		case "final":
			final = ev
		default:
			t.Fatalf("event %q", ev.Type)
		}
		if ev.Type != "final" {
			audit, _ := ev.Audit["span"].(map[string]any)
			if hash, _ := audit["text_hash"].(string); !strings.HasPrefix(hash, "hmac-sha256:") || audit["text"] != nil {
				t.Fatalf("audit %v", ev.Audit)
			}
		}
	}
	if len(final.FinalSpans) < 100 || final.WindowChars == nil || *final.WindowChars > 2048 || final.LatencyMS == nil {
		t.Fatalf("final: %d spans, window %v", len(final.FinalSpans), final.WindowChars)
	}
	labels := map[string]int{}
	for _, sp := range final.FinalSpans {
		if !emitted[sp.ID] || sp.Text == nil || string(runes[sp.Start:sp.End]) != *sp.Text || text[*sp.ByteStart:*sp.ByteEnd] != *sp.Text {
			t.Fatalf("final span %+v", sp)
		}
		labels[sp.Label]++
	}
	visits := strings.Count(text, "Visit ")
	if labels["phone_number"] != visits || labels["date"] != visits {
		t.Fatalf("labels %v over %d visits", labels, visits)
	}
}

// TestAClientThatLeavesAStreamStopsItsWork: a client reads the first line of a 100,000-
// character text's stream and hangs up: the line came before the text was finished, and the
// server stops, computing a fraction of the windows the whole stream takes.
func TestAClientThatLeavesAStreamStopsItsWork(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	text := longNote(100000)
	served := func() int {
		resp, err := http.Get(srv.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, `sluice_batcher_requests_total{outcome="served",queue="pii_extract"} `); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		return 0
	}
	before := served()
	st, apiErr := omOpenStream(t, srv.url, "/pii/extract/stream", omExtractStreamRequest{Text: text})
	if apiErr != nil {
		t.Fatalf("%+v", apiErr)
	}
	for {
		var ev omExtractStreamEvent
		if !st.next(t, &ev) {
			t.Fatal("the stream ended before the final line")
		}
		if ev.Type == "final" {
			break
		}
	}
	st.close()
	whole := served() - before

	before = served()
	st, _ = omOpenStream(t, srv.url, "/pii/extract/stream", omExtractStreamRequest{Text: text})
	var ev omExtractStreamEvent
	if !st.next(t, &ev) || ev.Type == "final" {
		t.Fatalf("first line %q", ev.Type)
	}
	st.close()
	srv.waitForMetric(t, `sluice_http_requests_total{outcome="aborted",route="/pii/extract/stream",status="200"} 1`)
	cut := served() - before
	t.Logf("model requests: %d for the whole stream, %d for the one cut after its first line", whole, cut)
	if whole < 20 || cut*2 > whole {
		t.Fatalf("a whole stream computed %d windows' requests, one left after its first line %d", whole, cut)
	}
}
