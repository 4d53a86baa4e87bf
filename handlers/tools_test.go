package handlers

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/generate"
	"github.com/sluice-serving/sluice/grammar"
)

func plan(t *testing.T, tools, choice string, parallel *bool) *toolPlan {
	t.Helper()
	p, _, msg := readTools(json.RawMessage(tools), json.RawMessage(choice), parallel)
	if msg != "" {
		t.Fatal(msg)
	}
	return p
}

const twoTools = `[{"type":"function","function":{"name":"flag","parameters":{"type":"object","properties":{"who":{"$ref":"#/$defs/person"}},"required":["who"],"$defs":{"person":{"type":"string","maxLength":10}}}}},` +
	`{"type":"function","function":{"name":"note"}}]`

// TestRequiredCallsKeepTheirDefinitions: a tool whose parameters use $defs can be required:
// the list's schema compiles, its definitions moved where its $refs find them.
func TestRequiredCallsKeepTheirDefinitions(t *testing.T) {
	spec := plan(t, twoTools, `"required"`, nil).constraint()
	v := grammar.NewVocab([][]byte{[]byte("x")}, -1)
	if _, err := grammar.Compile(v, *spec); err != nil {
		t.Fatalf("%s: %v", spec.Schema, err)
	}
}

// TestCallsAreReadStrictly: a named call's arguments must be an object; a call must name one
// of the tools (the named one, when named); without parallel calls one is kept; an external
// model's text before its calls stays its content; its calls that do not parse leave the
// answer text.
func TestCallsAreReadStrictly(t *testing.T) {
	named := plan(t, twoTools, `{"type":"function","function":{"name":"flag"}}`, nil)
	if _, _, ok := named.calls(`I cannot`); ok {
		t.Error("text taken as a named call's arguments")
	}
	if c, _, ok := named.calls(`{"who":"x"}`); !ok || c[0].Name != "flag" {
		t.Errorf("a named call: %v %v", c, ok)
	}
	single := plan(t, twoTools, `"auto"`, pfalse())
	if c, _, ok := single.calls(`[{"name":"note","arguments":{}},{"name":"flag","arguments":{"who":"a"}}]`); !ok || len(c) != 1 {
		t.Errorf("without parallel calls: %v", c)
	}
	if _, _, ok := single.calls(`[{"name":"other","arguments":{}}]`); ok {
		t.Error("a call of no tool was read")
	}
	listed := plan(t, twoTools, `"auto"`, nil)
	listed.listed = true
	c, content, ok := listed.calls("Let me check." + callSeparator + `[{"name":"note","arguments":{"a":1}}]`)
	if !ok || content != "Let me check." || len(c) != 1 || c[0].Arguments != `{"a":1}` {
		t.Errorf("text, then a call: %v %q %v", c, content, ok)
	}
	if _, content, ok := listed.calls("Hm." + callSeparator + `[{"name":"note","arguments":{"a":}}]`); ok || content == "" {
		t.Errorf("calls that do not parse: %q %v", content, ok)
	}
	// A block ends at the close tag its call ends at, not at one an argument's text holds.
	quoted := `{"name":"flag","arguments":{"who":"</tool_call>"}}`
	if c, _, ok := single.calls("<tool_call>" + quoted + "</tool_call>\n"); !ok || c[0].Arguments != `{"who":"</tool_call>"}` {
		t.Errorf("a block whose argument holds its close tag: %v %v", c, ok)
	}
	if c, _, ok := plan(t, twoTools, `"auto"`, nil).calls("<tool_call>" + quoted + "</tool_call><tool_call>" + `{"name":"note","arguments":{"t":"</tool_call></tool_call>"}}` + "</tool_call>"); !ok || len(c) != 2 || c[1].Name != "note" {
		t.Errorf("two blocks holding close tags: %v %v", c, ok)
	}
	for _, text := range []string{"<tool_call>" + quoted, "<tool_call>" + quoted + "</tool_call> and text", "<tool_call>{\"name\":\"note\"</tool_call>,\"arguments\":{}}</tool_call>"} {
		if c, _, ok := single.calls(text); ok {
			t.Errorf("%q read as calls %v", text, c)
		}
	}
	namedListed := plan(t, twoTools, `{"type":"function","function":{"name":"flag"}}`, nil)
	namedListed.listed = true
	if _, _, ok := namedListed.calls(callSeparator + `[{"name":"note","arguments":{}}]`); ok {
		t.Error("an external call of another function than the named one was read")
	}
}

func pfalse() *bool { f := false; return &f }

