package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// clinicalLines are note lines of three kinds, two of each, the particulars different.
var clinicalLines = []string{
	"Allergy: penicillin - rash",
	"Allergy: sulfa drugs - hives",
	"Follow up with Dr. Alvarez in 2 weeks.",
	"Follow up with Dr. Chen in 6 weeks.",
	"Hemoglobin 13.2 g/dL",
	"Potassium 4.1 mmol/L",
}

func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot, na, nb = dot+a[i]*b[i], na+a[i]*a[i], nb+b[i]*b[i]
	}
	return dot / math.Sqrt(na*nb)
}

// TestEmbeddingsWithTheEcosystemsClients (issue 58, 4): OpenAI's client gets unit vectors of
// the shipped embed-mini (its default base64 decoded by the client itself; floats shortened to
// 32 dimensions, unit length again), HuggingFace's feature extraction gets the same vector from
// /embed, and a wrong model name is a 404. Lines of one kind lie nearer each other than lines
// of another.
func TestEmbeddingsWithTheEcosystemsClients(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	srv := startServer(t)
	got := runClients(t, node, srv, strings.Join(clinicalLines, "\n"), "1", "embeddings")
	var vecs [][]float64
	r := got["openai-embeddings"]
	if r.Error != "" || json.Unmarshal([]byte(r.Text), &vecs) != nil || len(vecs) != len(clinicalLines) || r.Final != "list" || r.Tokens == 0 {
		t.Fatalf("openai embeddings: %+v", r)
	}
	for i, v := range vecs {
		if n := math.Sqrt(dot(v, v)); len(v) != 128 || math.Abs(n-1) > 1e-3 {
			t.Errorf("vector %d: %d dimensions, length %v", i, len(v), n)
		}
	}
	for pair := 0; pair < len(vecs); pair += 2 {
		same := cosine(vecs[pair], vecs[pair+1])
		for other := 0; other < len(vecs); other++ {
			if other/2 != pair/2 && cosine(vecs[pair], vecs[other]) >= same {
				t.Errorf("%q is nearer %q (%.3f) than %q (%.3f)", clinicalLines[pair], clinicalLines[other],
					cosine(vecs[pair], vecs[other]), clinicalLines[pair+1], same)
			}
		}
	}
	var short [][]float64
	if r := got["openai-embeddings-short"]; r.Error != "" || json.Unmarshal([]byte(r.Text), &short) != nil || len(short) != 1 ||
		len(short[0]) != 32 || !strings.HasPrefix(r.Final, "0.99") && !strings.HasPrefix(r.Final, "1") {
		t.Errorf("32 dimensions: %+v", r)
	}
	var hf []float64
	if r := got["hf-feature-extraction"]; r.Error != "" || json.Unmarshal([]byte(r.Text), &hf) != nil || len(hf) != 128 || cosine(hf, vecs[0]) < 0.9999 {
		var nested [][]float64
		if json.Unmarshal([]byte(r.Text), &nested) != nil || len(nested) != 1 || cosine(nested[0], vecs[0]) < 0.9999 {
			t.Errorf("feature extraction: %+v", r)
		}
	}
	if r := got["openai-embeddings-wrong-model"]; r.Status != 404 {
		t.Errorf("a wrong model: %+v", r)
	}
	// vLLM's truncate_prompt_tokens: -1 cuts a long text to the model's length; a shorter
	// cut, which vLLM would make, is refused rather than ignored.
	long := strings.Repeat("pulse ", 2000)
	if status, out := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "embed-mini", "input": long, "truncate_prompt_tokens": -1}); status != 200 {
		t.Errorf("-1: %d %s", status, out)
	}
	if status, out := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "embed-mini", "input": long}); status != 400 ||
		!strings.Contains(string(out), "truncate_prompt_tokens") {
		t.Errorf("too long, not cut: %d %s", status, out)
	}
	if status, out := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "embed-mini", "input": long, "truncate_prompt_tokens": 16}); status != 400 ||
		!strings.Contains(string(out), "truncate_prompt_tokens") {
		t.Errorf("16: %d %s", status, out)
	}
	// A null input is missing, not an empty text.
	if status, out := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "embed-mini", "input": nil}); status != 400 ||
		!strings.Contains(string(out), "must be a string or a list of strings") {
		t.Errorf("a null input: %d %s", status, out)
	}
}

