package signing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/natsbox"
)

var epoch = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// independentSignature is OpenMed's documented scheme written out again, line by line, so that
// Canonical and Sign are checked against something they did not produce.
func independentSignature(secret, method, target string, ts int64, nonce string, body []byte) string {
	bodyHash := sha256.Sum256(body)
	lines := fmt.Sprintf("OPENMED-HMAC-SHA256-V1\n%s\n%s\n%d\n%s\nsha256:%x", method, target, ts, nonce, bodyHash)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(lines))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

type headers map[string]string

func (h headers) get(k string) string { return h[k] }

func signed(secret, method, target string, ts int64, nonce string, body []byte) headers {
	return headers{HeaderTimestamp: fmt.Sprint(ts), HeaderNonce: nonce,
		HeaderSignature: independentSignature(secret, method, target, ts, nonce, body)}
}

func reason(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Reason
	}
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func TestVerifyChecksEachPartOnce(t *testing.T) {
	fake := clock.NewFake(epoch)
	v, err := NewVerifier(Config{Window: 5 * time.Minute, MaxNonces: 10}, []byte("s3cret"), fake, NewMemoryNonces(fake, 10))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"text":"x"}`)
	ts := epoch.Unix()
	if got := Sign("s3cret", Canonical("POST", "/pii/extract?x=1", ts, "n1", body)); got != independentSignature("s3cret", "POST", "/pii/extract?x=1", ts, "n1", body) {
		t.Fatalf("Sign: %s", got)
	}
	ctx := context.Background()
	good := signed("s3cret", "POST", "/pii/extract?x=1", ts, "n1", body)
	for _, c := range []struct {
		name, method, target string
		body                 []byte
		h                    headers
		want                 string
	}{
		{"another body", "POST", "/pii/extract?x=1", []byte(`{"text":"y"}`), good, ReasonMismatch},
		{"another query", "POST", "/pii/extract?x=2", body, good, ReasonMismatch},
		{"another method", "PUT", "/pii/extract?x=1", body, good, ReasonMismatch},
		{"another secret", "POST", "/t", body, signed("other", "POST", "/t", ts, "n2", body), ReasonMismatch},
		{"no nonce", "POST", "/t", body, headers{HeaderTimestamp: "1", HeaderSignature: "sha256=00"}, ReasonMissing},
		{"not hex", "POST", "/t", body, headers{HeaderTimestamp: fmt.Sprint(ts), HeaderNonce: "n", HeaderSignature: "sha256=zz"}, ReasonMalformed},
		{"no prefix", "POST", "/t", body, headers{HeaderTimestamp: fmt.Sprint(ts), HeaderNonce: "n", HeaderSignature: good[HeaderSignature][7:]}, ReasonMalformed},
		{"stale", "POST", "/t", body, signed("s3cret", "POST", "/t", ts-301, "n3", body), ReasonStale},
		{"future", "POST", "/t", body, signed("s3cret", "POST", "/t", ts+301, "n4", body), ReasonStale},
		{"signed", "POST", "/pii/extract?x=1", body, good, "ok"},
		{"replayed", "POST", "/pii/extract?x=1", body, good, ReasonReplayed},
	} {
		if got := reason(v.Verify(ctx, c.method, c.target, c.body, c.h.get)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// A forged request took no room: only "signed" holds a place.
	if n := v.nonces.(*MemoryNonces).Len(); n != 1 {
		t.Fatalf("nonces kept: %d, want 1", n)
	}
}

func TestMemoryNoncesFailClosedWhenFull(t *testing.T) {
	fake := clock.NewFake(epoch)
	m := NewMemoryNonces(fake, 2)
	ctx := context.Background()
	if m.Consume(ctx, "a", epoch.Add(time.Minute)) != nil || m.Consume(ctx, "b", epoch.Add(2*time.Minute)) != nil {
		t.Fatal("room refused")
	}
	var f *Failure
	if err := m.Consume(ctx, "c", epoch.Add(time.Minute)); !errors.As(err, &f) || f.Reason != ReasonNoncesFull || f.RetryAfter != time.Minute {
		t.Fatalf("full: %v", err)
	}
	fake.Advance(time.Minute) // the last instant of a's window: still kept
	if err := m.Consume(ctx, "a", epoch.Add(3*time.Minute)); !errors.Is(err, ErrReplayed) {
		t.Fatalf("a at its window's end: %v", err)
	}
	fake.Advance(time.Nanosecond) // a's window has passed: its place frees, and a may come again
	if err := m.Consume(ctx, "c", epoch.Add(3*time.Minute)); err != nil {
		t.Fatalf("after a's window: %v", err)
	}
	if err := m.Consume(ctx, "b", epoch.Add(3*time.Minute)); !errors.Is(err, ErrReplayed) {
		t.Fatalf("b again: %v", err)
	}
}

// Two verifiers on one JetStream (two replicas of a fleet) refuse a request replayed at the
// other, and a full bucket fails closed.
func TestJetStreamNoncesAreTheFleets(t *testing.T) {
	box, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: t.TempDir(), Replicas: 1, Replica: "t"}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	cfg := Config{Window: 5 * time.Minute, MaxNonces: 8}
	fake := clock.NewFake(epoch)
	var vs [2]*Verifier
	for i := range vs {
		nonces, err := NewJetStreamNonces(context.Background(), box.JetStream(), cfg, 1, slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		if vs[i], err = NewVerifier(cfg, []byte("k"), fake, nonces); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	h := signed("k", "POST", "/jobs", epoch.Unix(), "once", nil)
	if got := reason(vs[0].Verify(ctx, "POST", "/jobs", nil, h.get)); got != "ok" {
		t.Fatalf("first: %s", got)
	}
	if got := reason(vs[1].Verify(ctx, "POST", "/jobs", nil, h.get)); got != ReasonReplayed {
		t.Fatalf("replayed at the other replica: %s", got)
	}
	full := ""
	for i := range 40 {
		h := signed("k", "POST", "/jobs", epoch.Unix(), fmt.Sprint("n", i), nil)
		if full = reason(vs[i%2].Verify(ctx, "POST", "/jobs", nil, h.get)); full != "ok" {
			break
		}
	}
	if full != ReasonNoncesFull {
		t.Fatalf("a bucket past its bound: %s", full)
	}
	// A replica of a shorter window or fewer nonces leaves the bucket as long-lived and as large.
	logs := &logtest.Buffer{}
	if _, err := NewJetStreamNonces(context.Background(), box.JetStream(), Config{Window: time.Minute, MaxNonces: 1}, 1, slog.New(slog.NewTextHandler(logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "not shrunk") {
		t.Errorf("a bucket kept larger than asked, without a word: %q", logs.String())
	}
	kv, err := box.JetStream().KeyValue(context.Background(), nonceBucket)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if bs := st.(*jetstream.KeyValueBucketStatus); bs.TTL() != 10*time.Minute || bs.StreamInfo().Config.MaxBytes != 2*8*nonceEntryBytes {
		t.Fatalf("the bucket after a replica of a shorter window: TTL %s, %d bytes", bs.TTL(), bs.StreamInfo().Config.MaxBytes)
	}
}

// TestAReplayAtTheWindowsEdgeIsRefused: a request replayed at the very instant its timestamp
// leaves the window is refused, as it is a moment before.
func TestAReplayAtTheWindowsEdgeIsRefused(t *testing.T) {
	fake := clock.NewFake(epoch)
	cfg := Config{Window: 5 * time.Minute, MaxNonces: 8}
	v, err := NewVerifier(cfg, []byte("k"), fake, NewMemoryNonces(fake, cfg.MaxNonces))
	if err != nil {
		t.Fatal(err)
	}
	h := signed("k", "POST", "/jobs", epoch.Unix(), "edge", nil)
	if got := reason(v.Verify(context.Background(), "POST", "/jobs", nil, h.get)); got != "ok" {
		t.Fatalf("first: %s", got)
	}
	fake.Advance(cfg.Window)
	if got := reason(v.Verify(context.Background(), "POST", "/jobs", nil, h.get)); got == "ok" {
		t.Fatal("replayed at the window's end: accepted")
	}
}
