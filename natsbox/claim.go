package natsbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
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
func (b *Box) claim(ctx context.Context, logger *slog.Logger) error {
	// Read once: the renewing goroutine outlives this call, and a test may reset the variable.
	ttl := claimTTL
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: claimBucket, TTL: ttl, Replicas: b.cfg.Replicas,
		Description: "the replica names of running Sluice processes"})
	if err != nil {
		return fmt.Errorf("natsbox: the replica claims: %w", err)
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	c := &claimed{kv: kv, name: b.replica, mine: []byte(hex.EncodeToString(nonce)), log: logger,
		last: func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
			return b.LastOf(ctx, "KV_"+claimBucket, "$KV."+claimBucket+"."+b.replica)
		}}
	deadline := time.Now().Add(ttl + time.Second)
	for {
		c.rev, err = kv.Create(ctx, c.name, c.mine)
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
	b.claimed = c
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
				held := c.renew(pctx)
				cancel()
				if !held {
					return
				}
			}
		}
	}()
	return nil
}

// claimed is a replica name this process holds: its value (a nonce of this process's) and
// the revision last written.
type claimed struct {
	kv   jetstream.KeyValue
	name string
	mine []byte
	rev  uint64
	log  *slog.Logger
	// last reads the claim as the stream's leader has it: a direct get, which any copy
	// answers, may show a holder the claim had before.
	last func(context.Context) (*jetstream.RawStreamMsg, error)
	lost bool // another process took the name: never renewed or given back again
}

// renew writes the claim again on the revision this process last wrote, so that it never
// overwrites another process's: one that took the name while this one could not reach the
// cluster for longer than the claim's time. A name gone meanwhile is taken again. It says
// whether the claim is still held.
func (c *claimed) renew(ctx context.Context) bool {
	rev, err := c.kv.Update(ctx, c.name, c.mine, c.rev)
	if err == nil {
		c.rev = rev
		return true
	}
	m, err := c.last(ctx)
	switch {
	case err != nil:
		return true // not reached: tried again on the next tick
	case m == nil || m.Header.Get("KV-Operation") != "": // none, or deleted or purged
		if rev, err := c.kv.Create(ctx, c.name, c.mine); err == nil {
			c.rev = rev
		}
		return true // or not reached: tried again on the next tick
	case bytes.Equal(m.Data, c.mine):
		c.rev = m.Sequence // this process's write landed, its answer did not
		return true
	}
	c.lost = true
	c.log.Error("natsbox: another process took this replica's name (SLUICE_REPLICA_ID) while the cluster was out of reach; "+
		"both append to one audit chain, which breaks: give each process its own name", slog.String("replica", c.name))
	return false
}

// release stops renewing the claim and gives the name back, if it is still this process's.
func (b *Box) release() {
	if b.stopClaim == nil {
		return
	}
	close(b.stopClaim)
	<-b.claimDone
	b.stopClaim = nil
	if c := b.claimed; !c.lost {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.kv.Delete(ctx, c.name, jetstream.LastRevision(c.rev))
	}
}
