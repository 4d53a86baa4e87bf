package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string
	Content string
	// ToolCalls are an assistant message's calls of the request's tools.
	ToolCalls []ToolCall
	// ToolCallID and Name say which call a tool message answers, and the tool's name.
	ToolCallID, Name string
}

// ToolCall is one call of a tool: its id, the function's name and its arguments as the JSON
// text the model wrote.
type ToolCall struct {
	ID, Name, Arguments string
}

// Template is a model's compiled chat template and the special tokens it may name. It is
// safe for concurrent use.
type Template struct {
	t       *jinja.Template
	special map[string]jinja.Value
	source  string     // what a refusal's reason must be found in to be told
	spelt   *spellings // the tokenizer's special tokens, quoted in the client's text; nil: none
}

var (
	// ErrNoTemplate: tokenizer_config.json is absent or has no chat_template.
	ErrNoTemplate = errors.New("chat: the model has no chat template")
	// ErrEmpty: the template rendered the conversation to nothing.
	ErrEmpty = errors.New("chat: the chat template rendered an empty prompt")
)

// RefusedError is a conversation the template refused (its raise_exception), with the
// template's own words, which are the model author's, never the conversation's: a reason not
// written whole in the template's source is replaced by a fixed one.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string {
	return "chat: the model's chat template refused the messages: " + e.Reason
}

// specialNames are the special tokens transformers hands a chat template by name.
var specialNames = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}

// Load compiles the chat template of a tokenizer_config.json (nil data: ErrNoTemplate) for a
// tokenizer whose special tokens are spelt specials (tokenizer.SpecialTokens), which Render
// quotes where the client writes them. Errors name the file and the field, never template
// text.
func Load(tokenizerConfigJSON []byte, specials []string) (*Template, error) {
	if len(tokenizerConfigJSON) == 0 {
		return nil, ErrNoTemplate
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(tokenizerConfigJSON, &fields); err != nil {
		return nil, fmt.Errorf("chat: tokenizer_config.json: %w", err)
	}
	src, err := templateSource(fields["chat_template"])
	if err != nil {
		return nil, err
	}
	// Jinja, as transformers runs it, drops one newline at the end of a template
	// (keep_trailing_newline off); the library here keeps it.
	switch {
	case strings.HasSuffix(src, "\r\n"):
		src = src[:len(src)-2]
	case strings.HasSuffix(src, "\n"):
		src = src[:len(src)-1]
	}
	t, err := jinja.Compile(guardMacros(src))
	if err != nil {
		return nil, fmt.Errorf("chat: tokenizer_config.json: chat_template does not compile: %w", err)
	}
	special := make(map[string]jinja.Value, len(specialNames))
	for _, name := range specialNames {
		if tok, ok := tokenText(fields[name]); ok {
			special[name] = jinja.NewString(tok)
		}
	}
	return &Template{t: t, special: special, source: src, spelt: newSpellings(specials)}, nil
}

// templateSource is the conversation template of a chat_template field.
func templateSource(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", ErrNoTemplate
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return "", ErrNoTemplate
		}
		return one, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("chat: tokenizer_config.json: chat_template must be a string or a list of {name, template}")
	}
	for _, n := range named {
		if n.Name == "default" && n.Template != "" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("%w (tokenizer_config.json's chat_template list has no \"default\")", ErrNoTemplate)
}

// tokenText reads a special token written as a string or as an added-token object.
func tokenText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content, true
	}
	return "", false
}

// Render is the prompt for msgs, ending where the assistant's answer begins. tools are the
// request's tool definitions as JSON ({"type": "function", "function": {...}}; nil: none),
// handed to the template as transformers hands them (its `tools`); a call's arguments reach
// it as an object when they are one, as templates read them.
//
// Where the client's text spells a special token, the template is rendered twice: once with
// a marker standing in for each spelling, to find where the template put them, and once as
// written; the two must agree (ErrSpecialText where a template's filter changed a spelling).
func (t *Template) Render(msgs []Message, tools []json.RawMessage) (Prompt, error) {
	q := quoter{spelt: t.spelt}
	data := t.values(msgs, tools, q.quote)
	if len(q.stood) == 0 {
		out, err := t.render(data)
		return Prompt{Text: out}, err
	}
	written, err := t.render(t.values(msgs, tools, nil))
	if err != nil {
		return Prompt{}, err
	}
	out, err := t.render(data)
	p, ok := q.restore(out)
	if err != nil || !ok || p.Text != written {
		return Prompt{}, ErrSpecialText
	}
	return p, nil
}

