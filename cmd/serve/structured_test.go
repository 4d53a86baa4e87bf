package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestStructuredAnswersWithTheEcosystemsClients (issue 58, 1): tiny-lm, asked through OpenAI's
// client with each realistic clinical schema as a strict json_schema response format, whole
// and streamed, answers JSON that validates against the schema (checked by another
// implementation of JSON Schema); json_object answers an object, on chat and completions;
// TGI's client gets its regex and json grammars kept; an unsupported schema keyword is a 400
// that names it.
func TestStructuredAnswersWithTheEcosystemsClients(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	srv := startServer(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "grammar", "testdata", "clinical"))
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "Summarise the note as JSON."
	got := runClients(t, node, srv, prompt, "230", "structured", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 8 {
		t.Fatalf("%d clinical schemas", len(files))
	}
	for _, f := range files {
		schema, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		val := compileSchema(t, schema)
		for _, check := range []string{"schema-", "schema-stream-"} {
			r, ok := got[check+filepath.Base(f)]
			if !ok || r.Error != "" || r.Finish != "stop" {
				t.Errorf("%s%s: %+v", check, filepath.Base(f), r)
				continue
			}
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Text))
			if err != nil {
				t.Errorf("%s%s: %q does not parse: %v", check, filepath.Base(f), r.Text, err)
				continue
			}
			if err := val.Validate(doc); err != nil {
				t.Errorf("%s%s: %q does not validate: %v", check, filepath.Base(f), r.Text, err)
			}
		}
		if whole, streamed := got["schema-"+filepath.Base(f)], got["schema-stream-"+filepath.Base(f)]; whole.Text != streamed.Text {
			t.Errorf("%s: whole %q, streamed %q", filepath.Base(f), whole.Text, streamed.Text)
		}
	}
	for _, check := range []string{"json-object", "completions-json-object"} {
		r := got[check]
		if r.Error == "" && r.Finish == "length" && strings.HasPrefix(r.Text, "{") {
			continue // an open object lets the toy model write keys until its budget ends it
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Text))
		if _, isObject := doc.(map[string]any); r.Error != "" || err != nil || !isObject {
			t.Errorf("%s: %+v is not a JSON object (%v)", check, r, err)
		}
	}
	if r := got["schema-unsupported"]; r.Status != 400 || !strings.Contains(r.Error, "patternProperties") {
		t.Errorf("an unsupported keyword: %+v", r)
	}
	// TGI's client asks for the prompt before the answer.
	if r := got["tgi-grammar-regex"]; r.Error != "" || !regexp.MustCompile(`^(mild|moderate|severe) pain, [0-9]{1,2}/10$`).MatchString(strings.TrimPrefix(r.Text, prompt)) {
		t.Errorf("TGI's regex grammar: %+v", r)
	}
	pain := compileSchema(t, []byte(`{"type":"object","properties":{"pain":{"type":"integer","minimum":0,"maximum":10}},"required":["pain"]}`))
	r := got["tgi-grammar-json-stream"]
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Text))
	if r.Error != "" || err != nil || pain.Validate(doc) != nil {
		t.Errorf("TGI's json grammar, streamed: %+v (%v)", r, err)
	}
}

func compileSchema(t *testing.T, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	return c.MustCompile("mem://schema.json")
}

// TestToolCallsWithOpenAIsClient (issue 58, 2): OpenAI's client calls tiny-lm's tools: a
// named tool_choice answers that function's call with arguments that validate against its
// parameters, whole and streamed (the client's own stream helper assembles and checks the
// deltas); "required" answers calls of the request's tools; "auto" lets the toy model answer
// in text, and holds the calls it chooses to a strict tool's parameters; a conversation that
// carries a call and its result back is taken; a tool_choice naming no tool is a 400.
func TestToolCallsWithOpenAIsClient(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	srv := startServer(t)
	got := runClients(t, node, srv, "Vitals today:", "120", "tools")
	vitals := compileSchema(t, []byte(`{"type":"object","additionalProperties":false,"required":["heart_rate","spo2"],
		"properties":{"heart_rate":{"type":"integer","minimum":20,"maximum":250},"spo2":{"type":"integer","minimum":50,"maximum":100}}}`))
	allergy := compileSchema(t, []byte(`{"type":"object","required":["substance","severity"],
		"properties":{"substance":{"type":"string","maxLength":30},"severity":{"enum":["mild","moderate","severe"]}}}`))
	type call struct{ ID, Type, Name, Arguments string }
	calls := func(check string) []call {
		t.Helper()
		r := got[check]
		var out []call
		if r.Error != "" || json.Unmarshal([]byte(r.Text), &out) != nil || len(out) == 0 || r.Finish != "tool_calls" {
			t.Errorf("%s: %+v", check, r)
			return nil
		}
		for _, c := range out {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
			schema := map[string]*jsonschema.Schema{"record_vitals": vitals, "flag_allergy": allergy}[c.Name]
			switch {
			case c.Type != "function" || !strings.HasPrefix(c.ID, "call_") || schema == nil:
				t.Errorf("%s: a call %+v", check, c)
			case err != nil || schema.Validate(doc) != nil:
				t.Errorf("%s: arguments %q do not validate against %s's parameters: %v", check, c.Arguments, c.Name, err)
			}
		}
		return out
	}
	for _, check := range []string{"tools-named", "tools-named-stream"} {
		if c := calls(check); len(c) != 1 || c[0].Name != "record_vitals" {
			t.Errorf("%s: %+v, want one call of record_vitals", check, c)
		}
	}
	if r := got["tools-named"]; r.Final != "null" {
		t.Errorf("a message that calls a tool has content %q, want null", r.Final)
	}
	if r := got["tools-named-stream"]; r.Tokens < 2 {
		t.Errorf("the named call's arguments came in %d deltas, want them as they are written", r.Tokens)
	}
	if c := calls("tools-required"); len(c) != 1 {
		t.Errorf("required without parallel calls: %d calls", len(c))
	}
	if c, r := calls("tools-required-stream"), got["tools-required-stream"]; len(c) != 1 || r.Tokens != 2 ||
		r.Final != strings.Replace(r.Text, c[0].ID, strings.TrimSuffix(c[0].ID, "_0_0")+"_1_0", 1) {
		t.Errorf("required, two choices streamed: %+v, want the same call in each", r)
	}
	if r := got["tools-auto"]; r.Error != "" || r.Finish == "tool_calls" || r.Final != "[]" {
		t.Errorf("auto, where the toy model writes text: %+v", r)
	}
	// Auto with a strict tool: the answers that call keep to its parameters; the same sampled
	// answers with the tool not strict call nothing the parser takes.
	if r := got["tools-auto-strict"]; r.Tokens != 32 || len(calls("tools-auto-strict")) == 0 {
		t.Errorf("auto with a strict tool, 32 sampled answers: %+v", r)
	}
	if r := got["tools-auto-loose"]; r.Error != "" || r.Tokens != 32 || r.Text != "[]" {
		t.Errorf("auto with the tool not strict: %+v", r)
	}
	if r := got["tools-result"]; r.Error != "" || r.Text == "" {
		t.Errorf("a conversation with a call and its result: %+v", r)
	}
	if r := got["tools-unknown-choice"]; r.Status != 400 {
		t.Errorf("a tool_choice naming no tool: %+v", r)
	}
}
