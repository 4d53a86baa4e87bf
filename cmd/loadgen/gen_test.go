package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// streamServer plays /v1/completions: every third request is refused with 503, the others
// stream max_tokens chunks and [DONE]. It counts the streams whose client hung up.
type streamServer struct {
	n, hungUp atomic.Int64
}

func (s *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		_, _ = io.WriteString(w, "# TYPE sluice_generate_tokens_total counter\nsluice_generate_tokens_total{queue=\"m\"} 0\n")
		return
	}
	var req struct {
		MaxTokens int  `json:"max_tokens"`
		IgnoreEOS bool `json:"ignore_eos"`
		Stream    bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream || !req.IgnoreEOS {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if s.n.Add(1)%3 == 0 {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"backpressure","message":"busy","details":{"reason":"memory"},"request_id":"r"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i := range req.MaxTokens {
		if _, err := fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\" t%d\",\"index\":0}]}\n\n", i); err != nil {
			s.hungUp.Add(1)
			return
		}
		f.Flush()
		select {
		case <-r.Context().Done():
			s.hungUp.Add(1)
			return
		default:
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// TestGenerationModeCountsStreams: closed-loop streams against a fake server; every outcome is
// counted, abandoning clients hang up at half their tokens, and the report renders.
func TestGenerationModeCountsStreams(t *testing.T) {
	srv := &streamServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	prio, err := ParseMix("priority-mix", "interactive=1", priorityNames)
	if err != nil {
		t.Fatal(err)
	}
	cfg := GenConfig{URL: ts.URL, Mode: modeClosed, Workers: 2, MaxInFlight: 8, Duration: 300 * time.Millisecond,
		Drain: 10 * time.Second, Timeout: 5 * time.Second, ScrapeInterval: 50 * time.Millisecond,
		Priorities: prio, MaxTokens: 20, Abandon: 0.5, Seed: 3}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	res := RunGeneration(context.Background(), cfg, clock.Real(), ts.Client())
	s := res.Summary()
	o := s.Outcomes
	if s.Streams < 6 || o[streamRefused] == 0 || o[streamServed] == 0 || o[streamAbandoned] == 0 ||
		o[streamServed]+o[streamAbandoned]+o[streamRefused] != s.Streams {
		t.Fatalf("outcomes %v of %d streams, want served, abandoned and refused only", o, s.Streams)
	}
	if s.Refusals["503/backpressure/memory"] != o[streamRefused] {
		t.Fatalf("refusals %v", s.Refusals)
	}
	for _, rec := range res.Records {
		switch rec.Outcome {
		case streamServed:
			if rec.Tokens != 20 || len(rec.Gaps) != 19 || rec.Abandon {
				t.Fatalf("served stream: %+v", rec)
			}
		case streamAbandoned:
			if rec.Tokens != 10 || !rec.Abandon {
				t.Fatalf("abandoned stream: %d tokens, want half of 20", rec.Tokens)
			}
		}
	}
	if s.TimeToFirstToken.Count == 0 || s.InterToken.Count == 0 || !(s.GoodTokensPerSecond > 0) {
		t.Fatalf("summary %+v", s)
	}
	byClass := 0
	for _, l := range s.TimeToFirstTokenBy {
		byClass += l.Count
	}
	if byClass != s.TimeToFirstToken.Count {
		t.Fatalf("first tokens by priority %v add up to %d, want %d", s.TimeToFirstTokenBy, byClass, s.TimeToFirstToken.Count)
	}
	var html bytes.Buffer
	if err := WriteGenHTML(&html, res, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tokens received per second", "time to first token", "abandoned"} {
		if !strings.Contains(html.String(), want) {
			t.Fatalf("report lacks %q", want)
		}
	}
}
