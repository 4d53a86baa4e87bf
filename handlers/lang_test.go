package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
)

// servedLangs is how a lang 422 names the languages served.
const servedLangs = "de, en, es, fr, it, nl, pt"

// found is what a language's patterns, as the fake model was given them, find alone in text.
func found(opts entities.Options, text string) []string {
	var out []string
	if opts.SmartMerge == nil {
		return nil
	}
	for _, e := range entities.SmartMerge(text, nil, *opts.SmartMerge) {
		out = append(out, e.Label+"="+text[e.Start:e.End])
	}
	return out
}

// TestLangChoosesThePatterns: /pii/extract hands the model the patterns of the request's
// language (read trimmed, in any case); without lang, or with "en", the English defaults.
func TestLangChoosesThePatterns(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{}))
	note := "Claire, née le 12 janvier 1958, tél. 06 12 34 56 78, NIR 1 84 12 76 451 089 46."
	want := []string{"date=12 janvier 1958", "phone_number=06 12 34 56 78", "national_id=1 84 12 76 451 089 46"}
	for _, lang := range []string{"fr", " FR ", "Fr"} {
		r := f.do(t, "POST", "/pii/extract", body(t, map[string]any{"text": note, "lang": lang}))
		if r.status != 200 || r.body["model_name"] != "pii" {
			t.Fatalf("lang %q: %d %s", lang, r.status, r.raw)
		}
		if got := found(f.pii.opts(), note); !slices.Equal(got, want) {
			t.Errorf("lang %q: the French patterns find %q, want %q", lang, got, want)
		}
	}
	defaults := entities.DefaultPIIPatterns()
	for _, b := range []string{`{"text":"x"}`, `{"text":"x","lang":"en"}`, `{"text":"x","lang":null}`} {
		if r := f.do(t, "POST", "/pii/extract", b); r.status != 200 {
			t.Fatalf("%s: %d %s", b, r.status, r.raw)
		}
		got := f.pii.opts().SmartMerge.Patterns
		same := len(got) == len(defaults)
		for i := 0; same && i < len(got); i++ {
			same = got[i].Regexp == defaults[i].Regexp
		}
		if !same {
			t.Errorf("%s: not the English defaults", b)
		}
		// English reads "janvier" as January's "Jan", and knows neither the number nor the NIR.
		if got := found(f.pii.opts(), note); !slices.Equal(got, want[:1]) {
			t.Errorf("%s: English patterns find %q in a French note", b, got)
		}
	}
	// use_smart_merging=false still turns merging off in any language.
	f.do(t, "POST", "/pii/extract", `{"text":"x","lang":"de","use_smart_merging":false}`)
	if f.pii.opts().SmartMerge != nil {
		t.Error("use_smart_merging=false ignored with lang de")
	}
}

// TestDeidentifyInTheRequestsLanguage: /pii/deidentify sweeps with the language's patterns,
// reads numeric dates in its day/month order, and says which language it was; the stream
// and the privacy gateway do the same.
func TestDeidentifyInTheRequestsLanguage(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{}))
	note := "Alice, née le 03/04/2024, tél. 06 12 34 56 78, NIR 1 84 12 76 451 089 46."
	out, _, r := deidentified(t, f, map[string]any{"text": note, "lang": "fr"})
	if out != "[first_name], née le [date], tél. [phone_number], NIR [national_id]." {
		t.Errorf("fr mask: %q", out)
	}
	for _, e := range r.body["pii_entities"].([]any) {
		m := e.(map[string]any)
		if ev := m["evidence"].(map[string]any); ev["language"] != "fr" {
			t.Errorf("evidence %v", ev)
		}
		if m["label"] == "national_id" && (m["canonical_label"] != "ID_NUM" || m["sources"].([]any)[0] != "safety_sweep") {
			t.Errorf("national_id span %v", m)
		}
	}
	sweep := r.body["metadata"].(map[string]any)["safety_sweep"].(map[string]any)
	if sweep["patterns_version"] != entities.PatternsVersion+"+fr" || sweep["spans_added"] != 3.0 {
		t.Errorf("safety_sweep %v", sweep)
	}

	// 03/04/2024 is 3 April in French, 4 March in English.
	for lang, want := range map[string]string{"fr": "04/04/2024", "en": "03/05/2024"} {
		out, _, _ := deidentified(t, f, map[string]any{"text": note, "lang": lang, "method": "shift_dates", "date_shift_days": 1})
		if !strings.Contains(out, "née le "+want+",") {
			t.Errorf("%s shift_dates: %q, want the date %s", lang, out, want)
		}
	}

	// The stream: the same text, and its audit names the language.
	r = f.do(t, "POST", "/pii/deidentify/stream", body(t, map[string]any{"text": note, "lang": "fr"}))
	var chunks strings.Builder
	language := ""
	for _, l := range strings.Split(strings.TrimSpace(r.raw), "\n") {
		var ev struct {
			Type         string         `json:"type"`
			RedactedText string         `json:"redacted_text"`
			Audit        map[string]any `json:"audit"`
		}
		_ = json.Unmarshal([]byte(l), &ev)
		chunks.WriteString(ev.RedactedText)
		if ev.Type == "final" {
			language, _ = ev.Audit["language"].(string)
		}
	}
	if chunks.String() != "[first_name], née le [date], tél. [phone_number], NIR [national_id]." || language != "fr" {
		t.Errorf("stream: %q, language %q", chunks.String(), language)
	}

	// The gateway: a German number leaves the process only when the request is not German.
	for lang, leaks := range map[string]bool{"de": false, "en": true} {
		r := f.do(t, "POST", "/privacy-gateway/complete", body(t, map[string]any{"text": "Alice, Tel. 030 1234567.", "lang": lang}))
		prompt, _ := r.body["redacted_prompt"].(string)
		if r.status != 200 || strings.Contains(prompt, "030 1234567") != leaks || strings.Contains(prompt, "Alice") {
			t.Errorf("gateway lang %s: %d %q", lang, r.status, prompt)
		}
	}
}

