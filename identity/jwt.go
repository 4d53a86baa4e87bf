package identity

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sluice-serving/sluice/settings"
)

// JWTConfig sets a JWTVerifier up.
type JWTConfig struct {
	// JWKS is the keys tokens are signed with: a JWKS ({"keys": [...]}) or a list of JWKs;
	// HS256 ("oct") and RS256 ("RSA") keys.
	JWKS []byte
	// Issuer, when set, must be a token's iss; Audience, when set, must meet its aud.
	Issuer   string
	Audience []string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// MaxLifetime, when set, requires iat and refuses a token whose exp is further from it.
	MaxLifetime time.Duration
}

// JWTVerifier checks bearer tokens: HS256 or RS256 with a key of its JWKS, an exp in the
// future (required), nbf and iat in the past, iss and aud as configured.
type JWTVerifier struct {
	keys     jose.JSONWebKeySet
	issuer   string
	audience []string
	leeway   time.Duration
	lifetime time.Duration
}

// NewJWTVerifier checks cfg and returns a verifier.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	check := settings.For("identity")
	v := &JWTVerifier{issuer: cfg.Issuer, audience: cfg.Audience, leeway: cfg.Leeway, lifetime: cfg.MaxLifetime}
	data := []byte(strings.TrimSpace(string(cfg.JWKS)))
	if len(data) > 0 && data[0] == '[' {
		data = []byte(`{"keys":` + string(data) + `}`)
	}
	if err := json.Unmarshal(data, &v.keys); err != nil {
		check.Addf("JWKS", "must be a JWKS or a list of JWKs: %s", jsonProblem(err))
	} else if len(v.keys.Keys) == 0 {
		check.Addf("JWKS", "holds no key")
	}
	for i, k := range v.keys.Keys {
		if _, ok := algorithmOf(k); !ok {
			check.Addf("JWKS", "key %d: must be an HS256 (oct) or RS256 (RSA public) key", i+1)
		} else if secret, hmac := k.Key.([]byte); hmac && len(secret) < 32 {
			check.Addf("JWKS", "key %d: an HS256 secret must have at least 32 bytes, got %d", i+1, len(secret))
		}
		if k.Use != "" && k.Use != "sig" {
			check.Addf("JWKS", "key %d: is not a signature key (use %q)", i+1, k.Use)
		}
	}
	if cfg.Leeway < 0 || cfg.Leeway > time.Hour {
		check.Addf("Leeway", "must be between 0 and an hour, got %s", cfg.Leeway)
	}
	if cfg.MaxLifetime < 0 {
		check.Addf("MaxLifetime", "must not be negative (0: no bound), got %s", cfg.MaxLifetime)
	}
	if err := check.Err(); err != nil {
		return nil, err
	}
	return v, nil
}

// algorithmOf is the signature algorithm a key verifies.
func algorithmOf(k jose.JSONWebKey) (jose.SignatureAlgorithm, bool) {
	switch k.Key.(type) {
	case []byte:
		return jose.HS256, k.Algorithm == "" || k.Algorithm == string(jose.HS256)
	case *rsa.PublicKey:
		return jose.RS256, k.Algorithm == "" || k.Algorithm == string(jose.RS256)
	}
	return "", false // another kind, or a private key, which has no place in a verifier
}

// Claims are what a verified token says of its holder.
type Claims struct {
	Tenant string
	KeyID  string
	Scopes []string
}

var errToken = errors.New("identity: invalid token")

// Verify checks token at now and returns its claims.
func (v *JWTVerifier) Verify(token string, now time.Time) (Claims, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256, jose.RS256})
	if err != nil || len(tok.Headers) != 1 {
		return Claims{}, errToken
	}
	h := tok.Headers[0]
	var key *jose.JSONWebKey
	for i := range v.keys.Keys {
		k := &v.keys.Keys[i]
		alg, _ := algorithmOf(*k)
		if string(alg) != h.Algorithm || (h.KeyID != "" && k.KeyID != h.KeyID) {
			continue
		}
		if key != nil {
			return Claims{}, errToken // two candidates: which one is meant is not for us to guess
		}
		key = k
	}
	if key == nil {
		return Claims{}, errToken
	}
	var std jwt.Claims
	var extra struct {
		Tenant   string          `json:"tenant"`
		ClientID string          `json:"client_id"`
		AZP      string          `json:"azp"`   // OpenID Connect's authorized party
		CID      string          `json:"cid"`   // Okta's client
		AppID    string          `json:"appid"` // Microsoft Entra ID's (v1 tokens) client
		Scope    json.RawMessage `json:"scope"`
		SCP      json.RawMessage `json:"scp"`
		Scopes   json.RawMessage `json:"scopes"`
	}
	if err := tok.Claims(key.Key, &std, &extra); err != nil {
		return Claims{}, errToken
	}
	if std.Expiry == nil {
		return Claims{}, errToken // a token that never expires is not accepted
	}
	if v.lifetime > 0 && (std.IssuedAt == nil || std.Expiry.Time().Sub(std.IssuedAt.Time()) > v.lifetime) {
		return Claims{}, errToken
	}
	expected := jwt.Expected{Issuer: v.issuer, Time: now}
	if len(v.audience) > 0 {
		expected.AnyAudience = v.audience
	}
	if err := std.ValidateWithLeeway(expected, v.leeway); err != nil {
		return Claims{}, errToken
	}
	// The tenant keeps callers apart (their jobs, their pseudonyms, their budgets) and labels
	// metrics: an explicit tenant claim, or the OAuth client (a bounded set of services), never
	// the subject, which names a person as often as not. A token that names neither is refused:
	// one shared tenant for all such tokens would let each caller see the others' jobs.
	c := Claims{Tenant: firstOf(extra.Tenant, extra.ClientID, extra.AZP, extra.CID, extra.AppID, ""), KeyID: h.KeyID}
	if c.Tenant == "" {
		return Claims{}, errToken
	}
	for _, raw := range []json.RawMessage{extra.Scope, extra.SCP, extra.Scopes} {
		scopes, err := parseScopes(raw)
		if err != nil {
			return Claims{}, errToken
		}
		if len(scopes) > 0 {
			c.Scopes = scopes
			break
		}
	}
	return c, nil
}

// String names the verifier's setup for a start-up line, without key material.
func (v *JWTVerifier) String() string {
	return fmt.Sprintf("%d JWKS keys, issuer %q, %d audiences", len(v.keys.Keys), v.issuer, len(v.audience))
}
