package identity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/bucket"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// DefaultRouteScopes are the scopes every route asks, by "METHOD /path": OpenMed's names for
// OpenMed's routes, and for the rest Sluice's, in OpenMed's "namespace:action" form: models:read
// for what describes the models, generate:write for generation in every dialect,
// generate:read for /tokenize, audit:read for the gateway's audit, embed:write for the
// embedding routes and rerank:write for the rerank routes. Every route the server has
// is listed (a test holds the server to it), so that no key reaches a route by its absence.
var DefaultRouteScopes = map[string][]string{
	"GET /models/loaded":             {"models:read"},
	"POST /models/unload":            {"models:write"},
	"POST /analyze":                  {"analyze:write"},
	"POST /pii/extract":              {"pii:read"},
	"POST /pii/extract/stream":       {"pii:read"},
	"POST /pii/deidentify":           {"pii:write"},
	"POST /pii/deidentify/stream":    {"pii:write"},
	"POST /privacy-gateway/complete": {"pii:write"},
	"GET /privacy-gateway/audit":     {"audit:read"},
	GatewayFaceRoute:                 {"pii:write"},
	"GET /v1/models":                 {"models:read"},
	"GET /info":                      {"models:read"},
	"POST /generate":                 {"generate:write"},
	"POST /generate_stream":          {"generate:write"},
	"POST /":                         {"generate:write"},
	"POST /v1/completions":           {"generate:write"},
	GatewayFacedRoute:                {"generate:write"},
	"POST /tokenize":                 {"generate:read"},
	"POST /jobs":                     {"pii:write"},
	"GET /jobs":                      {"pii:read"},
	"GET /jobs/{id}":                 {"pii:read"},
	"DELETE /jobs/{id}":              {"pii:write"},
	"GET /jobs/{id}/results":         {"pii:read"},
	"GET /v2":                        {"models:read"},
	"GET /v2/models/{name}":          {"models:read"},
	"GET /v2/models/{name}/ready":    {"models:read"},
	"POST /v2/models/{name}/infer":   {"pii:read"},
	// The versioned forms, answered 404 (no versions are kept), guarded as their plain forms.
	"GET /v2/models/{name}/versions/{version}":        {"models:read"},
	"GET /v2/models/{name}/versions/{version}/ready":  {"models:read"},
	"POST /v2/models/{name}/versions/{version}/infer": {"pii:read"},
	"POST /v1/embeddings":                             {"embed:write"},
	"POST /embed":                                     {"embed:write"},
	"POST /rerank":                                    {"rerank:write"},
	"POST /v1/rerank":                                 {"rerank:write"},
}

// GatewayFacedRoute is the route a key marked for the privacy gateway (Principal.Gateway) has
// answered by the gateway's face, GatewayFaceRoute; such a request is authorized as the route
// that serves it, so that the mark never grants what the gateway's scopes do not.
const (
	GatewayFacedRoute = "POST /v1/chat/completions"
	GatewayFaceRoute  = "POST /gateway/v1/chat/completions"
)

// openPaths are answered to anyone: an orchestrator's probes and a scraper carry no key.
var openPaths = map[string]bool{"/health": true, "/livez": true, "/readyz": true, "/metrics": true,
	"/v2/health/live": true, "/v2/health/ready": true}

// Config sets an Authenticator up.
type Config struct {
	// Keys are the API keys accepted (nil: none).
	Keys *Keys
	// JWT, when not nil, verifies bearer tokens.
	JWT *JWTVerifier
	// RouteScopes adds to and overrides DefaultRouteScopes ("POST /analyze": scopes; an empty
	// list needs a valid credential and no scope).
	RouteScopes map[string][]string
	// Open lets a route whose scopes are none (RouteScopes giving it an empty list) be called
	// without a credential; false (OpenMed's deny by default) asks for a valid one. Every
	// route has scopes by default, so nothing is open unless an override empties its list.
	Open bool
	// FailureRate and FailureBurst limit failed attempts per peer (a token bucket); either 0
	// turns the limit off.
	FailureRate  float64
	FailureBurst int
	// Certificates: principals also come from verified client certificates (CheckAs), so an
	// authenticator with neither keys nor a JWT verifier still checks their scopes.
	Certificates bool
}