// TestUnservedLangIs422: a language nothing serves is a 422 on body.lang that names the
// languages served (and never repeats what was sent), on every PII route, before the model
// is asked; a language without patterns is served by a model the request names.
func TestUnservedLangIs422(t *testing.T) {
	f := piiRoutesFixture(t, mustRedactor(t, deid.Config{}))
	routes := []string{"/pii/extract", "/pii/extract/stream", "/pii/deidentify", "/pii/deidentify/stream", "/privacy-gateway/complete"}
	for _, path := range routes {
		for _, lang := range []any{"xx", "ja", "de-DE", "", " ", canary, 7} {
			r := f.do(t, "POST", path, body(t, map[string]any{"text": "Call Alice.", "lang": lang}))
			if r.status != 422 || r.body == nil {
				t.Fatalf("%s lang %v: %d %s", path, lang, r.status, r.raw)
			}
			d := errorOf(t, r)["details"].([]any)[0].(map[string]any)
			if d["field"] != "body.lang" {
				t.Errorf("%s lang %v: detail %v", path, lang, d)
			}
			if _, str := lang.(string); str && (d["type"] != "value_error" || !strings.Contains(d["message"].(string), servedLangs)) {
				t.Errorf("%s lang %v: detail %v", path, lang, d)
			}
			if strings.Contains(r.raw, canary) {
				t.Errorf("%s: the answer repeats the lang: %s", path, r.raw)
			}
		}
	}
	if n := f.pii.callCount(); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	// Naming another model does not make a language served: it would miss the language's
	// identifiers in silence.
	r := f.do(t, "POST", "/pii/deidentify", `{"text":"Call Alice.","lang":"ja","model_name":"pii"}`)
	if got := fieldsOf(r); r.status != 422 || !slices.Equal(got, []string{"body.lang:value_error"}) {
		t.Errorf("ja with the English model: %d %v", r.status, got)
	}
}

// fakePool is a models directory: it lends the extractors it holds, each with its own gate,
// and records what it was asked for.
type fakePool struct {
	mu     sync.Mutex
	models map[string]*fakeExtractor
	errs   map[string]error // what Lend answers for these names
	gate   *admission.Gate
	asked  []string
}

func (p *fakePool) Lend(_ context.Context, name string, _ KeepAlive) (Extractor, *admission.Gate, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, name)
	if err := p.errs[name]; err != nil {
		return nil, nil, nil, err
	}
	m, ok := p.models[name]
	if !ok {
		return nil, nil, nil, ErrModelUnknown
	}
	return m, p.gate, func() {}, nil
}

func (p *fakePool) takeAsked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.asked
	p.asked = nil
	return a
}

func (p *fakePool) Models() []PooledModel            { return nil }
func (p *fakePool) Unload(string) Unloaded           { return Unloaded{} }
func (p *fakePool) UnloadAll() (int, map[string]int) { return 0, nil }
func (p *fakePool) Settings() PoolSettings           { return PoolSettings{} }

