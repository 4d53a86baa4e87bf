package identity

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

var epoch = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func headers(kv ...string) func(string) string {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h.Get
}

func testKeys(t *testing.T) *Keys {
	t.Helper()
	keys, err := ParseKeys([]byte(`{"keys": [
		{"id": "ops", "key_hash": "` + HashKey("ops-secret") + `", "principal": "ops-team", "scopes": ["*"]},
		{"key_id": "reader", "sha256": "` + strings.TrimPrefix(HashKey("reader-secret"), "sha256:") + `", "subject": "clinic-a", "scope": "pii:read, models:read"},
		{"hash": "` + strings.ToUpper(HashKey("writer-secret")[7:]) + `", "tenant": "clinic-b", "scopes": "pii:*"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestOpenMedKeyFormats(t *testing.T) {
	keys := testKeys(t)
	for key, want := range map[string]Key{
		"ops-secret":    {ID: "ops", Tenant: "ops-team", Scopes: []string{"*"}},
		"reader-secret": {ID: "reader", Tenant: "clinic-a", Scopes: []string{"pii:read", "models:read"}},
		"writer-secret": {ID: "key-3", Tenant: "clinic-b", Scopes: []string{"pii:*"}},
	} {
		got, ok := keys.find(key)
		if !ok || got.ID != want.ID || got.Tenant != want.Tenant || strings.Join(got.Scopes, ",") != strings.Join(want.Scopes, ",") {
			t.Errorf("%s: %+v", want.ID, got)
		}
	}
	if _, ok := keys.find("ops-secre"); ok {
		t.Fatal("a prefix of a key matched")
	}
	for _, bad := range []string{`[{"id":"x"}]`, `[{"key_hash":"sha256:abc"}]`, `{"keys":7}`, `[{"key_hash":"` + HashKey("k") + `","scopes":7}]`, `not json`} {
		_, err := ParseKeys([]byte(bad))
		if err == nil || strings.Contains(err.Error(), "abc") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func newAuth(t *testing.T, cfg Config) (*Authenticator, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(epoch)
	if cfg.Keys == nil {
		cfg.Keys = testKeys(t)
	}
	a, err := New(cfg, clk)
	if err != nil {
		t.Fatal(err)
	}
	return a, clk
}

func TestCheckAnswersAsOpenMed(t *testing.T) {
	a, _ := newAuth(t, Config{RouteScopes: map[string][]string{"POST /generate": {"generate:write"}}})
	cases := []struct {
		method, path string
		h            func(string) string
		status       int
		code, tenant string
	}{
		{"GET", "/readyz", headers(), 0, "", ""},
		{"POST", "/pii/extract", headers(), 401, "authentication_required", ""},
		{"POST", "/pii/extract", headers("X-API-Key", "nope"), 401, "invalid_credentials", ""},
		{"POST", "/pii/extract", headers("X-API-Key", "reader-secret"), 0, "", "clinic-a"},
		{"POST", "/pii/extract", headers("Authorization", "ApiKey reader-secret"), 0, "", "clinic-a"},
		{"POST", "/pii/extract", headers("Authorization", "api-key writer-secret"), 0, "", "clinic-b"},
		// X-API-Key alone counts when present, as in OpenMed.
		{"POST", "/pii/extract", headers("X-API-Key", "nope", "Authorization", "ApiKey reader-secret"), 401, "invalid_credentials", ""},
		{"POST", "/pii/deidentify", headers("X-API-Key", "reader-secret"), 403, "forbidden", "clinic-a"},
		{"POST", "/pii/deidentify", headers("X-API-Key", "writer-secret"), 0, "", "clinic-b"}, // pii:*
		{"POST", "/analyze", headers("X-API-Key", "ops-secret"), 0, "", "ops-team"},           // *
		{"POST", "/generate", headers("X-API-Key", "writer-secret"), 403, "forbidden", "clinic-b"},
		{"POST", "/v1/completions", headers("X-API-Key", "reader-secret"), 403, "forbidden", "clinic-a"}, // generate:write
		{"POST", "/custom", headers("X-API-Key", "reader-secret"), 0, "", "clinic-a"},                    // no scope: any valid key
		{"POST", "/custom", headers(), 401, "authentication_required", ""},
		{"POST", "/pii/extract", headers("Authorization", "Bearer x.y.z"), 401, "invalid_credentials", ""}, // no JWKS
		// A bearer value without a JWT's shape is an API key, as OpenAI's clients send theirs.
		{"POST", "/pii/extract", headers("Authorization", "Bearer reader-secret"), 0, "", "clinic-a"},
		{"POST", "/pii/extract", headers("Authorization", "Bearer not-a-key"), 401, "invalid_credentials", ""},
		{"POST", "/pii/extract", headers("Authorization", "Basic abc"), 401, "invalid_credentials", ""},
		{"HEAD", "/models/loaded", headers("X-API-Key", "writer-secret"), 403, "forbidden", "clinic-b"}, // GET's scope
	}
	for _, c := range cases {
		p, r := a.Check(c.method, c.path, c.h, "10.0.0.1")
		status, code := 0, ""
		if r != nil {
			status, code = statusOf[r.Reason], string(r.Reason)
		}
		if status != c.status || code != c.code || p.Tenant != c.tenant {
			t.Errorf("%s %s: %d %s %q, want %d %s %q", c.method, c.path, status, code, p.Tenant, c.status, c.code, c.tenant)
		}
	}
	_, r := a.Check("POST", "/pii/deidentify", headers("X-API-Key", "reader-secret"), "p")
	if !slices.Equal(r.RequiredScopes, []string{"pii:write"}) {
		t.Fatal(r.RequiredScopes)
	}
}

// statusOf is the HTTP status the handlers answer each reason with, so that the cases above
// read as the answers a client gets.
var statusOf = map[Reason]int{NoCredential: 401, BadCredential: 401, Forbidden: 403, TooManyFailures: 429}

// TestFailedAttemptsAreLimitedPerPeer: past the burst a peer's failures get 429 with a
// Retry-After; another peer is not affected; the bucket refills with time.
func TestFailedAttemptsAreLimitedPerPeer(t *testing.T) {
	a, clk := newAuth(t, Config{FailureRate: 0.5, FailureBurst: 2})
	bad := headers("X-API-Key", "nope")
	for i, want := range []int{401, 401, 429, 429} {
		if _, r := a.Check("POST", "/pii/extract", bad, "1.2.3.4"); statusOf[r.Reason] != want {
			t.Fatalf("attempt %d: %s", i, r.Reason)
		}
	}
	if _, r := a.Check("POST", "/pii/extract", bad, "1.2.3.4"); r.Wait != 2*time.Second {
		t.Fatalf("wait %v with the bucket empty at 0.5/s, want 2s", r.Wait)
	}
	if _, r := a.Check("POST", "/pii/extract", bad, "5.6.7.8"); statusOf[r.Reason] != 401 {
		t.Fatal("another peer was limited")
	}
	// Addresses of one IPv6 /64 share a bucket: a host has them all.
	for i, want := range []int{401, 401, 429} {
		if _, r := a.Check("POST", "/pii/extract", bad, fmt.Sprintf("2001:db8:1:2::%x", i+1)); statusOf[r.Reason] != want {
			t.Fatalf("IPv6 attempt %d: %s", i, r.Reason)
		}
	}
	// A valid credential from a limited address is always heard: wrong keys sent from a
	// tenant's address (or an ingress's, which every caller shares) must not lock it out.
	if p, r := a.Check("POST", "/pii/extract", headers("X-API-Key", "reader-secret"), "1.2.3.4"); r != nil || p.Tenant == "" {
		t.Fatalf("a valid key from a limited address: %+v", r)
	}
	if _, r := a.Check("POST", "/pii/extract", bad, "1.2.3.4"); r.Reason != TooManyFailures {
		t.Fatal("a valid key refilled the failures' bucket")
	}
	clk.Advance(2 * time.Second)
	if _, r := a.Check("POST", "/pii/extract", bad, "1.2.3.4"); r.Reason != BadCredential {
		t.Fatal("the refilled bucket refused")
	}
}

func TestSetKeysSwapsTheKeys(t *testing.T) {
	a, _ := newAuth(t, Config{})
	keys, _ := ParseKeys([]byte(`[{"key_hash":"` + HashKey("new-secret") + `","principal":"new","scopes":"*"}]`))
	a.SetKeys(keys)
	if _, r := a.Check("POST", "/analyze", headers("X-API-Key", "ops-secret"), "p"); r == nil {
		t.Fatal("an old key still works")
	}
	if p, r := a.Check("POST", "/analyze", headers("X-API-Key", "new-secret"), "p"); r != nil || p.Tenant != "new" {
		t.Fatal(r)
	}
}

func TestConfigIsChecked(t *testing.T) {
	_, err := New(Config{FailureRate: -1, RouteScopes: map[string][]string{"/analyze": nil}}, clock.NewFake(epoch))
	var p *settings.Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "Keys") || !strings.Contains(err.Error(), "RouteScopes") || !strings.Contains(err.Error(), "FailureRate") {
		t.Fatal(err)
	}
}

// TestRouteScopesNameRoutesOfTheServer: an override of a route no request is authorized as
// (one model's path, HEAD, a misspelling) would be kept and never read, leaving the route it
// meant to guard on its default scopes: it refuses the start, with the route it may mean.
func TestRouteScopesNameRoutesOfTheServer(t *testing.T) {
	keys := testKeys(t)
	for route, want := range map[string]string{
		"POST /v2/models/pii/infer": `did you mean "POST /v2/models/{name}/infer"`,
		"HEAD /jobs":                `"HEAD /jobs" is no route`,
		"POST /pii/extract/strem":   `did you mean "POST /pii/extract/stream"`,
		"POST /analyze":             "",
	} {
		_, err := New(Config{Keys: keys, RouteScopes: map[string][]string{route: {"pii:admin"}}}, clock.NewFake(epoch))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v", route, err)
		}
	}
}

// token signs claims with key (a []byte for HS256, an *rsa.PrivateKey for RS256) under kid.
func token(t *testing.T, key any, kid string, claims map[string]any) string {
	t.Helper()
	alg := jose.HS256
	if _, ok := key.(*rsa.PrivateKey); ok {
		alg = jose.RS256
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBearerTokens(t *testing.T) {
	secret := []byte("an HS256 secret of thirty-two bytes!")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: secret, KeyID: "hs", Algorithm: "HS256"}, {Key: &rsaKey.PublicKey, KeyID: "rs", Algorithm: "RS256"}}})
	v, err := NewJWTVerifier(JWTConfig{JWKS: jwks, Issuer: "https://idp.example", Audience: []string{"sluice"}, Leeway: 30 * time.Second,
		MaxLifetime: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newAuth(t, Config{JWT: v})
	exp := epoch.Add(time.Hour).Unix()
	good := map[string]any{"iss": "https://idp.example", "aud": []string{"other", "sluice"}, "sub": "jane@example.org",
		"client_id": "svc-1", "exp": exp, "iat": epoch.Unix(), "scope": "pii:read pii:write"}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for key, val := range good {
			c[key] = val
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	and := func(c map[string]any, k string, v any) map[string]any {
		c[k] = v
		return c
	}
	for name, c := range map[string]struct {
		tok  string
		want int
	}{
		"HS256":              {token(t, secret, "hs", good), 0},
		"RS256":              {token(t, rsaKey, "rs", good), 0},
		"scp list":           {token(t, secret, "hs", with("scp", []string{"pii:write"})), 0},
		"no exp":             {token(t, secret, "hs", with("exp", nil)), 401},
		"expired":            {token(t, secret, "hs", with("exp", epoch.Add(-time.Minute).Unix())), 401},
		"expired, in leeway": {token(t, secret, "hs", with("exp", epoch.Add(-10*time.Second).Unix())), 0},
		"other issuer":       {token(t, secret, "hs", with("iss", "https://evil.example")), 401},
		"other audience":     {token(t, secret, "hs", with("aud", "else")), 401},
		"wrong key":          {token(t, []byte("another secret of thirty-two bytes"), "hs", good), 401},
		"unknown kid":        {token(t, secret, "zz", good), 401},
		"no scope":           {token(t, secret, "hs", with("scope", "pii:read")), 403},
		"lives too long":     {token(t, secret, "hs", with("exp", epoch.Add(48*time.Hour).Unix())), 401},
		"no iat":             {token(t, secret, "hs", with("iat", nil)), 401},
		"no tenant":          {token(t, secret, "hs", with("client_id", nil)), 401},
		"azp":                {token(t, secret, "hs", and(with("client_id", nil), "azp", "svc-1")), 0},
		"cid":                {token(t, secret, "hs", and(with("client_id", nil), "cid", "svc-1")), 0},
		"appid":              {token(t, secret, "hs", and(with("client_id", nil), "appid", "svc-1")), 0},
	} {
		p, r := a.Check("POST", "/pii/deidentify", headers("Authorization", "Bearer "+c.tok), "p")
		status := 0
		if r != nil {
			status = statusOf[r.Reason]
		}
		if status != c.want || (status == 0 && (p.Tenant != "svc-1" || p.Credential != "jwt" || p.Label() != Unlisted)) {
			t.Errorf("%s: %d %+v", name, status, p)
		}
	}
	if _, err := NewJWTVerifier(JWTConfig{JWKS: []byte(`{"keys":[]}`)}); err == nil {
		t.Fatal("an empty JWKS")
	}
	if _, err := NewJWTVerifier(JWTConfig{JWKS: []byte(`[{"kty":"oct","k":"c2hvcnQ"}]`)}); err == nil {
		t.Fatal("a short HS256 secret")
	}
	private, _ := json.Marshal(jose.JSONWebKey{Key: rsaKey, KeyID: "p"})
	if _, err := NewJWTVerifier(JWTConfig{JWKS: []byte("[" + string(private) + "]")}); err == nil {
		t.Fatal("a private key in a verifier's JWKS")
	}
}

// Open (OpenMed's deny by default turned off) opens only a route whose scopes an override
// empties: every route has scopes of its own, so none is open by default.
func TestOpenOpensOnlyRoutesWithoutScopes(t *testing.T) {
	a, _ := newAuth(t, Config{Open: true, RouteScopes: map[string][]string{"POST /tokenize": {}}})
	if p, r := a.Check("POST", "/tokenize", headers(), "10.0.0.1"); r != nil || p.Tenant != "" {
		t.Errorf("an emptied route without a credential: %+v", r)
	}
	for _, path := range []string{"/generate", "/pii/extract", "/v1/chat/completions"} {
		if _, r := a.Check("POST", path, headers(), "10.0.0.1"); r == nil || r.Reason != NoCredential {
			t.Errorf("%s without a credential: %+v", path, r)
		}
	}
}

// TestRouteScopesNameEachRouteOnce: a route written twice, as the same key or in spellings
// that come to one route, is refused, so that which scopes hold is never chance; distinct
// routes are read as written.
func TestRouteScopesNameEachRouteOnce(t *testing.T) {
	for _, bad := range []string{
		`{"POST /pii/extract":["pii:read"],"post /pii/extract":[]}`,
		`{"POST /pii/extract":["pii:read"]," POST  /pii/extract ":"pii:write"}`,
		`{"GET /jobs":[],"GET /jobs":["jobs:read"]}`,
	} {
		if _, err := ParseRouteScopes([]byte(bad)); err == nil || !strings.Contains(err.Error(), "twice") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	got, err := ParseRouteScopes([]byte(`{"post /pii/extract":"pii:read pii:write","GET /jobs":[]}`))
	if err != nil || !reflect.DeepEqual(got, map[string][]string{"POST /pii/extract": {"pii:read", "pii:write"}, "GET /jobs": {}}) {
		t.Fatalf("%v, %v", got, err)
	}
}
