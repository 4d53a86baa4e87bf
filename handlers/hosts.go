package handlers

import (
	"crypto/x509"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"

	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/mtls"
)

// hostCheck answers 400 to a request whose Host header is not one of opts.TrustedHosts, as
// OpenMed's TRUSTED_HOSTS does: a name given exactly, or "*.example.org" for any name under
// it. The probes and /metrics are never refused: an orchestrator's probes and scrapers name
// the pod's address, not the service's.
func (s *server) hostCheck(c *fiber.Ctx) error {
	if len(s.opts.TrustedHosts) == 0 || isProbe(c.Path()) {
		return c.Next()
	}
	// As sent: edges has checked that it is a host and port, and that an absolute-form target
	// names the same one.
	host := string(c.Request().Header.Host())
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]" // an IPv6 address keeps its brackets, as it is listed
		}
	}
	host = strings.ToLower(host)
	for _, pattern := range s.opts.TrustedHosts {
		p := strings.ToLower(pattern)
		if p == host || (strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:])) {
			return c.Next()
		}
	}
	return &apiError{Status: fiber.StatusBadRequest, Code: "bad_request", Message: "Invalid host header",
		Details: map[string]string{"reason": "Invalid host header"}, Outcome: OutcomeFailed}
}

// clientAddress is the address the request came from: its peer's, or behind a trusted proxy
// what the proxies say (identity.Proxies).
func (s *server) clientAddress(c *fiber.Ctx) string {
	peer := c.Context().RemoteIP().String()
	if s.opts.Proxies.Len() == 0 {
		return peer
	}
	return s.opts.Proxies.Client(peer, c.Request().Header.PeekAll(fiber.HeaderXForwardedFor))
}

// validHostHeader reports whether a Host header is a host and an optional port: a name of
// dot-separated labels (letters, digits, '-' and '_', as names are written in DNS and in
// compose files), an IPv4 address or a bracketed IPv6 one. Nothing else (no '/', '@', '?',
// space) is part of a host: "evil.com/.svc.example.org" ends with a trusted suffix but names no
// host under it.
func validHostHeader(v string) bool {
	host := v
	if i := strings.LastIndexByte(v, ':'); i >= 0 && !strings.HasSuffix(v, "]") {
		host = v[:i]
		if port := v[i+1:]; port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
	}
	if strings.HasPrefix(host, "[") {
		ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		return strings.HasSuffix(host, "]") && ip != nil && ip.To4() == nil
	}
	if host == "" || len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			b := label[i]
			if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
				return false
			}
		}
	}
	return true
}

// targetAuthority is the scheme and authority of an absolute-form request target
// ("http://h:1/p"), and whether the target has that form (absoluteTarget's).
func targetAuthority(target []byte) (scheme string, authority []byte, absolute bool) {
	m := absoluteTarget.FindSubmatch(target)
	if m == nil {
		return "", nil, false
	}
	return strings.ToLower(string(m[1])), m[2], true
}

// sameAuthority reports whether a target's authority and a Host header name one host and port,
// a scheme's default port written or not. A userinfo part ("user@host") names no host.
func sameAuthority(scheme, authority, host string) bool {
	port := map[string]string{"http": "80", "https": "443"}[scheme]
	split := func(hp string) (string, string) {
		if h, p, err := net.SplitHostPort(hp); err == nil {
			if p == "" {
				p = port
			}
			return strings.ToLower(h), p
		}
		return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]")), port
	}
	if strings.Contains(authority, "@") {
		return false
	}
	ah, ap := split(authority)
	hh, hp := split(host)
	return ah == hh && ap == hp
}

func isProbe(path string) bool {
	if path == v2Live || path == v2Ready {
		return true
	}
	for _, p := range probes {
		if p == path && p != "/models/loaded" && p != "/models/unload" && p != "/v1/models" {
			return true
		}
	}
	return false
}

// ValidTrustedHost says whether pattern is a trusted host hostCheck can match: a host name,
// "*." and a name (any name under it), an IPv4 address or a bracketed IPv6 one. hostCheck
// drops the Host header's port before comparing, so a pattern with a port, a scheme or a path
// matches no request (every one but the probes answered 400); a bare "*" or an empty one would
// trust any host.
func ValidTrustedHost(pattern string) bool {
	if strings.HasPrefix(pattern, "[") {
		return strings.HasSuffix(pattern, "]") && validHostHeader(pattern)
	}
	name := strings.TrimPrefix(pattern, "*.")
	return !strings.Contains(name, ":") && validHostHeader(name)
}

