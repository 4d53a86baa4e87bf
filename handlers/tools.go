package handlers

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/grammar"
)

// Function calling on OpenAI's chat completions, in one home: a request's tools and
// tool_choice, the constraint a forced call puts on the answer, an assistant's tool_calls and
// a tool's answer among the messages, and the calls an answer makes, whole and as stream
// deltas.

// chatTool is one of a request's tools.
type chatTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// toolMode is what tool_choice asks of an answer.
type toolMode int

const (
	toolsNone     toolMode = iota // no call: the answer is text
	toolsAuto                     // the model chooses: an answer that is a call is one
	toolsRequired                 // one call or more, of any tool
	toolsNamed                    // one call of the named tool
)

// toolPlan is a request's tools and what it asks of the answer.
type toolPlan struct {
	defs     []json.RawMessage          // as the chat template gets them
	params   map[string]json.RawMessage // each tool's parameters schema
	order    []string                   // the tools' names, in the request's order
	mode     toolMode
	named    string
	parallel bool
	// strict are the tools whose calls must keep to their parameters when the model
	// chooses to call (strict: true): under auto, the whole answer is then held to text or
	// such calls (autoConstraint).
	strict map[string]bool
	// listed says the answer's calls come from an external model, after its text and a
	// callSeparator, as a list of {name, arguments} (callText writes it).
	listed bool
}

// objectsOnly says whether every value the tool's parameters (root) allow is an object: a
// type of object (or a list of only that), the keywords only objects have, const or enum
// values that are all objects, or anyOf and oneOf branches, or the local definitions a $ref
// names, that all are. Each definition is read once (one being read counts as no: a cycle is
// refused), so a table of definitions that each refer to the next many times costs what its
// size does.
func objectsOnly(root json.RawMessage) bool {
	// Decoded once and walked: each node is read once, however deep.
	dec := json.NewDecoder(bytes.NewReader(root))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil {
		return false
	}
	top, _ := tree.(map[string]any)
	known := map[string]bool{} // definitions read, by "table/name"
	var check func(node any, depth int) bool
	check = func(node any, depth int) bool {
		s, ok := node.(map[string]any)
		if !ok || depth > 64 {
			return false // a boolean schema, or one nested past any tool's
		}
		switch typ := s["type"].(type) {
		case string:
			return typ == "object"
		case []any:
			return len(typ) > 0 && !slices.ContainsFunc(typ, func(t any) bool { return t != "object" })
		case nil:
		default:
			return false
		}
		if ref, ok := s["$ref"].(string); ok {
			for _, table := range []string{"$defs", "definitions"} {
				entries, _ := top[table].(map[string]any)
				if name, ok := strings.CutPrefix(ref, "#/"+table+"/"); ok && entries[name] != nil {
					key := table + "/" + name
					if yes, seen := known[key]; seen {
						return yes
					}
					known[key] = false
					known[key] = check(entries[name], depth+1)
					return known[key]
				}
			}
			return false
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if branches, ok := s[k].([]any); ok && len(branches) > 0 {
				return !slices.ContainsFunc(branches, func(b any) bool { return !check(b, depth+1) })
			}
		}
		for _, k := range []string{"properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties", "propertyNames"} {
			if _, ok := s[k]; ok {
				return true
			}
		}
		values, _ := s["enum"].([]any)
		if c, ok := s["const"]; ok {
			values = []any{c}
		}
		return len(values) > 0 && !slices.ContainsFunc(values, func(v any) bool { _, obj := v.(map[string]any); return !obj })
	}
	return check(tree, 0)
}

