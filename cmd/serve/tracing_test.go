package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP traces endpoint, decoding what it is sent with the collector's
// own protocol definitions.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, _ := io.ReadAll(body)
	var export collector.ExportTraceServiceRequest
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(data, &export) != nil {
		http.Error(w, "not an OTLP traces export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range export.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *otlpReceiver) of(traceID []byte) map[string]*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for _, s := range r.spans {
		if bytes.Equal(s.TraceId, traceID) {
			out[s.Name] = s
		}
	}
	return out
}

// TestTracesReachACollector: with OpenMed's OTLP endpoint set, a request's server span is a
// child of the caller's traceparent, the model call's span a child of it, both exported over
// OTLP/HTTP, and no attribute holds the request's text.
func TestTracesReachACollector(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	collectorSrv := httptest.NewServer(recv)
	defer collectorSrv.Close()
	p := startProcess(t, "SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_OTLP_ENDPOINT="+collectorSrv.URL+"/v1/traces",
		"SLUICE_OTLP_BATCH_DELAY_MS=50")
	traceID, parent := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodPost, p.url+"/pii/extract", strings.NewReader(`{"text":"Call Maria Okafor at (415) 555-0132."}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parent+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	want, _ := hex.DecodeString(traceID)
	parentID, _ := hex.DecodeString(parent)
	var spans map[string]*tracepb.Span
	deadline := time.Now().Add(30 * time.Second)
	complete := func(spans map[string]*tracepb.Span) bool {
		for _, name := range []string{"sluice.request", "sluice.model_request", "sluice.admission", "sluice.queue", "sluice.engine_pass"} {
			if spans[name] == nil {
				return false
			}
		}
		return true
	}
	for spans = recv.of(want); !complete(spans); spans = recv.of(want) {
		if time.Now().After(deadline) {
			recv.mu.Lock()
			var all []string
			for _, s := range recv.spans {
				all = append(all, s.Name+" "+hex.EncodeToString(s.TraceId))
			}
			recv.mu.Unlock()
			t.Fatalf("spans of the trace after 30 s: %v (all: %v)", spans, all)
		}
		time.Sleep(20 * time.Millisecond) // polling the collector, not waiting for a state
	}
	server, model := spans["sluice.request"], spans["sluice.model_request"]
	if !bytes.Equal(server.ParentSpanId, parentID) || server.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("server span: parent %x kind %v", server.ParentSpanId, server.Kind)
	}
	if !bytes.Equal(model.ParentSpanId, server.SpanId) {
		t.Fatalf("model span's parent %x, want the request's %x", model.ParentSpanId, server.SpanId)
	}
	// Admission under the request; the queue and the engine pass under the model call, one
	// after the other.
	queue, pass := spans["sluice.queue"], spans["sluice.engine_pass"]
	if !bytes.Equal(spans["sluice.admission"].ParentSpanId, server.SpanId) || !bytes.Equal(queue.ParentSpanId, model.SpanId) ||
		!bytes.Equal(pass.ParentSpanId, model.SpanId) || queue.EndTimeUnixNano > pass.StartTimeUnixNano || pass.EndTimeUnixNano < pass.StartTimeUnixNano {
		t.Fatalf("admission %v, queue %v, pass %v", spans["sluice.admission"], queue, pass)
	}
	attrs := map[string]string{}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value.String()
		}
	}
	if !strings.Contains(attrs["http.route"], "/pii/extract") || !strings.Contains(attrs["http.response.status_code"], "200") {
		t.Fatalf("attributes %v", attrs)
	}
	for k, v := range attrs {
		for _, secret := range []string{"Maria", "Okafor", "555-0132"} {
			if strings.Contains(v, secret) {
				t.Fatalf("attribute %s holds the request's text", k)
			}
		}
	}
}

// TestGenerationIsOneSpan: a generation's steps are summed up in one span under the request's
// (its tokens and first token's wait), never a span per token.
func TestGenerationIsOneSpan(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	collectorSrv := httptest.NewServer(recv)
	defer collectorSrv.Close()
	p := startProcess(t, "SLUICE_OTLP_ENDPOINT="+collectorSrv.URL+"/v1/traces", "SLUICE_OTLP_BATCH_DELAY_MS=50")
	traceID := "5cf92f3577b34da6a3ce929d0e0e4737"
	req, _ := http.NewRequest(http.MethodPost, p.url+"/generate", strings.NewReader(`{"inputs":"The patient","parameters":{"max_new_tokens":6}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	want, _ := hex.DecodeString(traceID)
	deadline := time.Now().Add(30 * time.Second)
	spans := recv.of(want)
	for ; spans["sluice.request"] == nil || spans["sluice.generation"] == nil; spans = recv.of(want) {
		if time.Now().After(deadline) {
			t.Fatalf("spans of the trace after 30 s: %v", spans)
		}
		time.Sleep(20 * time.Millisecond) // polling the collector, not waiting for a state
	}
	gen := spans["sluice.generation"]
	attrs := map[string]int64{}
	for _, kv := range gen.Attributes {
		attrs[kv.Key] = kv.Value.GetIntValue()
	}
	if !bytes.Equal(gen.ParentSpanId, spans["sluice.request"].SpanId) || attrs["sluice.generated_tokens"] != 6 || attrs["sluice.prompt_tokens"] == 0 {
		t.Fatalf("generation span: parent %x, attributes %v", gen.ParentSpanId, gen.Attributes)
	}
	recv.mu.Lock()
	n := 0
	for _, s := range recv.spans {
		if bytes.Equal(s.TraceId, want) {
			n++
		}
	}
	recv.mu.Unlock()
	if n > 3 { // the request, its admission, its generation
		t.Errorf("%d spans for one generation of 6 tokens", n)
	}
}
