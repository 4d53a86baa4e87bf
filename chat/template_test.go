package chat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// templates are the test templates, one per family style the tokenizers serve (ChatML as
// Qwen writes it, [INST] as Mistral's, header blocks as Llama-3's, turns as Gemma's, role tags
// as Phi's, and turns written by macros), written for these tests, each with the special tokens its family uses.
func templates(t *testing.T) map[string][]byte {
	t.Helper()
	special := map[string]map[string]any{
		"chatml.jinja": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
		"inst.jinja":   {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
		"header.jinja": {"bos_token": "<|begin_of_text|>", "eos_token": map[string]any{"content": "<|eot_id|>", "special": true}},
		"turn.jinja":   {"bos_token": "<bos>", "eos_token": "<eos>"},
		"phi.jinja":    {"bos_token": "<s>", "eos_token": "<|endoftext|>"},
		"macros.jinja": {"bos_token": "<s>"},
	}
	out := map[string][]byte{}
	for name, tokens := range special {
		src, err := os.ReadFile(filepath.Join("testdata", "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		cfg := map[string]any{"chat_template": string(src), "model_max_length": 4096}
		for k, v := range tokens {
			cfg[k] = v
		}
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	return out
}

// conversations are what the templates are rendered with: a turn alone, a system message,
// several turns, text with whitespace and non-ASCII to trim or keep, and one that breaks the
// alternation some templates insist on.
var conversations = [][]Message{
	{{Role: "user", Content: "Summarise the discharge note."}},
	{{Role: "system", Content: "Answer briefly."}, {Role: "user", Content: "What is the dose?"}},
	{{Role: "user", Content: "First question"}, {Role: "assistant", Content: "First answer"}, {Role: "user", Content: "  Second\nquestion  "}},
	{{Role: "system", Content: "Règles: français."}, {Role: "user", Content: "Température 38,5 °C — fièvre?\n"}},
	{{Role: "user", Content: "one"}, {Role: "user", Content: "two"}},
}

func TestRenderChatML(t *testing.T) {
	tpl, err := Load(templates(t)["chatml.jinja"], nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := text(tpl.Render(conversations[1], nil))
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nAnswer briefly.<|im_end|>\n<|im_start|>user\nWhat is the dose?<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestRenderUsesTheSpecialTokens(t *testing.T) {
	tpl, err := Load(templates(t)["header.jinja"], nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := text(tpl.Render(conversations[0], nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "<|begin_of_text|><|start_header_id|>user") {
		t.Fatalf("got %q: bos_token (a string) not rendered first", got)
	}
	tpl, err = Load(templates(t)["inst.jinja"], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = text(tpl.Render(conversations[2], nil)); err != nil || !strings.Contains(got, " First answer</s>") {
		t.Fatalf("got %q %v: eos_token not rendered after the assistant's turn", got, err)
	}
}

func TestTemplateRefusalIsTyped(t *testing.T) {
	tpl, err := Load(templates(t)["inst.jinja"], nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(conversations[4], nil)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "alternate") {
		t.Fatalf("got %v, want a *RefusedError with the template's reason", err)
	}
}

// A refusal whose words the template builds (here from a message) is told in fixed words:
// the conversation's text never reaches an answer through it.
func TestARefusalBuiltFromTheMessagesIsNotTold(t *testing.T) {
	tpl, err := Load([]byte(`{"chat_template": "{{ raise_exception('bad message: ' ~ messages[0].content) }}"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render([]Message{{Role: "user", Content: "Maria Garcia, MRN 123"}}, nil)
	var refused *RefusedError
	if !errors.As(err, &refused) || strings.Contains(refused.Reason, "Maria") || refused.Reason == "" {
		t.Fatalf("got %v", err)
	}
	// An empty reason is told in the fixed words too: an empty one reads as no refusal.
	tpl, err = Load([]byte(`{"chat_template": "{{ raise_exception(messages[0].content[1:]) }}"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = tpl.Render([]Message{{Role: "user", Content: "x"}}, nil); !errors.As(err, &refused) || refused.Reason == "" {
		t.Fatalf("an empty reason: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		json string
		want error
	}{
		{"no file", "", ErrNoTemplate},
		{"no field", `{"bos_token": "<s>"}`, ErrNoTemplate},
		{"null", `{"chat_template": null}`, ErrNoTemplate},
		{"empty", `{"chat_template": ""}`, ErrNoTemplate},
		{"list without default", `{"chat_template": [{"name": "tool_use", "template": "x"}]}`, ErrNoTemplate},
	} {
		if _, err := Load([]byte(c.json), nil); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	for _, bad := range []string{`{`, `{"chat_template": 3}`, `{"chat_template": "{% for %}"}`} {
		if _, err := Load([]byte(bad), nil); err == nil || errors.Is(err, ErrNoTemplate) {
			t.Errorf("%s: got %v, want a load error", bad, err)
		}
	}
	tpl, err := Load([]byte(`{"chat_template": [{"name": "default", "template": "{{ messages[0].content }}"}, {"name": "rag", "template": "x"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := text(tpl.Render(conversations[0], nil)); err != nil || got != conversations[0][0].Content {
		t.Fatalf("the default of a template list: %q %v", got, err)
	}
	tpl, err = Load([]byte(`{"chat_template": "{% if false %}x{% endif %}"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Render(conversations[0], nil); !errors.Is(err, ErrEmpty) {
		t.Fatalf("an empty rendering: %v", err)
	}
}

// TestTemplatesRenderAsHuggingFaceJinja renders every test template and conversation with
// this package and with @huggingface/jinja (npm, the renderer of HuggingFace's JS stack):
// the prompts must be the same bytes, and a conversation one refuses the other refuses too.
func TestTemplatesRenderAsHuggingFaceJinja(t *testing.T) {
	js := filepath.Join("..", "cmd", "serve", "testdata", "js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "@huggingface", "jinja")); err != nil {
		t.Skip("@huggingface/jinja is not installed: run make test (or npm ci in cmd/serve/testdata/js)")
	}
	type jsCase struct {
		Template string            `json:"template"`
		Special  map[string]string `json:"special"`
		Messages []map[string]any  `json:"messages"`
	}
	type result struct {
		name, out string
		err       error
	}
	var in bytes.Buffer
	var ours []result
	for name, cfg := range templates(t) {
		tpl, err := Load(cfg, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var fields map[string]any
		_ = json.Unmarshal(cfg, &fields)
		c := jsCase{Template: fields["chat_template"].(string), Special: map[string]string{}}
		for k, v := range tpl.special {
			c.Special[k] = v.AsString()
		}
		for i, conv := range conversations {
			c.Messages = nil
			for _, m := range conv {
				c.Messages = append(c.Messages, map[string]any{"role": m.Role, "content": m.Content})
			}
			line, _ := json.Marshal(c)
			in.Write(append(line, '\n'))
			out, err := text(tpl.Render(conv, nil))
			ours = append(ours, result{name: name + "#" + string(rune('0'+i)), out: out, err: err})
		}
	}
	cmd := exec.Command(node, "chat-template.mjs")
	cmd.Dir, cmd.Stdin = js, &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	i, refusals := 0, 0
	for ; sc.Scan(); i++ {
		var theirs struct {
			Out   *string `json:"out"`
			Error string  `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &theirs); err != nil || i >= len(ours) {
			t.Fatalf("line %d %q: %v", i, sc.Text(), err)
		}
		r := ours[i]
		switch {
		case theirs.Out == nil:
			var refused *RefusedError
			if !errors.As(r.err, &refused) || refused.Reason != theirs.Error {
				t.Errorf("%s: @huggingface/jinja refused (%s), we gave %q %v", r.name, theirs.Error, r.out, r.err)
			}
			refusals++
		case r.err != nil:
			t.Errorf("%s: %v, @huggingface/jinja rendered %q", r.name, r.err, *theirs.Out)
		case r.out != *theirs.Out:
			t.Errorf("%s:\n ours   %q\n theirs %q", r.name, r.out, *theirs.Out)
		}
	}
	if i != len(ours) || refusals == 0 {
		t.Fatalf("%d results for %d cases, %d refusals", i, len(ours), refusals)
	}
}

// TestToolsReachTheTemplate: a template that writes tools, an assistant's calls and a tool's
// answer gets them as transformers hands them: the tool definitions as objects, a call's
// arguments as an object (whole numbers stay whole), the answer's tool_call_id and name.
func TestToolsReachTheTemplate(t *testing.T) {
	src := `{%- if tools %}<tools>{% for t in tools %}{{ t.function.name }}({{ t.function.parameters.required | join(",") }});{% endfor %}</tools>{% endif %}` +
		`{%- for m in messages %}<{{ m.role }}>{% if m.tool_calls %}{% for c in m.tool_calls %}` +
		`[{{ c.id }} {{ c.function.name }} hr={{ c.function.arguments.heart_rate }}]{% endfor %}{% else %}{{ m.content }}{% endif %}` +
		`{% if m.tool_call_id %} for {{ m.tool_call_id }} by {{ m.name }}{% endif %}</{{ m.role }}>{% endfor %}<assistant>`
	cfg, _ := json.Marshal(map[string]string{"chat_template": src})
	tpl, err := Load(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := []json.RawMessage{[]byte(`{"type":"function","function":{"name":"record_vitals","parameters":{"type":"object","required":["heart_rate","spo2"]}}}`)}
	msgs := []Message{
		{Role: "user", Content: "Vitals?"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "record_vitals", Arguments: `{"heart_rate":72,"spo2":98}`}}},
		{Role: "tool", Content: "recorded", ToolCallID: "call_1", Name: "record_vitals"},
	}
	got, err := text(tpl.Render(msgs, tools))
	want := "<tools>record_vitals(heart_rate,spo2);</tools><user>Vitals?</user><assistant>[call_1 record_vitals hr=72]</assistant>" +
		"<tool>recorded for call_1 by record_vitals</tool><assistant>"
	if err != nil || got != want {
		t.Fatalf("%q, %v\nwant %q", got, err, want)
	}
}

// TestToolsKeepTheClientsKeyOrder: tools and a call's arguments reach the template with their
// keys in the order the client wrote them, a call's own in OpenAI's, as transformers hands
// them (json.loads's dicts), so that tojson writes them as Jinja2 does (the want below is its
// rendering); they were sorted.
func TestToolsKeepTheClientsKeyOrder(t *testing.T) {
	src := "{% for t in tools %}{{ t | tojson }};{% endfor %}" +
		"{% for m in messages %}{% if m.tool_calls %}{{ m.tool_calls | tojson }};{% endif %}{% endfor %}"
	cfg, _ := json.Marshal(map[string]string{"chat_template": src})
	tpl, err := Load(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := []json.RawMessage{[]byte(`{"type":"function","function":{"name":"lookup","description":"Find a drug",` +
		`"parameters":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer","minimum":0}},"required":["zeta","alpha"]}}}`)}
	msgs := []Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"zeta":"x","alpha":3,"zeta":"y","list":[],"f":2.5}`}}},
	}
	got, err := text(tpl.Render(msgs, tools))
	want := `{"type": "function", "function": {"name": "lookup", "description": "Find a drug", "parameters": {"type": "object", ` +
		`"properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer", "minimum": 0}}, "required": ["zeta", "alpha"]}}};` +
		`[{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": {"zeta": "y", "alpha": 3, "list": [], "f": 2.5}}}];`
	if err != nil || got != want {
		t.Fatalf("%s, %v\nwant %s", got, err, want)
	}
}

func text(p Prompt, err error) (string, error) { return p.Text, err }