// hoistDefs is tool i's parameters with their $defs and definitions moved into defs under
// names of their own ("t<i>_s_<name>", "t<i>_d_<name>" for definitions, so that the two
// tables never meet) and every local $ref rewritten to match (grammar.RetargetRefs): one to a
// table the tool does not have then names no definition, and the list is refused as the named
// call would be.
func hoistDefs(i int, params json.RawMessage, defs map[string]json.RawMessage) json.RawMessage {
	prefix := map[string]string{"$defs": "t" + strconv.Itoa(i) + "_s_", "definitions": "t" + strconv.Itoa(i) + "_d_"}
	rewritten, err := grammar.RetargetRefs(params, func(ref string) (string, bool) {
		for _, table := range []string{"$defs", "definitions"} {
			if rest, ok := strings.CutPrefix(ref, "#/"+table+"/"); ok {
				return "#/$defs/" + prefix[table] + rest, true
			}
		}
		return "", false
	})
	if err != nil {
		return params // refused as it is where the grammar compiles it
	}
	root, ok := members(rewritten)
	if !ok {
		return rewritten
	}
	kept := root[:0]
	for _, m := range root {
		if p, table := prefix[m.key]; table {
			if entries, ok := members(m.value); ok {
				for _, d := range entries {
					defs[p+d.key] = d.value
				}
				continue
			}
		}
		kept = append(kept, m)
	}
	return object(kept)
}

// member is one of a JSON object's members, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// members are raw's members in their order; false where raw is not an object. (A schema's
// properties are written in their order: a map would sort them.)
func members(raw json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{tok.(string), v})
	}
	return out, true
}

