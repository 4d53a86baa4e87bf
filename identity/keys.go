package identity

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Key is one API key: its SHA-256, who it is and what it may do.
type Key struct {
	ID     string
	Tenant string
	Scopes []string
	// Allowance is the tenant's budget; every key of a tenant carries the same one.
	Allowance Allowance
	// Gateway sends the key's chat completions through the privacy gateway (Sluice's
	// "gateway": true), wherever they are addressed.
	Gateway bool
	hash    [sha256.Size]byte
}

// Allowance is a tenant's budget as the key file states it: requests and estimated tokens per
// minute, each with an optional burst (the bucket's size; 0: a minute's worth), and requests
// at once. Zero fields limit nothing.
type Allowance struct {
	RequestsPerMinute float64 `json:"requests_per_minute"`
	RequestBurst      float64 `json:"request_burst"`
	TokensPerMinute   float64 `json:"tokens_per_minute"`
	TokenBurst        float64 `json:"token_burst"`
	MaxConcurrency    int     `json:"max_concurrency"`
}

func (a Allowance) valid() bool {
	for _, v := range []float64{a.RequestsPerMinute, a.RequestBurst, a.TokensPerMinute, a.TokenBurst} {
		if !(v >= 0 && v < 1e15) {
			return false
		}
	}
	// A burst under one request (or token) never holds one: every request would be refused.
	for _, burst := range []float64{a.RequestBurst, a.TokenBurst} {
		if burst > 0 && burst < 1 {
			return false
		}
	}
	return a.MaxConcurrency >= 0
}

// AllowanceOf is the allowance the keys give tenant (a JWT's tenant shares its keys' budget),
// and whether any key names that tenant.
func (k *Keys) AllowanceOf(tenant string) (Allowance, bool) {
	if k == nil {
		return Allowance{}, false
	}
	for _, key := range k.keys {
		if key.Tenant == tenant {
			return key.Allowance, true
		}
	}
	return Allowance{}, false
}

// Keys is a set of API keys. It is immutable once parsed.
type Keys struct {
	keys []Key
}

// Len is how many keys the set holds.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.keys)
}

// keyJSON is one entry of OpenMed's API key list, and Sluice's (which adds tenant).
type keyJSON struct {
	ID        string          `json:"id"`
	KeyID     string          `json:"key_id"`
	KeyHash   string          `json:"key_hash"`
	SHA256    string          `json:"sha256"`
	Hash      string          `json:"hash"`
	Principal string          `json:"principal"`
	Subject   string          `json:"subject"`
	Tenant    string          `json:"tenant"`
	Scopes    json.RawMessage `json:"scopes"`
	Scope     json.RawMessage `json:"scope"`
	Budget    json.RawMessage `json:"budget"`
	Gateway   bool            `json:"gateway"`
}