// Validate reports every field that is wrong.
func (c Config) Validate() error {
	check := settings.For("identity")
	if c.Keys.Len() == 0 && c.JWT == nil && !c.Certificates {
		check.Addf("Keys", "an authenticator needs API keys or a JWT verifier (or nothing to check: leave it off)")
	}
	if c.FailureRate < 0 || math.IsNaN(c.FailureRate) || math.IsInf(c.FailureRate, 0) {
		check.Addf("FailureRate", "must be >= 0 (0: no limit), got %v", c.FailureRate)
	}
	if c.FailureBurst < 0 {
		check.Addf("FailureBurst", "must be >= 0 (0: no limit), got %d", c.FailureBurst)
	}
	known := slices.Sorted(maps.Keys(DefaultRouteScopes))
	for _, route := range slices.Sorted(maps.Keys(c.RouteScopes)) {
		method, path, ok := strings.Cut(route, " ")
		switch {
		case !ok || method == "" || method != strings.ToUpper(method) || !strings.HasPrefix(path, "/"):
			check.Addf("RouteScopes", "keys must look like \"POST /analyze\" (a method in capitals and an absolute path), got %q", route)
		case DefaultRouteScopes[route] == nil:
			// A key no request is authorized as would be kept and never read: the route it
			// meant to guard would keep its default scopes.
			hint := ""
			if near := settings.Nearest(route, known); near != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			check.Addf("RouteScopes", "%q is no route of the server%s; a route is named as docs/API.md's table names it, its parameters as {id}, {name} and {version}", route, hint)
		}
	}
	return check.Err()
}

// Principal is who a request was authenticated as.
type Principal struct {
	// Tenant keeps the caller's work apart (its jobs, its pseudonyms, its budget) and names it
	// in the access-log line.
	Tenant string
	// Listed: the configuration names the tenant (an API key's, a mapped certificate's
	// principal, a token's that a key names too), so it may label metrics (Label).
	Listed bool
	// Credential is "api_key", "jwt" or "mtls"; "" for a request to an open route.
	Credential string
	KeyID      string
	Scopes     []string
	// Allowance is the tenant's budget from the keys (zero: none stated).
	Allowance Allowance
	// Gateway: the key asks for its chat completions to go through the privacy gateway.
	Gateway bool
}

// Unlisted labels the metrics of every tenant the configuration does not name: a
// certificate's fingerprint, or a token's client, are values without bound, and a client's to
// choose.
const Unlisted = "unlisted"

// Label is the tenant as a metric's label: itself where it is listed, Unlisted otherwise, ""
// for no tenant.
func (p Principal) Label() string {
	if p.Tenant == "" || p.Listed {
		return p.Tenant
	}
	return Unlisted
}

// Refusal is why a request is not let through. The handlers answer it in the route's own
// wire format (OpenMed's 401, 403 and 429 on its routes).
type Refusal struct {
	Reason Reason
	// RequiredScopes are the route's scopes, for Forbidden.
	RequiredScopes []string
	// Wait is how long until the client's next failed attempt is heard, for TooManyFailures.
	Wait time.Duration
}

// Reason is the kind of a Refusal; its value is OpenMed's error code for it.
type Reason string

const (
	// NoCredential: the route needs one and the request sent none.
	NoCredential Reason = "authentication_required"
	// BadCredential: the key is unknown, the token does not verify, or the scheme is not one
	// of ours.
	BadCredential Reason = "invalid_credentials"
	// Forbidden: the credential is good and lacks one of the route's scopes.
	Forbidden Reason = "forbidden"
	// TooManyFailures: the client's address has failed too often of late.
	TooManyFailures Reason = "auth_rate_limited"
)

// Authenticator checks requests' credentials. It is safe for concurrent use; SetKeys swaps
// the keys for later requests.
type Authenticator struct {
	keys   atomic.Pointer[Keys]
	jwt    atomic.Pointer[JWTVerifier]
	scopes map[string][]string
	open   bool
	clk    clock.Clock

	failures bucket.Limit // Burst 0: no limit
	mu       sync.Mutex
	peers    map[string]*bucket.Bucket
}

// New validates cfg and returns an Authenticator.
func New(cfg Config, clk clock.Clock) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{scopes: map[string][]string{}, open: cfg.Open, clk: clk,
		peers: map[string]*bucket.Bucket{}}
	if cfg.FailureRate > 0 && cfg.FailureBurst > 0 {
		a.failures = bucket.Limit{PerSecond: cfg.FailureRate, Burst: float64(cfg.FailureBurst)}
	}
	for route, s := range DefaultRouteScopes {
		a.scopes[route] = s
	}
	for route, s := range cfg.RouteScopes {
		a.scopes[route] = s
	}
	a.keys.Store(cfg.Keys)
	a.jwt.Store(cfg.JWT)
	return a, nil
}