// postRaw2 posts body as JSON to path and returns the status and the raw answer.
func postRaw2(t *testing.T, srv *testServer, path string, body any) (int, []byte) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(srv.url+path, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestRerankRoutes (issue 58, 4): the shipped rerank-mini puts the passage of the query's
// kind first, on TEI's /rerank (probabilities, texts returned when asked) and the
// Cohere/Jina-shaped /v1/rerank (top_n, documents as strings or objects); an empty query is
// refused.
func TestRerankRoutes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	query := "Allergy: latex - swelling"
	passages := []string{clinicalLines[2], clinicalLines[4], clinicalLines[0]}
	status, body := postRaw2(t, srv, "/rerank", map[string]any{"query": query, "texts": passages, "return_text": true})
	var tei []struct {
		Index int
		Score float64
		Text  string
	}
	if status != 200 || json.Unmarshal(body, &tei) != nil || len(tei) != 3 || tei[0].Index != 2 || tei[0].Text != passages[2] ||
		tei[0].Score <= tei[1].Score || tei[0].Score > 1 || tei[2].Score < 0 {
		t.Fatalf("/rerank: %d %s", status, body)
	}
	status, body = postRaw2(t, srv, "/v1/rerank", map[string]any{"model": "rerank-mini", "query": query, "top_n": 2,
		"documents": []any{passages[0], map[string]string{"text": passages[1]}, passages[2]}})
	var cohere struct {
		Results []struct {
			Index          int
			RelevanceScore float64 `json:"relevance_score"`
			Document       struct{ Text string }
		}
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		}
	}
	if status != 200 || json.Unmarshal(body, &cohere) != nil || len(cohere.Results) != 2 || cohere.Results[0].Index != 2 ||
		cohere.Results[0].Document.Text != passages[2] || cohere.Usage.TotalTokens == 0 {
		t.Fatalf("/v1/rerank: %d %s", status, body)
	}
	if status, body := postRaw2(t, srv, "/rerank", map[string]any{"query": "", "texts": passages}); status != 422 || strings.Contains(string(body), "Allergy") {
		t.Errorf("an empty query: %d %s", status, body)
	}
	// OpenAI's wire (vLLM's routes) answers a bad request 400, where TEI's says 422.
	if status, body := postRaw2(t, srv, "/v1/rerank", map[string]any{"query": query, "documents": []string{}}); status != 400 {
		t.Errorf("no documents: %d %s", status, body)
	}
	if status, body := postRaw2(t, srv, "/v1/rerank", map[string]any{"query": "", "documents": passages}); status != 400 {
		t.Errorf("an empty query on /v1/rerank: %d %s", status, body)
	}
}