// ParseKeys reads a key list in OpenMed's format: a JSON list of keys, or {"keys": [...]}; each
// with its SHA-256 (key_hash, sha256 or hash: "sha256:<hex>" or the bare hex), an id
// (id or key_id; else key-<n>), a principal (principal or subject; else the id), optionally a
// tenant (Sluice's; else the principal), scopes (a list, or one string of names separated
// by spaces or commas) and, Sluice's too, the tenant's budget (Allowance's fields, in an object
// "budget"; all of a tenant's keys that state one must state the same).
//
// A list that holds no key, and a field this format does not have (at the top, in an entry or
// in a budget), is an error: read leniently, "{}", "[]" or {"kys": [...]} would be taken for
// no keys (every caller refused, or a reload that locks everyone out), and a misspelt "budgets"
// would leave its tenant unlimited. The errors name the entry and an unknown field's name,
// never a value.
func ParseKeys(data []byte) (*Keys, error) {
	var entries []keyJSON
	if err := decodeKeys(bytes.TrimSpace(data), &entries); err != nil {
		return nil, fmt.Errorf("identity: API keys must be a JSON list, or an object with \"keys\": %s", err)
	}
	if len(entries) == 0 {
		return nil, errors.New("identity: API keys: the list holds no keys (to turn API keys off, set none)")
	}
	out := &Keys{keys: make([]Key, 0, len(entries))}
	budgets := make([]bool, len(entries)) // whether entry i states a budget
	for i, e := range entries {
		hash := firstOf(e.KeyHash, e.SHA256, e.Hash)
		if hash == "" {
			return nil, fmt.Errorf("identity: API key %d: key_hash is required (the key's SHA-256; keys are never configured in clear)", i+1)
		}
		hexDigest := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(hash)), "sha256:")
		raw, err := hex.DecodeString(hexDigest)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("identity: API key %d: the hash must be a SHA-256 hex digest (\"sha256:\" and 64 hex digits)", i+1)
		}
		k := Key{ID: firstOf(e.ID, e.KeyID, fmt.Sprintf("key-%d", i+1)), Gateway: e.Gateway}
		copy(k.hash[:], raw)
		principal := firstOf(e.Principal, e.Subject, k.ID)
		k.Tenant = firstOf(e.Tenant, principal)
		scopes := e.Scopes
		if len(scopes) == 0 {
			scopes = e.Scope
		}
		if k.Scopes, err = parseScopes(scopes); err != nil {
			return nil, fmt.Errorf("identity: API key %d: %w", i+1, err)
		}
		stated := len(e.Budget) > 0 && string(e.Budget) != "null"
		if stated {
			// Strict: a misspelt field would leave the tenant unlimited without a word.
			dec := json.NewDecoder(bytes.NewReader(e.Budget))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&k.Allowance); err != nil || !k.Allowance.valid() {
				return nil, fmt.Errorf("identity: API key %d: budget must be an object of requests_per_minute, request_burst, tokens_per_minute, token_burst and max_concurrency, each a number at least 0 (a burst 0 or at least 1)", i+1)
			}
		}
		budgets[i] = stated
		for j, other := range out.keys {
			if other.hash == k.hash || other.ID == k.ID {
				return nil, fmt.Errorf("identity: API key %d: its id or its hash repeats another key's", i+1)
			}
			if other.Tenant == k.Tenant && other.Allowance != k.Allowance {
				if !stated {
					k.Allowance = other.Allowance
				} else if !budgets[j] {
					out.keys[j].Allowance = k.Allowance
				} else {
					return nil, fmt.Errorf("identity: API key %d: its tenant's budget differs from key %d's", i+1, j+1)
				}
			}
		}
		out.keys = append(out.keys, k)
	}
	return out, nil
}

// decodeKeys reads a key list, or an object whose only field is "keys", strictly: a field of
// no known name is an error (jsonProblem's).
func decodeKeys(data []byte, entries *[]keyJSON) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var err error
	if len(data) > 0 && data[0] == '{' {
		var wrapped struct {
			Keys *[]keyJSON `json:"keys"`
		}
		if err = dec.Decode(&wrapped); err == nil && wrapped.Keys == nil {
			return errors.New(`no "keys" field`)
		} else if err == nil {
			*entries = *wrapped.Keys
		}
	} else {
		err = dec.Decode(entries)
	}
	if err != nil {
		return errors.New(jsonProblem(err))
	}
	if dec.InputOffset() != int64(len(data)) { // More would miss a stray "]" or "}"
		return errors.New("trailing data after the keys")
	}
	return nil
}

// jsonProblem says where a JSON document is wrong without quoting it (it holds secrets' hashes
// at most, but an operator's typo may hold a key): a syntax error's place, or the name of a
// field no entry has, when it looks like a name.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Sprintf("invalid JSON at byte %d", syntax.Offset)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if name = strings.Trim(name, `"`); fieldName.MatchString(name) {
			return fmt.Sprintf("unknown field %q", name)
		}
		return "a field of no known name"
	}
	return "not the expected shape"
}

// fieldName is what a JSON field's name looks like, which an error may repeat.
var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// parseScopes reads scopes as a list or as one string of names separated by spaces or commas;
// blanks and repeats are dropped, the order kept.
func parseScopes(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []string
	var one string
	switch {
	case json.Unmarshal(raw, &items) == nil:
	case json.Unmarshal(raw, &one) == nil:
		items = strings.FieldsFunc(one, func(r rune) bool { return r == ' ' || r == ',' })
	default:
		return nil, fmt.Errorf("scopes must be a list of names or one string of them")
	}
	var out []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" && !contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// find returns the key whose hash is key's, comparing every hash in constant time so that the
// time taken says nothing of which key, or how much of one, matched.
func (k *Keys) find(key string) (Key, bool) {
	if k == nil {
		return Key{}, false
	}
	sum := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.keys {
		if subtle.ConstantTimeCompare(sum[:], k.keys[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Key{}, false
	}
	return k.keys[found], true
}

// HashKey is a key's configured form, "sha256:<hex>": what an operator writes in the key file.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}
