package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
	panics bool // a bug: the call panics instead of failing
}

func (f *failingAfter) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	if f.callCount() >= f.n {
		f.set(func(x *fakeExtractor) { x.calls++ })
		if f.panics {
			panic("engine: " + canary)
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

// streamFailure is TestAStreamThatFailsEndsWithAnErrorLine with an extractor that fails or,
// as a bug would, panics: the process answers the next request either way.
func streamFailure(t *testing.T, panics bool) {
	r, err := deid.New(deid.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(o *fixtureOptions) {
		o.Limits.MaxBodyBytes, o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1<<20, 1<<19, 1<<19
		o.pii.Models["pii"] = &failingAfter{fakeExtractor: o.pii.Models["pii"].(*fakeExtractor), n: 1, panics: panics}
		o.extra = []Route{PIIExtractStream(o.pii, r), PIIDeidentifyStream(o.pii, r)}
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
