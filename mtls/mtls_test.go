package mtls

import (
	"crypto/x509"
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