// object writes ms as a JSON object, in their order.
func object(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// callSeparator ends an external model's text where its calls follow (ASCII's record
// separator, which no answer's text holds).
const callSeparator = "\x1e"

// maxCalls bounds the calls read from one answer.
const maxCalls = 1024

// maxTools bounds a request's tools: each is a schema the answer may be held to.
const maxTools = 128

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// readTools reads tools, tool_choice and parallel_tool_calls; nil without tools. A non-empty
// msg is the validation error about param.
func readTools(rawTools, rawChoice json.RawMessage, parallel *bool) (plan *toolPlan, param, msg string) {
	choice, cparam, cmsg := readToolChoice(rawChoice)
	if cmsg != "" {
		return nil, cparam, cmsg
	}
	if !present(rawTools) || string(bytes.TrimSpace(rawTools)) == "[]" {
		if choice.mode == toolsRequired || choice.mode == toolsNamed {
			return nil, "tool_choice", "`tool_choice` asks for a call but the request has no `tools`"
		}
		return nil, "", ""
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(rawTools, &tools); err != nil {
		return nil, "tools", "`tools` must be a list of {type: function, function: {name, parameters}}"
	}
	if len(tools) > maxTools {
		return nil, "tools", "`tools` may hold at most " + strconv.Itoa(maxTools) + " tools"
	}
	plan = &toolPlan{defs: tools, params: map[string]json.RawMessage{}, mode: choice.mode, named: choice.named,
		parallel: parallel == nil || *parallel}
	for i, raw := range tools {
		var t chatTool
		at := "tools[" + strconv.Itoa(i) + "]"
		if err := json.Unmarshal(raw, &t); err != nil || t.Type != "function" || t.Function == nil {
			return nil, at, "each tool must be {type: function, function: {name, parameters}}"
		}
		if !toolName.MatchString(t.Function.Name) {
			return nil, at + ".function.name", "a function's name must be 1 to 64 letters, digits, underscores or dashes"
		}
		if _, dup := plan.params[t.Function.Name]; dup {
			return nil, at + ".function.name", "two tools have the same name"
		}
		params := t.Function.Parameters
		if !present(params) {
			params = json.RawMessage(`{"type":"object"}`)
		}
		var shape map[string]json.RawMessage
		if json.Unmarshal(params, &shape) != nil || shape == nil {
			return nil, at + ".function.parameters", "a function's `parameters` must be a JSON schema of an object"
		}
		_, alone := shape["$ref"]
		for _, k := range []string{"anyOf", "oneOf"} {
			_, has := shape[k]
			alone = alone || has
		}
		strict := t.Function.Strict != nil && *t.Function.Strict
		// Held to its parameters: forced, or strict where the model chooses (autoConstraint).
		held := choice.mode == toolsRequired || choice.mode == toolsNamed && choice.named == t.Function.Name ||
			choice.mode == toolsAuto && strict
		switch typ, ok := shape["type"]; {
		case !ok && alone:
			// A root $ref, anyOf or oneOf stands alone in a schema the grammar reads: a call
			// held to it must be of an object, whatever it chooses.
			if held && !objectsOnly(params) {
				return nil, at + ".function.parameters", "a forced or strict call's `parameters` must be a JSON schema of an object, whichever branch or definition it takes"
			}
		case !ok:
			// Arguments are an object whatever the schema leaves open ({}, a description): a
			// forced call must not be allowed a bare string, which no call parser takes.
			shape["type"] = json.RawMessage(`"object"`)
			params, _ = json.Marshal(shape)
		case string(typ) != `"object"`:
			return nil, at + ".function.parameters", "a function's `parameters` must be a JSON schema of an object"
		}
		plan.params[t.Function.Name] = params
		plan.order = append(plan.order, t.Function.Name)
		if strict {
			if plan.strict == nil {
				plan.strict = map[string]bool{}
			}
			plan.strict[t.Function.Name] = true
		}
	}
	if plan.mode == toolsNamed {
		if _, ok := plan.params[plan.named]; !ok {
			return nil, "tool_choice", "`tool_choice` names a function that is not among `tools`"
		}
	}
	return plan, "", ""
}

// choiceJSON is tool_choice as an external model gets it: written from what was read, so that
// nothing the caller added beside the mode and a declared tool's name goes on.
func (p *toolPlan) choiceJSON() json.RawMessage {
	var v any
	switch p.mode {
	case toolsNone:
		v = "none"
	case toolsRequired:
		v = "required"
	case toolsNamed:
		v = map[string]any{"type": "function", "function": map[string]string{"name": p.named}}
	default:
		v = "auto"
	}
	out, _ := json.Marshal(v)
	return out
}

// paramsOf is a tool's parameters schema, and whether the request has the tool.
func (p *toolPlan) paramsOf(name string) (json.RawMessage, bool) {
	if p == nil {
		return nil, false
	}
	params, ok := p.params[name]
	return params, ok
}

// readToolChoice reads tool_choice: none, auto (the default), required, or
// {type: function, function: {name}}.
func readToolChoice(raw json.RawMessage) (choice struct {
	mode  toolMode
	named string
}, param, msg string) {
	choice.mode = toolsAuto
	if !present(raw) {
		return choice, "", ""
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		switch word {
		case "none":
			choice.mode = toolsNone
		case "auto":
		case "required":
			choice.mode = toolsRequired
		default:
			return choice, "tool_choice", "`tool_choice` must be none, auto, required or {type: function, function: {name}}"
		}
		return choice, "", ""
	}
	var named struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Type != "function" || named.Function == nil {
		return choice, "tool_choice", "`tool_choice` must be none, auto, required or {type: function, function: {name}}"
	}
	choice.mode, choice.named = toolsNamed, named.Function.Name
	return choice, "", ""
}

// constraint is what a forced call holds the answer to: the named function's arguments, or a
// list of calls ({name, arguments}, one at most unless parallel calls are allowed); nil when
// the model may answer in text.
func (p *toolPlan) constraint() *grammar.Spec {
	switch {
	case p == nil:
		return nil
	case p.mode == toolsNamed:
		return &grammar.Spec{Kind: grammar.JSONSchema, Schema: p.params[p.named]}
	case p.mode == toolsRequired:
		return &grammar.Spec{Kind: grammar.JSONSchema, Schema: p.callsSchema(true, func(string) bool { return true })}
	}
	return nil
}

// callsSchema is the schema of a list of calls (list) or of one call, each {name, arguments}
// of one of the request's tools, whose arguments keep to its parameters where held says so
// and are any object elsewhere: the tools not held share one branch (an open object is the
// largest thing a schema writes, and the constraint holds the call several times over). Each
// tool's own $defs move to the root, named apart, so that its $refs still resolve where the
// list holds its schema.
func (p *toolPlan) callsSchema(list bool, held func(name string) bool) []byte {
	defs := map[string]json.RawMessage{}
	params := make(map[string]json.RawMessage, len(p.order))
	var free []string
	for i, name := range p.order {
		if held(name) {
			params[name] = hoistDefs(i, p.params[name], defs)
		} else {
			free = append(free, name)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{`)
	if len(defs) > 0 {
		table, _ := json.Marshal(defs)
		b.WriteString(`"$defs":` + string(table) + `,`)
	}
	if list {
		b.WriteString(`"type":"array","minItems":1,`)
		if !p.parallel {
			b.WriteString(`"maxItems":1,`)
		}
		b.WriteString(`"items":{`)
	}
	b.WriteString(`"anyOf":[`)
	branches := 0
	branch := func(name, args json.RawMessage) {
		if branches++; branches > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"object","properties":{"name":`)
		b.Write(name)
		b.WriteString(`,"arguments":`)
		b.Write(args)
		b.WriteString(`},"required":["name","arguments"]}`)
	}
	for _, name := range p.order {
		if args, ok := params[name]; ok {
			quoted, _ := json.Marshal(name)
			branch(json.RawMessage(`{"const":`+string(quoted)+`}`), args)
		}
	}
	if len(free) > 0 {
		names, _ := json.Marshal(free)
		branch(json.RawMessage(`{"enum":`+string(names)+`}`), json.RawMessage(`{"type":"object"}`))
	}
	b.WriteString(`]}`)
	if list {
		b.WriteString(`}`)
	}
	return b.Bytes()
}

// autoConstraint holds an answer the model chooses (auto) to text or calls when a tool is
// strict, so that a strict tool's call keeps to its parameters; nil otherwise. After any
// leading whitespace the answer is either calls as calls reads them (a list, one object, or
// Hermes' <tool_call> blocks; the strict tools' arguments to their parameters, the others' to
// any object), or text that calls could never read as calls: text that does not begin with
// "[{", "{\"" (whitespace between them or not) or <tool_call>. So an answer beginning with '['
// and '{' or '{' and '"' is a call, and its text cannot be.
func (p *toolPlan) autoConstraint() (*grammar.Spec, error) {
	if p == nil || p.mode != toolsAuto || len(p.strict) == 0 {
		return nil, nil
	}
	strict := func(name string) bool { return p.strict[name] }
	list, err := grammar.SchemaRegex(p.callsSchema(true, strict))
	if err != nil {
		return nil, err
	}
	one, err := grammar.SchemaRegex(p.callsSchema(false, strict))
	if err != nil {
		return nil, err
	}
	// Inside a block, JSON's own whitespace (the block's JSON is parsed as it stands).
	block := regexp.QuoteMeta(hermesOpen) + `[ \t\n\r]*` + one + `[ \t\n\r]*` + regexp.QuoteMeta(hermesClose)
	blocks := block
	if p.parallel {
		blocks = `(?:` + block + `\s*)+`
	}
	alts := []string{list, one, blocks,
		``,                                    // no text at all
		`[^` + trimmed + `\[{<][\s\S]*`,       // text beginning with none of the three
		`\[[ \t\n\r]*(?:[^ \t\n\r{][\s\S]*)?`, // '[' not before '{' (JSON's whitespace between)
		`\{[ \t\n\r]*(?:[^ \t\n\r"][\s\S]*)?`} // '{' not before '"'
	for i := 1; i < len(hermesOpen); i++ { // '<' and a proper prefix of <tool_call>, then nothing or a character that leaves it
		alts = append(alts, regexp.QuoteMeta(hermesOpen[:i])+`(?:[^`+regexp.QuoteMeta(hermesOpen[i:i+1])+`][\s\S]*)?`)
	}
	return &grammar.Spec{Kind: grammar.Regex, Pattern: `[` + trimmed + `]*(?:` + strings.Join(alts, "|") + `)`}, nil
}

// trimmed is what strings.TrimSpace takes from an answer's ends before calls reads it
// (unicode.IsSpace), as the inside of a character class.
const trimmed = `\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`

// calls reads the calls in a finished answer's text: the named function's arguments (a JSON
// object); a list of {name, arguments}; or, when the model chose, such a list, one such
// object, or Hermes' <tool_call> blocks holding them, naming only the request's tools (the
// named one, when one is named); one call at most without parallel calls. content is the
// answer's text before its calls (an external model's, which may write both). False: the
// answer is text.
func (p *toolPlan) calls(text string) (calls []chatToolFunction, content string, ok bool) {
	if p == nil || p.mode == toolsNone {
		return nil, text, false
	}
	if p.listed {
		before, list, found := strings.Cut(text, callSeparator)
		if !found {
			return nil, text, false
		}
		calls, ok := p.callList([]byte(list))
		if !ok {
			return nil, before + list, false
		}
		return calls, before, true
	}
	if p.mode == toolsNamed {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &obj) != nil || obj == nil { // null decodes, as no object
			return nil, text, false
		}
		return []chatToolFunction{{Name: p.named, Arguments: text}}, "", true
	}
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, hermesOpen) {
		var out []chatToolFunction
		for rest := t; rest != ""; rest = strings.TrimSpace(rest) {
			body, ok := strings.CutPrefix(rest, hermesOpen)
			if !ok {
				return nil, text, false
			}
			c, after, ok := p.hermesBlock(body)
			if !ok {
				return nil, text, false
			}
			out, rest = append(out, c), after
		}
		return p.kept(out, text)
	}
	if c, ok := p.oneCall([]byte(t)); ok {
		return []chatToolFunction{c}, "", true
	}
	calls, ok = p.callList([]byte(t))
	if !ok {
		return nil, text, false
	}
	return p.kept(calls, text)
}

// hermesBlock reads one call from body, the text after a block's opening tag, to the closing
// tag after it: the call ends where its JSON value does, so an argument's string may hold the
// tag itself, and a text of many tags is read once.
func (p *toolPlan) hermesBlock(body string) (c chatToolFunction, after string, ok bool) {
	dec := json.NewDecoder(strings.NewReader(body))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return chatToolFunction{}, "", false
	}
	after, ok = strings.CutPrefix(strings.TrimLeft(body[dec.InputOffset():], " \t\n\r"), hermesClose)
	if !ok {
		return chatToolFunction{}, "", false
	}
	c, ok = p.oneCall(raw)
	return c, after, ok
}

// callList reads a JSON list of calls.
func (p *toolPlan) callList(raw []byte) ([]chatToolFunction, bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 || len(list) > maxCalls {
		return nil, false
	}
	out := make([]chatToolFunction, 0, len(list))
	for _, r := range list {
		c, ok := p.oneCall(r)
		if !ok {
			return nil, false
		}
		out = append(out, c)
	}
	if !p.parallel {
		out = out[:1]
	}
	return out, true
}

func (p *toolPlan) kept(calls []chatToolFunction, text string) ([]chatToolFunction, string, bool) {
	if len(calls) == 0 || len(calls) > maxCalls {
		return nil, text, false
	}
	if !p.parallel {
		calls = calls[:1]
	}
	return calls, "", true
}

// Hermes' tags around a call, which several model families write.
const (
	hermesOpen  = "<tool_call>"
	hermesClose = "</tool_call>"
)

// oneCall reads {"name": ..., "arguments": {...}} ("parameters" too, as Llama writes it) of a
// tool the request has.
func (p *toolPlan) oneCall(raw []byte) (chatToolFunction, bool) {
	var c struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &c) != nil || json.Unmarshal(raw, &keys) != nil {
		return chatToolFunction{}, false
	}
	if _, args := keys["arguments"]; !args && keys["parameters"] == nil && len(keys) > 1 {
		return chatToolFunction{}, false // a tool described (its name and more), not called
	}
	if _, ok := p.params[c.Name]; !ok || (p.mode == toolsNamed && c.Name != p.named) {
		return chatToolFunction{}, false
	}
	args := c.Arguments
	if !present(args) {
		args = c.Parameters
	}
	if !present(args) {
		// A call of a tool with no arguments, written null or left out: its arguments are the
		// empty object, as an external model's empty ones are (a client parses them and calls
		// with them; "null" failed it).
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return chatToolFunction{}, false
	}
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		return chatToolFunction{}, false
	}
	return chatToolFunction{Name: c.Name, Arguments: compact.String()}, true
}

