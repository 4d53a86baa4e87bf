package mtls

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/settings"
)

// Config is OpenMed's mTLS settings, and the server certificate Sluice terminates TLS with.
type Config struct {
	Enabled bool `env:"MTLS" envDefault:"false"`
	// CABundle is the PEM file of the CAs client certificates must chain to.
	CABundle string `env:"MTLS_CA_BUNDLE"`
	// ClientCertHeader, with TrustedProxies, takes a URL-escaped PEM chain from a proxy that
	// terminated mTLS; from any other peer the header is refused.
	ClientCertHeader string   `env:"MTLS_CLIENT_CERT_HEADER"`
	TrustedProxies   []string `env:"MTLS_TRUSTED_PROXIES" envSeparator:","`
	// Principals maps exact identities to a principal and scopes (OpenMed's JSON list of
	// {"identities", "principal", "scopes"}).
	Principals string `env:"MTLS_PRINCIPALS"`
	// CertFile and KeyFile are the server's certificate and key: set, Sluice terminates TLS
	// and asks clients for their certificates.
	CertFile string `env:"TLS_CERT_FILE"`
	KeyFile  string `env:"TLS_KEY_FILE"`
}

var headerName = regexp.MustCompile(`^[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+$`)

// Validate reports every problem that needs no file read.
func (c Config) Validate() error {
	check := settings.For("mtls")
	if (c.CertFile == "") != (c.KeyFile == "") {
		check.Addf("CertFile", "and KeyFile go together: set both or neither")
	}
	if !c.Enabled {
		return check.Err()
	}
	if c.CABundle == "" {
		check.Addf("CABundle", "is required when mTLS is on")
	}
	if c.CertFile == "" && c.ClientCertHeader == "" {
		check.Addf("Enabled", "needs a way for certificates to arrive: SLUICE_TLS_CERT_FILE (Sluice terminates TLS) or SLUICE_MTLS_CLIENT_CERT_HEADER (a proxy does)")
	}
	if c.ClientCertHeader != "" && !headerName.MatchString(c.ClientCertHeader) {
		check.Addf("ClientCertHeader", "must be an HTTP header name, got %q", c.ClientCertHeader)
	}
	if c.ClientCertHeader != "" && len(c.TrustedProxies) == 0 {
		check.Addf("TrustedProxies", "is required with a client certificate header")
	}
	if slices.Contains(c.TrustedProxies, "") {
		check.Addf("TrustedProxies", "lists an empty address: name each proxy")
	}
	if _, err := identity.ParseProxies(c.TrustedProxies); err != nil {
		check.Addf("TrustedProxies", "%v", err)
	}
	if _, err := parsePrincipals(c.Principals); err != nil {
		check.Addf("Principals", "%v", err)
	}
	return check.Err()
}

// Identity is a verified client certificate's.
type Identity struct {
	Subject     string
	SANs        []string
	Fingerprint string // lowercase hex SHA-256 of the leaf
}

// Principal is who a verified certificate is, for authorization.
type Principal struct {
	Name   string
	Scopes []string
	// Mapped: Principals names it (not a certificate's fingerprint).
	Mapped bool
}

type mapping struct {
	Identities []string `json:"identities"`
	Principal  string   `json:"principal"`
	Scopes     any      `json:"scopes"`
}

// Verifier verifies client certificate chains. Safe for concurrent use.
type Verifier struct {
	pool       *x509.CertPool
	proxies    *identity.Proxies
	header     string
	principals []compiled
}

type compiled struct {
	identities map[string]bool
	principal  Principal
}

// Errors, with OpenMed's codes as their reasons.
var (
	ErrRequired = errors.New("mtls_certificate_required")
	ErrInvalid  = errors.New("mtls_certificate_invalid")
)

// New checks cfg and reads the CA bundle.
func New(cfg Config) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pool, err := ReadBundle(cfg.CABundle)
	if err != nil {
		return nil, err
	}
	proxies, _ := identity.ParseProxies(cfg.TrustedProxies)
	principals, _ := parsePrincipals(cfg.Principals)
	return &Verifier{pool: pool, proxies: proxies, header: cfg.ClientCertHeader, principals: principals}, nil
}

// Pool is the CAs, for the TLS listener's own check of the handshake.
func (v *Verifier) Pool() *x509.CertPool { return v.pool }

// Header is the trusted proxy's header name ("" for none).
func (v *Verifier) Header() string { return v.header }

