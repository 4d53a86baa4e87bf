package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// UnsupportedError says a constraint uses something this package cannot enforce; Feature
// names it (a schema keyword, a format, a regular expression construct), never a value.
type UnsupportedError struct{ Feature string }

func (e *UnsupportedError) Error() string { return "grammar: " + e.Feature + " is not supported" }

// InvalidError says a constraint is not what it claims to be (a schema that is not JSON, a
// regular expression that does not parse). Reason names the fault, not the text.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "grammar: " + e.Reason }

// The pieces of JSON, without whitespace: an answer is written compactly.
const (
	hex         = `[0-9a-fA-F]`
	jsonChar    = `(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?:[0-9a-cA-CeEfF]` + hex + hex + hex + `|[dD][0-7]` + hex + hex + `))`
	jsonString  = `"` + jsonChar + `*"`
	jsonInt     = `-?(?:0|[1-9][0-9]{0,15})`
	fraction    = `(?:\.[0-9]{1,15})?`
	jsonNumber  = jsonInt + fraction + `(?:[eE][+-]?[0-9]{1,2})?`
	jsonScalars = jsonString + `|` + jsonNumber + `|true|false|null`
)

// Numbers are written with at most 16 integer digits, 15 fraction digits and a two-digit
// exponent: every such text is JSON that float64 reads exactly enough, and a model that would
// go on writing digits is made to stop.

// anyDepth bounds the nesting of a value the schema leaves open (json_object, an object with
// no properties that allows others, a schema with no type): a regular language cannot nest
// without bound, and each level multiplies the DFA by about four.
const anyDepth = 3

// maxAnyKey bounds the keys of an object the schema leaves open: names, not prose, and a
// model that would go on writing one is made to stop.
const maxAnyKey = 64

// maxRepeat is regexp/syntax's bound on a counted repetition.
const maxRepeat = 1000

// maxSchemaRegex bounds the regular expression a schema becomes, and so its compile and DFA.
// Every piece is held to it as it is joined, not only the whole when done: a small schema
// (a list of many `{}`, an array of a thousand items) would otherwise build gigabytes first.
const maxSchemaRegex = 256 << 10

// errTooLarge refuses a schema whose regular expression would pass maxSchemaRegex.
var errTooLarge = &UnsupportedError{Feature: "a schema this large"}

// maxSchemaWork bounds a schema's walk: the bytes it writes in all, each piece counted every
// time it is handed up to the one that holds it, and nodeWork for each schema it writes.
// maxSchemaRegex bounds each piece, not their sum, and nesting copies a piece once a level (a
// piece near the bound nested sixty deep is written sixty times); most pieces are a few bytes,
// and a schema costs more to write than its bytes to copy (about 1.5 µs). Each definition is
// written once and each type of a list once, so a walk is about its schema's size; this
// bounds it where it is not, at about 65,000 schemas or 16 copies of the largest regular
// expression (some 50 ms).
const (
	maxSchemaWork = 16 * maxSchemaRegex
	nodeWork      = 64
)

// errTooComplex refuses a schema whose walk would pass maxSchemaWork.
var errTooComplex = &UnsupportedError{Feature: "a schema this complex"}

// errTooDeep refuses a schema nested past maxSchemaDepth (or, as decoded, maxJSONDepth).
var errTooDeep = &UnsupportedError{Feature: "a schema nested this deep"}

// anyJSON and anyJSONObject are anyValue and anyObject at anyDepth, written once: every open
// value of every schema is one of them.
var anyJSON, anyJSONObject = anyValue(anyDepth), anyObject(anyDepth)

// joinAlts writes alternatives as one group, or refuses them together past maxSchemaRegex.
func joinAlts(alts []string) (string, error) {
	n := 4 + len(alts)
	for _, a := range alts {
		if n += len(a); n > maxSchemaRegex {
			return "", errTooLarge
		}
	}
	// Sorted (the language is the same in any order): the parser merges the prefixes that
	// neighbours share, so an enum of thousands of values in the client's order does not hold
	// each open at once after its first character.
	sorted := slices.Compact(slices.Sorted(slices.Values(alts)))
	return `(?:` + strings.Join(sorted, `|`) + `)`, nil
}

// anyValue is any JSON value nested at most depth levels.
func anyValue(depth int) string {
	if depth == 0 {
		return `(?:` + jsonScalars + `)`
	}
	v := anyValue(depth - 1)
	return `(?:` + jsonScalars + `|` + anyObject(depth) + `|\[(?:` + v + `(?:,` + v + `)*)?\])`
}

// anyObject is any JSON object whose values nest at most depth-1 levels.
func anyObject(depth int) string {
	v := anyValue(depth - 1)
	member := `"` + jsonChar + `{0,` + strconv.Itoa(maxAnyKey) + `}":` + v
	return `\{(?:` + member + `(?:,` + member + `)*)?\}`
}

