package handlers

// The hostile-input suite: what a caller with a valid key (or none, with auth off) may try to
// get more than its share, or to put its own text where no text may go. Each test reproduces
// an attack that once worked.

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/gateway"
	"github.com/sluice-serving/sluice/generate"
)

// tokenizingGenerator is a fakeGenerator that also answers /tokenize: a piece per word.
type tokenizingGenerator struct{ *fakeGenerator }

func (tokenizingGenerator) Tokenize(prompt string) []generate.Piece {
	var out []generate.Piece
	for i, w := range strings.Fields(prompt) {
		out = append(out, generate.Piece{ID: int64(i), Text: w})
	}
	return out
}

// everyRouteFixture serves every kind of route the server has: the entity routes, the PII
// streams, de-identification, generation in every dialect (with /tokenize), the privacy
// gateway and its chat face. edit runs last.
func everyRouteFixture(t *testing.T, edit ...func(*fixtureOptions)) (*fixture, *gateway.Audit) {
	t.Helper()
	redactor, err := deid.New(deid.Config{})
	if err != nil {
		t.Fatal(err)
	}
	gen := tokenizingGenerator{&fakeGenerator{script: stopScript}}
	audit := gateway.NewAudit(0, func() time.Time { return time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC) })
	f := newFixture(t, append([]func(*fixtureOptions){func(o *fixtureOptions) {
		o.Limits.MaxBodyBytes = 64 << 10
		ep := GenerationEndpoint{Model: gen, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second), Chat: fakeTemplate{}}
		gw := GatewayEndpoint{PII: o.pii, Audit: audit, Generation: &ep}
		o.extra = append([]Route{PIIDeidentify(o.pii, redactor), PIIExtractStream(o.pii, redactor),
			PIIDeidentifyStream(o.pii, redactor), PrivacyGateway(gw), GatewayChat(gw)}, Generation(ep)...)
		o.GatewayAudit = audit
	}}, edit...)...)
	return f, audit
}

// postPaths are every path a POST does work on in everyRouteFixture.
var postPaths = []string{"/analyze", "/pii/extract", "/pii/deidentify", "/pii/extract/stream", "/pii/deidentify/stream",
	"/privacy-gateway/complete", "/gateway/v1/chat/completions", "/generate", "/generate_stream", "/",
	"/v1/completions", "/v1/chat/completions", "/tokenize", "/models/unload"}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// postEncoded posts body with the Content-Encoding given.
func (f *fixture) postEncoded(t *testing.T, path, encoding string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", encoding)
	return f.send(t, req)
}

// A body that unpacks past the body limit is refused with 413 on every route, however deep it
// is packed, without unpacking more than the limit: a gzip of a gzip of 64 MiB is a few hundred
// bytes on the wire. (fiber's Ctx.Body unpacked it all, on any route, before anything looked.)
func TestCompressedBombsAreRefusedOnEveryRoute(t *testing.T) {
	f, _ := everyRouteFixture(t)
	bomb := append(append([]byte(`{"text":"`), bytes.Repeat([]byte("a"), 64<<20)...), `"}`...)
	once := gzipped(t, bomb)
	twice := gzipped(t, once)
	if len(twice) > 4096 {
		t.Fatalf("the bomb is %d bytes on the wire; the test wants it under the body limit", len(twice))
	}
	for _, path := range postPaths {
		for _, c := range []struct {
			encoding string
			body     []byte
		}{{"gzip", once}, {"gzip, gzip", twice}} {
			r := f.postEncoded(t, path, c.encoding, c.body)
			if r.status != 413 || errorOf(t, r)["code"] != CodeTooLarge {
				t.Errorf("%s with %s: %d %s", path, c.encoding, r.status, r.raw)
			}
		}
	}
}

// A body packed as the server reads it is served and counted by what it unpacks to; a coding
// it does not read is 415 with the ones it does (RFC 7694), a stack deeper than two or a body
// that does not decode a clear refusal.
func TestCompressedBodiesAreReadWithinTheLimit(t *testing.T) {
	f, _ := everyRouteFixture(t)
	note := []byte(`{"text":"Alice was seen today."}`)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(note)
	_ = zw.Close()
	for _, c := range []struct {
		encoding string
		body     []byte
	}{{"gzip", gzipped(t, note)}, {"deflate", z.Bytes()}, {"identity", note}, {"gzip, gzip", gzipped(t, gzipped(t, note))}} {
		if r := f.postEncoded(t, "/pii/extract", c.encoding, c.body); r.status != 200 || len(r.body["entities"].([]any)) != 1 {
			t.Errorf("%s: %d %s", c.encoding, r.status, r.raw)
		}
	}
	if got := f.pii.gotText; got != "Alice was seen today." {
		t.Errorf("the model read %q", got)
	}
	r := f.postEncoded(t, "/pii/extract", "br", note)
	if r.status != 415 || errorOf(t, r)["code"] != CodeUnsupportedEncoding || r.header.Get("Accept-Encoding") != "gzip, deflate" {
		t.Errorf("br: %d %v %s", r.status, r.header, r.raw)
	}
	if r := f.postEncoded(t, "/pii/extract", "gzip, gzip, gzip", gzipped(t, gzipped(t, gzipped(t, note)))); r.status != 415 {
		t.Errorf("three deep: %d %s", r.status, r.raw)
	}
	if r := f.postEncoded(t, "/pii/extract", "gzip", note); r.status != 400 || errorOf(t, r)["code"] != CodeBadRequest {
		t.Errorf("not gzip at all: %d %s", r.status, r.raw)
	}
	// The body limit is what the body unpacks to: a packed body under the limit on the wire
	// and over it unpacked is refused.
	big := append(append([]byte(`{"text":"`), bytes.Repeat([]byte("Alice "), 15000)...), `"}`...)
	if r := f.postEncoded(t, "/pii/extract", "gzip", gzipped(t, big)); r.status != 413 {
		t.Errorf("over the limit unpacked: %d %s", r.status, r.raw)
	}
}
