package handlers

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/sluice-serving/sluice/generate"
	"github.com/sluice-serving/sluice/grammar"
)

// The request shapes that hold an answer to a language, and their one reading into a
// grammar.Spec: OpenAI's response_format (also TGI's chat form, json_object with a value) and
// TGI's grammar.

// responseFormat is OpenAI's response_format.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"schema,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	} `json:"json_schema,omitempty"`
	// Value is TGI's schema beside type json_object (its chat route's form).
	Value json.RawMessage `json:"value,omitempty"`
}

// spec reads a response format; nil means free text. A non-empty msg is the validation error.
func (f *responseFormat) spec() (*grammar.Spec, string) {
	if f == nil {
		return nil, ""
	}
	switch f.Type {
	case "", "text":
		return nil, ""
	case "json_object":
		if present(f.Value) {
			return &grammar.Spec{Kind: grammar.JSONSchema, Schema: f.Value}, ""
		}
		return &grammar.Spec{Kind: grammar.JSONObject}, ""
	case "json_schema":
		if f.JSONSchema == nil || !present(f.JSONSchema.Schema) {
			return nil, "`response_format.json_schema.schema` is required for type `json_schema`"
		}
		return &grammar.Spec{Kind: grammar.JSONSchema, Schema: f.JSONSchema.Schema}, ""
	}
	return nil, "`response_format.type` must be `text`, `json_object` or `json_schema`"
}

// tgiGrammar is TGI's grammar parameter: {"type": "json", "value": a schema (or the schema as
// a string)} or {"type": "regex", "value": a pattern}.
type tgiGrammar struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// tgiGrammarSpec reads TGI's grammar; nil means free text.
func tgiGrammarSpec(raw json.RawMessage) (*grammar.Spec, string) {
	if !present(raw) {
		return nil, ""
	}
	var g tgiGrammar
	if err := json.Unmarshal(raw, &g); err != nil || !present(g.Value) {
		return nil, "`grammar` must be an object with a `type` and a `value`"
	}
	var text string
	isText := json.Unmarshal(g.Value, &text) == nil
	switch g.Type {
	case "json", "json_object":
		if isText {
			return &grammar.Spec{Kind: grammar.JSONSchema, Schema: json.RawMessage(text)}, ""
		}
		return &grammar.Spec{Kind: grammar.JSONSchema, Schema: g.Value}, ""
	case "regex":
		if !isText {
			return nil, "`grammar.value` must be a string for type `regex`"
		}
		return &grammar.Spec{Kind: grammar.Regex, Pattern: text}, ""
	}
	return nil, "`grammar.type` must be `json` or `regex`"
}

// present says whether a JSON value was sent, and not as null.
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// constrainer is a model that holds answers to a grammar (*generate.Generator).
type constrainer interface {
	Constraint(grammar.Spec) (*grammar.Index, error)
}

// constrain compiles spec for the endpoint's model into p. A non-empty msg is the validation
// error: the constraint's own fault (named, never quoted), or a model that cannot take one.
func constrain(ep *GenerationEndpoint, spec *grammar.Spec, p *generate.Params) string {
	if spec == nil {
		return ""
	}
	if _, ok := ep.Model.(conversational); ok {
		return "" // an external model is asked to hold to it itself (openAIParams.options)
	}
	c, ok := ep.Model.(constrainer)
	if !ok {
		return "this model does not take a constrained answer"
	}
	ix, err := c.Constraint(*spec)
	if err != nil {
		return constraintProblem(err)
	}
	p.Constraint = ix
	return ""
}

// constraintProblem is the client's message for a constraint that does not compile.
func constraintProblem(err error) string {
	var unsupported *grammar.UnsupportedError
	var invalid *grammar.InvalidError
	switch {
	case errors.As(err, &unsupported):
		return unsupported.Feature + " is not supported in a constrained answer"
	case errors.As(err, &invalid):
		return "the constraint is not valid: " + invalid.Reason
	}
	return "the constraint could not be compiled"
}