// mayBeCall reports whether an answer the model chose to write, as it stands, could still
// turn out to be a call: a stream holds its text back until it cannot.
func mayBeCall(text string) bool {
	t := strings.TrimLeftFunc(text, unicode.IsSpace) // as calls, through strings.TrimSpace
	if t == "" || strings.HasPrefix(t, hermesOpen) || strings.HasPrefix(hermesOpen, t) {
		return true
	}
	// A list of calls or one call, as JSON spells them: '[' then '{', or '{' then '"', with
	// JSON's whitespace between (pretty-printed JSON begins "[\n  {").
	var next byte
	switch t[0] {
	case '[':
		next = '{'
	case '{':
		next = '"'
	default:
		return false
	}
	rest := strings.TrimLeft(t[1:], " \t\n\r")
	return rest == "" || rest[0] == next
}

// chatToolCall is a call on the wire: whole in a message, or in pieces in stream deltas
// (Index and, on the first delta of a call, ID, Type and the name).
type chatToolCall struct {
	Index    *int             `json:"index,omitempty"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function chatToolFunction `json:"function"`
}

// chatToolFunction is a call's function: also what calls reads from an answer.
type chatToolFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// callID names call i of choice `choice` of a request: unique, and the same in a stream and
// a whole answer.
func callID(requestID string, choice, i int) string {
	return "call_" + requestID + "_" + strconv.Itoa(choice) + "_" + strconv.Itoa(i)
}

// wireCalls is calls as a message lists them; with indexed set, as one stream delta.
func wireCalls(calls []chatToolFunction, requestID string, choice int, indexed bool) []chatToolCall {
	out := make([]chatToolCall, len(calls))
	for i, c := range calls {
		out[i] = chatToolCall{ID: callID(requestID, choice, i), Type: "function",
			Function: c}
		if indexed {
			out[i].Index = &i
		}
	}
	return out
}

// chatToolMessage reads an assistant message's tool_calls, or a tool message's tool_call_id
// and name, into m. A non-empty msg is the validation error.
func chatToolMessage(raw chatMessage, m *chat.Message) string {
	if present(raw.ToolCalls) {
		if m.Role != "assistant" {
			return "only an assistant message may hold `tool_calls`"
		}
		var calls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function *struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		if json.Unmarshal(raw.ToolCalls, &calls) != nil || len(calls) == 0 {
			return "`tool_calls` must be a list of {id, type: function, function: {name, arguments}}"
		}
		for _, c := range calls {
			if c.Function == nil || c.Type != "function" || c.ID == "" {
				return "`tool_calls` must be a list of {id, type: function, function: {name, arguments}}"
			}
			m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
	}
	if m.Role == "tool" {
		if raw.ToolCallID == nil || *raw.ToolCallID == "" {
			return "a tool message needs the `tool_call_id` it answers"
		}
		m.ToolCallID = *raw.ToolCallID
	}
	if raw.Name != nil {
		m.Name = *raw.Name
	}
	return ""
}
