package handlers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/generate"
)

// piiRoutesFixture serves every PII route over the fixture's fake (it finds "Alice"): both
// extractions, both de-identifications under r, and the privacy gateway, whose model answers
// "Noted.".
func piiRoutesFixture(t *testing.T, r *deid.Redactor, more ...func(*fixtureOptions)) *fixture {
	t.Helper()
	gen := &fakeGenerator{script: []generate.Event{last(1, "Noted.", "Noted.", generate.FinishLength)}}
	trail := newAuditLog(t)
	return newFixture(t, append([]func(*fixtureOptions){func(o *fixtureOptions) {
		o.Audit = trail
		o.Limits.MaxBodyBytes, o.Limits.MaxTextChars, o.Limits.MaxTextBytes = 1<<20, 4096, 4096
		gw := GatewayEndpoint{PII: o.pii,
			Generation: &GenerationEndpoint{Model: gen, Gate: newTestGate(t, "generate", newFakeLoad(16), time.Second)}}
		o.extra = []Route{PIIDeidentify(o.pii, r), PIIExtractStream(o.pii, r), PIIDeidentifyStream(o.pii, r), PrivacyGateway(gw)}
	}}, more...)...)
}

func mustRedactor(t *testing.T, cfg deid.Config) *deid.Redactor {
	t.Helper()
	r, err := deid.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// body is a request body of fields.
func body(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fieldsOf are a validation error's fields and types, "field:type".
func fieldsOf(r response) []string {
	var out []string
	if e, ok := r.body["error"].(map[string]any); ok && e["code"] == CodeValidation {
		details, _ := e["details"].([]any)
		for _, d := range details {
			m, _ := d.(map[string]any)
			out = append(out, m["field"].(string)+":"+m["type"].(string))
		}
	}
	return out
}

// TestSubjectAndListsAreValidated: a bad subject_id, allow_list or deny_list is a 422 in the
// routes' error shape naming each field (and the term's place), on every route that takes
// them, and no answer quotes the id or a term.
func TestSubjectAndListsAreValidated(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{}))
	many := make([]string, 1001)
	for i := range many {
		many[i] = "ok"
	}
	listCases := []struct {
		fields map[string]any
		want   []string
	}{
		{map[string]any{"allow_list": canary}, []string{"body.allow_list:list_type"}},
		{map[string]any{"deny_list": []any{"fine", 7, nil}}, []string{"body.deny_list.1:string_type", "body.deny_list.2:string_type"}},
		{map[string]any{"allow_list": many}, []string{"body.allow_list:too_long"}},
		{map[string]any{"deny_list": []string{"fine", canary + strings.Repeat("x", 256)}, "allow_list": []string{canary, "--"}},
			[]string{"body.allow_list.1:value_error", "body.deny_list.1:value_error"}},
	}
	subjectCases := []struct {
		fields map[string]any
		want   []string
	}{
		{map[string]any{"subject_id": ""}, []string{"body.subject_id:value_error"}},
		{map[string]any{"subject_id": canary + strings.Repeat("x", 128)}, []string{"body.subject_id:value_error"}},
		{map[string]any{"subject_id": canary + "\n"}, []string{"body.subject_id:value_error"}},
		{map[string]any{"subject_id": 17}, []string{"body.subject_id:string_type"}},
		{map[string]any{"subject_id": canary + "\u0007", "deny_list": []any{nil}}, []string{"body.subject_id:value_error", "body.deny_list.0:string_type"}},
	}
	routes := []string{"/pii/extract", "/pii/extract/stream", "/pii/deidentify", "/pii/deidentify/stream", "/privacy-gateway/complete"}
	for _, path := range routes {
		cases := listCases
		if strings.HasPrefix(path, "/pii/deidentify") {
			cases = append(cases, subjectCases...)
		}
		for _, tc := range cases {
			fields := map[string]any{"text": "Call Alice."}
			for k, v := range tc.fields {
				fields[k] = v
			}
			r := f.do(t, "POST", path, body(t, fields))
			if got := fieldsOf(r); r.status != 422 || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("%s %v: %d %v, want %v", path, tc.fields, r.status, got, tc.want)
			}
			if strings.Contains(r.raw, canary) {
				t.Errorf("%s: the answer quotes a value: %s", path, r.raw)
			}
		}
	}
	// Where subject_id is not a field, it is an unknown one, as any other.
	if r := f.do(t, "POST", "/pii/extract", `{"text":"Call Alice.","subject_id":"p1"}`); r.status != 422 {
		t.Errorf("/pii/extract with subject_id: %d", r.status)
	}
	if strings.Contains(f.logs.String(), canary) {
		t.Error("the logs quote a value")
	}
}

// deidentified is /pii/deidentify's answer: the text, and each span's original and stand-in.
func deidentified(t *testing.T, f *fixture, fields map[string]any) (text string, standIn map[string]string, r response) {
	t.Helper()
	r = f.do(t, "POST", "/pii/deidentify", body(t, fields))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	standIn = map[string]string{}
	for _, e := range r.body["pii_entities"].([]any) {
		m := e.(map[string]any)
		standIn[m["text"].(string)] = m["redacted_text"].(string)
	}
	return r.body["deidentified_text"].(string), standIn, r
}