// TestCallTextGathersDeltasByIndex: an external model's call deltas, a name coming late and
// calls interleaved, become one list after the separator.
func TestCallTextGathersDeltasByIndex(t *testing.T) {
	var c callText
	for _, d := range []chat.CallDelta{{Index: 0, ID: "a"}, {Index: 1, Name: "note", Arguments: `{"b":`}, {Index: 0, Name: "flag", Arguments: `{"who":"x"}`},
		{Index: 1, Arguments: `2}`}, {Index: 5000, Arguments: "ignored"}} {
		c.add(d)
	}
	want := callSeparator + `[{"name":"flag","arguments":{"who":"x"}},{"name":"note","arguments":{"b":2}}]`
	if got := c.text(); got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
}

// TestAForcedCallIsAnObject: parameters that leave the type open ({}) still hold a forced
// call's arguments to an object, and a tool's $defs are moved without touching a string value
// that spells a reference.
func TestAForcedCallIsAnObject(t *testing.T) {
	toks := [][]byte{[]byte(`[`), []byte(`{"name":"f","arguments":`), []byte(`"hi"`), []byte(`{}`), []byte(`}`), []byte(`]`)}
	v := grammar.NewVocab(toks, -1)
	ix, err := grammar.Compile(v, *plan(t, `[{"type":"function","function":{"name":"f","parameters":{}}}]`, `"required"`, nil).constraint())
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Start()
	m.Advance(0)
	m.Advance(1)
	if mask, err := m.Allowed(); err != nil || mask.Allows(2) || !mask.Allows(3) {
		t.Fatalf("a call's arguments after its name: %v, a string allowed %v", err, err == nil && mask.Allows(2))
	}
	enum := `[{"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{"a":{"$ref":"#/$defs/x"},` +
		`"b":{"enum":["#/$defs/x"]}},"$defs":{"x":{"type":"string"}}}}}]`
	spec := plan(t, enum, `"required"`, nil).constraint()
	if !strings.Contains(string(spec.Schema), `"enum":["#/$defs/x"]`) || !strings.Contains(string(spec.Schema), `"$ref":"#/$defs/t0_s_x"`) {
		t.Fatalf("%s", spec.Schema)
	}
	if _, _, msg := readTools(json.RawMessage(`[{"type":"function","function":{"name":"h","parameters":{"type":"string"}}}]`), nil, nil); msg == "" {
		t.Fatal("parameters of a string")
	}
	// A root enum, const, or an anyOf, oneOf or $ref that may be other than an object, is
	// refused: a forced call of it could be a bare value.
	for _, params := range []string{`{"enum":["a","b"]}`, `{"const":"a"}`} {
		if _, err := grammar.Compile(v, *plan(t, `[{"type":"function","function":{"name":"k","parameters":`+params+`}}]`, `"required"`, nil).constraint()); err == nil {
			t.Errorf("%s forced", params)
		}
	}
	for _, params := range []string{`{"anyOf":[{"type":"string"},{"type":"object"}]}`,
		`{"oneOf":[{"type":"object"},{"$ref":"#/$defs/S"}],"$defs":{"S":{"type":"string"}}}`, `{"$ref":"#/$defs/S","$defs":{"S":{"type":"string"}}}`,
		`{"$ref":"#/$defs/absent"}`} {
		tools := json.RawMessage(`[{"type":"function","function":{"name":"k","parameters":` + params + `}}]`)
		if _, _, msg := readTools(tools, json.RawMessage(`"required"`), nil); msg == "" {
			t.Errorf("%s taken for a forced call", params)
		}
		if _, _, msg := readTools(tools, nil, nil); msg != "" {
			t.Errorf("%s refused where no call is forced: %s", params, msg)
		}
	}
	// Definitions that each name the next eight times, eight deep, are read once each.
	var defs []string
	for d := range 8 {
		ref := `{"$ref":"#/$defs/A` + strconv.Itoa(d+1) + `"}`
		defs = append(defs, `"A`+strconv.Itoa(d)+`":{"anyOf":[`+strings.Repeat(ref+",", 7)+ref+`]}`)
	}
	defs = append(defs, `"A8":{"properties":{"a":{"type":"string"}}}`)
	deep := `{"$ref":"#/$defs/A0","$defs":{` + strings.Join(defs, ",") + `}}`
	if !objectsOnly(json.RawMessage(deep)) {
		t.Error("a chain of definitions of objects")
	}
	// $defs and definitions of one name stay apart; a tool's $ref cannot reach another's.
	both := `[{"type":"function","function":{"name":"k","parameters":{"$ref":"#/$defs/S","$defs":{"S":{"type":"object","properties":{"a":{"type":"string"}}}},"definitions":{"S":{"type":"string"}}}}}]`
	spec = plan(t, both, `"required"`, nil).constraint()
	if !strings.Contains(string(spec.Schema), `"t0_s_S":{"type":"object"`) || !strings.Contains(string(spec.Schema), `"t0_d_S":{"type":"string"}`) ||
		!strings.Contains(string(spec.Schema), `"$ref":"#/$defs/t0_s_S"`) {
		t.Errorf("two tables of one name: %s", spec.Schema)
	}
	cross := `[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"$ref":"#/$defs/S"}},"$defs":{"S":{"type":"string"}}}}},` +
		`{"type":"function","function":{"name":"b","parameters":{"type":"object","properties":{"y":{"$ref":"#/$defs/t0_s_S"}}}}}]`
	if _, err := grammar.Compile(v, *plan(t, cross, `"required"`, nil).constraint()); err == nil {
		t.Error("a tool's $ref reached another tool's definitions")
	}
	// A $ref is rewritten however JSON spells it (`\/` for a slash), and an object a const
	// holds is the client's data even where it has a "$ref" key; the properties keep their order.
	spelt := `[{"type":"function","function":{"name":"s","parameters":{"type":"object","properties":{` +
		`"z":{"$ref":"#\/$defs\/x"},"a":{"const":{"$ref":"#/$defs/x"}}},"$defs":{"x":{"type":"string"}}}}}]`
	spec = plan(t, spelt, `"required"`, nil).constraint()
	if got := string(spec.Schema); !strings.Contains(got, `"z":{"$ref":"#/$defs/t0_s_x"}`) ||
		!strings.Contains(got, `"a":{"const":{"$ref":"#/$defs/x"}}`) || strings.Index(got, `"z"`) > strings.Index(got, `"a"`) {
		t.Errorf("a spelt $ref and a const's data: %s", got)
	}
	if _, err := grammar.Compile(v, *spec); err != nil {
		t.Errorf("a spelt $ref: %v", err)
	}
	// A $defs entry named d_x and a definitions entry named x stay two; a table named twice is
	// its last, as the named call reads it.
	for params, want := range map[string][]string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/d_x"}},"$defs":{"d_x":{"type":"string"}},"definitions":{"x":{"type":"integer"}}}`: {
			`"t0_s_d_x":{"type":"string"}`, `"t0_d_x":{"type":"integer"}`, `"$ref":"#/$defs/t0_s_d_x"`},
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"},"y":{"type":"integer"}},"$defs":{"x":{"type":"string"}}}`: {
			`"$defs":{"t0_s_x":{"type":"string"}}`, `"$ref":"#/$defs/t0_s_x"`},
	} {
		got := string(plan(t, `[{"type":"function","function":{"name":"k","parameters":`+params+`}}]`, `"required"`, nil).constraint().Schema)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %s in %s", params, w, got)
			}
		}
	}
	// A root anyOf or $ref stands alone: still compiled, required and named.
	for _, params := range []string{`{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"integer"}}}]}`,
		`{"$ref":"#/definitions/X","definitions":{"X":{"type":"object","properties":{"a":{"type":"string"}}}}}`} {
		for _, choice := range []string{`"required"`, `{"type":"function","function":{"name":"k"}}`} {
			spec := plan(t, `[{"type":"function","function":{"name":"k","parameters":`+params+`}}]`, choice, nil).constraint()
			if _, err := grammar.Compile(v, *spec); err != nil {
				t.Errorf("%s, %s: %v", params, choice, err)
			}
		}
	}
}

