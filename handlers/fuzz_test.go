package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/generate"
)

// The request decoders of every route, fuzzed: any body, valid JSON or not, is answered with a
// value or an error (never a panic), an accepted request is within its limits, and no error
// message quotes a string value of the body (only field names and limits). Seeds run in every
// go test; explore with make fuzz, or go test -run '^$' -fuzz FuzzEntityRequests ./handlers.

// quotedValue returns a string value of body (at least 4 bytes, and not also a key, which
// messages may name) that msg quotes, or "". A value counts as quoted when msg contains it
// and the message for the same body with that value replaced by a marker (messageOf) does
// not: words the messages always use ("valid") are not the body's.
func quotedValue(body []byte, msg string, messageOf func([]byte) string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	keys := map[string]bool{}
	var values []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				keys[k] = true
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			values = append(values, x)
		}
	}
	walk(v)
	for _, s := range values {
		if len(strings.TrimSpace(s)) < 4 || keys[s] || !strings.Contains(msg, s) {
			continue
		}
		literal, _ := json.Marshal(s)
		if !bytes.Contains(body, literal) {
			continue // written with other escapes; not worth rewriting
		}
		marked := bytes.ReplaceAll(body, literal, []byte(`"zqxj-marker"`))
		if !strings.Contains(messageOf(marked), s) {
			return s
		}
	}
	return ""
}

var requestSeeds = []string{
	``, `{}`, `null`, `[]`, `{"text":"Patient Maria seen today."}`,
	`{"text":"x","model_name":"pii","confidence_threshold":0.5,"group_entities":true,"aggregation_strategy":"first"}`,
	`{"text":"  ","keep_alive":"5m"}`, `{"text":"a","confidence_threshold":"0.5"}`, `{"text":"a","lang":"fr"}`,
	`{"text":"a","use_smart_merging":false,"confidence_threshold":null}`, `{"text":"a","unknown_field_xyz":1}`,
	`{"text":1}`, `{"text":"\ud800"}`, `{"inputs":"Once upon","parameters":{"max_new_tokens":5,"stop":["a","b"],"truncate":3}}`,
	`{"inputs":"x","stream":true,"parameters":{"do_sample":true,"temperature":0,"top_p":1.5,"seed":1}}`,
	`{"model":"tiny-lm","prompt":["a","b"],"n":2,"max_tokens":3,"stop":"x","stream":true,"logprobs":2}`,
	`{"model":"fake-lm","prompt":"secret prompt text","temperature":"hot"}`, `{"model":"fake-lm","prompt":[1,2,3]}`,
	`{"text":1,"note":"valid"}`,
	`{"text":"Alan saw Bob","allow_list":["Secret Term","--","Alan"],"deny_list":"nope nope"}`,
	`{"text":"a","deny_list":[1,null,"okay term"],"allow_list":null}`,
	`{"TEXT":"a"}`, `{"text":"a\\\"","Model_Name":"x"}`, `{"model":"m","response_format":{"type":"json_schema","json_schema":{"Name":"a"}}}`,
}

func FuzzEntityRequests(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	lim := Limits{MaxBodyBytes: 1 << 20, MaxTextChars: 50, MaxTextBytes: 100, RequestTimeout: 1}
	s := &server{opts: Options{Limits: lim}, piiDefaults: entities.PIIOptions()}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []parseFunc{s.parseAnalyze, s.parsePII} {
			// messages is everything a client would read about body's problems.
			messages := func(body []byte) string {
				var errs fieldErrors
				req, aerr := parse(body, &errs)
				if aerr != nil {
					return aerr.Message + " " + detailsText(aerr.Details)
				}
				_, ferr := checkText(req.text, lim)
				errs.add(ferr)
				var b strings.Builder
				for _, e := range errs {
					b.WriteString(e.Message + " ")
				}
				return b.String()
			}
			if q := quotedValue(body, messages(body), messages); q != "" {
				t.Fatalf("an error quotes the body's value %q: %s", q, messages(body))
			}
			var errs fieldErrors
			req, aerr := parse(body, &errs)
			if aerr != nil {
				continue
			}
			text, ferr := checkText(req.text, lim)
			errs.add(ferr)
			if ferr == nil && (text == "" || len(text) > lim.MaxTextBytes || len([]rune(text)) > lim.MaxTextChars) {
				t.Fatalf("accepted a text outside the limits (%d bytes)", len(text))
			}
			if len(errs) == 0 && (req.opts.ConfidenceThreshold < 0 || req.opts.ConfidenceThreshold > 1) {
				t.Fatalf("accepted threshold %v", req.opts.ConfidenceThreshold)
			}
		}
	})
}

func detailsText(d any) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// positions is a Generator that only answers MaxPositions, which is all parsing asks of it.
type positions int

func (positions) Generate(context.Context, admission.Priority, string, generate.Params) (TokenStream, error) {
	panic("parsing must not generate")
}
func (positions) Name() string               { return "fuzz" }
func (p positions) MaxPositions() int        { return int(p) }
func (p positions) DefaultMaxNewTokens() int { return int(p) / 2 }

func FuzzGenerationRequests(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	ep := &GenerationEndpoint{Model: positions(256), MaxStopSequences: 4, MaxChoices: 8}
	tgiMessage := func(body []byte) string { _, _, _, msg := parseTGI(body, ep); return msg }
	completionMessage := func(body []byte) string { _, _, msg := parseCompletion(body, ep); return msg }
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, params, _, msg := parseTGI(body, ep); msg != "" {
			if q := quotedValue(body, msg, tgiMessage); q != "" {
				t.Fatalf("TGI error quotes the body's value %q: %s", q, msg)
			}
		} else if len(params.Stop) > ep.MaxStopSequences || params.MaxNewTokens < 0 {
			t.Fatalf("TGI accepted %+v", params)
		}
		p, _, msg := parseCompletion(body, ep)
		if msg != "" {
			if q := quotedValue(body, msg, completionMessage); q != "" {
				t.Fatalf("completions error quotes the body's value %q: %s", q, msg)
			}
			return
		}
		if p.n < 1 || p.n*len(p.prompts) > ep.MaxChoices {
			t.Fatalf("completions accepted n=%d for %d prompts", p.n, len(p.prompts))
		}
	})
}
