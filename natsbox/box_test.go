package natsbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/natsbox/natstest"
	"github.com/sluice-serving/sluice/settings"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func open(t *testing.T, cfg Config) *Box {
	t.Helper()
	b, err := Open(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// publishN publishes n messages "subject#i", alternating between two subjects.
func publishN(t *testing.T, b *Box, n int) {
	t.Helper()
	for i := range n {
		subj := fmt.Sprintf("t.%c", 'a'+i%2)
		if _, err := b.JetStream().Publish(context.Background(), subj, fmt.Appendf(nil, "%s#%d", subj, i)); err != nil {
			t.Fatal(err)
		}
	}
}

// What is acknowledged in the embedded server's stream is there after it stops and starts
// again on the same directory; a second process on the directory is refused while the first
// runs; reads of many messages, the last before a sequence, and the last of a subject answer
// from the store.
func TestEmbeddedKeepsItsStreamAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Replicas: 3, Replica: "r1"}
	b, err := Open(ctx, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Embedded() || b.Replicas() != 1 || b.Replica() != "r1" {
		t.Errorf("embedded %v, replicas %d, replica %q", b.Embedded(), b.Replicas(), b.Replica())
	}
	if _, err := b.EnsureStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	publishN(t, b, 10)
	if _, err := Open(ctx, cfg, quiet); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second server on the directory: %v", err)
	}
	b.Close()
	b.Close() // twice is harmless

	b = open(t, cfg)
	msgs, next, more, err := b.DirectBatch(ctx, "T", 0, 4, "t.>")
	if err != nil || len(msgs) != 4 || next != 5 || !more || string(msgs[3].Data) != "t.b#3" || msgs[3].Sequence != 4 {
		t.Fatalf("first batch: %d messages, next %d, more %v, %v", len(msgs), next, more, err)
	}
	msgs, next, more, err = b.DirectBatch(ctx, "T", 7, 100, "t.a")
	if err != nil || len(msgs) != 2 || next != 10 || more || string(msgs[0].Data) != "t.a#6" || msgs[0].Subject != "t.a" {
		t.Fatalf("t.a from 7: %d messages, next %d, more %v, %v", len(msgs), next, more, err)
	}
	if msgs, _, _, err := b.DirectBatch(ctx, "T", 11, 5, "t.>"); err != nil || len(msgs) != 0 {
		t.Errorf("past the end: %d, %v", len(msgs), err)
	}
	last, err := b.LastBefore(ctx, "T", "t.>", 6) // sequences 1..5: t.a#4 and t.b#3
	got := map[string]string{}
	for _, m := range last {
		got[m.Subject] = string(m.Data)
	}
	if err != nil || got["t.a"] != "t.a#4" || got["t.b"] != "t.b#3" || len(got) != 2 {
		t.Errorf("last before 6: %v, %v", got, err)
	}
	if last, err := b.LastBefore(ctx, "T", "t.>", 1); err != nil || len(last) != 0 {
		t.Errorf("before the first: %v, %v", last, err)
	}
	if m, err := b.LastOf(ctx, "T", "t.b"); err != nil || m == nil || string(m.Data) != "t.b#9" || m.Sequence != 10 {
		t.Errorf("last of t.b: %+v, %v", m, err)
	}
	if m, err := b.LastOf(ctx, "T", "t.c"); err != nil || m != nil {
		t.Errorf("last of a subject without messages: %+v, %v", m, err)
	}
	if seq, err := b.SeqAt(ctx, "T", "t.>", time.Now().Add(-time.Hour)); err != nil || seq != 1 {
		t.Errorf("first since an hour ago: %d, %v", seq, err)
	}
	if seq, err := b.SeqAt(ctx, "T", "t.>", time.Now().Add(time.Hour)); err != nil || seq != 0 {
		t.Errorf("first in an hour: %d, %v", seq, err)
	}
}