// TestAStrictToolHoldsAutoCallsToItsParameters: under auto, a strict tool's calls keep to its
// parameters however the answer writes them (a list, one object, Hermes' blocks), another
// tool's calls are any object, and text stays text; nothing the answer may be is read as a
// call that breaks the schema, leading spaces of any kind included; without a strict tool
// the answer is free.
func TestAStrictToolHoldsAutoCallsToItsParameters(t *testing.T) {
	const tools = `[{"type":"function","function":{"name":"dose","strict":true,"parameters":{"type":"object",` +
		`"properties":{"mg":{"type":"integer","minimum":1,"maximum":500}},"required":["mg"],"additionalProperties":false}}},` +
		`{"type":"function","function":{"name":"note","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}]`
	if spec, err := plan(t, strings.Replace(tools, `"strict":true,`, ``, 1), `"auto"`, nil).autoConstraint(); spec != nil || err != nil {
		t.Fatalf("no strict tool: %v %v, want no constraint", spec, err)
	}
	toks := make([][]byte, 257)
	for b := range 256 {
		toks[b] = []byte{byte(b)}
	}
	toks[256] = []byte("</s>")
	v := grammar.NewVocab(toks, 256)
	for _, parallel := range []*bool{nil, pfalse()} {
		p := plan(t, tools, `"auto"`, parallel)
		spec, err := p.autoConstraint()
		if err != nil {
			t.Fatal(err)
		}
		ix, err := grammar.Compile(v, *spec)
		if err != nil {
			t.Fatal(err)
		}
		// accepts walks text byte by byte and says whether the answer may end there.
		accepts := func(text string) bool {
			m := ix.Start()
			for i := range len(text) {
				mask, err := m.Allowed()
				if err != nil || !mask.Allows(int(text[i])) {
					return false
				}
				m.Advance(int64(text[i]))
			}
			mask, err := m.Allowed()
			return m.Complete() || err == nil && mask.Allows(256)
		}
		for _, text := range []string{"", "  ", "The dose is fine.", "[1] see the note", "[]", "{}", "{ }", "<b>bold</b>", "<tool", "<tools>", "[\f{", "{\f\"",
			`[{"name":"dose","arguments":{"mg":250}}]`, ` {"name":"dose","arguments":{"mg":5}}`, `{"name":"note","arguments":{"anything":[1,2]}}`,
			"<tool_call>\n" + `{"name":"dose","arguments":{"mg":1}}` + "\n</tool_call>"} {
			if !accepts(text) {
				t.Errorf("parallel %v: %q refused", parallel == nil, text)
			}
			if calls, _, ok := p.calls(text); ok {
				for _, c := range calls {
					if c.Name == "dose" && !strings.HasPrefix(c.Arguments, `{"mg":`) {
						t.Errorf("%q read as a call %v", text, c)
					}
				}
			}
		}
		for _, text := range []string{`[{"name":"dose","arguments":{"mg":900}}]`, `{"name":"dose","arguments":{}}`, `{"name":"dose","arguments":{"mg":5,"x":1}}`,
			`[ {"name":"dose","arguments":{"mg":"a lot"}}]`, `{ "name":"dose","arguments":{"mg":0}}`, "\u00a0" + `[{"name":"dose","arguments":{"mg":0}}]`,
			"\u3000" + `{"name":"dose","arguments":{"mg":-1}}`, `{"arguments":{"mg":0},"name":"dose"}`,
			`<tool_call>{"name":"dose","arguments":{"mg":"x"}}</tool_call>`, `[{"name":"other","arguments":{}}]`,
			"<tool_call>\f" + `{"name":"dose","arguments":{"mg":1}}` + "</tool_call>"} {
			if accepts(text) {
				t.Errorf("parallel %v: %q allowed", parallel == nil, text)
			}
		}
		for text, may := range map[string]bool{"\u00a0[{": true, "\v<tool_": true, "[\n  {": true, "{\n\t\"na": true, " [": true,
			"[ 1": false, "{ x": false, "[[": false, "<tool_x": false, "Hi": false} {
			if mayBeCall(text) != may {
				t.Errorf("%q may be a call: %v, want %v (as calls reads it)", text, !may, may)
			}
		}
		block := `<tool_call>{"name":"dose","arguments":{"mg":1}}</tool_call>`
		for _, two := range []string{`[{"name":"dose","arguments":{"mg":1}},{"name":"note","arguments":{}}]`, block + "\n" + block + "\n"} {
			if accepts(two) != (parallel == nil) {
				t.Errorf("two calls %q with parallel calls %v: allowed %v", two, parallel == nil, accepts(two))
			}
		}
	}
}

