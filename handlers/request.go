package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// decodeStrict parses body into dst the way OpenMed's pydantic models do: unknown fields are
// an error, as is a body that is not one JSON object. Errors are field-level and quote no
// values, only field names.
func decodeStrict(body []byte, dst any) *apiError {
	if fe := readObject(body, dst, true); fe != nil {
		return validationError(*fe)
	}
	return nil
}

// readObject reads body into dst, the one reading of a JSON body on every route: valid UTF-8,
// one JSON object and nothing after it, each value of its field's type, and (strict) every
// key one of dst's fields. A failure names the field as the wire spells it ("body.max_tokens",
// never a Go type's name) and quotes nothing of the body: a key the client chose may be
// anything ("jane_doe"), so an unknown one is never named; the fields there are are listed
// instead.
func readObject(body []byte, dst any, strict bool) *FieldError {
	if !utf8.Valid(body) {
		return &FieldError{Field: "body", Message: "Request body is not valid UTF-8", Type: "unicode_error"}
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &FieldError{Field: "body", Message: "Input should be a valid JSON object", Type: "model_attributes_type"}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		fe := jsonFieldError(err, reflect.TypeOf(dst))
		if fe.Type == "extra_forbidden" {
			fe.Message += "; the fields are " + strings.Join(jsonFields(reflect.TypeOf(dst)), ", ")
		}
		return &fe
	}
	if dec.InputOffset() != int64(len(trimmed)) { // More would miss a stray "]" or "}"
		return &FieldError{Field: "body", Message: "JSON decode error: trailing data after the object", Type: "json_invalid"}
	}
	if strict {
		sc := keyScanner{b: trimmed}
		if path, t, ok := sc.value(reflect.TypeOf(dst)); !ok {
			slices.Reverse(path)
			return &FieldError{Field: strings.Join(append([]string{"body"}, path...), "."), Type: "extra_forbidden",
				Message: "Extra inputs are not permitted; the fields are " + strings.Join(jsonFields(t), ", ")}
		}
	}
	return nil
}

// keyScanner reads a JSON text that encoding/json has already decoded, for the one thing that
// decoder does not check: that every key is spelt as its field is. encoding/json takes a key
// whatever its case ("MODEL" sets model, and "ſ" is an "s"), where OpenMed's pydantic models
// and OpenAI's API refuse it; a client's misspelt key must not set a field silently.
type keyScanner struct {
	b []byte
	i int
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// value reads one value that decodes into t; false names the object holding a key that no
// field of its struct type, returned, spells exactly: its wire path from the value, innermost
// first (made only on the way out of a failure).
func (s *keyScanner) value(t reflect.Type) ([]string, reflect.Type, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s.space()
	if !holdsKeys(t) {
		s.skip() // a list of 250,000 strings is passed, not walked
		return nil, nil, true
	}
	switch {
	case s.b[s.i] == '{' && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map):
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct {
			fields = structFields(t)
		}
		s.i++
		for s.space(); s.b[s.i] != '}'; s.space() {
			if s.b[s.i] == ',' {
				s.i++
				s.space()
			}
			key := s.key()
			inner := t
			if t.Kind() == reflect.Struct {
				var ok bool
				if inner, ok = fields[key]; !ok {
					return nil, t, false
				}
			} else {
				inner = t.Elem()
			}
			s.space()
			s.i++ // the colon
			if p, bad, ok := s.value(inner); !ok {
				return append(p, key), bad, false
			}
		}
		s.i++
	case s.b[s.i] == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		s.i++
		for n := 0; ; n++ {
			s.space()
			if s.b[s.i] == ']' {
				break
			}
			if s.b[s.i] == ',' {
				s.i++
			}
			if p, bad, ok := s.value(t.Elem()); !ok {
				return append(p, strconv.Itoa(n)), bad, false
			}
		}
		s.i++
	default:
		s.skip()
	}
	return nil, nil, true
}