// ValidOrigin says whether o is an exact origin, as a browser sends one: http or https, a
// host (and a port), nothing after them but a "/"; no wildcard, which would let any page call
// the API.
func ValidOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.Contains(o, "*") &&
		(u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && u.User == nil && !u.ForceQuery
}

// corsHandler lets browser pages from opts.CORSOrigins call the API, with OpenMed's methods
// and headers; nil when no origin is listed.
func corsHandler(origins []string) fiber.Handler {
	if len(origins) == 0 {
		return nil
	}
	return cors.New(cors.Config{
		AllowOrigins:  strings.Join(origins, ","),
		AllowMethods:  "GET,POST",
		AllowHeaders:  "Accept,Accept-Language,Content-Language,Content-Type,X-Request-ID,Authorization,X-API-Key,X-OpenMed-Timestamp,X-OpenMed-Nonce,X-OpenMed-Signature",
		ExposeHeaders: "X-Request-ID,Retry-After",
	})
}

// authenticate checks the request's credential and its route's scopes (Options.Auth), and
// answers OpenMed's 401, 403 or 429 in the error envelope. The tenant goes on for the metrics
// and the access log; the credential itself goes nowhere.
func (s *server) authenticate(c *fiber.Ctx) error {
	conn, _ := c.Locals(localConnPrincipal).(*identity.Principal)
	p, ref := s.opts.Auth.CheckAs(c.Method(), routeOf(c.Path()), func(k string) string { return c.Get(k) }, s.clientAddress(c), conn)
	if p.Credential != "" {
		// Whether it may read every tenant's audit, for the audit's read; a caller of an open
		// route without a credential is not scoped, as with authentication off.
		c.Locals(localReadsAllTenants, p.Has(identity.AuditAllTenants))
	}
	if p.Tenant != "" {
		c.Locals(localTenant, p.Tenant)
		c.Locals(localTenantLabel, p.Label())
		c.Locals(localAllowance, p.Allowance)
		if p.Gateway {
			c.Locals(localGateway, true)
		}
	}
	if ref == nil {
		return c.Next()
	}
	return authRefusal(ref)
}

// originForm is a request line's target as the client wrote it, in origin form: an
// absolute-form target (a proxy's "http://host/path?q") loses its scheme and host.
func originForm(raw []byte) string {
	if m := absoluteTarget.FindSubmatch(raw); m != nil {
		if len(m[3]) == 0 {
			return "/"
		}
		return string(m[3])
	}
	return string(raw)
}

// verifySignature refuses a request whose OpenMed HMAC signature does not hold (Options.Signing):
// over the method, the exact request target and the body's exact bytes as sent, before they are
// unpacked. The probes and /metrics are not signed.
func (s *server) verifySignature(c *fiber.Ctx) error {
	if isProbe(c.Path()) {
		return c.Next()
	}
	header := func(k string) string { return c.Get(k) }
	err := s.opts.Signing.Verify(c.UserContext(), c.Method(), originForm(c.Request().Header.RequestURI()), c.Request().Body(), header)
	if err == nil {
		return c.Next()
	}
	return signatureRefusal(err)
}

// clientCertificate requires a verified client certificate (Options.MTLS): the TLS connection's,
// or a trusted proxy's header's, checked against the CA bundle here whatever the handshake or
// the proxy checked. Its principal is the request's unless an explicit credential names
// another. The probes need none, so that an orchestrator can reach them.
func (s *server) clientCertificate(c *fiber.Ctx) error {
	if isProbe(c.Path()) {
		return c.Next()
	}
	v := s.opts.MTLS
	var chain []*x509.Certificate
	if st := c.Context().TLSConnectionState(); st != nil && len(st.PeerCertificates) > 0 {
		chain = st.PeerCertificates
	} else if h := v.Header(); h != "" && c.Get(h) != "" {
		peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
		if !ok || !v.TrustedPeer(peer) || len(c.Request().Header.PeekAll(h)) != 1 {
			// From a peer not trusted to forward it, or twice (a proxy that appends rather
			// than replaces would put the client's own copy first).
			return mtlsRefusal(mtls.ErrInvalid)
		}
		var err error
		if chain, err = mtls.ParseHeader(c.Get(h)); err != nil {
			return mtlsRefusal(err)
		}
	}
	id, err := v.Verify(chain)
	if err != nil {
		return mtlsRefusal(err)
	}
	mp := v.Principal(id)
	p := &identity.Principal{Tenant: mp.Name, Listed: mp.Mapped, Credential: "mtls", Scopes: mp.Scopes}
	c.Locals(localConnPrincipal, p)
	c.Locals(localTenant, p.Tenant)
	c.Locals(localTenantLabel, p.Label())
	return c.Next()
}
