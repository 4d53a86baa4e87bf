package grammar

import (
	"bytes"
	"encoding/json"
	"io"
)

// RetargetRefs is schema with each $ref that retarget answers rewritten, wherever a schema
// sits as the grammar reads one: the schema itself, its properties, additionalProperties,
// items, anyOf and oneOf branches, $defs and definitions. What a const, an enum or a default
// holds is the client's data, however it is spelt (a "$ref" key in it, or `\/` in a
// reference), and stays as it is; keys keep their order, a key written twice its last value.
// A schema that is not one JSON value is an *InvalidError.
func RetargetRefs(schema []byte, retarget func(ref string) (string, bool)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	root, err := decodeOrdered(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &InvalidError{Reason: "the schema is not one JSON value"}
	}
	retargetIn(root, retarget)
	return appendJSON(nil, root), nil
}

func retargetIn(node any, retarget func(string) (string, bool)) {
	s, ok := node.(map[string]any)
	if !ok {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		if to, ok := retarget(ref); ok {
			s["$ref"] = to
		}
	}
	for _, k := range []string{"additionalProperties", "items"} {
		retargetIn(s[k], retarget)
	}
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if table, ok := s[k].(map[string]any); ok {
			for name, sub := range table {
				if name != orderKey {
					retargetIn(sub, retarget)
				}
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k].([]any); ok {
			for _, b := range branches {
				retargetIn(b, retarget)
			}
		}
	}
}