// SetKeys replaces the API keys (a reload of the key file).
func (a *Authenticator) SetKeys(k *Keys) { a.keys.Store(k) }

// SetJWT replaces the token verifier (a reload of the JWKS file); nil accepts no token.
func (a *Authenticator) SetJWT(v *JWTVerifier) { a.jwt.Store(v) }

// Keys is the API keys in use.
func (a *Authenticator) Keys() *Keys { return a.keys.Load() }

// Check authenticates a request to method and path, whose headers header reads, from client
// (its address, Proxies.Client's, for the failure limit), and checks the route's scopes.
//
// Failed attempts are limited per client address, and only failed attempts: a valid credential
// is always heard. Clients behind one address (a NAT, an ingress without trusted proxies)
// share it, and a flood of wrong keys from one must not lock the others' valid keys out. So
// the limit saves no work (every credential is still checked: a key's hash, a token's
// signature, microseconds beside any route's work) and stops no guessing (a key is a 256-bit
// secret, stored as its hash); what it gives is a 429 with a Retry-After that tells a client
// sending bad credentials over and over to stop, counted apart from the 401s.
func (a *Authenticator) Check(method, path string, header func(string) string, client string) (Principal, *Refusal) {
	return a.CheckAs(method, path, header, client, nil)
}

// CheckAs is Check for a request whose connection already names a principal (a verified
// client certificate's): an explicit credential takes precedence, and without one the
// connection's principal is the request's, with the scopes it was mapped to.
func (a *Authenticator) CheckAs(method, path string, header func(string) string, client string, conn *Principal) (Principal, *Refusal) {
	if openPaths[path] {
		return Principal{}, nil
	}
	if method == "HEAD" {
		method = "GET" // the router answers HEAD with the GET route
	}
	route := method + " " + path
	p, refusal := a.authenticate(header)
	if refusal != nil && refusal.Reason == NoCredential && conn != nil {
		// The certificate's principal is its tenant's, with the tenant's budget from the keys.
		p, refusal = *conn, nil
		var named bool
		p.Allowance, named = a.keys.Load().AllowanceOf(p.Tenant)
		p.Listed = p.Listed || named
	}
	if refusal != nil {
		if refusal.Reason == NoCredential && len(a.scopes[route]) == 0 && a.open {
			return Principal{}, nil // an open route, and no credential to check
		}
		if limited := a.failed(PeerKey(client)); limited != nil {
			return Principal{}, limited
		}
		return Principal{}, refusal
	}
	if p.Gateway && route == GatewayFacedRoute {
		route = GatewayFaceRoute
	}
	scopes := a.scopes[route]
	if !satisfies(p.Scopes, scopes) {
		return p, &Refusal{Reason: Forbidden, RequiredScopes: scopes}
	}
	return p, nil
}

// AuditAllTenants is the scope that reads every tenant's audit records: audit:read alone reads
// the caller's own tenant's. `*` and `audit:*` grant it.
const AuditAllTenants = "audit:read_all"

// Has reports whether p's scopes grant scope, wildcards as for a route's.
func (p Principal) Has(scope string) bool { return satisfies(p.Scopes, []string{scope}) }

func required() *Refusal { return &Refusal{Reason: NoCredential} }

func invalid() *Refusal { return &Refusal{Reason: BadCredential} }

// looksLikeJWT says whether a bearer value has a JWT's compact shape (three base64url parts
// joined by dots), which no API key has.
func looksLikeJWT(v string) bool {
	if strings.Count(v, ".") != 2 {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "" || strings.Trim(part, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return false
		}
	}
	return true
}