// schemaKeywords are what a schema may say. Annotations are read and ignored; everything else
// is enforced by the regular expression.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"minItems": true, "maxItems": true, "enum": true, "const": true, "minLength": true, "maxLength": true,
	"pattern": true, "format": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "anyOf": true, "oneOf": true, "$ref": true, "$defs": true, "definitions": true,
	// annotations
	"title": true, "description": true, "examples": true, "default": true, "$schema": true, "$id": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "strict": true,
}

// formats are the string formats written as a pattern; another is refused by name.
var formats = map[string]string{
	"date":      date,
	"time":      `(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])`,
	"date-time": date + `T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])`,
	"uuid":      `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
}

// date is a calendar date: each month's own days, 29 February in leap years only.
const date = `(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))` +
	`|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)`

// knownFormats are JSON Schema's formats that are not written as a pattern here: a refusal
// names one of these, any other as unknown (a format is the request's own text).
var knownFormats = []string{"email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6", "uri",
	"uri-reference", "iri", "iri-reference", "uri-template", "json-pointer", "relative-json-pointer",
	"regex", "duration"}

// schemaWriter turns one schema into a regular expression; root resolves $ref.
type schemaWriter struct {
	root     map[string]any
	visiting []string              // the $refs being written, to refuse a recursive one
	written  map[string]definition // the definitions written so far, by their $ref
	deepest  int                   // the deepest level written so far, for a definition's height
	work     int                   // the walk's work so far (maxSchemaWork)
}

// definition is a definition as written once, for every $ref to it: a schema of four $refs to
// the next definition, each an anyOf of four to the one after, is otherwise written four times
// more a level (its copies are the same, so the result stays small, and only the work grows).
// What the writing depends on besides the definition is its depth, which refuses a level past
// maxSchemaDepth, and the $refs being written, which refuse one of them reached again: a
// definition that reached one of those would have reached itself, and been refused the first
// time. So a definition that was written is the same regular expression at every $ref, or
// errTooDeep where height levels below the $ref pass maxSchemaDepth.
type definition struct {
	re     string
	height int
}

// SchemaRegex is the regular expression of the compact JSON texts a schema's writer emits:
// every declared property, in the order declared, and nothing else; each text it matches
// validates against the schema.
func SchemaRegex(schema []byte) (string, error) {
	return new(schemaWriter).regex(schema)
}

// regex is SchemaRegex, its work counted in w.
func (w *schemaWriter) regex(schema []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	root, err := decodeOrdered(dec, 0)
	if err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", &InvalidError{Reason: "the schema is not one JSON value"}
	}
	if b, ok := root.(bool); ok && b {
		return anyJSON, nil
	}
	m, ok := root.(map[string]any)
	if !ok {
		return "", &InvalidError{Reason: "the schema is not a JSON object"}
	}
	w.root, w.written = m, map[string]definition{}
	re, err := w.value(m, 0)
	if err != nil {
		return "", err
	}
	if len(re) > maxSchemaRegex {
		return "", errTooLarge
	}
	return re, nil
}

// maxSchemaDepth bounds how deep a schema's own nesting is followed.
const maxSchemaDepth = 64

func (w *schemaWriter) value(s map[string]any, depth int) (string, error) {
	if depth > maxSchemaDepth {
		return "", errTooDeep
	}
	w.deepest = max(w.deepest, depth)
	for k := range s {
		if k != orderKey && !schemaKeywords[k] {
			return "", &UnsupportedError{Feature: keywordName(k)}
		}
	}
	// A keyword that decides the value alone may stand beside annotations (and `type`, for
	// enum and const) only: the others would be constraints it does not see.
	for _, key := range []string{"$ref", "const", "enum", "anyOf", "oneOf"} {
		if _, ok := s[key]; !ok {
			continue
		}
		for k := range s {
			if k != key && k != orderKey && !annotations[k] && !(k == "type" && (key == "const" || key == "enum")) {
				return "", &UnsupportedError{Feature: "`" + k + "` beside `" + key + "`"}
			}
		}
	}
	if ref, ok := s["$ref"]; ok {
		return w.ref(ref, depth)
	}
	if c, ok := s["const"]; ok {
		if !ofType(s)(c) {
			return "", &InvalidError{Reason: "`const` is not of the schema's `type`"}
		}
		return literal(c)
	}
	if e, ok := s["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return "", &InvalidError{Reason: "`enum` must be a non-empty array"}
		}
		alts := make([]string, 0, len(list))
		keep := ofType(s)
		for _, v := range list {
			if keep(v) {
				re, _ := literal(v)
				alts = append(alts, re)
			}
		}
		if len(alts) == 0 {
			return "", &InvalidError{Reason: "no `enum` value is of the schema's `type`"}
		}
		return joinAlts(alts)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		a, ok := s[key]
		if !ok {
			continue
		}
		list, ok := a.([]any)
		if !ok || len(list) == 0 {
			return "", &InvalidError{Reason: "`" + key + "` must be a non-empty array of schemas"}
		}
		if key == "oneOf" && !w.disjoint(list) {
			return "", &UnsupportedError{Feature: "`oneOf` whose branches are not of distinct types"}
		}
		alts := make([]string, 0, len(list))
		size := 0
		for _, sub := range list {
			re, err := w.sub(sub, key, depth)
			if err != nil {
				return "", err
			}
			if size += len(re); size > maxSchemaRegex {
				return "", errTooLarge
			}
			alts = append(alts, re)
		}
		return joinAlts(alts)
	}
	types, err := schemaTypes(s)
	if err != nil {
		return "", err
	}
	if types == nil {
		return anyJSON, nil
	}
	alts := make([]string, 0, len(types))
	size := 0
	for _, t := range types {
		re, err := w.typed(s, t, depth)
		if err != nil {
			return "", err
		}
		if size += len(re); size > maxSchemaRegex {
			return "", errTooLarge
		}
		alts = append(alts, re)
	}
	return joinAlts(alts)
}

// annotations are the keywords that constrain nothing.
var annotations = map[string]bool{
	"title": true, "description": true, "examples": true, "default": true, "$schema": true, "$id": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "strict": true,
	"$defs": true, "definitions": true,
}

// typeKeywords are the keywords that apply to one JSON type only: a schema without `type`
// that uses them is read as of that type.
var typeKeywords = map[string]string{
	"properties": "object", "required": "object", "additionalProperties": "object",
	"items": "array", "minItems": "array", "maxItems": "array",
	"minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number", "exclusiveMaximum": "number",
}

// jsonTypes are the names `type` may hold.
var jsonTypes = []string{"string", "integer", "number", "boolean", "null", "array", "object"}

// errNoSuchType refuses a `type` that names none of jsonTypes.
var errNoSuchType = &InvalidError{Reason: "`type` names no JSON type"}

// schemaTypes is the schema's `type` as a list, each type once; without one, the type its
// keywords imply, or nil (any value) when they imply none.
func schemaTypes(s map[string]any) ([]string, error) {
	bad := &InvalidError{Reason: "`type` must be a string or an array of strings"}
	switch t := s["type"].(type) {
	case string:
		if !slices.Contains(jsonTypes, t) {
			return nil, errNoSuchType
		}
		return []string{t}, nil
	case []any:
		if len(t) == 0 {
			return nil, &InvalidError{Reason: "`type` is an empty array"}
		}
		var out []string
		for _, x := range t {
			name, ok := x.(string)
			if !ok {
				return nil, bad
			}
			if !slices.Contains(jsonTypes, name) {
				return nil, errNoSuchType
			}
			// A type named twice is written once: each is the whole schema again, so a
			// list of four objects nested twelve deep was written 4^12 times.
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		return out, nil
	case nil:
		if _, ok := s["type"]; ok {
			return nil, bad
		}
	default:
		return nil, bad
	}
	implied := ""
	for k := range s {
		t, ok := typeKeywords[k]
		switch {
		case !ok:
		case implied != "" && implied != t:
			return nil, &UnsupportedError{Feature: "keywords of different types without `type`"}
		default:
			implied = t
		}
	}
	if implied == "" {
		return nil, nil
	}
	return []string{implied}, nil
}

// jsonType is the JSON type of a decoded value ("integer" for a whole number).
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if integral(string(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

// integral says whether a JSON number has no fractional part, as JSON Schema counts an integer
// (1.0, 1e2 and 2.50e1 are), read from its spelling: a value parsed to an int64 refused those,
// and a float would round, while an exponent of a million digits must not be expanded.
func integral(n string) bool {
	mant, exp := strings.TrimPrefix(n, "-"), 0
	hugeExp := 0 // the exponent's sign, where it does not fit an int
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		e, err := strconv.Atoi(mant[i+1:])
		if err != nil {
			hugeExp = 1
			if strings.HasPrefix(mant[i+1:], "-") {
				hugeExp = -1
			}
		}
		mant, exp = mant[:i], e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	frac = strings.TrimRight(frac, "0")
	digits := strings.TrimLeft(whole+frac, "0")
	switch {
	case digits == "": // zero, however written
		return true
	case hugeExp != 0:
		return hugeExp > 0
	}
	shift := exp - len(frac) // the value is digits times ten to the shift
	return shift >= 0 || len(digits)-len(strings.TrimRight(digits, "0")) >= -shift
}

// ofType reports whether a value is of the schema's `type` (any, without one; none, where
// `type` is not one). The list is read once for all of an enum's values: it may be as long.
func ofType(s map[string]any) func(v any) bool {
	if _, ok := s["type"]; !ok {
		return func(any) bool { return true }
	}
	types, err := schemaTypes(map[string]any{"type": s["type"]})
	return func(v any) bool {
		t := jsonType(v)
		return err == nil && (slices.Contains(types, t) || t == "integer" && slices.Contains(types, "number"))
	}
}

// disjoint reports whether oneOf's branches can be told apart by JSON type alone, so that a
// value of one branch validates against no other: each branch's types known (from `type`,
// `const`, `enum` or a local `$ref` to one), integer and number counted as one.
func (w *schemaWriter) disjoint(branches []any) bool {
	seen := map[string]bool{}
	for _, b := range branches {
		types := w.branchTypes(b, 0)
		if types == nil {
			return false
		}
		for t := range types {
			if seen[t] {
				return false
			}
		}
		for t := range types {
			seen[t] = true
		}
	}
	return true
}

func (w *schemaWriter) branchTypes(b any, depth int) map[string]bool {
	s, ok := b.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return nil
	}
	norm := func(t string) string {
		if t == "integer" {
			return "number"
		}
		return t
	}
	out := map[string]bool{}
	switch {
	case s["$ref"] != nil:
		ref, _ := s["$ref"].(string)
		for _, defs := range []string{"$defs", "definitions"} {
			if name, ok := strings.CutPrefix(ref, "#/"+defs+"/"); ok {
				table, _ := w.root[defs].(map[string]any)
				return w.branchTypes(table[name], depth+1)
			}
		}
		return nil
	case s["const"] != nil || s["enum"] != nil:
		values, _ := s["enum"].([]any)
		if c, ok := s["const"]; ok {
			values = []any{c}
		}
		for _, v := range values {
			out[norm(jsonType(v))] = true
		}
	default:
		types, err := schemaTypes(s)
		if err != nil || types == nil {
			return nil
		}
		for _, t := range types {
			out[norm(t)] = true
		}
	}
	return out
}

// knownKeywords are JSON Schema's keywords that this package does not enforce: an answer
// names one of these, and any other key as an unknown keyword (a key is the request's own
// text).
var knownKeywords = []string{"allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
	"dependencies", "patternProperties", "propertyNames", "minProperties", "maxProperties", "unevaluatedProperties",
	"unevaluatedItems", "prefixItems", "contains", "minContains", "maxContains", "uniqueItems", "multipleOf",
	"contentEncoding", "contentMediaType", "contentSchema", "$anchor", "$dynamicRef", "$dynamicAnchor",
	"$recursiveRef", "$recursiveAnchor", "$vocabulary", "additionalItems", "discriminator", "nullable"}

func keywordName(k string) string {
	for _, known := range knownKeywords {
		if k == known {
			return "the keyword `" + k + "`"
		}
	}
	return "an unknown keyword"
}

func (w *schemaWriter) sub(v any, where string, depth int) (string, error) {
	switch x := v.(type) {
	case map[string]any:
		re, err := w.value(x, depth+1)
		if err != nil {
			return "", err
		}
		if len(re) > maxSchemaRegex {
			// Checked at every level: a part written twice (an array's item, a definition
			// used twice) would otherwise double the work at each.
			return "", errTooLarge
		}
		if w.work += len(re) + nodeWork; w.work > maxSchemaWork {
			return "", errTooComplex
		}
		return re, nil
	case bool:
		if x {
			return anyJSON, nil
		}
		return "", &UnsupportedError{Feature: "a `false` schema under `" + where + "`"}
	}
	return "", &InvalidError{Reason: "`" + where + "` holds something that is not a schema"}
}

// ref writes the schema a local $ref names ("#/$defs/x", "#/definitions/x") in its place.
func (w *schemaWriter) ref(v any, depth int) (string, error) {
	ref, _ := v.(string)
	var defs string
	var name string
	switch {
	case strings.HasPrefix(ref, "#/$defs/"):
		defs, name = "$defs", strings.TrimPrefix(ref, "#/$defs/")
	case strings.HasPrefix(ref, "#/definitions/"):
		defs, name = "definitions", strings.TrimPrefix(ref, "#/definitions/")
	case ref == "#":
		return "", &UnsupportedError{Feature: "a recursive `$ref`"}
	default:
		return "", &UnsupportedError{Feature: "a `$ref` outside the schema's own $defs"}
	}
	if slices.Contains(w.visiting, ref) {
		return "", &UnsupportedError{Feature: "a recursive `$ref`"}
	}
	if done, ok := w.written[ref]; ok {
		if depth+done.height > maxSchemaDepth {
			return "", errTooDeep
		}
		w.deepest = max(w.deepest, depth+done.height)
		return done.re, nil
	}
	table, _ := w.root[defs].(map[string]any)
	target, ok := table[name]
	if !ok {
		return "", &InvalidError{Reason: "a `$ref` names a definition the schema does not have"}
	}
	w.visiting = append(w.visiting, ref)
	defer func() { w.visiting = w.visiting[:len(w.visiting)-1] }()
	outer := w.deepest
	w.deepest = depth
	re, err := w.sub(target, "$ref", depth)
	if err != nil {
		return "", err
	}
	w.written[ref] = definition{re: re, height: w.deepest - depth}
	w.deepest = max(outer, w.deepest)
	return re, nil
}

func (w *schemaWriter) typed(s map[string]any, t string, depth int) (string, error) {
	switch t {
	case "string":
		return w.str(s)
	case "integer":
		return integerRegex(s)
	case "number":
		return numberRegex(s)
	case "boolean":
		return `(?:true|false)`, nil
	case "null":
		return `null`, nil
	case "array":
		return w.array(s, depth)
	case "object":
		return w.object(s, depth)
	}
	return "", errNoSuchType
}

func (w *schemaWriter) object(s map[string]any, depth int) (string, error) {
	props, _ := s["properties"].(map[string]any)
	if _, ok := s["properties"]; ok && props == nil {
		return "", &InvalidError{Reason: "`properties` must be an object"}
	}
	if req, ok := s["required"]; ok {
		list, ok := req.([]any)
		if !ok {
			return "", &InvalidError{Reason: "`required` must be an array of names"}
		}
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				return "", &InvalidError{Reason: "`required` must be an array of names"}
			}
			if _, ok := props[name]; !ok {
				return "", &UnsupportedError{Feature: "a required property that `properties` does not describe"}
			}
		}
	}
	order, _ := props[orderKey].([]string)
	if len(order) == 0 {
		if extra, ok := s["additionalProperties"].(map[string]any); ok {
			// Any names, each value of that schema.
			val, err := w.sub(extra, "additionalProperties", depth)
			if err != nil {
				return "", err
			}
			member := `"` + jsonChar + `{0,` + strconv.Itoa(maxAnyKey) + `}":` + val
			return `\{(?:` + member + `(?:,` + member + `)*)?\}`, nil
		}
		if additionalAllowed(s) {
			return anyJSONObject, nil
		}
		return `\{\}`, nil
	}
	// Every property is written, in the schema's order: a property that is not required may
	// be present, so the object validates, and a fixed order keeps the language small.
	var b strings.Builder
	b.WriteString(`\{`)
	for i, name := range order {
		val, err := w.sub(props[name], "properties", depth)
		if err != nil {
			return "", err
		}
		key, _ := json.Marshal(name)
		if i > 0 {
			b.WriteString(`,`)
		}
		b.WriteString(regexp.QuoteMeta(string(key)))
		b.WriteString(`:`)
		b.WriteString(val)
		if b.Len() > maxSchemaRegex {
			return "", errTooLarge
		}
	}
	b.WriteString(`\}`)
	return b.String(), nil
}

// additionalAllowed is whether an object may hold properties it does not declare.
func additionalAllowed(s map[string]any) bool {
	switch a := s["additionalProperties"].(type) {
	case bool:
		return a
	case map[string]any:
		return true
	}
	return true
}

// orderKey is where decodeOrdered keeps an object's keys in the order written, which Go's
// maps forget; a schema's own key of that name is refused.
const orderKey = "\x00order"

// maxJSONDepth bounds the nesting decodeOrdered follows.
const maxJSONDepth = 128

// decodeOrdered reads one JSON value as encoding/json would into any (numbers as
// json.Number), each object with its keys' order under orderKey.
func decodeOrdered(dec *json.Decoder, depth int) (any, error) {
	bad := &InvalidError{Reason: "the schema is not one JSON value"}
	if depth > maxJSONDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, bad
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		m := map[string]any{}
		var order []string
		for dec.More() {
			kt, err := dec.Token()
			key, ok := kt.(string)
			if err != nil || !ok || key == orderKey {
				return nil, bad
			}
			v, err := decodeOrdered(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if _, seen := m[key]; !seen {
				order = append(order, key)
			}
			m[key] = v
		}
		m[orderKey] = order
		_, err = dec.Token()
		return m, err
	case '[':
		list := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err = dec.Token()
		return list, err
	}
	return nil, bad
}

// appendJSON writes v (as decodeOrdered made it) as compact JSON, objects in their order.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		b = append(b, '{')
		order, _ := x[orderKey].([]string)
		for i, k := range order {
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k)
			b = append(append(b, kb...), ':')
			b = appendJSON(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case json.Number:
		return append(b, x...)
	}
	out, _ := json.Marshal(v) // a string, a bool or null
	return append(b, out...)
}

func (w *schemaWriter) array(s map[string]any, depth int) (string, error) {
	item := anyJSON
	if it, ok := s["items"]; ok {
		re, err := w.sub(it, "items", depth)
		if err != nil {
			return "", err
		}
		item = re
	}
	lo, hi, err := bounds(s, "minItems", "maxItems")
	if err != nil {
		return "", err
	}
	if len(item)*itemCopies(lo, hi) > maxSchemaRegex {
		return "", errTooLarge
	}
	return `\[` + items(item, lo, hi) + `\]`, nil
}

// items is lo to hi (-1: any number of) comma-separated items. A bounded list is written out,
// each further item optional inside the one before, rather than counted: regexp/syntax
// refuses counts nested in counts whose product passes 1000, and an item's own (a string's
// length, a number's digits) would multiply with the list's.
func items(item string, lo, hi int) string {
	if hi == 0 {
		return ``
	}
	outright := max(lo, 1)
	var b strings.Builder
	b.WriteString(item)
	for range outright - 1 {
		b.WriteString(`,` + item)
	}
	switch more := hi - outright; {
	case hi < 0:
		b.WriteString(`(?:,` + item + `)*`)
	case more > maxWrittenOut:
		b.WriteString(`(?:,` + item + `){0,` + strconv.Itoa(more) + `}`)
	default:
		for range more {
			b.WriteString(`(?:,` + item)
		}
		b.WriteString(strings.Repeat(`)?`, more))
	}
	if lo == 0 {
		return `(?:` + b.String() + `)?`
	}
	return b.String()
}

// itemCopies is how many times items writes its item out.
func itemCopies(lo, hi int) int {
	if hi == 0 {
		return 0
	}
	outright := max(lo, 1)
	switch more := hi - outright; {
	case hi < 0, more > maxWrittenOut:
		return outright + 1
	default:
		return outright + more
	}
}

// maxWrittenOut bounds how many optional items are nested when a list is written out (the
// parser's own bound on nesting is 1000 levels, each item taking a few).
const maxWrittenOut = 200

// bounds reads a pair of count keywords (-1: no upper bound).
func bounds(s map[string]any, minKey, maxKey string) (lo, hi int, err error) {
	lo, hi = 0, -1
	for _, k := range []struct {
		key string
		dst *int
	}{{minKey, &lo}, {maxKey, &hi}} {
		v, ok := s[k.key]
		if !ok {
			continue
		}
		n, ok := v.(json.Number)
		i, perr := strconv.Atoi(string(n))
		if !ok || perr != nil || i < 0 {
			return 0, 0, &InvalidError{Reason: "`" + k.key + "` must be a non-negative integer"}
		}
		if i > maxRepeat {
			return 0, 0, &UnsupportedError{Feature: "`" + k.key + "` above " + strconv.Itoa(maxRepeat)}
		}
		*k.dst = i
	}
	if hi >= 0 && lo > hi {
		return 0, 0, &InvalidError{Reason: "`" + minKey + "` is above `" + maxKey + "`"}
	}
	return lo, hi, nil
}

func (w *schemaWriter) str(s map[string]any) (string, error) {
	char := jsonChar
	if f, ok := s["format"]; ok {
		name, _ := f.(string)
		re, ok := formats[name]
		if !ok {
			if slices.Contains(knownFormats, name) {
				return "", &UnsupportedError{Feature: "the string format `" + name + "`"}
			}
			return "", &UnsupportedError{Feature: "an unknown string format"}
		}
		for _, k := range []string{"pattern", "minLength", "maxLength"} {
			if _, ok := s[k]; ok {
				return "", &UnsupportedError{Feature: "`" + k + "` beside `format`"}
			}
		}
		return `"` + re + `"`, nil
	}
	if p, ok := s["pattern"]; ok {
		pat, _ := p.(string)
		re, err := stringPattern(pat)
		if err != nil {
			return "", err
		}
		if _, ok := s["minLength"]; ok {
			return "", &UnsupportedError{Feature: "`minLength` beside `pattern`"}
		}
		if _, ok := s["maxLength"]; ok {
			return "", &UnsupportedError{Feature: "`maxLength` beside `pattern`"}
		}
		return `"` + re + `"`, nil
	}
	lo, hi, err := bounds(s, "minLength", "maxLength")
	if err != nil {
		return "", err
	}
	switch {
	case lo == 0 && hi < 0:
		return `"` + char + `*"`, nil
	case hi < 0:
		return `"` + char + `{` + strconv.Itoa(lo) + `,}"`, nil
	}
	return `"` + char + `{` + strconv.Itoa(lo) + `,` + strconv.Itoa(hi) + `}"`, nil
}

// stringPattern is a schema's pattern as the content of a JSON string: the whole content
// matches it (a schema's pattern may match anywhere; a generated string is made to match
// whole, which satisfies that), and it can write neither a quote, a backslash nor a control
// character, so the string stays JSON without escapes.
func stringPattern(pat string) (string, error) {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return "", &InvalidError{Reason: "`pattern` is not a regular expression this server reads"}
	}
	re = trimAnchors(re)
	if err := jsonSafe(re); err != nil {
		return "", err
	}
	// A group: between the quotes, a pattern's top-level alternation (yes|no) must not take
	// a quote into one of its branches.
	return `(?:` + re.String() + `)`, nil
}

// jsonSafe takes the quote, the backslash and the control characters out of every character
// class of re, in place, and refuses a literal that holds one.
func jsonSafe(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '"' || r == '\\' || r < 0x20 {
				return &UnsupportedError{Feature: "a `pattern` that writes a quote, a backslash or a control character"}
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		re.Op, re.Rune = syntax.OpCharClass, []rune{0x20, 0x21, 0x23, 0x5b, 0x5d, 0x10ffff}
	case syntax.OpCharClass:
		re.Rune = subtractUnsafe(re.Rune)
		if len(re.Rune) == 0 {
			return &UnsupportedError{Feature: "a `pattern` class of only quotes, backslashes or control characters"}
		}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return &UnsupportedError{Feature: "an anchor or word boundary inside a `pattern`"}
	}
	for _, sub := range re.Sub {
		if err := jsonSafe(sub); err != nil {
			return err
		}
	}
	return nil
}

// subtractUnsafe removes U+0000-U+001F, '"' and '\' from a class's ranges.
func subtractUnsafe(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+4)
	cut := [][2]rune{{0, 0x1f}, {'"', '"'}, {'\\', '\\'}}
	for i := 0; i+1 < len(ranges); i += 2 {
		pieces := [][2]rune{{ranges[i], ranges[i+1]}}
		for _, c := range cut {
			var next [][2]rune
			for _, p := range pieces {
				if c[1] < p[0] || c[0] > p[1] {
					next = append(next, p)
					continue
				}
				if p[0] < c[0] {
					next = append(next, [2]rune{p[0], c[0] - 1})
				}
				if p[1] > c[1] {
					next = append(next, [2]rune{c[1] + 1, p[1]})
				}
			}
			pieces = next
		}
		for _, p := range pieces {
			out = append(out, p[0], p[1])
		}
	}
	return out
}

// literal is the compact JSON text of v, as a regular expression.
func literal(v any) (string, error) {
	return regexp.QuoteMeta(string(appendJSON(nil, v))), nil
}

// integerRegex is an integer within the schema's bounds; bounds must be integers.
func integerRegex(s map[string]any) (string, error) {
	lo, hi, err := numericBounds(s, true)
	if err != nil {
		return "", err
	}
	return intRange(lo, hi)
}

// numberRegex is a number within the schema's bounds: any when there are none; with (whole)
// bounds, written without an exponent, as a sign, an integer part and a fraction: the integer
// part within the bounds with any fraction, or at a bound with a zero fraction. A bound that
// is not a whole number is refused.
func numberRegex(s map[string]any) (string, error) {
	lo, hi, err := numericBounds(s, false)
	if err != nil {
		return "", err
	}
	if lo == math.MinInt64 && hi == math.MaxInt64 {
		return jsonNumber, nil
	}
	const zero = `(?:\.0{1,15})?`
	var alts []string
	if hi >= 0 { // x >= 0: k.f with lo <= k.f <= hi
		from := max(lo, 0)
		if top := hi - 1; hi == math.MaxInt64 || from <= top {
			if hi == math.MaxInt64 {
				top = hi
			}
			alts = append(alts, natSpan(from, top)+fraction)
		}
		if hi != math.MaxInt64 && hi >= from {
			alts = append(alts, strconv.FormatInt(hi, 10)+zero)
		}
	}
	if lo < 0 { // x < 0: -(k.f) with lo <= -(k.f) <= hi, so k.f <= -lo and k.f >= -hi
		from := int64(0)
		if hi < 0 {
			from = -hi
		}
		top := int64(math.MaxInt64)
		if lo != math.MinInt64 {
			top = -lo - 1
		}
		if from <= top {
			alts = append(alts, `-`+natSpan(from, top)+fraction)
		}
		if lo != math.MinInt64 && -lo >= from {
			alts = append(alts, `-`+strconv.FormatInt(-lo, 10)+zero)
		}
	}
	return `(?:` + strings.Join(alts, `|`) + `)`, nil
}

// natSpan is the naturals in [lo, hi] (hi math.MaxInt64: no bound).
func natSpan(lo, hi int64) string {
	if hi == math.MaxInt64 {
		return natAtLeast(lo)
	}
	return natRange(lo, hi)
}

// numericBounds reads minimum, maximum and their exclusive forms as inclusive integer bounds
// (math.MinInt64, math.MaxInt64: none).
func numericBounds(s map[string]any, integer bool) (lo, hi int64, err error) {
	lo, hi = math.MinInt64, math.MaxInt64
	read := func(key string) (int64, bool, error) {
		v, ok := s[key]
		if !ok {
			return 0, false, nil
		}
		n, ok := v.(json.Number)
		if !ok {
			return 0, false, &InvalidError{Reason: "`" + key + "` must be a number"}
		}
		f, ferr := n.Float64()
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1e15 {
			return 0, false, &UnsupportedError{Feature: "`" + key + "` that is not a whole number"}
		}
		return int64(f), true, nil
	}
	for _, k := range []struct {
		key   string
		dst   *int64
		shift int64
	}{{"minimum", &lo, 0}, {"exclusiveMinimum", &lo, 1}, {"maximum", &hi, 0}, {"exclusiveMaximum", &hi, -1}} {
		v, ok, err := read(k.key)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			continue
		}
		if k.shift != 0 && !integer {
			return 0, 0, &UnsupportedError{Feature: "`" + k.key + "` on a `number`"}
		}
		v += k.shift
		if k.dst == &lo {
			lo = max(lo, v)
		} else {
			hi = min(hi, v)
		}
	}
	if lo != math.MinInt64 && hi != math.MaxInt64 && lo > hi {
		return 0, 0, &InvalidError{Reason: "the numeric bounds leave no value"}
	}
	return lo, hi, nil
}

// intRange is the decimal integers in [lo, hi] (math.MinInt64 / math.MaxInt64: unbounded),
// written without leading zeros.
func intRange(lo, hi int64) (string, error) {
	switch {
	case lo == math.MinInt64 && hi == math.MaxInt64:
		return jsonInt, nil
	case lo == math.MinInt64:
		if hi >= 0 {
			// Every negative, and 0..hi.
			return `(?:-[1-9][0-9]{0,15}|` + natRange(0, hi) + `)`, nil
		}
		return `-` + natAtLeast(-hi), nil
	case hi == math.MaxInt64:
		if lo >= 0 {
			return natAtLeast(lo), nil
		}
		return `(?:-` + natRange(1, -lo) + `|` + natAtLeast(0) + `)`, nil
	case lo >= 0:
		return natRange(lo, hi), nil
	case hi < 0:
		return `-` + natRange(-hi, -lo), nil
	}
	return `(?:-` + natRange(1, -lo) + `|` + natRange(0, hi) + `)`, nil
}

// natAtLeast is the naturals n >= lo: those of lo's digit count that are at least lo, and
// every longer one.
func natAtLeast(lo int64) string {
	digits := len(strconv.FormatInt(lo, 10))
	top := int64(math.Pow10(digits)) - 1
	if digits >= 16 {
		return natRange(lo, top)
	}
	return `(?:` + natRange(lo, top) + `|[1-9][0-9]{` + strconv.Itoa(digits) + `,15})`
}

// natRange is the naturals in [lo, hi], 0 <= lo <= hi <= 1e15, written without leading zeros:
// one run of patterns per digit count.
func natRange(lo, hi int64) string {
	var alts []string
	floor, top := int64(0), int64(9)
	for digits := 1; floor <= hi; digits++ {
		if a, b := max(lo, floor), min(hi, top); a <= b {
			w := strconv.Itoa(digits)
			alts = append(alts, sameLength(fmt.Sprintf("%0"+w+"d", a), fmt.Sprintf("%0"+w+"d", b))...)
		}
		floor, top = top+1, top*10+9
	}
	return `(?:` + strings.Join(alts, `|`) + `)`
}

// sameLength is the decimal strings from a to b, both of one length, a <= b, as patterns.
func sameLength(a, b string) []string {
	if a == b {
		return []string{a}
	}
	if len(a) == 1 {
		return []string{"[" + a + "-" + b + "]"}
	}
	rest := len(a) - 1
	if a[0] == b[0] {
		var out []string
		for _, p := range sameLength(a[1:], b[1:]) {
			out = append(out, a[:1]+p)
		}
		return out
	}
	lowRest, highRest := strings.Repeat("0", rest), strings.Repeat("9", rest)
	if a[1:] == lowRest && b[1:] == highRest {
		return []string{"[" + a[:1] + "-" + b[:1] + "][0-9]{" + strconv.Itoa(rest) + "}"}
	}
	var out []string
	for _, p := range sameLength(a[1:], highRest) {
		out = append(out, a[:1]+p)
	}
	if b[0]-a[0] > 1 {
		out = append(out, "["+string(a[0]+1)+"-"+string(b[0]-1)+"][0-9]{"+strconv.Itoa(rest)+"}")
	}
	for _, p := range sameLength(lowRest, b[1:]) {
		out = append(out, b[:1]+p)
	}
	return out
}