// TestAStrictToolBesideOthersCompiles: the tools that are not strict share one branch of the
// auto constraint, so that a strict tool beside several others compiles as the same tools do
// when required; a strict tool's parameters must be an object's, as a forced one's.
func TestAStrictToolBesideOthersCompiles(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}}`
	for i := range 6 {
		tools += `,{"type":"function","function":{"name":"b` + strconv.Itoa(i) + `"}}`
	}
	tools += `]`
	v := grammar.NewVocab([][]byte{[]byte("x")}, -1)
	for _, parallel := range []*bool{nil, pfalse()} {
		spec, err := plan(t, tools, `"auto"`, parallel).autoConstraint()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := grammar.Compile(v, *spec); err != nil {
			t.Errorf("a strict tool beside six others, parallel calls %v: %v", parallel == nil, err)
		}
	}
	nullable := `[{"type":"function","function":{"name":"a","strict":true,"parameters":{"anyOf":[{"type":"object"},{"type":"null"}]}}}]`
	if _, _, msg := readTools(json.RawMessage(nullable), nil, nil); msg == "" {
		t.Error("a strict tool whose arguments may be null")
	}
}

// TestStreamedCallsOfTwoChoicesInterleave: the choices of one streamed answer, each held while
// it may be calls, come in any order; each is answered as its calls.
func TestStreamedCallsOfTwoChoicesInterleave(t *testing.T) {
	a := &chatAnswer{tools: plan(t, twoTools, `"required"`, nil), requestID: "r"}
	g := &genCall{choices: make([]genChoice, 2)}
	pieces := []string{`[{"name":"note",`, `"arguments":{}}]`}
	var got [2]string
	for k, i := range []int{0, 1, 0, 1} {
		ev := token(int64(k), pieces[k/2])
		if k >= 2 {
			ev.Done, ev.Finish = true, generate.FinishEOS
		}
		if chunk := a.event(g, i, ev); chunk != nil {
			got[i] += string(chunk)
		}
	}
	for i, chunks := range got {
		if !strings.Contains(chunks, `"name":"note"`) || !strings.Contains(chunks, `"finish_reason":"tool_calls"`) {
			t.Errorf("choice %d: %s", i, chunks)
		}
	}
}

// TestAStreamedNamedCallFinishesAsTheWholeAnswer: a named call's arguments stream as they come,
// and its finish reason is the whole answer's: tool_calls where the arguments came whole, stop
// where a stop sequence cut them.
func TestAStreamedNamedCallFinishesAsTheWholeAnswer(t *testing.T) {
	for _, c := range []struct {
		pieces []string
		finish generate.Finish
		want   string
	}{
		{[]string{`{"who":`, `"Al"}`}, generate.FinishEOS, `"finish_reason":"tool_calls"`},
		{[]string{`{"who":`, `"Al`}, generate.FinishStopSequence, `"finish_reason":"stop"`},
	} {
		a := &chatAnswer{tools: plan(t, twoTools, `{"type":"function","function":{"name":"flag"}}`, nil), requestID: "r"}
		g := &genCall{choices: make([]genChoice, 1)}
		var got string
		for k, piece := range c.pieces {
			ev := token(int64(k), piece)
			if k == len(c.pieces)-1 {
				ev.Done, ev.Finish = true, c.finish
			}
			got += string(a.event(g, 0, ev))
		}
		if !strings.Contains(got, `"name":"flag"`) || !strings.Contains(got, c.want) {
			t.Errorf("%q: %s", c.pieces, got)
		}
		whole := &chatAnswer{tools: a.tools, requestID: "r"}
		g.choices[0].finish = c.finish
		g.choices[0].trimmed.WriteString(strings.Join(c.pieces, ""))
		if out, _ := json.Marshal(whole.whole(g)); !strings.Contains(string(out), c.want) {
			t.Errorf("%q, whole: %s", c.pieces, out)
		}
	}
}