// Against an external cluster, streams get the configured copies, and a message acknowledged
// is read back from another node after the node that led the stream has gone.
func TestExternalClusterReplicatesStreams(t *testing.T) {
	ctx := context.Background()
	urls, servers := natstest.Cluster(t, 3, 7122)
	// A replica's name is one running process's: a second process under it is refused once
	// the claim's time has run out; a name given back is free at once.
	defer func(ttl time.Duration) { claimTTL = ttl }(claimTTL)
	claimTTL = 2 * time.Second
	first, err := Open(ctx, Config{URL: urls, Replicas: 3, Replica: "r0"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Open(ctx, Config{URL: urls, Replicas: 3, Replica: "r0"}, quiet)
	if err == nil {
		second.Close()
	}
	if !errors.Is(err, ErrReplicaTaken) {
		t.Fatalf("a second process named r0: %v", err)
	}
	first.Close()
	again, err := Open(ctx, Config{URL: urls, Replicas: 3, Replica: "r0"}, quiet)
	if err != nil {
		t.Fatalf("r0 given back, taken again: %v", err)
	}
	again.Close()
	b := open(t, Config{URL: urls, Replicas: 3, Replica: "r1"})
	// A reader (sluice audit verify, on a replica's host) takes no name: it opens at once
	// beside the replica, which keeps its claim.
	reader, err := OpenReader(ctx, Config{URL: urls, Replicas: 3, Replica: "r1"}, quiet)
	if err != nil {
		t.Fatalf("a reader beside r1: %v", err)
	}
	reader.Close()
	if e, err := b.claimed.kv.Get(ctx, "r1"); err != nil || !bytes.Equal(e.Value(), b.claimed.mine) {
		t.Fatalf("r1's claim after the reader closed: %v", err)
	}
	if b.Embedded() || b.Replicas() != 3 {
		t.Fatalf("embedded %v, replicas %d", b.Embedded(), b.Replicas())
	}
	st, err := b.EnsureStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream info: %+v, %v", info, err)
	}
	publishN(t, b, 10)
	for _, s := range servers {
		if s.Name() == info.Cluster.Leader {
			s.Shutdown()
			s.WaitForShutdown()
		}
	}
	natstest.WaitFor(t, 30*time.Second, "a new stream leader", func() bool {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		m, err := b.LastOf(ctx, "T", "t.b")
		return err == nil && m != nil && string(m.Data) == "t.b#9"
	})
}

func TestConfigReportsEveryProblem(t *testing.T) {
	err := Config{DataDir: "", Replicas: 7, Replica: "a.b"}.Validate()
	problems, other := settings.Problems(err)
	fields := map[string]bool{}
	for _, p := range problems {
		fields[p.Field] = true
	}
	if len(other) > 0 || !fields["DataDir"] || !fields["Replicas"] || !fields["Replica"] {
		t.Errorf("problems %v", err)
	}
	err = Config{URL: "http://x:4222", Replicas: 3, SyncAlways: true}.Validate()
	if problems, _ = settings.Problems(err); len(problems) != 2 {
		t.Errorf("external: %v", err)
	}
	if err := (Config{URL: "nats://a:4222, nats://b:4222", Replicas: 3}).Validate(); err != nil {
		t.Errorf("two URLs: %v", err)
	}
	if id := (Config{}).ReplicaID(); id == "" || strings.ContainsAny(id, ". ") {
		t.Errorf("replica from the host name: %q", id)
	}
	var p *settings.Problem
	if errors.As(Config{Replicas: 0, DataDir: "d"}.Validate(), &p) && p.Package != "natsbox" {
		t.Errorf("package %q", p.Package)
	}
}

// The embedded server's memory store is bounded by MaxMemoryBytes: a write past it is
// refused, not held.
func TestEmbeddedMemoryIsBounded(t *testing.T) {
	b := open(t, Config{DataDir: t.TempDir(), Replicas: 1, Replica: "m", MaxMemoryBytes: 1 << 20})
	ctx := context.Background()
	if _, err := b.JetStream().CreateStream(ctx, jetstream.StreamConfig{Name: "M", Subjects: []string{"m.>"},
		Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	piece := make([]byte, 64<<10)
	var err error
	for i := 0; i < 64 && err == nil; i++ {
		_, err = b.JetStream().Publish(ctx, "m.x", piece)
	}
	if err == nil {
		t.Fatal("4 MiB went into a memory store of 1 MiB")
	}
}

// TestAClaimTakenMeanwhileIsLeftToItsHolder: a process whose replica name another took while
// it could not reach the cluster does not write its claim over the other's, says so, and on
// Close leaves the other's claim in place.
func TestAClaimTakenMeanwhileIsLeftToItsHolder(t *testing.T) {
	ctx := context.Background()
	urls, _ := natstest.Cluster(t, 3, 7125)
	defer func(ttl time.Duration) { claimTTL = ttl }(claimTTL)
	claimTTL = 3 * time.Second
	var logs logtest.Buffer
	b, err := Open(ctx, Config{URL: urls, Replicas: 1, Replica: "r0"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	observer := open(t, Config{URL: urls, Replicas: 1, Replica: "observer"})
	kv := observer.claimed.kv
	// A claim gone (run out while the cluster was out of reach, nobody taking it) is taken
	// again.
	if err := kv.Delete(ctx, "r0"); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, "the claim taken again", func() bool {
		e, err := kv.Get(ctx, "r0")
		return err == nil && bytes.Equal(e.Value(), b.claimed.mine)
	})
	if _, err := kv.Put(ctx, "r0", []byte("another process")); err != nil { // its claim ran out meanwhile, and another took it
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, "the claim found lost", func() bool {
		return strings.Contains(logs.String(), "another process took this replica's name")
	})
	b.Close()
	e, err := kv.Get(ctx, "r0")
	if err != nil || string(e.Value()) != "another process" {
		t.Fatalf("the other process's claim after this one closed: %v", err)
	}
}

// TestLastBeforeOfManySubjects: the last message before a sequence of each of more subjects
// than the server answers one request for (an audit stream of 1,100 replicas' chains) comes
// back whole, in stream order.
func TestLastBeforeOfManySubjects(t *testing.T) {
	ctx := context.Background()
	b := open(t, Config{DataDir: t.TempDir(), Replicas: 1, Replica: "r1"})
	if _, err := b.EnsureStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	const subjects = 1100
	for round := range 2 {
		for i := range subjects {
			if _, err := b.JetStream().PublishAsync(fmt.Sprintf("t.%d", i), fmt.Appendf(nil, "%d#%d", i, round)); err != nil {
				t.Fatal(err)
			}
		}
	}
	<-b.JetStream().PublishAsyncComplete()
	last, err := b.LastBefore(ctx, "T", "t.>", 2*subjects) // the last sequence left out: subject 1099's second
	if err != nil || len(last) != subjects {
		t.Fatalf("%d messages, %v; want %d", len(last), err, subjects)
	}
	if m := last[0]; m.Sequence != subjects || string(m.Data) != "1099#0" {
		t.Fatalf("the first in stream order: %d %q", m.Sequence, m.Data)
	}
	for i, m := range last[1:] {
		if want := fmt.Sprintf("%d#1", i); m.Sequence != uint64(subjects+1+i) || string(m.Data) != want {
			t.Fatalf("message %d: %d %q; want %q", i+1, m.Sequence, m.Data, want)
		}
	}
}

// TestReadsTrustTheServersHeadersOnly: a message published with its own Nats-Sequence,
// Nats-Subject and Nats-Time-Stamp headers, or with an empty body and a Status header, is
// read with what the server stored it under, and ends no read early.
func TestReadsTrustTheServersHeadersOnly(t *testing.T) {
	ctx := context.Background()
	b := open(t, Config{DataDir: t.TempDir(), Replicas: 1, Replica: "r1"})
	if _, err := b.EnsureStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	forged := nats.NewMsg("t.a")
	forged.Header.Set(jetstream.SequenceHeader, "999")
	forged.Header.Set(jetstream.SubjectHeader, "t.other")
	forged.Header.Set(jetstream.TimeStampHeaer, "2999-01-01T00:00:00Z")
	forged.Data = []byte("forged")
	empty := nats.NewMsg("t.a")
	empty.Header.Set("Status", "204")
	noResponders := nats.NewMsg("t.a")
	noResponders.Header.Set("Status", "503")
	for _, m := range []*nats.Msg{forged, empty, noResponders, {Subject: "t.a", Data: []byte("real")}} {
		if _, err := b.JetStream().PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	msgs, next, _, err := b.DirectBatch(ctx, "T", 0, 10, "t.>")
	if err != nil || len(msgs) != 4 || next != 5 {
		t.Fatalf("%d messages, next %d, %v", len(msgs), next, err)
	}
	for i, m := range msgs {
		if m.Sequence != uint64(i+1) || m.Subject != "t.a" || m.Time.After(time.Now().Add(time.Hour)) {
			t.Errorf("message %d read as %d %s %s", i+1, m.Sequence, m.Subject, m.Time)
		}
	}
}