// values are the template's variables for msgs and tools, each string the client wrote
// passed through quote (nil: as written).
func (t *Template) values(msgs []Message, tools []json.RawMessage, quote func(string) string) map[string]jinja.Value {
	if quote == nil {
		quote = func(s string) string { return s }
	}
	str := func(s string) jinja.Value { return jinja.NewString(quote(s)) }
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", str(m.Content))
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				fn := jinja.NewDict()
				fn.AsDict().Set("name", str(c.Name))
				fn.AsDict().Set("arguments", arguments(c.Arguments, quote))
				call := jinja.NewDict()
				call.AsDict().Set("id", str(c.ID))
				call.AsDict().Set("type", jinja.NewString("function"))
				call.AsDict().Set("function", fn)
				calls[j] = call
			}
			d.AsDict().Set("tool_calls", jinja.NewList(calls))
		}
		if m.ToolCallID != "" {
			d.AsDict().Set("tool_call_id", str(m.ToolCallID))
		}
		if m.Name != "" {
			d.AsDict().Set("name", str(m.Name))
		}
		list[i] = d
	}
	data := make(map[string]jinja.Value, len(t.special)+5)
	for k, v := range t.special {
		data[k] = v
	}
	data["messages"] = jinja.NewList(list)
	if len(tools) > 0 {
		defs := make([]jinja.Value, len(tools))
		for i, raw := range tools {
			defs[i], _ = fromJSON(raw, quote)
		}
		data["tools"] = jinja.NewList(defs)
	}
	data["add_generation_prompt"] = jinja.NewBool(true)
	data["raise_exception"] = jinja.NewCallable("raise_exception", refuse)
	data[macroCalls] = macroBudget()
	return data
}

// render runs the template over data, its errors told apart: the conversation's
// (*RefusedError) and the template's.
func (t *Template) render(data map[string]jinja.Value) (string, error) {
	out, err := t.t.RenderValues(data)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused) && (refused.Reason == "" || !strings.Contains(t.source, refused.Reason)):
		// Words the template built (from the messages, maybe) rather than wrote, or none (which
		// a caller would read as no refusal): not told.
		return "", &RefusedError{Reason: "the model's chat template refused these messages"}
	case errors.As(err, &refused):
		return "", refused
	case err != nil:
		return "", fmt.Errorf("chat: the model's chat template failed: %w", err)
	case out == "":
		return "", ErrEmpty
	}
	return out, nil
}

// arguments is a call's arguments for a template: the object they spell, or the text.
func arguments(text string, quote func(string) string) jinja.Value {
	if v, ok := fromJSON([]byte(text), quote); ok && v.IsDict() {
		return v
	}
	return jinja.NewString(quote(text))
}

// maxJSONDepth bounds the nesting fromJSON follows, encoding/json's own bound: a call's
// arguments are text no request parse has bounded.
const maxJSONDepth = 10_000

// fromJSON decodes the client's JSON into the value a template gets, as transformers hands it
// json.loads's: each object's keys in the order written (which tojson keeps; a key written
// twice where it was first, with its last value), whole numbers as ints (so that tojson
// writes 3, not 3.0), and each string, keys too, passed through quote. False (and None) where
// raw does not begin with a JSON value.
func fromJSON(raw []byte, quote func(string) string) (jinja.Value, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeJSON(dec, quote, 0)
	if err != nil {
		return jinja.None(), false
	}
	return v, true
}

func decodeJSON(dec *json.Decoder, quote func(string) string, depth int) (jinja.Value, error) {
	if depth > maxJSONDepth {
		return jinja.Value{}, errors.New("too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return jinja.Value{}, err
	}
	switch x := tok.(type) {
	case json.Delim:
		if x == '[' {
			items := []jinja.Value{}
			for dec.More() {
				v, err := decodeJSON(dec, quote, depth+1)
				if err != nil {
					return jinja.Value{}, err
				}
				items = append(items, v)
			}
			_, err = dec.Token()
			return jinja.NewList(items), err
		}
		d := jinja.NewDict()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return jinja.Value{}, err
			}
			v, err := decodeJSON(dec, quote, depth+1)
			if err != nil {
				return jinja.Value{}, err
			}
			d.AsDict().Set(quote(k.(string)), v)
		}
		_, err = dec.Token()
		return d, err
	case string:
		return jinja.NewString(quote(x)), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return jinja.NewInt(i), nil
		}
		f, _ := x.Float64()
		return jinja.NewFloat(f), nil
	case bool:
		return jinja.NewBool(x), nil
	}
	return jinja.None(), nil
}

// refuse is the templates' raise_exception: the conversation is not one the model takes.
func refuse(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	reason := "no reason given"
	if len(args) > 0 && args[0].IsString() {
		reason = args[0].AsString()
	} else if len(args) > 0 {
		reason = args[0].String()
	}
	return jinja.Undefined(), &RefusedError{Reason: reason}
}