// TestACallOfNullArgumentsHasTheEmptyObject: a call written {"name", "parameters": null} (a
// tool without arguments, as Llama writes it) answers arguments "{}", the text of a JSON
// object as OpenAI's clients parse it; it answered "null", which decodes as no object and
// failed the client's call.
func TestACallOfNullArgumentsHasTheEmptyObject(t *testing.T) {
	for _, call := range []string{`{"name":"now","parameters":null}`, `{"name":"now","arguments":null}`, `{"name":"now"}`} {
		gen := &fakeGenerator{script: []generate.Event{last(1, call, call, generate.FinishEOS)}}
		f := chatFixture(t, gen, fakeTemplate{})
		r := f.do(t, "POST", "/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":"time?"}],
			"tools":[{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}]}`)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		msg := r.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		calls, _ := msg["tool_calls"].([]any)
		if len(calls) != 1 || calls[0].(map[string]any)["function"].(map[string]any)["arguments"] != "{}" {
			t.Errorf("%s: %s", call, r.raw)
		}
	}
}

// TestADescribedToolIsNoCall: a JSON object naming a tool beside other keys but no arguments
// describes it; it is answered as text, not run as a call of no arguments.
func TestADescribedToolIsNoCall(t *testing.T) {
	answer := `{"name":"now","description":"the time"}`
	gen := &fakeGenerator{script: []generate.Event{last(1, answer, answer, generate.FinishEOS)}}
	f := chatFixture(t, gen, fakeTemplate{})
	r := f.do(t, "POST", "/v1/chat/completions", `{"model":"fake-lm","messages":[{"role":"user","content":"json?"}],
		"tools":[{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}]}`)
	msg := r.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["tool_calls"] != nil || msg["content"] != answer {
		t.Errorf("a tool described: %s", r.raw)
	}
}
