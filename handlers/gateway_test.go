package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/gateway"
	"github.com/sluice-serving/sluice/generate"
)

// gatewayFixture serves /privacy-gateway/complete over the fixture's PII fake (it finds
// "Alice", first_name, 0.9) and gen (nil: no completion model).
func gatewayFixture(t *testing.T, gen *fakeGenerator) (*fixture, *gateway.Audit) {
	t.Helper()
	audit := gateway.NewAudit(0, func() time.Time { return time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC) })
	f := newFixture(t, func(o *fixtureOptions) {
		gw := GatewayEndpoint{PII: o.pii, Audit: audit}
		if gen != nil {
			gw.Generation = &GenerationEndpoint{Model: gen, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}
		}
		o.extra = append(o.extra, PrivacyGateway(gw))
	})
	return f, audit
}

// The model's answer names the placeholder in pieces cut inside it; the answer comes back
// restored, the model saw no name, and the audit holds hashes only.
func TestPrivacyGatewayRestoresTheAnswer(t *testing.T) {
	gen := &fakeGenerator{script: []generate.Event{token(1, "Ask "), token(2, "[FIRS"), token(3, "T_NAME_1"),
		token(4, "]"), last(5, " now.", " now.", generate.FinishLength)}}
	f, audit := gatewayFixture(t, gen)
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice about Alice's results."}`)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r.body["redacted_prompt"] != "Call [FIRST_NAME_1] about [FIRST_NAME_1]'s results." ||
		r.body["external_response"] != "Ask [FIRST_NAME_1] now." || r.body["reidentified_text"] != "Ask Alice now." {
		t.Errorf("answer %s", r.raw)
	}
	if counts, _ := r.body["entity_counts"].(map[string]any); counts["FIRST_NAME"] != 2.0 {
		t.Errorf("entity_counts %v", r.body["entity_counts"])
	}
	recs := audit.Records()
	if len(recs) != 1 || recs[0].Status != "forwarded" || !gateway.Verify(recs) || strings.Contains(r.body["audit"].(map[string]any)["record_hash"].(string), "Alice") {
		t.Errorf("audit %+v", recs)
	}
	if a := r.body["audit"].(map[string]any); a["verified"] != true || a["record_hash"] != recs[0].RecordHash {
		t.Errorf("audit in the answer %v", a)
	}
}

func TestPrivacyGatewayRefusals(t *testing.T) {
	invented := &fakeGenerator{script: []generate.Event{last(1, "[FIRST_NAME_2]", "[FIRST_NAME_2]", generate.FinishLength)}}
	f, audit := gatewayFixture(t, invented)
	for _, tc := range []struct {
		body, code, reason string
		status             int
	}{
		{`{"text":"Call Alice."}`, codeGatewayReidentify, "unknown_placeholder", 400},
		{`{"text":"Call Alice.","disallowed_entity_categories":"first_name"}`, codeGatewayBlocked, "disallowed_entity_category", 400},
		{`{"text":"Call Alice.","confidence_threshold":0.95}`, codeGatewayBlocked, "redaction_confidence_below_threshold", 400},
		{`{"text":"Mail bob@example.org."}`, codeGatewayBlocked, "outbound_tripwire_detected", 400},
	} {
		r := f.do(t, "POST", "/privacy-gateway/complete", tc.body)
		e := errorOf(t, r)
		if r.status != tc.status || e["code"] != tc.code || e["details"].(map[string]any)["reason"] != tc.reason {
			t.Errorf("%s: %d %s", tc.body, r.status, r.raw)
		}
		if strings.Contains(r.raw, "Alice") || strings.Contains(r.raw, "bob@") {
			t.Errorf("%s: the refusal holds the text: %s", tc.body, r.raw)
		}
	}
	if recs := audit.Records(); len(recs) != 4 || !gateway.Verify(recs) || recs[0].Status != "rejected" || recs[1].Status != "blocked" {
		t.Errorf("audit %+v", recs)
	}
	r := f.do(t, "POST", "/privacy-gateway/complete", `{"text":"x","confidence_threshold":2,"policy":" "}`)
	if r.status != 422 || !strings.Contains(r.raw, "confidence_threshold") || !strings.Contains(r.raw, "policy") {
		t.Errorf("bad fields: %d %s", r.status, r.raw)
	}
	none, _ := gatewayFixture(t, nil)
	if r := none.do(t, "POST", "/privacy-gateway/complete", `{"text":"Call Alice."}`); r.status != 503 || errorOf(t, r)["code"] != codeGatewayNotConfigured {
		t.Errorf("without a model: %d %s", r.status, r.raw)
	}
}
