package identity

import (
	"strings"
	"testing"
)

func TestKeysCarryTheirTenantsBudget(t *testing.T) {
	h1, h2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	keys, err := ParseKeys([]byte(`[{"id":"k1","key_hash":"sha256:` + h1 + `","tenant":"acme"},
		{"id":"k2","key_hash":"` + h2 + `","tenant":"acme","budget":{"requests_per_minute":60,"tokens_per_minute":6000,"max_concurrency":2}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := Allowance{RequestsPerMinute: 60, TokensPerMinute: 6000, MaxConcurrency: 2}
	for _, k := range keys.keys {
		if k.Allowance != want {
			t.Errorf("key %s: %+v; want the tenant's %+v", k.ID, k.Allowance, want)
		}
	}
	if a, ok := keys.AllowanceOf("acme"); !ok || a != want {
		t.Errorf("AllowanceOf(acme) = %+v, %v", a, ok)
	}
	for name, doc := range map[string]string{
		"two budgets": `[{"id":"k1","key_hash":"` + h1 + `","tenant":"acme","budget":{"requests_per_minute":1}},
			{"id":"k2","key_hash":"` + h2 + `","tenant":"acme","budget":{"requests_per_minute":2}}]`,
		"negative":                      `[{"id":"k1","key_hash":"` + h1 + `","budget":{"tokens_per_minute":-1}}]`,
		"a burst that holds no request": `[{"id":"k1","key_hash":"` + h1 + `","budget":{"requests_per_minute":60,"request_burst":0.5}}]`,
		"a burst that holds no token":   `[{"id":"k1","key_hash":"` + h1 + `","budget":{"tokens_per_minute":60,"token_burst":0.9}}]`,
		"misspelt":                      `[{"id":"k1","key_hash":"` + h1 + `","budget":{"requests_per_second":5}}]`,
	} {
		if _, err := ParseKeys([]byte(doc)); err == nil || !strings.Contains(err.Error(), "budget") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A key file read leniently opened or closed everything: "{}", "[]" or a misspelt "keys" were
// zero keys (a reload locked every caller out), and a misspelt "budgets" left its tenant
// unlimited. Each is an error that names the entry's problem, never a value.
func TestKeyFilesWithNoKeysOrUnknownFieldsAreRefused(t *testing.T) {
	entry := `{"id":"a","key_hash":"` + HashKey("secret-a") + `","tenant":"t"`
	for bad, says := range map[string]string{
		`{}`:                                  `no "keys" field`,
		`[]`:                                  "holds no keys",
		`{"keys":[]}`:                         "holds no keys",
		`{"kys":[` + entry + `}]}`:            `unknown field "kys"`,
		`{"keys":[` + entry + `}],"extra":1}`: `unknown field "extra"`,
		`[` + entry + `,"budgets":{"requests_per_minute":1}}]`: `unknown field "budgets"`,
		`[` + entry + `,"Pt jane doe":1}]`:                     "a field of no known name",
		`[` + entry + `}] [` + entry + `}]`:                    "trailing data",
		`[` + entry + `}]]`:                                    "trailing data",
	} {
		_, err := ParseKeys([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "jane") {
			t.Errorf("%s: %v, want it to say %s", bad, err, says)
		}
	}
	if k, err := ParseKeys([]byte(`{"keys":[` + entry + `,"budget":{"requests_per_minute":60}}]}`)); err != nil || k.Len() != 1 {
		t.Errorf("a well-formed file: %v", err)
	}
}
