package signing

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// order is every kept nonce by when it expires, soonest first: the expired are forgotten
	// from its front, never by a walk over all of them.
	order nonceHeap
}

// NewMemoryNonces keeps at most max nonces.
func NewMemoryNonces(clk clock.Clock, max int) *MemoryNonces {
	return &MemoryNonces{clk: clk, max: max, expires: map[string]time.Time{}}
}

// Consume records key through expires (a request signed at the window's very edge is still
// a replay at that instant). When full, after forgetting the nonces whose windows have passed,
// it refuses, with the wait until the first frees.
func (m *MemoryNonces) Consume(_ context.Context, key string, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clk.Now()
	for len(m.order) > 0 && now.After(m.order[0].until) {
		// One entry a kept nonce: a key comes back only once its entry has left the front.
		delete(m.expires, heap.Pop(&m.order).(nonceEntry).key)
	}
	if until, ok := m.expires[key]; ok && !now.After(until) {
		return ErrReplayed
	}
	if len(m.expires) >= m.max {
		return &Failure{Reason: ReasonNoncesFull, RetryAfter: max(m.order[0].until.Sub(now), time.Second)}
	}
	m.expires[key] = expires
	heap.Push(&m.order, nonceEntry{until: expires, key: key})
	return nil
}

// Len is how many nonces are kept now.
func (m *MemoryNonces) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.expires)
}

type nonceEntry struct {
	until time.Time
	key   string
}

// nonceHeap is a container/heap of nonces, soonest expiry first.
type nonceHeap []nonceEntry

func (h nonceHeap) Len() int           { return len(h) }
func (h nonceHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h nonceHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nonceHeap) Push(x any)        { *h = append(*h, x.(nonceEntry)) }
func (h *nonceHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
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

// BucketBytes is what the fleet's nonce bucket holds, and reserves of the server's store:
// entries live twice the window, so twice MaxNonces of them, the same nonces a second as the
// memory store keeps.
func (c Config) BucketBytes() int64 { return 2 * int64(c.MaxNonces) * nonceEntryBytes }

// NewJetStreamNonces ensures the bucket, with replicas copies. A bucket another replica made
// is never made smaller or shorter-lived here (a replica of a shorter window would drop nonces
// the others still accept requests of); where it is kept larger than this replica asks, the
// log says so, since only an operator's edit of the bucket makes it smaller.
func NewJetStreamNonces(ctx context.Context, js jetstream.JetStream, cfg Config, replicas int, logger *slog.Logger) (*JetStreamNonces, error) {
	ttl, bytes := 2*cfg.Window, cfg.BucketBytes()
	if kv, err := js.KeyValue(ctx, nonceBucket); err == nil {
		if st, err := kv.Status(ctx); err == nil {
			if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok {
				keptTTL, keptBytes := max(ttl, bs.TTL()), bytes
				switch have := bs.StreamInfo().Config.MaxBytes; {
				case have <= 0:
					keptBytes = -1 // unbounded, as an operator left it
				case have > bytes:
					keptBytes = have
				}
				if keptTTL != ttl || keptBytes != bytes {
					logger.Warn("signing: the fleet's nonce bucket is kept as long-lived or as large as it was, not shrunk to this replica's settings; edit the bucket to shrink it",
						slog.String("bucket", nonceBucket), slog.Duration("kept_ttl", keptTTL), slog.Duration("asked_ttl", ttl))
					ttl, bytes = keptTTL, keptBytes
				}
			}
		}
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: nonceBucket, History: 1,
		TTL: ttl, MaxBytes: bytes, Storage: jetstream.FileStorage,
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
		// Entries expire a few at a time, not all at the window's end.
		return &Failure{Reason: ReasonNoncesFull, RetryAfter: max(j.window/60, time.Second)}
	}
	return err
}
