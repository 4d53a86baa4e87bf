// Package identity says who is calling: it reads a request's credential (an API key, or a JWT
// bearer token), finds the tenant and scopes behind it, and decides whether the route the
// request asks for is open to them. It is off unless keys or a JWKS are configured, and it
// speaks OpenMed's service's formats and answers, so that a team switching keeps its keys,
// its tokens and its clients' error handling.
//
// # How to use it
//
//	keys, err := identity.ParseKeys(data)             // OpenMed's JSON: [{id, key_hash, principal, scopes}] or {"keys": [...]}
//	auth, err := identity.New(identity.Config{Keys: keys, FailureRate: 5, FailureBurst: 10}, clk)
//	proxies, err := identity.ParseProxies([]string{"10.0.0.0/8"})   // the ingress in front
//	client := proxies.Client(peer, xForwardedFor)                    // the peer, or what a trusted proxy says
//	p, refusal := auth.Check("POST", "/pii/extract", header, client)
//	if refusal != nil { /* write refusal.Status, .Code, .Message, .Details, .Headers */ }
//	auth.SetKeys(newKeys)                             // a reload: requests in flight keep their answer
//
// Keys are stored as their SHA-256 (configured as "sha256:<hex>" or bare hex, never in clear)
// and compared in constant time. A key's tenant is its "tenant" field, else its principal,
// else its id: what labels metrics and the access log, never the key. A bearer value without a
// JWT's shape is an API key (OpenAI's clients send keys so). Scopes are OpenMed's:
// "ns:action", with "*" and "ns:*" granting every scope, or every one of a namespace;
// DefaultRouteScopes gives every route the server has one. The probes and /metrics are always
// open. A route with no scope of its own needs some valid credential (OpenMed's deny by
// default). Failed attempts are limited per client address, and only failures: past the
// burst, a 429 replaces the 401, while a valid credential from that address is still heard.
// The client's address is its peer's unless the peer is a trusted proxy (Proxies), whose
// X-Forwarded-For is then read from its right end.
package identity
