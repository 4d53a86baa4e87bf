package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/natsbox/natstest"
)

// signingNATSPort is the first route port of this test's NATS cluster (the fleet test's is
// 7322).
const signingNATSPort = 7422

// openMedSigned is a request signed as OpenMed's sign_request documents it, written here from
// that description: the canonical string's six lines, HMAC-SHA256 under the secret, lowercase
// hex behind "sha256=".
func openMedSigned(t *testing.T, secret, url, target string, body []byte, nonce string, ts int64, encoding string) *http.Request {
	t.Helper()
	sum := sha256.Sum256(body)
	canonical := "OPENMED-HMAC-SHA256-V1\nPOST\n" + target + "\n" + strconv.FormatInt(ts, 10) + "\n" + nonce + "\nsha256:" + hex.EncodeToString(sum[:])
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(canonical))
	req, err := http.NewRequest(http.MethodPost, url+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	req.Header.Set("X-OpenMed-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-OpenMed-Nonce", nonce)
	req.Header.Set("X-OpenMed-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	return req
}

// answer sends req and returns its status and the error body's reason, if any.
func answer(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Details struct {
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &body)
	if body.Error.Code != "" && body.Error.Code != "invalid_signature" {
		t.Fatalf("status %d, code %s", resp.StatusCode, body.Error.Code)
	}
	return resp.StatusCode, body.Error.Details.Reason
}

// TestSignedRequestsAcrossTheFleet: with SLUICE_SIGNING_SECRET_FILE, two replicas on one
// JetStream cluster serve a request signed as OpenMed signs it (its body compressed too: the
// signature covers the bytes sent), refuse it unsigned, tampered, stale, or replayed at
// either replica, and leave the probes unsigned.
func TestSignedRequestsAcrossTheFleet(t *testing.T) {
	t.Parallel()
	nats, _ := natstest.Cluster(t, 3, signingNATSPort)
	secretFile := filepath.Join(t.TempDir(), "hmac")
	if err := os.WriteFile(secretFile, []byte("a shared secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var urls [2]string
	for i := range urls {
		p := startProcess(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_SIGNING_SECRET_FILE="+secretFile,
			"SLUICE_NATS_URL="+nats, "SLUICE_NATS_REPLICAS=3", fmt.Sprintf("SLUICE_REPLICA_ID=signing-%d", i))
		urls[i] = p.url
		if strings.Contains(strings.Join(p.started, "\n"), "kept by this replica alone") {
			t.Errorf("a replica on a shared cluster warned that its nonces are its own")
		}
	}
	body := []byte(`{"text":"Call Maria at (415) 555-0132."}`)
	now := time.Now().Unix()
	const secret = "a shared secret"
	const target = "/pii/extract?lang=en"
	if code, _ := answer(t, openMedSigned(t, secret, urls[0], target, body, "nonce-1", now, "")); code != http.StatusOK {
		t.Fatalf("signed: %d", code)
	}
	var packed bytes.Buffer
	zw := gzip.NewWriter(&packed)
	zw.Write(body)
	zw.Close()
	if code, _ := answer(t, openMedSigned(t, secret, urls[1], target, packed.Bytes(), "nonce-2", now, "gzip")); code != http.StatusOK {
		t.Fatalf("signed over the gzip bytes: %d", code)
	}
	unsigned, _ := http.NewRequest(http.MethodPost, urls[0]+target, bytes.NewReader(body))
	tampered := openMedSigned(t, secret, urls[0], target, body, "nonce-3", now, "")
	tampered.Body = io.NopCloser(bytes.NewReader(bytes.Replace(body, []byte("Maria"), []byte("Mario"), 1)))
	for _, c := range []struct {
		name string
		req  *http.Request
		want string
	}{
		{"unsigned", unsigned, "missing_signature"},
		{"tampered", tampered, "signature_mismatch"},
		{"stale", openMedSigned(t, secret, urls[0], target, body, "nonce-4", now-301, ""), "stale_timestamp"},
		{"another secret", openMedSigned(t, "guess", urls[0], target, body, "nonce-5", now, ""), "signature_mismatch"},
		{"replayed at the same replica", openMedSigned(t, secret, urls[0], target, body, "nonce-1", now, ""), "replayed_nonce"},
		{"replayed at the other replica", openMedSigned(t, secret, urls[1], target, body, "nonce-1", now, ""), "replayed_nonce"},
	} {
		if code, reason := answer(t, c.req); code != http.StatusUnauthorized || reason != c.want {
			t.Errorf("%s: %d %s, want 401 %s", c.name, code, reason, c.want)
		}
	}
	// The forged ones took no nonce: nonce-3 signed properly now passes.
	if code, _ := answer(t, openMedSigned(t, secret, urls[1], target, body, "nonce-3", now, "")); code != http.StatusOK {
		t.Fatalf("nonce-3 after its forgery: %d", code)
	}
	// A proxy's absolute form whose authority runs into a query naming the route: read as one
	// path by the router and another by the signature, it is refused before either.
	host := strings.TrimPrefix(urls[0], "http://")
	forged := openMedSigned(t, secret, urls[0], "/pii/extract", body, "nonce-6", now, "")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST http://%s?x=/pii/extract HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nConnection: close\r\n", host, host)
	for _, h := range []string{"X-OpenMed-Timestamp", "X-OpenMed-Nonce", "X-OpenMed-Signature"} {
		fmt.Fprintf(conn, "%s: %s\r\n", h, forged.Header.Get(h))
	}
	fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%s", len(body), body)
	raw, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	if raw.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "neither a path nor an absolute URL") {
		t.Errorf("a signature for /pii/extract on http://host?x=/pii/extract: %d %s", raw.StatusCode, data)
	}
	resp, err := http.Get(urls[0] + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/health unsigned: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestAShortSigningSecretIsSaid: a secret under 16 bytes is taken (OpenMed takes any) and the
// log says it is guessable; one of 32 says nothing. Nonces kept by the process alone are said
// too.
func TestAShortSigningSecretIsSaid(t *testing.T) {
	t.Parallel()
	for secret, warned := range map[string]bool{"zq7": true, strings.Repeat("k", 32): false} {
		path := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig([]string{"SLUICE_SIGNING_SECRET_FILE=" + path})
		if err != nil {
			t.Fatal(err)
		}
		logs := &logtest.Buffer{}
		s := &server{logger: slog.New(slog.NewJSONHandler(logs, nil))}
		if _, err := s.signingVerifier(context.Background(), cfg, clock.Real()); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "the signing secret is short"); got != warned || strings.Contains(logs.String(), secret) {
			t.Errorf("a secret of %d bytes: warned %v, want %v: %s", len(secret), got, warned, logs.String())
		}
		// Without a shared NATS cluster a nonce is this process's alone: said, since a fleet
		// of such replicas takes a signed request once each.
		if !strings.Contains(logs.String(), "kept by this replica alone") {
			t.Errorf("no word that the nonces are this replica's: %s", logs.String())
		}
	}
}