// TestSubjectIDKeepsPseudonymsAcrossRequests: two notes of one subject_id, sent apart, the
// second with another identifier before Alice, give Alice one stand-in and move the date by
// one shift; the stream gives the same text as the route; without subject_id the notes
// differ; the answer says how far the pseudonyms hold, never the id.
func TestSubjectIDKeepsPseudonymsAcrossRequests(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		cfg := deid.Config{}
		if keyed {
			cfg.HashKey = []byte("a key of sixteen bytes or more")
		}
		f := piiRoutesFixture(t, mustRedactor(t, cfg))
		one := "Alice came on 2021-03-04 for review."
		two := "Bob Grey and Alice came on 2021-03-04 for review." // Bob is denied: a span before Alice
		req := func(text, subject string) map[string]any {
			m := map[string]any{"text": text, "method": "replace", "deny_list": []string{"Bob Grey"}} // the sweep finds the date
			if subject != "" {
				m["subject_id"] = subject
			}
			return m
		}
		_, a, ra := deidentified(t, f, req(one, "patient-"+canary))
		_, b, _ := deidentified(t, f, req(two, "patient-"+canary))
		if _, err := time.Parse("2006-01-02", a["2021-03-04"]); err != nil || a["2021-03-04"] == "2021-03-04" {
			t.Fatalf("keyed %v: the date became %q", keyed, a["2021-03-04"])
		}
		if a["Alice"] == "" || a["Alice"] == "Alice" || a["Alice"] != b["Alice"] || a["2021-03-04"] != b["2021-03-04"] {
			t.Fatalf("keyed %v: one subject, two notes: %v and %v", keyed, a, b)
		}
		want := map[bool]string{false: "process", true: "hash_key"}[keyed]
		if md := ra.body["metadata"].(map[string]any); md["subject_scope"] != want || strings.Contains(ra.raw, canary) {
			t.Fatalf("keyed %v: metadata %v", keyed, md)
		}
		_, x, rx := deidentified(t, f, req(one, ""))
		_, y, _ := deidentified(t, f, req(two, ""))
		if x["Alice"] == y["Alice"] && x["2021-03-04"] == y["2021-03-04"] {
			t.Fatalf("keyed %v: without a subject the notes agree: %v %v", keyed, x, y)
		}
		if _, ok := rx.body["metadata"].(map[string]any)["subject_scope"]; ok {
			t.Fatal("subject_scope without a subject")
		}
		// The stream, one window here, gives the route's text.
		text, _, _ := deidentified(t, f, req(two, "patient-"+canary))
		r := f.do(t, "POST", "/pii/deidentify/stream", body(t, req(two, "patient-"+canary)))
		var chunks strings.Builder
		var final map[string]any
		for _, l := range strings.Split(strings.TrimSpace(r.raw), "\n") {
			var ev map[string]any
			_ = json.Unmarshal([]byte(l), &ev)
			switch ev["type"] {
			case "chunk":
				chunks.WriteString(ev["redacted_text"].(string))
			case "final":
				final = ev
			}
		}
		if chunks.String() != text || final == nil || final["audit"].(map[string]any)["subject_scope"] != want || strings.Contains(r.raw, canary) {
			t.Fatalf("keyed %v: the stream gave %q, the route %q; final %v", keyed, chunks.String(), text, final)
		}
	}
}

// TestTenantsDoNotShareSubjectsOrHashes: under one key, two tenants that send the same note
// of the same subject get different stand-ins and shifts, and different hashes of the same
// name, so that neither can use the service to recompute what it gives the other; one tenant
// sending it twice gets the same answer, on the route and on its stream.
func TestTenantsDoNotShareSubjectsOrHashes(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{HashKey: []byte("a key of sixteen bytes or more")}),
		withTenants(t, map[string]string{"clinic": "null", "lab": "null"}))
	note := "Alice came on 2021-03-04 for review."
	answer := func(tenant, method string) string {
		t.Helper()
		fields := map[string]any{"text": note, "method": method, "subject_id": "p-1"}
		r := f.do(t, "POST", "/pii/deidentify", body(t, fields), "X-API-Key", tenant+"-key")
		if r.status != 200 {
			t.Fatalf("%s: status %d: %s", tenant, r.status, r.raw)
		}
		s := f.do(t, "POST", "/pii/deidentify/stream", body(t, fields), "X-API-Key", tenant+"-key")
		var chunks strings.Builder
		for _, l := range strings.Split(strings.TrimSpace(s.raw), "\n") {
			var ev map[string]any
			_ = json.Unmarshal([]byte(l), &ev)
			if ev["type"] == "chunk" {
				chunks.WriteString(ev["redacted_text"].(string))
			}
		}
		text := r.body["deidentified_text"].(string)
		if chunks.String() != text {
			t.Fatalf("%s %s: the stream gave %q, the route %q", tenant, method, chunks.String(), text)
		}
		return text
	}
	for _, method := range []string{"replace", "hash"} {
		clinic, lab := answer("clinic", method), answer("lab", method)
		if again := answer("clinic", method); again != clinic {
			t.Fatalf("%s: one tenant's subject gave %q, then %q", method, clinic, again)
		}
		if clinic == lab || clinic == note {
			t.Fatalf("%s: two tenants both got %q", method, clinic)
		}
	}
}

