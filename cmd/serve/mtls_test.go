package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/mtls/mtlstest"
)

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// codeOf posts body to url with client (and header pairs) and returns the status and error code.
func codeOf(client *http.Client, url, body string, headers ...string) (int, string, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return sendFor(client, req)
}

// sendFor sends req with client and returns the status and the error body's code.
func sendFor(client *http.Client, req *http.Request) (int, string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &e)
	return resp.StatusCode, e.Error.Code, nil
}

// TestMutualTLSAsOpenMedConfiguresIt: with OpenMed's own mTLS variables, Sluice terminating TLS
// serves a client whose certificate chains to the bundle, as the principal its SAN maps to and
// with that principal's scopes (an API key, when sent, takes precedence); a client without a
// certificate gets OpenMed's 401 mtls_certificate_required (the probes need none), and one from
// another CA is refused at the handshake. Behind a proxy, the chain comes URL-escaped in the
// configured header, believed only from the trusted proxies.
func TestMutualTLSAsOpenMedConfiguresIt(t *testing.T) {
	t.Parallel()
	t.Cleanup(http.DefaultClient.CloseIdleConnections) // registered first: runs after the servers stop
	dir := t.TempDir()
	ca, rogue := mtlstest.NewCA(t, "clinic CA"), mtlstest.NewCA(t, "rogue CA")
	bundle := writeFile(t, filepath.Join(dir, "ca.pem"), mtlstest.PEM(ca.Cert))
	server := ca.Server(t)
	certFile := writeFile(t, filepath.Join(dir, "server.pem"), mtlstest.PEM(server.Leaf))
	serverKey := writeFile(t, filepath.Join(dir, "server-key.pem"), mtlstest.KeyPEM(t, server))
	const workload = "spiffe://clinic.example/workload/openmed-client"
	principals := `[{"identities":["uri:` + workload + `"],"principal":"clinic-api","scopes":["pii:read"]}]`
	keys := filepath.Join(dir, "keys.json")
	keyFile(t, keys, keyEntry("all-scopes-key", "ops", "*"))
	common := []string{"SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_MTLS_ENABLED=true", "OPENMED_SERVICE_MTLS_CA_BUNDLE=" + bundle,
		"OPENMED_SERVICE_MTLS_PRINCIPALS=" + principals, "SLUICE_API_KEYS_FILE=" + keys}

	p := startProcess(t, append(common, "SLUICE_TLS_CERT_FILE="+certFile, "SLUICE_TLS_KEY_FILE="+serverKey)...)
	base := strings.Replace(p.url, "http://", "https://", 1)
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	clientOf := func(c *tls.Config) *http.Client {
		tr := &http.Transport{TLSClientConfig: c}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	clientWith := func(certs ...tls.Certificate) *http.Client {
		return clientOf(&tls.Config{RootCAs: roots, Certificates: certs})
	}
	good, none := clientWith(ca.Client(t, "client", workload)), clientWith()
	body := `{"text":"Call Maria at (415) 555-0132."}`
	for _, c := range []struct {
		name   string
		client *http.Client
		path   string
		hdr    []string
		status int
		code   string
	}{
		{"mapped principal, its scope", good, "/pii/extract", nil, 200, ""},
		{"mapped principal, a scope it lacks", good, "/pii/deidentify", nil, 403, "forbidden"},
		{"an API key beside the certificate", good, "/pii/deidentify", []string{"X-API-Key", "all-scopes-key"}, 200, ""},
		{"no certificate", none, "/pii/extract", []string{"X-API-Key", "all-scopes-key"}, 401, "mtls_certificate_required"},
	} {
		status, code, err := codeOf(c.client, base+c.path, body, c.hdr...)
		if err != nil || status != c.status || code != c.code {
			t.Errorf("%s: %d %q %v, want %d %q", c.name, status, code, err, c.status, c.code)
		}
	}
	resp, err := none.Get(base + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/health without a certificate: %v %v", resp, err)
	}
	resp.Body.Close()
	// Go's client sends only a certificate the server's CA list names: this one insists.
	rogueLeaf := rogue.Client(t, "client", workload)
	insisting := clientOf(&tls.Config{RootCAs: roots,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &rogueLeaf, nil }})
	if status, _, err := codeOf(insisting, base+"/pii/extract", body); err == nil {
		t.Fatalf("a certificate from another CA passed the handshake: %d", status)
	}

	// Behind a proxy: the chain in OpenMed's header, from a trusted peer only, once. These two
	// have no API keys: the certificates' scopes are still checked.
	escaped := url.PathEscape(string(mtlstest.PEM(ca.Client(t, "client", workload).Leaf)))
	unmapped := url.PathEscape(string(mtlstest.PEM(ca.Client(t, "stranger", "spiffe://clinic.example/other").Leaf)))
	forged := url.PathEscape(string(mtlstest.PEM(rogue.Client(t, "client", workload).Leaf)))
	proxied := []string{"SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_MTLS_ENABLED=true", "OPENMED_SERVICE_MTLS_CA_BUNDLE=" + bundle,
		"OPENMED_SERVICE_MTLS_PRINCIPALS=" + principals, "OPENMED_SERVICE_MTLS_CLIENT_CERT_HEADER=X-OpenMed-Client-Cert"}
	trusted := startProcess(t, append(proxied, "OPENMED_SERVICE_MTLS_TRUSTED_PROXIES=127.0.0.1/32")...).url
	untrusted := startProcess(t, append(proxied, "OPENMED_SERVICE_MTLS_TRUSTED_PROXIES=10.0.0.0/8")...).url
	for _, c := range []struct {
		name, url string
		certs     []string
		status    int
		code      string
	}{
		{"from the trusted proxy", trusted, []string{escaped}, 200, ""},
		{"a certificate no mapping names: no scopes", trusted, []string{unmapped}, 403, "forbidden"},
		{"another CA's, from the trusted proxy", trusted, []string{forged}, 401, "mtls_certificate_invalid"},
		{"the header twice", trusted, []string{forged, escaped}, 401, "mtls_certificate_invalid"},
		{"from a peer not trusted to forward it", untrusted, []string{escaped}, 401, "mtls_certificate_invalid"},
	} {
		req, _ := http.NewRequest(http.MethodPost, c.url+"/pii/extract", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for _, cert := range c.certs {
			req.Header.Add("X-OpenMed-Client-Cert", cert)
		}
		status, code, err := sendFor(http.DefaultClient, req)
		if err != nil || status != c.status || code != c.code {
			t.Errorf("%s: %d %q %v, want %d %q", c.name, status, code, err, c.status, c.code)
		}
	}
}