// TestEncodersLoadOnDemand (issue 58, 4): with SLUICE_MODELS_DIR, a request that names another
// embedder or cross-encoder of the directory loads it and is served by it; a model of another
// kind, or none, is a 404; the shipped encoders the directory lacks still serve. A directory
// named as a configured endpoint's queue ("rerank", "embeddings") is served or refused as any
// other (it was a 500: its batcher or gate took a name in use).
func TestEncodersLoadOnDemand(t *testing.T) {
	t.Parallel()
	dir := modelsDir(t, "embeddings")
	for _, copied := range [][2]string{{"embed-mini", "notes-embed"}, {"rerank-mini", "rerank"},
		{"embed-mini", "more-1"}, {"embed-mini", "more-2"}, {"embed-mini", "more-3"}} {
		copyEncoder(t, copied[0], filepath.Join(dir, copied[1]), nil)
	}
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_MODELS_DIR="+dir, "SLUICE_MODEL_LOAD_WAIT_MS=120000") // each load waited for whole, however busy the machine
	// An embedder named on the rerank route is refused without being loaded for it.
	if status, body := postRaw2(t, srv, "/v1/rerank", map[string]any{"model": "notes-embed", "query": "x", "documents": []string{"y"}}); status != 404 {
		t.Errorf("an embedder asked to rerank: %d %s", status, body)
	}
	loaded := func() bool {
		resp, err := http.Get(srv.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(data), `queue="embeddings:notes-embed"`)
	}
	if loaded() {
		t.Error("an embedder named on the rerank route was loaded")
	}
	for model, want := range map[string]int{"notes-embed": 200, "embed-mini": 200, "pii": 404, "nope": 404, "../pii": 404} {
		status, body := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": model, "input": "Allergy: penicillin - rash"})
		var out struct {
			Model string
			Data  []struct{ Embedding []float64 }
		}
		if status != want || (status == 200 && (json.Unmarshal(body, &out) != nil || out.Model != model || len(out.Data) != 1)) {
			t.Errorf("%s: %d %s", model, status, body)
		}
	}
	if !loaded() {
		t.Error("the embedder loaded on demand has no batcher metrics")
	}
	status, body := postRaw2(t, srv, "/v1/rerank", map[string]any{"model": "rerank", "query": "Allergy: latex",
		"documents": []string{"Hemoglobin 13.2 g/dL", "Allergy: sulfa drugs - hives"}})
	if status != 200 || !strings.Contains(string(body), `"model":"rerank"`) {
		t.Errorf("rerank on demand: %d %s", status, body)
	}
	if status, body := postRaw2(t, srv, "/pii/extract", map[string]any{"model_name": "embeddings", "text": "Seen by Dr. Quexley."}); status != 422 {
		t.Errorf("a token classifier named as the embedding queue: %d %s", status, body)
	}
	if status, body := postRaw2(t, srv, "/v1/rerank", map[string]any{"model": "notes-embed", "query": "x", "documents": []string{"y"}}); status != 404 {
		t.Errorf("an embedder asked to rerank: %d %s", status, body)
	}
	// Four loaded on demand at most: the fifth is a 503 service_busy, as the entity pool says it.
	for _, model := range []string{"more-1", "more-2"} {
		if status, body := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": model, "input": "x"}); status != 200 {
			t.Fatalf("%s: %d %s", model, status, body)
		}
	}
	if status, body := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "more-3", "input": "x"}); status != 503 ||
		!strings.Contains(string(body), `"code":"service_busy"`) {
		t.Errorf("a fifth encoder on demand: %d %s", status, body)
	}
}

// TestRerankWithCoheresClient (issue 58, 4): Cohere's own client reads /v1/rerank's answer:
// the two best documents, the allergy line first, with their texts.
func TestRerankWithCoheresClient(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	srv := startServer(t)
	lines := []string{"Allergy: latex - swelling", clinicalLines[2], clinicalLines[4], clinicalLines[0]}
	got := runClients(t, node, srv, strings.Join(lines, "\n"), "1", "rerank")
	var results []struct {
		Index int
		Score float64
		Doc   string
	}
	r := got["cohere-rerank"]
	if r.Error != "" || json.Unmarshal([]byte(r.Text), &results) != nil || len(results) != 2 || results[0].Index != 2 ||
		results[0].Doc != clinicalLines[0] || results[0].Score < results[1].Score {
		t.Fatalf("cohere rerank: %+v", r)
	}
}

// TestAnEncoderStillLoadingIsA503WithItsRetryAfter: with no wait for loads, the first request
// that names an embedder on demand is OpenAI's 503 with a Retry-After while the load goes on
// (it held the request for the whole load); once loaded, the model serves.
func TestAnEncoderStillLoadingIsA503WithItsRetryAfter(t *testing.T) {
	t.Parallel()
	dir := modelsDir(t)
	copyEncoder(t, "embed-mini", filepath.Join(dir, "notes-embed"), nil)
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_MODELS_DIR="+dir, "SLUICE_MODEL_LOAD_WAIT_MS=0")
	body, _ := json.Marshal(map[string]any{"model": "notes-embed", "input": "Allergy: penicillin - rash"})
	resp, err := http.Post(srv.url+"/v1/embeddings", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(first), `"code":"model_loading"`) || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %s %q", resp.StatusCode, first, resp.Header.Get("Retry-After"))
	}
	for range 20000 {
		status, answer := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "notes-embed", "input": "Allergy: penicillin - rash"})
		switch {
		case status == 200:
			for range 20 { // loaded: no request waits, and none is told it loads
				if status, answer := postRaw2(t, srv, "/v1/embeddings", map[string]any{"model": "notes-embed", "input": "x"}); status != 200 {
					t.Fatalf("once loaded: %d %s", status, answer)
				}
			}
			return
		case status != 503 || !strings.Contains(string(answer), `"code":"model_loading"`):
			t.Fatalf("while it loads: %d %s", status, answer)
		}
		runtime.Gosched()
	}
	t.Fatal("the embedder never loaded")
}