func (s *keyScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// key reads a string, decoded.
func (s *keyScanner) key() string {
	start := s.i
	s.str()
	raw := s.b[start+1 : s.i-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var k string
	_ = json.Unmarshal(s.b[start:s.i], &k)
	return k
}

// str passes a string, its quotes included.
func (s *keyScanner) str() {
	j := s.i + 1
	for {
		j += bytes.IndexByte(s.b[j:], '"')
		escapes := 0
		for k := j - 1; s.b[k] == '\\'; k-- {
			escapes++
		}
		j++
		if escapes%2 == 0 {
			s.i = j
			return
		}
	}
}

// skip passes one value of any kind.
func (s *keyScanner) skip() {
	s.space()
	switch s.b[s.i] {
	case '"':
		s.str()
	case '{', '[':
		for depth := 0; ; {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return
			}
		}
	default:
		for s.i < len(s.b) && !strings.ContainsRune(" \t\n\r,]}", rune(s.b[s.i])) {
			s.i++
		}
	}
}

// holdsKeys reports whether a value decoded into t may hold a key to check: a struct's, at
// any depth of pointers, lists and maps, that encoding/json decodes itself (not one behind an
// interface or an Unmarshaler, which reads its own keys).
func holdsKeys(t reflect.Type) bool {
	if t == nil {
		return false
	}
	if v, ok := keyHolders.Load(t); ok {
		return v.(bool)
	}
	var holds bool
	switch {
	case t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType):
	case t.Kind() == reflect.Struct:
		holds = true
	case t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map:
		holds = holdsKeys(t.Elem())
	}
	keyHolders.Store(t, holds)
	return holds
}

// keyHolders caches holdsKeys by type.
var keyHolders sync.Map

// structFields are the JSON names of a struct's fields (wireFields') and their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := structFieldsOf.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	wireFields(t, func(name string, ft reflect.Type) { m[name] = ft })
	structFieldsOf.Store(t, m)
	return m
}

// structFieldsOf caches structFields by type: request types are few and fixed.
var structFieldsOf sync.Map

// literals lists the values a field takes as pydantic's literal_error words them: "'a', 'b'
// or 'c'". The list is the package's own (deid.Methods), so a new value is named here without
// an edit.
func literals[T ~string](values []T) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == len(values)-1 && i > 0:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString("'" + string(v) + "'")
	}
	return b.String()
}

// fieldMessage is a field error's message with the field it is about, for wire formats that
// have only a message.
func fieldMessage(fe *FieldError) string {
	if field := strings.TrimPrefix(fe.Field, "body."); field != fe.Field {
		return "`" + field + "`: " + fe.Message
	}
	return fe.Message
}

// jsonFieldError is a decoding error as a field error about the field of t it concerns.
func jsonFieldError(err error, t reflect.Type) FieldError {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		kind := jsonKind(typeErr.Type.Kind().String())
		return FieldError{Field: "body." + wirePath(typeErr.Field, t), Message: "Input should be a valid " + kind, Type: kind + "_type"}
	case errors.As(err, &syntaxErr):
		return FieldError{Field: "body", Message: fmt.Sprintf("JSON decode error at byte %d", syntaxErr.Offset), Type: "json_invalid"}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// The key is the client's own text, which may be anything ("jane_doe"): it is never
		// named. readObject lists the fields there are instead.
		return FieldError{Field: "body", Message: "Extra inputs are not permitted", Type: "extra_forbidden"}
	default:
		return FieldError{Field: "body", Message: "JSON decode error", Type: "json_invalid"}
	}
}

// wirePath is encoding/json's path to a field without the Go names of the embedded structs it
// passes through ("openAISampling.max_tokens" is "max_tokens" on the wire).
func wirePath(path string, t reflect.Type) string {
	embedded, seen := map[string]bool{}, map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				embedded[f.Type.Name()] = true
			}
			walk(f.Type)
		}
	}
	walk(t)
	var kept []string
	for _, part := range strings.Split(path, ".") {
		if !embedded[part] {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, ".")
}

// jsonFields are the JSON names of a struct's fields (wireFields'), in their order: what a
// request body of that type may hold.
func jsonFields(t reflect.Type) []string {
	var out []string
	wireFields(t, func(name string, _ reflect.Type) { out = append(out, name) })
	return out
}

// wireFields calls fn with the JSON name and type of each field of a struct (through pointers
// and embedded structs), in their order, as encoding/json names them; nothing for another kind.
func wireFields(t reflect.Type, fn func(name string, ft reflect.Type)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || (!f.IsExported() && !f.Anonymous):
		case f.Anonymous && name == "":
			wireFields(f.Type, fn)
		case name == "":
			fn(f.Name, f.Type)
		default:
			fn(name, f.Type)
		}
	}
}

// jsonKind names a Go kind the way pydantic names the type a client should have sent.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "float64", "float32":
		return "number"
	case "int", "int64":
		return "integer"
	default:
		return kind
	}
}

// checkText applies the text rules of OpenMed's gateway: required, stripped, not blank, and
// within the character and byte limits. It returns the stripped text.
func checkText(text *string, lim Limits) (string, *FieldError) {
	if text == nil {
		return "", &FieldError{Field: "body.text", Message: "Field required", Type: "missing"}
	}
	t := strings.TrimFunc(*text, isPythonSpace)
	if t == "" {
		return "", &FieldError{Field: "body.text", Message: "Value error, Input text cannot be empty.", Type: "value_error"}
	}
	if lim.MaxTextBytes > 0 && len(t) > lim.MaxTextBytes {
		return "", &FieldError{Field: "body.text", Type: "value_error",
			Message: fmt.Sprintf("Value error, Input text exceeds the %d-byte limit.", lim.MaxTextBytes)}
	}
	if n := utf8.RuneCountInString(t); lim.MaxTextChars > 0 && n > lim.MaxTextChars {
		return "", &FieldError{Field: "body.text", Type: "value_error",
			Message: fmt.Sprintf("Value error, Input text too long; the limit is %d characters.", lim.MaxTextChars)}
	}
	return t, nil
}

