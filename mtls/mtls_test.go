package mtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// issue makes a certificate for tmpl signed by parent (self-signed when parent is nil).
func issue(t *testing.T, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, key
}

func pemOf(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

func TestVerifyMapsIdentitiesAndRefusesStrangers(t *testing.T) {
	ca, caKey := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}, nil, nil)
	spiffe, _ := url.Parse("spiffe://clinic.example/workload/client")
	client, _ := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "client"}, URIs: []*url.URL{spiffe},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, caKey)
	other, _ := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "other"}, DNSNames: []string{"other.internal"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, caKey)
	rogueCA, rogueKey := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "rogue"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}, nil, nil)
	rogue, _ := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "client"}, URIs: []*url.URL{spiffe},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, rogueCA, rogueKey)
	server, _ := issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "server"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, caKey)

	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	os.WriteFile(bundle, []byte(pemOf(ca)), 0o600)
	v, err := New(Config{Enabled: true, CABundle: bundle, ClientCertHeader: "X-Client-Cert", TrustedProxies: []string{"10.0.0.0/8", "127.0.0.1"},
		Principals: `[{"identities":["uri:spiffe://clinic.example/workload/client"],"principal":"clinic-api","scopes":["pii:read","pii:write"]}]`})
	if err != nil {
		t.Fatal(err)
	}
	id, err := v.Verify([]*x509.Certificate{client})
	if err != nil || id.SANs[0] != "uri:spiffe://clinic.example/workload/client" {
		t.Fatalf("client: %+v %v", id, err)
	}
	if p := v.Principal(id); p.Name != "clinic-api" || len(p.Scopes) != 2 {
		t.Fatalf("mapped: %+v", p)
	}
	id, _ = v.Verify([]*x509.Certificate{other})
	if p := v.Principal(id); p.Name != "mtls:"+id.Fingerprint || len(p.Scopes) != 0 || len(id.Fingerprint) != 64 {
		t.Fatalf("unmapped: %+v", p)
	}
	for name, chain := range map[string][]*x509.Certificate{"rogue": {rogue}, "server-only usage": {server}} {
		if _, err := v.Verify(chain); err != ErrInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := v.Verify(nil); err != ErrRequired {
		t.Errorf("none: %v", err)
	}
	chain, err := ParseHeader(url.PathEscape(pemOf(client)))
	if err != nil || !chain[0].Equal(client) {
		t.Fatalf("header: %v", err)
	}
	if !v.TrustedPeer(netip.MustParseAddr("10.1.2.3")) || !v.TrustedPeer(netip.MustParseAddr("::ffff:127.0.0.1")) || v.TrustedPeer(netip.MustParseAddr("192.168.1.1")) {
		t.Fatal("trusted proxies")
	}

	// A bundle with a key, or with no certificate, refuses the start.
	withKey := filepath.Join(dir, "with-key.pem")
	os.WriteFile(withKey, []byte(pemOf(ca)+"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("nothing here\n"), 0o600)
	for path, want := range map[string]string{withKey: "private key", empty: "no certificate"} {
		if _, err := New(Config{Enabled: true, CABundle: path}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
	err = Config{Enabled: true, ClientCertHeader: "bad header", Principals: `{"not":"a list"}`, CertFile: "c.pem"}.Validate()
	for _, f := range []string{"CABundle", "ClientCertHeader", "TrustedProxies", "Principals", "CertFile"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("%s not reported: %v", f, err)
		}
	}
}