// TestLangChoosesTheLanguagesOwnModel: a request that names no model and whose lang is not
// en is served by pii-<lang> when the models directory (or the endpoint) has it, else by the
// default model with the language's patterns; a language without patterns needs its model.
func TestLangChoosesTheLanguagesOwnModel(t *testing.T) {
	fr := &fakeExtractor{name: "pii-fr", maxLen: 256}
	ja := &fakeExtractor{name: "pii-ja", maxLen: 256}
	nl := &fakeExtractor{name: "pii-nl", maxLen: 256}
	pool := &fakePool{models: map[string]*fakeExtractor{"pii-fr": fr, "pii-ja": ja}}
	r := mustRedactor(t, deid.Config{})
	f := newFixture(t, func(o *fixtureOptions) {
		pool.gate = newTestGate(t, "pii_fr", newFakeLoad(16), time.Second)
		o.Pool, o.ModelLoadWait = pool, time.Second
		o.pii.Models["pii-nl"] = nl // an endpoint's own model of that name
		o.extra = []Route{PIIDeidentify(o.pii, r)}
	})
	for _, tc := range []struct {
		body        string
		model       string
		by          *fakeExtractor
		asked       []string
		frenchRules bool
	}{
		{`{"text":"Alice","lang":"fr"}`, "pii-fr", fr, []string{"pii-fr"}, true},
		{`{"text":"Alice","lang":"de"}`, "pii", f.pii, []string{"pii-de"}, false}, // none in the directory
		{`{"text":"Alice","lang":"fr","model_name":"pii"}`, "pii", f.pii, nil, true},
		{`{"text":"Alice","lang":"en"}`, "pii", f.pii, nil, false},
		{`{"text":"Alice"}`, "pii", f.pii, nil, false},
		{`{"text":"Alice","lang":"nl"}`, "pii-nl", nl, nil, false},
		{`{"text":"Alice","lang":"ja"}`, "pii-ja", ja, []string{"pii-ja"}, false},
		{`{"text":"Alice","lang":"ja","model_name":"pii-ja"}`, "pii-ja", ja, []string{"pii-ja"}, false},
	} {
		before := tc.by.callCount()
		resp := f.do(t, "POST", "/pii/extract", tc.body)
		if resp.status != 200 || resp.body["model_name"] != tc.model || tc.by.callCount() != before+1 {
			t.Errorf("%s: %d, model_name %v, want %s", tc.body, resp.status, resp.body["model_name"], tc.model)
		}
		if asked := pool.takeAsked(); !slices.Equal(asked, tc.asked) {
			t.Errorf("%s: the pool was asked for %v, want %v", tc.body, asked, tc.asked)
		}
		if got := found(tc.by.opts(), "NIR 1 84 12 76 451 089 46"); (got != nil) != tc.frenchRules {
			t.Errorf("%s: French patterns %v", tc.body, got)
		}
	}
	// A language without patterns is served by no other model, and without its own not at all.
	resp := f.do(t, "POST", "/pii/extract", `{"text":"Alice","lang":"ja","model_name":"pii"}`)
	if d := fieldsOf(resp); resp.status != 422 || !slices.Equal(d, []string{"body.lang:value_error"}) {
		t.Errorf("ja with the English model: %d %s", resp.status, resp.raw)
	}
	resp = f.do(t, "POST", "/pii/extract", `{"text":"Alice","lang":"ko"}`)
	if d := fieldsOf(resp); resp.status != 422 || !slices.Equal(d, []string{"body.lang:value_error"}) {
		t.Fatalf("ko: %d %s", resp.status, resp.raw)
	}
	if msg := errorOf(t, resp)["details"].([]any)[0].(map[string]any)["message"].(string); !strings.Contains(msg, servedLangs) ||
		!strings.Contains(msg, "pii-<code>") {
		t.Errorf("ko: %q", msg)
	}
	// /pii/deidentify reports the model that served.
	_, _, dr := deidentified(t, f, map[string]any{"text": "Alice", "lang": "fr"})
	e := dr.body["pii_entities"].([]any)[0].(map[string]any)
	if dr.body["metadata"].(map[string]any)["model_name"] != "pii-fr" || e["evidence"].(map[string]any)["model_id"] != "pii-fr" {
		t.Errorf("deidentify: %s", dr.raw)
	}
}
