package mtls

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/mtls/mtlstest"
)

func TestVerifyMapsIdentitiesAndRefusesStrangers(t *testing.T) {
	ca, rogueCA := mtlstest.NewCA(t, "test CA"), mtlstest.NewCA(t, "rogue")
	const spiffe = "spiffe://clinic.example/workload/client"
	client := ca.Client(t, "client", spiffe).Leaf
	other := ca.Client(t, "other", "", "other.internal").Leaf
	rogue := rogueCA.Client(t, "client", spiffe).Leaf
	server := ca.Server(t).Leaf

	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	os.WriteFile(bundle, mtlstest.PEM(ca.Cert), 0o600)
	v, err := New(Config{Enabled: true, CABundle: bundle, ClientCertHeader: "X-Client-Cert", TrustedProxies: []string{"10.0.0.0/8", "127.0.0.1"},
		Principals: `[{"identities":["uri:spiffe://clinic.example/workload/client"],"principal":"clinic-api","scopes":["pii:read","pii:write"]}]`})
	if err != nil {
		t.Fatal(err)
	}
	id, err := v.Verify([]*x509.Certificate{client})
	if err != nil || id.SANs[0] != "uri:spiffe://clinic.example/workload/client" {
		t.Fatalf("client: %+v %v", id, err)
	}
	if p := v.Principal(id); p.Name != "clinic-api" || len(p.Scopes) != 2 || !p.Mapped {
		t.Fatalf("mapped: %+v", p)
	}
	id, _ = v.Verify([]*x509.Certificate{other})
	if p := v.Principal(id); p.Name != "mtls:"+id.Fingerprint || len(p.Scopes) != 0 || len(id.Fingerprint) != 64 || p.Mapped {
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
	chain, err := ParseHeader(url.PathEscape(string(mtlstest.PEM(client))))
	if err != nil || !chain[0].Equal(client) {
		t.Fatalf("header: %v", err)
	}
	if !v.TrustedPeer(netip.MustParseAddr("10.1.2.3")) || !v.TrustedPeer(netip.MustParseAddr("::ffff:127.0.0.1")) || v.TrustedPeer(netip.MustParseAddr("192.168.1.1")) {
		t.Fatal("trusted proxies")
	}

	// A bundle with a key, or with no certificate, refuses the start.
	withKey := filepath.Join(dir, "with-key.pem")
	os.WriteFile(withKey, []byte(string(mtlstest.PEM(ca.Cert))+"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("nothing here\n"), 0o600)
	for path, want := range map[string]string{withKey: "private key", empty: "no certificate"} {
		if _, err := New(Config{Enabled: true, CABundle: path, CertFile: "c", KeyFile: "k"}); err == nil || !strings.Contains(err.Error(), want) {
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

// TestSubjectIsRFC4514s: the subject reads as RFC 4514 writes it (the certificate's RDNs last
// first, DC by name), so that OpenMed's subject mappings match; a CA's own certificate is no
// client's; an IPv4-mapped network matches the unmapped peer.
func TestSubjectIsRFC4514s(t *testing.T) {
	ca := mtlstest.NewCA(t, "test CA")
	dc := asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	leaf := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{
		{Type: dc, Value: "com"}, {Type: dc, Value: "example"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 11}, Value: "Users"},
		{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "alice, jr"}}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}).Leaf
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	os.WriteFile(bundle, mtlstest.PEM(ca.Cert), 0o600)
	v, err := New(Config{Enabled: true, CABundle: bundle, CertFile: "c", KeyFile: "k", TrustedProxies: []string{"::ffff:10.0.0.0/104"}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := v.Verify([]*x509.Certificate{leaf})
	if err != nil || id.Subject != `CN=alice\, jr,OU=Users,DC=example,DC=com` {
		t.Fatalf("subject %q, %v", id.Subject, err)
	}
	if _, err := v.Verify([]*x509.Certificate{ca.Cert}); err != ErrInvalid {
		t.Fatalf("the CA as a client: %v", err)
	}
	if !v.TrustedPeer(netip.MustParseAddr("10.9.8.7")) {
		t.Fatal("an IPv4-mapped network does not match its peer")
	}
}

// TestHeaderHoldsPEMOnly: a header value with anything but PEM blocks and white space is
// refused (two values joined would put the sender's first).
func TestHeaderHoldsPEMOnly(t *testing.T) {
	ca := mtlstest.NewCA(t, "test CA")
	one := string(mtlstest.PEM(ca.Client(t, "a", "").Leaf))
	if _, err := ParseHeader(url.PathEscape(one + "\n")); err != nil {
		t.Fatalf("one block: %v", err)
	}
	for name, v := range map[string]string{"joined with a comma": one + "," + one, "text before": "x" + one, "none": "   "} {
		if _, err := ParseHeader(url.PathEscape(v)); err != ErrInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}