// authenticate reads the credential as OpenMed does: X-API-Key alone when present; else the
// Authorization header's ApiKey, or Bearer: a JWT when it has a JWT's shape, else an API key,
// as OpenAI's clients send theirs.
func (a *Authenticator) authenticate(header func(string) string) (Principal, *Refusal) {
	if a.keys.Load().Len() == 0 && a.jwt.Load() == nil {
		// Certificates only: a header credential has nothing to be checked against, and a
		// client's habit (an SDK's "Bearer EMPTY") must not count as a failed attempt.
		return Principal{}, required()
	}
	if key := strings.TrimSpace(header("X-API-Key")); key != "" {
		return a.byKey(key)
	}
	auth := strings.TrimSpace(header("Authorization"))
	if auth == "" {
		return Principal{}, required()
	}
	scheme, value, _ := strings.Cut(auth, " ")
	value = strings.TrimSpace(value)
	if value == "" {
		return Principal{}, required()
	}
	switch strings.ToLower(scheme) {
	case "apikey", "api-key":
		return a.byKey(value)
	case "bearer":
		if !looksLikeJWT(value) {
			return a.byKey(value)
		}
		v := a.jwt.Load()
		if v == nil {
			return Principal{}, invalid()
		}
		claims, err := v.Verify(value, a.clk.Now())
		if err != nil {
			return Principal{}, invalid()
		}
		allowance, listed := a.keys.Load().AllowanceOf(claims.Tenant)
		return Principal{Tenant: claims.Tenant, Listed: listed, Credential: "jwt", KeyID: claims.KeyID, Scopes: claims.Scopes, Allowance: allowance}, nil
	}
	return Principal{}, invalid()
}

func (a *Authenticator) byKey(key string) (Principal, *Refusal) {
	k, ok := a.keys.Load().find(key)
	if !ok {
		return Principal{}, invalid()
	}
	return Principal{Tenant: k.Tenant, Listed: true, Credential: "api_key", KeyID: k.ID, Scopes: k.Scopes, Allowance: k.Allowance, Gateway: k.Gateway}, nil
}

// failed counts a failed attempt from peer and refuses it once its bucket is empty. A peer
// that never failed has no bucket until it does.
func (a *Authenticator) failed(peer string) *Refusal {
	if a.failures.Burst == 0 {
		return nil
	}
	now := a.clk.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.peers[peer]
	if b == nil {
		if len(a.peers) >= maxPeers {
			a.forgetFull(now)
		}
		full := bucket.Full(a.failures, now)
		b = &full
		a.peers[peer] = b
	}
	if wait := b.Wait(a.failures, now, 1); wait > 0 {
		return &Refusal{Reason: TooManyFailures, Wait: wait}
	}
	b.Take(1)
	return nil
}

// maxPeers bounds the failure buckets kept: peers whose bucket has refilled are forgotten first.
const maxPeers = 1 << 16

func (a *Authenticator) forgetFull(now time.Time) {
	for peer, b := range a.peers {
		if b.Full(a.failures, now) {
			delete(a.peers, peer)
		}
	}
	if len(a.peers) >= maxPeers { // all of them failing now: start over rather than grow
		clear(a.peers)
	}
}

// satisfies reports whether granted scopes cover every required one: exactly, by "*", or by
// the namespace's "ns:*".
func satisfies(granted, required []string) bool {
	for _, r := range required {
		ns, _, _ := strings.Cut(r, ":")
		if !contains(granted, r) && !contains(granted, "*") && !contains(granted, ns+":*") {
			return false
		}
	}
	return true
}

// ParseRouteScopes reads OpenMed's route scope overrides: a JSON object from "METHOD /path" to
// a list of scopes or one string of them. A route named twice (the same key, or spellings that
// differ in the method's case or in spaces) is refused: which scopes held would be chance.
func ParseRouteScopes(data []byte) (map[string][]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("identity: route scopes must be a JSON object from \"METHOD /path\" to scopes: %s", jsonProblem(err))
	}
	keys, err := objectKeys(data)
	if err != nil {
		return nil, fmt.Errorf("identity: route scopes must be a JSON object from \"METHOD /path\" to scopes: %s", jsonProblem(err))
	}
	out := make(map[string][]string, len(raw))
	for _, route := range keys {
		method, path, _ := strings.Cut(strings.TrimSpace(route), " ")
		key := strings.ToUpper(method) + " " + strings.TrimSpace(path)
		if _, twice := out[key]; twice {
			return nil, fmt.Errorf("identity: route scopes name %q twice", key)
		}
		scopes, err := parseScopes(raw[route])
		if err != nil {
			return nil, fmt.Errorf("identity: route scopes of %q: %w", route, err)
		}
		if scopes == nil {
			scopes = []string{}
		}
		out[key] = scopes
	}
	return out, nil
}

// objectKeys is the keys of the JSON object data, in order and as often as written.
func objectKeys(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the object's '{', as Unmarshal has checked
		return nil, err
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
