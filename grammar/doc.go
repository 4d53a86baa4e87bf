// Package grammar constrains generation to a language: a JSON schema (OpenAI's
// response_format json_schema, TGI's grammar of type json), any JSON object (json_object), or
// a regular expression (TGI's grammar of type regex).
//
// A constraint compiles once to a regular expression over bytes (a JSON schema is written out
// as one, property by property, with no whitespace between tokens) and is run as a DFA built
// lazily from Go's regexp/syntax program: a state is the set of the program's instructions
// still alive plus the bytes of a character not yet complete, so a token that ends in the
// middle of a UTF-8 character is followed exactly. Against a model's vocabulary (Vocab: each
// token's bytes, in a trie) every DFA state gets the set of tokens that keep the answer a
// prefix of some word of the language; the set is computed the first time a state is seen and
// kept, so a step costs a lookup and the masking of the scores. A state's first mask is a walk
// of the whole trie; Prepare makes it a piece at a time, pausing between pieces with the Index
// free, so that a caller can make it off a step loop and take turns with it.
//
//	v := grammar.NewVocab(tokenBytes, eos)       // once per model
//	c := grammar.NewCache(v, 16)                  // compiled constraints, by their text
//	ix, err := c.Get(grammar.Spec{Kind: grammar.JSONSchema, Schema: raw})
//	m := ix.Start()                               // one per generation
//	mask, err := m.Allowed()                      // before each choice: the tokens allowed
//	m.Advance(id)                                 // after it; m.Complete() ends the answer
//	if !m.Ready() { m.Prepare(pause) }            // the next mask, elsewhere, in pieces
//
// RetargetRefs rewrites a schema's $refs where the grammar reads schemas (the tools' list
// moves each tool's definitions into one table with it). What a schema may use is listed in
// schema.go; anything else is an *UnsupportedError that
// names the keyword, which the routes answer with a 400.
package grammar
