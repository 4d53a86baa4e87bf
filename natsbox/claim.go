package natsbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// claimBucket holds, on an external cluster, which replica names running processes use: one
// key a name, put again while the process runs, gone a claimTTL after it stops putting it.
// Two processes under one name would interleave one audit chain and break it; the embedded
// server needs no claim, its data directory's lock does the same.
const claimBucket = "SLUICE_REPLICAS"

// claimTTL is how long a claim outlives its process: a replica restarted after a crash waits
// at most this long for its own old claim to go. A variable for the tests' sake.
var claimTTL = 15 * time.Second

// ErrReplicaTaken means another running process holds this replica's name.
var ErrReplicaTaken = errors.New("natsbox: another running process uses this SLUICE_REPLICA_ID")

// claim takes the replica's name in the cluster, waiting out a claim left by a process that
// stopped, and keeps it until stop is closed.
func (b *Box) claim(ctx context.Context) error {
	// Read once: the renewing goroutine outlives this call, and a test may reset the variable.
	ttl := claimTTL
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: claimBucket, TTL: ttl, Replicas: b.cfg.Replicas,
		Description: "the replica names of running Sluice processes"})
	if err != nil {
		return fmt.Errorf("natsbox: the replica claims: %w", err)
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	mine := []byte(hex.EncodeToString(nonce))
	deadline := time.Now().Add(ttl + time.Second)
	for {
		_, err := kv.Create(ctx, b.replica, mine)
		if err == nil {
			break
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("natsbox: claiming the replica name: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%s): give each process its own", ErrReplicaTaken, b.replica)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	b.claimed = kv
	b.stopClaim = make(chan struct{})
	b.claimDone = make(chan struct{})
	go func() {
		defer close(b.claimDone)
		tick := time.NewTicker(ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-b.stopClaim:
				return
			case <-tick.C:
				pctx, cancel := context.WithTimeout(context.Background(), ttl/3)
				_, _ = kv.Put(pctx, b.replica, mine)
				cancel()
			}
		}
	}()
	return nil
}

// release stops renewing the claim and gives the name back.
func (b *Box) release() {
	if b.stopClaim == nil {
		return
	}
	close(b.stopClaim)
	<-b.claimDone
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.claimed.Delete(ctx, b.replica)
	b.stopClaim = nil
}
