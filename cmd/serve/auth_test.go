package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sluice-serving/sluice/identity"
)

// call posts body to path with the headers given and returns the status, the response's
// headers and its error code ("" for a success).
func call(t *testing.T, srv *testServer, path, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return resp.StatusCode, resp.Header, env.Error.Code
}

func keyFile(t *testing.T, path string, entries ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("["+strings.Join(entries, ",")+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func keyEntry(key, tenant, scopes string) string {
	return `{"id":"` + tenant + `-key","key_hash":"` + identity.HashKey(key) + `","principal":"` + tenant + `","scopes":"` + scopes + `"}`
}

// TestAPIKeysGuardTheRoutes: with a key file, a request without a key gets OpenMed's 401 and
// its WWW-Authenticate, a key without the route's scope its 403; the probes and /metrics stay
// open; the tenant, never the key, is in the access log and the metrics; SIGHUP swaps the keys,
// and a file that does not parse keeps the old ones.
func TestAPIKeysGuardTheRoutes(t *testing.T) {
	// Not parallel: sends the process SIGHUP, which every server in it would take.
	path := filepath.Join(t.TempDir(), "keys.json")
	keyFile(t, path, keyEntry("reader-secret-1", "clinic-a", "pii:read"), keyEntry("ops-secret-1", "ops", "*"))
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_API_KEYS_FILE="+path)
	body := `{"text":"Call Maria at (415) 555-0132."}`
	if status, h, code := call(t, srv, "/pii/extract", body); status != 401 || code != "authentication_required" || h.Get("WWW-Authenticate") != "Bearer, ApiKey" {
		t.Fatalf("no key: %d %s %v", status, code, h)
	}
	if status, _, code := call(t, srv, "/pii/extract", body, "X-API-Key", "wrong"); status != 401 || code != "invalid_credentials" {
		t.Fatalf("a wrong key: %d %s", status, code)
	}
	if status, _, _ := call(t, srv, "/pii/extract", body, "X-API-Key", "reader-secret-1"); status != 200 {
		t.Fatalf("reader on /pii/extract: %d", status)
	}
	if status, _, code := call(t, srv, "/pii/deidentify", body, "Authorization", "ApiKey reader-secret-1"); status != 403 || code != "forbidden" {
		t.Fatalf("reader on /pii/deidentify: %d %s", status, code)
	}
	if status, _, _ := call(t, srv, "/pii/deidentify", body, "X-API-Key", "ops-secret-1"); status != 200 {
		t.Fatalf("ops on /pii/deidentify: %d", status)
	}
	// Another spelling of the route is no way around its scope: it is no route at all.
	for _, path := range []string{"/pii/deidentify/", "/PII/Deidentify"} {
		if status, _, _ := call(t, srv, path, body, "X-API-Key", "reader-secret-1"); status != 404 {
			t.Fatalf("reader on %s: %d", path, status)
		}
	}
	for _, probe := range []string{"/readyz", "/metrics"} {
		resp, err := http.Get(srv.url + probe)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", probe, resp, err)
		}
		resp.Body.Close()
	}
	srv.waitForMetric(t, `sluice_tenant_requests_total{outcome="served",route="/pii/extract",tenant="clinic-a"} 1`)
	srv.logs.WaitFor(t, time.Minute, `"tenant":"ops"`, `"route":"/pii/deidentify"`)
	if strings.Contains(srv.logs.String(), "secret-1") {
		t.Fatal("a key reached the logs")
	}

	keyFile(t, path, keyEntry("reader-secret-2", "clinic-a", "pii:read"))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	srv.logs.WaitFor(t, time.Minute, "API keys reloaded", `"keys":1`)
	if status, _, _ := call(t, srv, "/pii/extract", body, "X-API-Key", "reader-secret-1"); status != 401 {
		t.Fatalf("an old key after the reload: %d", status)
	}
	if status, _, _ := call(t, srv, "/pii/extract", body, "X-API-Key", "reader-secret-2"); status != 200 {
		t.Fatalf("the new key: %d", status)
	}
	if err := os.WriteFile(path, []byte(`[{"id":"x","key_hash":"sha256:nothex"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	srv.logs.WaitFor(t, time.Minute, "API keys not reloaded; the previous ones stay")
	if status, _, _ := call(t, srv, "/pii/extract", body, "X-API-Key", "reader-secret-2"); status != 200 {
		t.Fatalf("the kept key after a bad file: %d", status)
	}
	// A file with no keys, or a field of no known name, is refused the same way: read
	// leniently, each was zero keys (every caller locked out) or a tenant left unlimited.
	for file, says := range map[string]string{`{}`: `no \"keys\" field`, `[]`: "holds no keys",
		`{"kys":[` + keyEntry("x", "x", "*") + `]}`:                                                       "kys",
		`[` + strings.TrimSuffix(keyEntry("y", "y", "*"), "}") + `,"budgets":{"requests_per_minute":1}}]`: "budgets"} {
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		srv.logs.WaitFor(t, time.Minute, "API keys not reloaded; the previous ones stay", says)
		if status, _, _ := call(t, srv, "/pii/extract", body, "X-API-Key", "reader-secret-2"); status != 200 {
			t.Fatalf("the kept key after %s: %d", file, status)
		}
	}
}

// TestOpenMedAuthSettingsAndBearerTokens: OpenMed's variables switch authentication on with its
// keys, and a JWT signed with a key of the JWKS is accepted with its scopes.
func TestOpenMedAuthSettingsAndBearerTokens(t *testing.T) {
	t.Parallel()
	secret := []byte("a shared HS256 secret, 32+ bytes long")
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: secret, KeyID: "k1", Algorithm: "HS256"}}})
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_AUTH_ENABLED=true",
		"OPENMED_SERVICE_AUTH_API_KEYS=["+keyEntry("om-secret", "clinic-c", "analyze:write")+"]",
		"OPENMED_SERVICE_AUTH_JWKS="+string(jwks), "OPENMED_SERVICE_AUTH_JWT_AUDIENCE=sluice, other",
		"OPENMED_SERVICE_AUTH_JWT_MAX_LIFETIME_SECONDS=7200")
	body := `{"text":"Started metformin 500 mg."}`
	if status, _, _ := call(t, srv, "/analyze", body); status != 401 {
		t.Fatalf("no key: %d", status)
	}
	if status, _, _ := call(t, srv, "/analyze", body, "X-API-Key", "om-secret"); status != 200 {
		t.Fatalf("OpenMed's key: %d", status)
	}
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	token := func(lifetime time.Duration) string {
		tok, err := jwt.Signed(signer).Claims(map[string]any{"sub": "svc", "azp": "svc", "aud": "sluice", "iat": time.Now().Unix(),
			"exp": time.Now().Add(lifetime).Unix(), "scp": []string{"pii:read"}}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tok := token(time.Hour)
	if status, _, _ := call(t, srv, "/pii/extract", body, "Authorization", "Bearer "+tok); status != 200 {
		t.Fatalf("a bearer token: %d", status)
	}
	// A token's client that no key names is a tenant of its own, but not a label of the
	// metrics: a client's value without bound.
	srv.waitForMetric(t, `sluice_tenant_requests_total{outcome="served",route="/pii/extract",tenant="unlisted"} 1`)
	if bytes.Contains(srv.metrics(t), []byte(`tenant="svc"`)) {
		t.Fatal("the token's client labels a metric")
	}
	if status, _, _ := call(t, srv, "/pii/extract", body, "Authorization", "Bearer "+token(365*24*time.Hour)); status != 401 {
		t.Fatalf("a bearer token living past AUTH_JWT_MAX_LIFETIME_SECONDS: %d", status)
	}
	if status, _, code := call(t, srv, "/analyze", body, "Authorization", "Bearer "+tok); status != 403 || code != "forbidden" {
		t.Fatalf("a bearer token without the scope: %d %s", status, code)
	}
}

// TestSIGHUPReloadsTheJWKSFile: a token signed with a key taken out of the JWKS file is
// refused after a SIGHUP, and one signed with the key put in is accepted.
func TestSIGHUPReloadsTheJWKSFile(t *testing.T) {
	// Not parallel: sends the process SIGHUP, which every server in it would take.
	oldKey, newKey := []byte("the old HS256 secret, 32 bytes long"), []byte("the new HS256 secret, 32 bytes long")
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeJWKS := func(secret []byte) {
		data, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: secret, KeyID: "k", Algorithm: "HS256"}}})
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sign := func(secret []byte) string {
		signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithHeader("kid", "k"))
		tok, err := jwt.Signed(signer).Claims(map[string]any{"aud": "sluice", "client_id": "svc", "exp": time.Now().Add(time.Hour).Unix(), "scope": "*"}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	writeJWKS(oldKey)
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_AUTH_JWKS_FILE="+path, "SLUICE_AUTH_JWT_AUDIENCE=sluice")
	if !strings.Contains(srv.logs.String(), "without an issuer or an audience") {
		t.Error("a JWKS without an issuer is not warned of")
	}
	body := `{"text":"Call Maria."}`
	if status, _, _ := call(t, srv, "/pii/extract", body, "Authorization", sign(oldKey)); status != 200 {
		t.Fatalf("the old key before the reload: %d", status)
	}
	writeJWKS(newKey)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	srv.logs.WaitFor(t, time.Minute, "JWKS reloaded")
	if status, _, _ := call(t, srv, "/pii/extract", body, "Authorization", sign(oldKey)); status != 401 {
		t.Fatalf("the old key after the reload: %d", status)
	}
	if status, _, _ := call(t, srv, "/pii/extract", body, "Authorization", sign(newKey)); status != 200 {
		t.Fatalf("the new key after the reload: %d", status)
	}
}
