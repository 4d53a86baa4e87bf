package signing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-serving/sluice/clock"
)

// MemoryNonces is the process's own nonce store, bounded. Safe for concurrent use.
type MemoryNonces struct {
	clk clock.Clock
	max int

	mu      sync.Mutex
	expires map[string]time.Time
}

// NewMemoryNonces keeps at most max nonces.
func NewMemoryNonces(clk clock.Clock, max int) *MemoryNonces {
	return &MemoryNonces{clk: clk, max: max, expires: map[string]time.Time{}}
}

// Consume records key until expires. When full it first forgets the nonces whose windows
// have passed; if none has, it refuses, with the wait until the first frees.
func (m *MemoryNonces) Consume(_ context.Context, key string, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clk.Now()
	if until, ok := m.expires[key]; ok && now.Before(until) {
		return ErrReplayed
	}
	if len(m.expires) >= m.max {
		first := time.Time{}
		for k, until := range m.expires {
			if !now.Before(until) {
				delete(m.expires, k)
			} else if first.IsZero() || until.Before(first) {
				first = until
			}
		}
		if len(m.expires) >= m.max {
			return &Failure{Reason: ReasonNoncesFull, RetryAfter: max(first.Sub(now), time.Second)}
		}
	}
	m.expires[key] = expires
	return nil
}

// Len is how many nonces are kept now.
func (m *MemoryNonces) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.expires)
}

// nonceBucket is the fleet's nonces on JetStream.
const nonceBucket = "SLUICE_SIGNING_NONCES"

// nonceEntryBytes is about what one nonce takes in the bucket (its subject, headers and
// bookkeeping): the bucket's byte bound is MaxNonces of them.
const nonceEntryBytes = 160

// JetStreamNonces is the fleet's nonce store: one key a nonce in a key-value bucket whose
// entries live twice the window (a fresh request's nonce is then kept past the end of its
// acceptance window), created once: a second Create of a key is a replay wherever it comes
// from. The bucket's byte bound refuses new nonces when full.
type JetStreamNonces struct {
	kv     jetstream.KeyValue
	window time.Duration
}

// NewJetStreamNonces ensures the bucket, with replicas copies.
func NewJetStreamNonces(ctx context.Context, js jetstream.JetStream, cfg Config, replicas int) (*JetStreamNonces, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: nonceBucket, History: 1,
		TTL: 2 * cfg.Window, MaxBytes: int64(cfg.MaxNonces) * nonceEntryBytes, Storage: jetstream.FileStorage,
		Replicas: replicas, Description: "nonces of signed requests, hashed, until their windows pass"})
	if err != nil {
		return nil, fmt.Errorf("signing: nonce bucket: %w", err)
	}
	return &JetStreamNonces{kv: kv, window: cfg.Window}, nil
}

// Consume creates key; one that exists is a replay. expires is the bucket's to keep.
func (j *JetStreamNonces) Consume(ctx context.Context, key string, _ time.Time) error {
	_, err := j.kv.Create(ctx, key, []byte{1})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyExists):
		return ErrReplayed
	case strings.Contains(err.Error(), "maximum bytes exceeded"):
		return &Failure{Reason: ReasonNoncesFull, RetryAfter: j.window}
	}
	return err
}