// ReadBundle reads the CA bundle at path (Config.CABundle): its certificates, at least one; a
// private key in it is refused.
func ReadBundle(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mtls: the CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if strings.Contains(b.Type, "PRIVATE KEY") {
			return nil, fmt.Errorf("mtls: the CA bundle %s holds a private key: keep keys out of it", path)
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("mtls: the CA bundle %s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("mtls: the CA bundle %s holds no certificate", path)
	}
	return pool, nil
}

func parsePrincipals(raw string) ([]compiled, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var list []mapping
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("must be a JSON list of {identities, principal, scopes}: %v", err)
	}
	out := make([]compiled, 0, len(list))
	for i, m := range list {
		if strings.TrimSpace(m.Principal) == "" || len(m.Identities) == 0 {
			return nil, fmt.Errorf("entry %d needs a principal and at least one identity", i)
		}
		c := compiled{identities: map[string]bool{}, principal: Principal{Name: m.Principal, Mapped: true}}
		for _, id := range m.Identities {
			if id = strings.TrimSpace(id); id != "" {
				c.identities[id] = true
			}
		}
		switch s := m.Scopes.(type) {
		case nil:
		case string: // OpenMed takes a list or a string of names separated by spaces or commas
			c.principal.Scopes = strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
		case []any:
			for _, x := range s {
				name, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("entry %d: scopes must be strings", i)
				}
				c.principal.Scopes = append(c.principal.Scopes, strings.TrimSpace(name))
			}
		default:
			return nil, fmt.Errorf("entry %d: scopes must be a list or a string", i)
		}
		out = append(out, c)
	}
	return out, nil
}

// TrustedPeer says whether a direct peer may hand a certificate in the header.
func (v *Verifier) TrustedPeer(peer netip.Addr) bool { return v.proxies.Trusts(peer) }

// ParseHeader reads a proxy's URL-escaped, leaf-first PEM chain: PEM blocks and white space
// only (two values a proxy joined would put the client's first).
func ParseHeader(value string) ([]*x509.Certificate, error) {
	raw, err := url.PathUnescape(value)
	if err != nil {
		return nil, ErrInvalid
	}
	var chain []*x509.Certificate
	for rest := []byte(raw); ; {
		at := bytes.Index(rest, []byte("-----BEGIN"))
		if at < 0 {
			if len(bytes.TrimSpace(rest)) > 0 {
				return nil, ErrInvalid
			}
			break
		}
		if len(bytes.TrimSpace(rest[:at])) > 0 {
			return nil, ErrInvalid
		}
		var b *pem.Block
		if b, rest = pem.Decode(rest[at:]); b == nil {
			return nil, ErrInvalid
		}
		if b.Type != "CERTIFICATE" {
			return nil, ErrInvalid
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, ErrInvalid
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, ErrInvalid
	}
	return chain, nil
}

// Verify checks a leaf-first chain against the bundle, for client authentication.
func (v *Verifier) Verify(chain []*x509.Certificate) (Identity, error) {
	if len(chain) == 0 {
		return Identity{}, ErrRequired
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	leaf := chain[0]
	if leaf.IsCA {
		return Identity{}, ErrInvalid // a CA's own certificate is no client's
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: v.pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return Identity{}, ErrInvalid
	}
	sum := sha256.Sum256(leaf.Raw)
	id := Identity{Subject: subject(leaf), Fingerprint: hex.EncodeToString(sum[:])}
	for _, d := range leaf.DNSNames {
		id.SANs = append(id.SANs, "dns:"+d)
	}
	for _, u := range leaf.URIs {
		id.SANs = append(id.SANs, "uri:"+u.String())
	}
	for _, ip := range leaf.IPAddresses {
		id.SANs = append(id.SANs, "ip:"+ip.String())
	}
	for _, e := range leaf.EmailAddresses {
		id.SANs = append(id.SANs, "email:"+e)
	}
	return id, nil
}

// subject is the leaf's subject as RFC 4514 writes it: its RDNs from last to first, as they
// are in the certificate (pkix.Name.String reorders them), with DC and UID by name.
func subject(leaf *x509.Certificate) string {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(leaf.RawSubject, &seq); err != nil || len(rest) > 0 {
		return leaf.Subject.String()
	}
	short := map[string]string{"0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
		"1.2.840.113549.1.9.1": "emailAddress"}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			name, ok := short[atv.Type.String()]
			if !ok {
				one := pkix.RDNSequence{pkix.RelativeDistinguishedNameSET{atv}}.String() // its own short name and escaping
				b.WriteString(one)
				continue
			}
			v, _ := atv.Value.(string)
			b.WriteString(name + "=" + escapeRDN(v))
		}
	}
	return b.String()
}

// escapeRDN escapes a value as RFC 4514 asks.
func escapeRDN(v string) string {
	var b strings.Builder
	for i, r := range v {
		switch {
		case r == 0:
			b.WriteString(`\00`)
			continue
		case strings.ContainsRune(",+\"<>;\\", r), r == '#' && i == 0, r == ' ' && (i == 0 || i == len(v)-1):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Principal is the first mapping that names one of id's identities (its subject or a SAN),
// or mtls:<fingerprint> with no scopes: the certificate is known, and given nothing.
func (v *Verifier) Principal(id Identity) Principal {
	for _, m := range v.principals {
		if m.identities[id.Subject] {
			return m.principal
		}
		for _, s := range id.SANs {
			if m.identities[s] {
				return m.principal
			}
		}
	}
	return Principal{Name: "mtls:" + id.Fingerprint}
}
