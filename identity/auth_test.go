package identity

import (
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// TestCertificatesOnly: with client certificates the only credential, a header credential a
// client sends anyway is not checked against nothing: the certificate's principal decides, and
// no failed attempt is counted.
func TestCertificatesOnly(t *testing.T) {
	a, err := New(Config{Certificates: true, FailureRate: 1, FailureBurst: 1}, clock.NewFake(time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	conn := &Principal{Tenant: "clinic-api", Credential: "mtls", Scopes: []string{"pii:read"}}
	sdk := func(k string) string {
		if k == "Authorization" {
			return "Bearer EMPTY"
		}
		return ""
	}
	for range 3 {
		if p, ref := a.CheckAs("POST", "/pii/extract", sdk, "10.0.0.1:5000", conn); ref != nil || p.Tenant != "clinic-api" {
			t.Fatalf("%+v %+v", p, ref)
		}
	}
	if _, ref := a.CheckAs("POST", "/pii/deidentify", sdk, "10.0.0.1:5000", conn); ref == nil || ref.Reason != Forbidden {
		t.Fatalf("a scope the certificate lacks: %+v", ref)
	}
}
