package grammar

import (
	"bytes"
	"container/list"
	"encoding/json"
	"sync"
)

// Kind is what a Spec constrains an answer to.
type Kind int

const (
	// JSONObject is any JSON object (OpenAI's json_object), nested at most anyDepth levels.
	JSONObject Kind = iota + 1
	// JSONSchema is a JSON text that validates against Spec.Schema.
	JSONSchema
	// Regex is a text that Spec.Pattern (Go's RE2 syntax) matches whole.
	Regex
)

// Spec is a constraint as a request states it.
type Spec struct {
	Kind    Kind
	Schema  json.RawMessage
	Pattern string
}

// Pattern is the regular expression an answer must match whole.
func (s Spec) regex() (string, error) {
	switch s.Kind {
	case JSONObject:
		return anyJSONObject, nil
	case JSONSchema:
		return SchemaRegex(s.Schema)
	case Regex:
		return s.Pattern, nil
	}
	return "", &InvalidError{Reason: "no constraint named"}
}

// Compile compiles spec over v, without a cache.
func Compile(v *Vocab, spec Spec) (*Index, error) {
	re, err := spec.regex()
	if err != nil {
		return nil, err
	}
	prog, err := compileRegex(re)
	if err != nil {
		return nil, err
	}
	d, err := newDFA(prog)
	if err != nil {
		return nil, err
	}
	return newIndex(v, d), nil
}

// Cache keeps the most recently used compiled constraints of one vocabulary, keyed by their
// kind and text (a schema by its compact form), so that a schema sent with every request is
// compiled, and its masks computed, once; a retired Index (grown past its bound) is compiled
// anew for the next request.
type Cache struct {
	v   *Vocab
	max int

	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recent first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key string
	ix  *Index
}

// NewCache keeps up to size constraints over v (at least one).
func NewCache(v *Vocab, size int) *Cache {
	return &Cache{v: v, max: max(size, 1), order: list.New(), byKey: map[string]*list.Element{}}
}

// Vocab is the vocabulary the cache compiles for.
func (c *Cache) Vocab() *Vocab { return c.v }

// Get is spec compiled over the cache's vocabulary. Errors are *UnsupportedError and
// *InvalidError, the request's fault; they are not cached.
func (c *Cache) Get(spec Spec) (*Index, error) {
	key := cacheKey(spec)
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		ix := e.Value.(*cacheEntry).ix
		c.mu.Unlock()
		if !ix.Retired() {
			return ix, nil
		}
	} else {
		c.mu.Unlock()
	}
	ix, err := Compile(c.v, spec)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		if held := e.Value.(*cacheEntry).ix; !held.Retired() { // compiled meanwhile by another request
			return held, nil
		}
		delete(c.byKey, key)
		c.order.Remove(e)
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, ix: ix})
	for c.order.Len() > c.max {
		last := c.order.Back()
		delete(c.byKey, last.Value.(*cacheEntry).key)
		c.order.Remove(last)
	}
	return ix, nil
}

// Len is how many constraints the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func cacheKey(spec Spec) string {
	body := []byte(spec.Pattern)
	if spec.Kind == JSONSchema {
		var buf bytes.Buffer
		if json.Compact(&buf, spec.Schema) == nil {
			body = buf.Bytes()
		} else {
			body = spec.Schema
		}
	}
	return string(rune('0'+spec.Kind)) + string(body)
}
