package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/natsbox"
)

// storedOf reads every record the stream holds of replica, in stream order.
func storedOf(t *testing.T, b *natsbox.Box, replica string) []Record {
	t.Helper()
	var out []Record
	next := uint64(1)
	for {
		msgs, after, more, err := b.DirectBatch(context.Background(), Stream, next, 1024, Subject(replica))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			r, err := Decode(m.Data)
			if err != nil {
				t.Fatalf("stream sequence %d: %v", m.Sequence, err)
			}
			out = append(out, r)
		}
		if !more || len(msgs) == 0 {
			return out
		}
		next = after
	}
}

// With an acknowledgement timeout far below a write's time, most appends time out although
// their records are stored, late. The chain must not fork: no place in it is taken twice,
// nothing breaks, and every record answered as stored is there.
func TestLateRecordsNeverForkTheChain(t *testing.T) {
	b := openBox(t, t.TempDir())
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	m := NewMetrics(nil)
	l, err := Open(context.Background(), b, "rA", Config{Enabled: true, AckTimeout: time.Millisecond}, clk, m, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	var mu sync.Mutex
	var kept []Record
	rounds := 0
	// Rounds until the chain has been resynced often enough (timing decides how many).
	for ; rounds < 200 && testutil.ToFloat64(m.resyncs) < 20; rounds++ {
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for i := range 50 {
					r, err := l.Append(context.Background(), plain(rounds*100_000+g*1000+i))
					if err != nil {
						clk.Advance(resyncBackoff) // let the next append try a resync
						continue
					}
					mu.Lock()
					kept = append(kept, r)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	// Another replica's record over the same connection: once stored, everything rA
	// published before it has reached the stream too.
	if _, err := openLog(t, b, "rB", defaults).Append(context.Background(), plain(0)); err != nil {
		t.Fatal(err)
	}
	resyncs := int(testutil.ToFloat64(m.resyncs))
	if resyncs < 20 {
		t.Fatalf("the hammer did not exercise resyncs: %d resyncs, %d stored in %d rounds", resyncs, len(kept), rounds)
	}
	stored := storedOf(t, b, "rA")
	places := map[uint64]int{}
	hashes := map[string]bool{}
	for _, r := range stored {
		places[r.Seq]++
		hashes[r.RecordHash] = true
	}
	for seq, n := range places {
		if n > 1 {
			t.Errorf("place %d of the chain is taken %d times", seq, n)
		}
	}
	for _, r := range kept {
		if !hashes[r.RecordHash] {
			t.Errorf("record %d was answered as stored but the stream does not hold it", r.Seq)
		}
	}
	if rep := verify(t, b); len(rep.Breaks) != 0 {
		t.Errorf("%d breaks, the first %+v", len(rep.Breaks), rep.Breaks[0])
	}
	t.Logf("%d rounds: %d records stored, %d answered as stored, %d resyncs", rounds, len(stored), len(kept), resyncs)
}

// While the stream is unreachable, one append tries to resync and the others fail at once
// instead of each waiting its own resync in turn (the Nth of N waiting N timeouts).
func TestOutageFailsAppendsAtOnce(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the server did not start")
	}
	b, err := natsbox.Open(context.Background(), natsbox.Config{URL: s.ClientURL(), Replicas: 1, Replica: "r1"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	// The fake clock never moves: a failed resync is not retried within the test.
	l, err := Open(context.Background(), b, "r1", Config{Enabled: true, AckTimeout: 300 * time.Millisecond},
		clock.NewFake(time.Unix(1_700_000_000, 0)), NewMetrics(nil), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if _, err := l.Append(context.Background(), plain(0)); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	if _, err := l.Append(context.Background(), plain(1)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append with the server down: %v", err)
	}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = l.Append(context.Background(), plain(2+i)) })
	}
	wg.Wait()
	atOnce := 0
	for _, err := range errs {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("append with the server down: %v", err)
		}
		if errors.Is(err, errResyncing) {
			atOnce++
		}
	}
	if atOnce != n-1 { // one resynced, and failed for want of the stream
		t.Errorf("%d of %d appends failed at once; the others each waited for the stream", atOnce, n)
	}
}

// A replica started with other retention limits than the stream's leaves the stream as it is
// (its limits bound every replica's records) and says so.
func TestOtherLimitsLeaveTheStreamAsItIs(t *testing.T) {
	b := openBox(t, t.TempDir())
	a := openLog(t, b, "pod-a", defaults) // no bound
	for batch := range 8 {
		appendAll(t, a, 500, func(i int) Record {
			r := plain(batch*500 + i)
			r.PlaceholderHashes = []string{Hash("a"), Hash("b")} // about 500 bytes a record
			return r
		})
	}
	var out logtest.Buffer
	cfg := defaults
	cfg.MaxBytes, cfg.MaxAge = 1<<20, time.Hour
	canary, err := Open(context.Background(), b, "pod-canary", cfg, clock.Real(), NewMetrics(nil),
		slog.New(slog.NewTextHandler(&out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(canary.Close)
	if _, err := canary.Append(context.Background(), plain(0)); err != nil {
		t.Fatal(err)
	}
	st, err := b.JetStream().Stream(context.Background(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxBytes != -1 || info.Config.MaxAge != 0 {
		t.Errorf("the stream's limits became %d bytes, %s", info.Config.MaxBytes, info.Config.MaxAge)
	}
	if rep := verify(t, b); rep.Records != 4001 || rep.Trimmed {
		t.Errorf("%d records, trimmed %v", rep.Records, rep.Trimmed)
	}
	logged := out.String()
	for _, want := range []string{"level=WARN", "stream_max_bytes=-1", "configured_max_bytes=1048576", "configured_max_age=1h0m0s"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the warning lacks %q: %s", want, logged)
		}
	}
	var again logtest.Buffer
	l, err := Open(context.Background(), b, "pod-b", defaults, clock.Real(), NewMetrics(nil), slog.New(slog.NewTextHandler(&again, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if again.String() != "" {
		t.Errorf("the stream's own limits configured, yet: %s", again.String())
	}
}

// A record the client refuses to send (larger than a message may be) fails alone: nothing of
// it reached the server, so the chain's head is still certain. It marked the chain broken, and
// the appends beside the next one failed at once while that one read the head back (62 of 64
// ordinary appends answered 503 after one oversized record).
func TestOversizedRecordFailsAlone(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	appendAll(t, l, 3, plain)
	big := plain(99)
	for i := range 20_000 { // about 1.3 MB, past the connection's 1 MiB
		big.PlaceholderHashes = append(big.PlaceholderHashes, Hash(fmt.Sprint(i)))
	}
	if _, err := l.Append(context.Background(), big); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a 1.3 MB record: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []error
	for i := range 64 {
		wg.Go(func() {
			if _, err := l.Append(context.Background(), plain(100+i)); err != nil {
				mu.Lock()
				failed = append(failed, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d of 64 ordinary appends failed after one oversized record (first: %v)", len(failed), failed[0])
	}
	if rep := verify(t, b); rep.Records != 67 || len(rep.Breaks) != 0 {
		t.Errorf("report %+v", rep)
	}
}

// An oversized record that is the append resyncing a broken chain fails alone too: the head
// it read back is certain, and the client's refusal leaves it there. It was taken for a
// failed resync, so every append for the next second failed at once.
func TestOversizedRecordThatResyncsFailsAlone(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	appendAll(t, l, 3, plain)
	l.broken.Store(true) // as after a publish that timed out
	big := plain(99)
	for i := range 20_000 { // about 1.3 MB, past the connection's 1 MiB
		big.PlaceholderHashes = append(big.PlaceholderHashes, Hash(fmt.Sprint(i)))
	}
	if _, err := l.Append(context.Background(), big); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a 1.3 MB record: %v", err)
	}
	if _, err := l.Append(context.Background(), plain(100)); err != nil {
		t.Errorf("an ordinary append right after an oversized record that resynced: %v", err)
	}
	if rep := verify(t, b); rep.Records != 4 || len(rep.Breaks) != 0 {
		t.Errorf("report %+v", rep)
	}
}
