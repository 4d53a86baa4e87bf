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
		"negative": `[{"id":"k1","key_hash":"` + h1 + `","budget":{"tokens_per_minute":-1}}]`,
		"misspelt": `[{"id":"k1","key_hash":"` + h1 + `","budget":{"requests_per_second":5}}]`,
	} {
		if _, err := ParseKeys([]byte(doc)); err == nil || !strings.Contains(err.Error(), "budget") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