// isPythonSpace is Python's str.isspace, which OpenMed's strip uses: Unicode's white space and
// the separators U+001C to U+001F, which Go's unicode.IsSpace leaves (offsets into a text that
// begins with one would be off by it).
func isPythonSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// checkThreshold enforces 0 <= v <= 1.
func checkThreshold(v float64) *FieldError {
	switch {
	case v < 0:
		return &FieldError{Field: "body.confidence_threshold", Message: "Input should be greater than or equal to 0", Type: "greater_than_equal"}
	case v > 1:
		return &FieldError{Field: "body.confidence_threshold", Message: "Input should be less than or equal to 1", Type: "less_than_equal"}
	}
	return nil
}

// ParseKeepAlive reads a keep-alive setting (SLUICE_KEEP_ALIVE) with the grammar of a
// request's keep_alive string: seconds, "1h30m", or OpenMed's words for ever.
func ParseKeepAlive(s string) (d time.Duration, forever bool, err error) {
	raw, _ := json.Marshal(s)
	d, forever, ferr := parseKeepAlive(raw)
	if ferr != nil {
		return 0, false, errors.New(strings.TrimPrefix(ferr.Message, "Value error, "))
	}
	return d, forever, nil
}

// checkKeepAlive validates keep_alive with OpenMed's grammar (see parseKeepAlive) without
// acting on it: Sluice keeps its models resident for the life of the process.
func checkKeepAlive(raw json.RawMessage) *FieldError {
	_, _, err := parseKeepAlive(raw)
	return err
}

// keepAliveUnits are the units of a keep_alive duration string.
var keepAliveUnits = map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}

// keepAlivePart is one number and unit of a duration string ("1h30m" has two).
var keepAlivePart = regexp.MustCompile(`(?i)^(\d+(?:\.\d+)?)(ms|s|m|h|d)`)

// parseKeepAlive reads keep_alive as OpenMed does: absent or null is none (set false); a
// number of seconds >= 0, a numeric string, or number-and-unit parts ("30s", "1h30m"; ms, s,
// m, h, d, any case) is a duration; "", off, none, never, forever, infinite and infinity keep
// the model for ever (forever true). Anything else is OpenMed's 422.
func parseKeepAlive(raw json.RawMessage) (d time.Duration, forever bool, ferr *FieldError) {
	bad := func(msg string) (time.Duration, bool, *FieldError) {
		return 0, false, &FieldError{Field: "body.keep_alive", Message: "Value error, keep_alive " + msg, Type: "value_error"}
	}
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || string(v) == "null" {
		return 0, false, nil
	}
	var secs float64
	switch {
	case string(v) == "true" || string(v) == "false":
		return bad("must be a duration, not a boolean")
	case v[0] == '"':
		var str string
		if json.Unmarshal(v, &str) != nil {
			return bad("must be a duration string or number of seconds")
		}
		str = strings.ToLower(strings.TrimSpace(str))
		switch str {
		case "", "off", "none", "never", "forever", "infinite", "infinity":
			return 0, true, nil
		}
		// Python's float(), which OpenMed's is, reads what Go's ParseFloat reads (underscores
		// between digits, inf, nan) but for hexadecimal ("0x1p4"): that is no number there.
		if f, err := strconv.ParseFloat(str, 64); err == nil && !strings.Contains(str, "x") {
			secs = f
			break
		}
		for rest := str; rest != ""; {
			m := keepAlivePart.FindStringSubmatch(rest)
			if m == nil {
				return bad("must use duration units like '30s', '5m', or '1h30m'")
			}
			n, _ := strconv.ParseFloat(m[1], 64)
			secs += n * keepAliveUnits[m[2]].Seconds()
			rest = rest[len(m[0]):]
		}
	case json.Unmarshal(v, &secs) != nil:
		return bad("must be a duration string or number of seconds")
	}
	if secs < 0 || math.IsNaN(secs) {
		return bad("must be greater than or equal to 0")
	}
	if secs >= math.MaxInt64/float64(time.Second) {
		return 0, true, nil // longer than a Duration holds: longer than the process lives
	}
	return time.Duration(secs * float64(time.Second)), false, nil
}