// TestAllowAndDenyListsOnEveryRoute: on every PII route, an allowed name the model finds stays
// as written and denied terms are redacted as deny_list spans; the privacy gateway forwards
// the allowed name (its tripwire does not count it) and not the denied ones.
func TestAllowAndDenyListsOnEveryRoute(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{}))
	text := "Alice met Bob Grey on Ward 7; call Alice."
	lists := map[string]any{"text": text, "allow_list": []string{"alice"}, "deny_list": []string{"bob grey", "WARD 7"}}
	wantSpans := "deny_list=Bob Grey deny_list=Ward 7"

	r := f.do(t, "POST", "/pii/extract", body(t, lists))
	var got []string
	for _, e := range r.body["entities"].([]any) {
		m := e.(map[string]any)
		got = append(got, m["label"].(string)+"="+m["text"].(string))
	}
	if strings.Join(got, " ") != wantSpans {
		t.Errorf("/pii/extract: %v", got)
	}
	if r := f.do(t, "POST", "/pii/extract", body(t, map[string]any{"text": text})); !strings.Contains(r.raw, `"label":"first_name"`) {
		t.Fatalf("without lists the fake finds no Alice: %s", r.raw)
	}

	out, _, dr := deidentified(t, f, lists)
	if out != "Alice met [deny_list] on [deny_list]; call Alice." {
		t.Errorf("/pii/deidentify: %q", out)
	}
	for _, e := range dr.body["pii_entities"].([]any) {
		m := e.(map[string]any)
		if m["canonical_label"] != "DENY_LIST" || m["sources"].([]any)[0] != "deny_list" {
			t.Errorf("/pii/deidentify span %v", m)
		}
	}

	r = f.do(t, "POST", "/pii/extract/stream", body(t, lists))
	lines := strings.Split(strings.TrimSpace(r.raw), "\n")
	var fin struct {
		FinalSpans []struct{ Label, Text string } `json:"final_spans"`
	}
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &fin)
	got = got[:0]
	for _, s := range fin.FinalSpans {
		got = append(got, s.Label+"="+s.Text)
	}
	if strings.Join(got, " ") != wantSpans {
		t.Errorf("/pii/extract/stream: %v", got)
	}

	r = f.do(t, "POST", "/pii/deidentify/stream", body(t, lists))
	var chunks strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(r.raw), "\n") {
		var ev struct {
			Type         string `json:"type"`
			RedactedText string `json:"redacted_text"`
			Spans        []struct{ Detector string }
		}
		_ = json.Unmarshal([]byte(l), &ev)
		chunks.WriteString(ev.RedactedText)
		for _, s := range ev.Spans {
			if s.Detector != "deny_list" {
				t.Errorf("/pii/deidentify/stream: detector %q", s.Detector)
			}
		}
	}
	if chunks.String() != out {
		t.Errorf("/pii/deidentify/stream: %q", chunks.String())
	}

	r = f.do(t, "POST", "/privacy-gateway/complete", body(t, lists))
	if r.status != 200 || r.body["redacted_prompt"] != "Alice met [DENY_LIST_1] on [DENY_LIST_2]; call Alice." {
		t.Errorf("/privacy-gateway/complete: %d %s", r.status, r.raw)
	}
}

// TestADeniedTermIsNotKeptWithItsSpan: research_limited_dataset keeps dates; a deny term inside
// a date the sweep finds is redacted on the route and in the stream (each kept the whole date,
// the term with it, in clear).
func TestADeniedTermIsNotKeptWithItsSpan(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{}))
	fields := map[string]any{"text": "Alice came on 2021-03-04 for review.", "policy": "research_limited_dataset"}
	if out, _, _ := deidentified(t, f, fields); !strings.Contains(out, "2021-03-04") {
		t.Fatalf("the policy no longer keeps the date: %q", out)
	}
	fields["deny_list"] = []string{"2021"}
	out, _, _ := deidentified(t, f, fields)
	if strings.Contains(out, "2021") {
		t.Errorf("/pii/deidentify: %q", out)
	}
	r := f.do(t, "POST", "/pii/deidentify/stream", body(t, fields))
	var chunks strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(r.raw), "\n") {
		var ev struct {
			RedactedText string `json:"redacted_text"`
		}
		_ = json.Unmarshal([]byte(l), &ev)
		chunks.WriteString(ev.RedactedText)
	}
	if chunks.String() != out {
		t.Errorf("/pii/deidentify/stream: %q, the route %q", chunks.String(), out)
	}
}
