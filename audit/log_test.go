package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/natsbox"
	"github.com/sluice-serving/sluice/natsbox/natstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var defaults = Config{Enabled: true, AckTimeout: 5 * time.Second}

// openBox runs an embedded server on dir.
func openBox(t testing.TB, dir string) *natsbox.Box {
	t.Helper()
	b, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: dir, Replicas: 1, Replica: "r1"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func openLog(t testing.TB, b *natsbox.Box, replica string, cfg Config) *Log {
	t.Helper()
	l, err := Open(context.Background(), b, replica, cfg, clock.Real(), NewMetrics(nil), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// appendAll appends n records at once, each from its own goroutine, and returns them as kept.
func appendAll(t *testing.T, l *Log, n int, rec func(i int) Record) []Record {
	t.Helper()
	out := make([]Record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = l.Append(context.Background(), rec(i)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

func plain(i int) Record {
	return Record{RequestID: fmt.Sprintf("req-%d", i), Route: "/pii/deidentify", HTTPStatus: 200, Status: "served",
		Entities: map[string]int{"NAME": i % 3}, InputHash: Hash(fmt.Sprint(i))}
}

func verify(t *testing.T, b *natsbox.Box) Report {
	t.Helper()
	rep, err := Verify(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Appends in flight at once each get their own place in the chain; the stream holds them in
// chain order, and after the server stops and starts again on its directory the replica's
// chain goes on from its last record.
func TestChainContinuesAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	b, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: dir, Replicas: 1}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(context.Background(), b, "r1", defaults, clock.Real(), NewMetrics(nil), quiet)
	if err != nil {
		t.Fatal(err)
	}
	kept := appendAll(t, l, 200, plain)
	seen := map[uint64]bool{}
	for _, r := range kept {
		if r.Replica != "r1" || r.Seq < 1 || r.Seq > 200 || seen[r.Seq] || r.RecordHash == "" {
			t.Fatalf("record as kept: %+v", r)
		}
		seen[r.Seq] = true
	}
	rep := verify(t, b)
	if rep.Records != 200 || len(rep.Breaks) != 0 || len(rep.Chains) != 1 || rep.Chains[0].LastSeq != 200 || !rep.Chains[0].Verified {
		t.Fatalf("report %+v", rep)
	}
	last := kept[0]
	for _, r := range kept {
		if r.Seq == 200 {
			last = r
		}
	}
	l.Close()
	b.Close()

	b = openBox(t, dir)
	l = openLog(t, b, "r1", defaults)
	r, err := l.Append(context.Background(), plain(200))
	if err != nil || r.Seq != 201 || r.PreviousHash != last.RecordHash {
		t.Fatalf("after the restart: %+v, %v (last was %s)", r, err, last.RecordHash)
	}
	if rep := verify(t, b); rep.Records != 201 || len(rep.Breaks) != 0 {
		t.Fatalf("report %+v", rep)
	}
}

// tamper publishes a copy of the stored record at stream sequence seq, with its status
// changed, on its replica's subject: what anyone allowed to publish there could do. The
// stream refuses to delete the original.
func tamper(t *testing.T, b *natsbox.Box, seq uint64) {
	t.Helper()
	ctx := context.Background()
	st, err := b.JetStream().Stream(ctx, Stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, seq); err == nil {
		t.Fatal("the audit stream let a record be deleted")
	}
	r, err := Decode(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	r.Status = "forwarded"
	data, _ := Encode(r)
	if _, err := b.JetStream().Publish(ctx, m.Subject, data); err != nil {
		t.Fatal(err)
	}
}

// A record published again with one field altered breaks its chain where it lies, and only
// there: the verifier names the replica, the stream sequence and the reason.
func TestAlteredCopyBreaksTheChain(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	for i := range 10 {
		if _, err := l.Append(context.Background(), plain(i)); err != nil {
			t.Fatal(err)
		}
	}
	tamper(t, b, 5)
	if _, err := l.Append(context.Background(), plain(10)); err != nil {
		t.Fatal(err)
	}
	rep := verify(t, b)
	if rep.Records != 12 || len(rep.Breaks) != 2 || rep.Chains[0].Verified {
		t.Fatalf("report %+v", rep)
	}
	// The copy claims to be record 5 after record 10; record 11 then follows a record 5.
	if b := rep.Breaks[0]; b.Replica != "r1" || b.StreamSeq != 11 || b.Seq != 5 || b.Reason != "sequence" {
		t.Errorf("first break %+v", b)
	}
	if b := rep.Breaks[1]; b.StreamSeq != 12 || b.Seq != 11 || b.Reason != "sequence" {
		t.Errorf("second break %+v", b)
	}
}

// A record published as a continuation that does not hash to what the next names: a
// previous_hash break, found by the page that starts just after it too (a page checks its
// first record against the one before the cursor).
func TestPageChecksTheLinkBeforeItsCursor(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	for i := range 5 {
		if _, err := l.Append(context.Background(), plain(i)); err != nil {
			t.Fatal(err)
		}
	}
	tamper(t, b, 3) // stream sequence 6: a record 3 again
	if _, err := l.Append(context.Background(), plain(5)); err != nil {
		t.Fatal(err)
	}
	page, err := Read(context.Background(), b, Query{Cursor: 7})
	if err != nil {
		t.Fatal(err)
	}
	if page.Verified || len(page.Records) != 1 || len(page.Breaks) != 1 || page.Breaks[0].StreamSeq != 7 ||
		page.Breaks[0].Reason != "sequence" || page.Next != 0 {
		t.Errorf("page from 7: %+v", page)
	}
	page, err = Read(context.Background(), b, Query{Cursor: 3, Limit: 2})
	if err != nil || !page.Verified || len(page.Records) != 2 || page.Segments[0].FirstSeq != 3 {
		t.Errorf("page from 3: %+v, %v", page, err)
	}
	page, err = Read(context.Background(), b, Query{Cursor: 1, Limit: 5})
	if err != nil || !page.Verified || len(page.Records) != 5 || page.Next != 6 {
		t.Errorf("page from 1: %+v, %v", page, err)
	}
}

// Pages filter by tenant, status, replica and time, each page verified, and the cursors lead
// through every matching record once, in stream order.
func TestReadFiltersAndPages(t *testing.T) {
	b := openBox(t, t.TempDir())
	logs := []*Log{openLog(t, b, "r1", defaults), openLog(t, b, "r2", defaults)}
	var kept []Record
	for i := range 30 {
		r := plain(i)
		r.Tenant = []string{"t1", "t2", "t3"}[i%3]
		if i%5 == 0 { // 5, 15, 25 are r2's; 0, 10, 20 r1's
			r.Status = "failed"
		}
		k, err := logs[i%2].Append(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, k)
	}
	read := func(q Query) []Stored {
		t.Helper()
		var out []Stored
		for pages := 0; ; pages++ {
			page, err := Read(context.Background(), b, q)
			if err != nil || !page.Verified || pages > 30 {
				t.Fatalf("%+v: %+v, %v", q, page, err)
			}
			out = append(out, page.Records...)
			if page.Next == 0 {
				return out
			}
			q.Cursor = page.Next
		}
	}
	got := read(Query{Tenant: "t1", Limit: 3})
	if len(got) != 10 {
		t.Fatalf("tenant t1: %d records", len(got))
	}
	for i, r := range got {
		if r.Tenant != "t1" || r.RequestID != kept[3*i].RequestID || r.StreamSeq != uint64(3*i+1) || r.RecordHash != kept[3*i].RecordHash {
			t.Errorf("t1's record %d: %+v", i, r)
		}
	}
	if got := read(Query{Status: "failed", Replica: "r2", Limit: 2}); len(got) != 3 || got[0].RequestID != "req-5" {
		t.Errorf("failed on r2: %+v", got)
	}
	if got := read(Query{Status: "failed", Replica: "r1"}); len(got) != 3 {
		t.Errorf("failed on r1: %d", len(got))
	}
	all := read(Query{Limit: 1000})
	from, to := all[10].StoredAt, all[20].StoredAt
	window := read(Query{From: from, To: to})
	if len(window) == 0 || window[0].StoredAt.Before(from) || !window[len(window)-1].StoredAt.Before(to) {
		t.Errorf("stored in [%v, %v): %d records", from, to, len(window))
	}
}

// A page that fills exactly to its limit with the stream's last record, or with the last
// record before To, has no next page: its cursor said there was one (the next sequence, past
// the stream's end), and a reader asked for an empty page.
func TestFullPageAtTheEndHasNoNextPage(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	appendAll(t, l, 3, plain)
	page, err := Read(context.Background(), b, Query{Limit: 3})
	if err != nil || len(page.Records) != 3 {
		t.Fatalf("%+v, %v", page, err)
	}
	if page.Next != 0 {
		t.Errorf("a page ending with the stream's last record has next %d, want 0", page.Next)
	}
	before := page.Records[2].StoredAt
	if _, err := l.Append(context.Background(), plain(3)); err != nil {
		t.Fatal(err)
	}
	all, err := Read(context.Background(), b, Query{})
	if err != nil || len(all.Records) != 4 || !all.Records[3].StoredAt.After(before) {
		t.Fatalf("%+v, %v", all, err)
	}
	to := all.Records[3].StoredAt
	if page, err := Read(context.Background(), b, Query{Limit: 3, To: to}); err != nil || len(page.Records) != 3 || page.Next != 0 {
		t.Errorf("a full page whose next record lies past To: %d records, next %d, %v", len(page.Records), page.Next, err)
	}
	if page, err := Read(context.Background(), b, Query{Limit: 2, To: to}); err != nil || page.Next != page.Records[1].StreamSeq+1 {
		t.Errorf("a full page with a record before To after it: next %d, %v", page.Next, err)
	}
}

// A page filled to its limit by the query's last record has no next page whatever other
// records follow it: the cursor was decided by the stream's next record of any tenant, so a
// tenant reading its own records learnt from next_cursor whether another tenant stored one
// after its last (and, moving To, when), and a filtered query's cursor led to an empty page.
func TestFullPageCursorCountsOnlyMatchingRecords(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	tenant := func(name string, i int) Record {
		r := plain(i)
		r.Tenant = name
		return r
	}
	if _, err := l.Append(context.Background(), tenant("a", 1)); err != nil {
		t.Fatal(err)
	}
	own := Query{Tenant: "a", Limit: 1}
	alone, err := Read(context.Background(), b, own)
	if err != nil || len(alone.Records) != 1 || alone.Next != 0 {
		t.Fatalf("tenant a alone: %+v, %v", alone, err)
	}
	other := tenant("b", 2)
	other.Status = "failed"
	if _, err := l.Append(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	if page, err := Read(context.Background(), b, own); err != nil || len(page.Records) != 1 || page.Next != 0 {
		t.Errorf("tenant a's full page once b stored a record after it: next %d, %v (want 0, as alone)", page.Next, err)
	}
	// A record of a's that the query's other filters leave out does not give a cursor either.
	analyze := tenant("a", 3)
	analyze.Route = "/pii/analyze"
	if _, err := l.Append(context.Background(), analyze); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), tenant("a", 4)); err != nil {
		t.Fatal(err)
	}
	served := Query{Tenant: "a", Status: "served", Route: "/pii/analyze", Limit: 1}
	if page, err := Read(context.Background(), b, served); err != nil || len(page.Records) != 1 || page.Next != 0 {
		t.Errorf("a filtered full page at the query's last record: next %d, %v", page.Next, err)
	}
	// A matching record after others' gives the cursor, and its page holds it.
	page, err := Read(context.Background(), b, own)
	if err != nil || len(page.Records) != 1 || page.Next == 0 {
		t.Fatalf("a's first page with a's records after b's: %+v, %v", page, err)
	}
	own.Cursor = page.Next
	if rest, err := Read(context.Background(), b, own); err != nil || len(rest.Records) != 1 || rest.Records[0].RequestID != "req-3" {
		t.Errorf("the page at the cursor: %+v, %v", rest, err)
	}
}

// When the look past a full page runs out of the page's scan budget before it finds a record
// the query matches or the range's end, the cursor is given: the next page may be empty, but
// the answer depends on no record the caller cannot read.
func TestFullPageCursorGivenWhenTheScanRunsOut(t *testing.T) {
	b := openBox(t, t.TempDir())
	l := openLog(t, b, "r1", defaults)
	appendAll(t, l, 3, plain)
	q := Query{Tenant: "nobody"}
	for budget, want := range map[int]uint64{1: 1, 2: 1, 3: 0} {
		if got, err := q.following(context.Background(), b, subjects, 1, nil, true, budget); err != nil || got != want {
			t.Errorf("with %d records left to scan past three that do not match: %d, %v; want %d", budget, got, err, want)
		}
	}
}

// After the stream refused appends (it was deleted), the replica reads its chain's head back
// once the stream is there again, instead of linking to a record that was never stored.
func TestAppendAfterAFailureResyncs(t *testing.T) {
	b := openBox(t, t.TempDir())
	cfg := defaults
	cfg.AckTimeout = time.Second
	l := openLog(t, b, "r1", cfg)
	for i := range 3 {
		if _, err := l.Append(context.Background(), plain(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.JetStream().DeleteStream(context.Background(), Stream); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), plain(3)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append without a stream: %v", err)
	}
	if _, err := b.EnsureStream(context.Background(), StreamConfig(cfg)); err != nil {
		t.Fatal(err)
	}
	r, err := l.Append(context.Background(), plain(4))
	if err != nil || r.Seq != 1 || r.PreviousHash != ZeroHash {
		t.Fatalf("after the stream came back: %+v, %v", r, err)
	}
	if rep := verify(t, b); rep.Records != 1 || len(rep.Breaks) != 0 {
		t.Errorf("report %+v", rep)
	}
}

// Past the size limit the oldest records go; the chain then starts where the stream does,
// which the verifier says instead of calling it a break.
func TestRetentionTrimsTheFrontWithoutABreak(t *testing.T) {
	b := openBox(t, t.TempDir())
	cfg := defaults
	cfg.MaxBytes = 1 << 20
	l := openLog(t, b, "r1", cfg)
	for batch := range 8 {
		appendAll(t, l, 500, func(i int) Record {
			r := plain(batch*500 + i)
			r.PlaceholderHashes = []string{Hash("a"), Hash("b")} // about 500 bytes a record
			return r
		})
	}
	rep := verify(t, b)
	if rep.FirstSeq <= 1 || !rep.Trimmed || len(rep.Breaks) != 0 || !rep.Chains[0].Trimmed || rep.Chains[0].LastSeq != 4000 {
		t.Errorf("report: first %d, trimmed %v, breaks %v, chains %+v", rep.FirstSeq, rep.Trimmed, rep.Breaks, rep.Chains)
	}
}

// On a three-node cluster the stream has three copies; a node that stops does not stop the
// appends, and every chain verifies on what the other two hold.
func TestReplicatedStreamOnACluster(t *testing.T) {
	urls, servers := natstest.Cluster(t, 3, 7222)
	b, err := natsbox.Open(context.Background(), natsbox.Config{URL: urls, Replicas: 3, Replica: "r1"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	l := openLog(t, b, "r1", defaults)
	appendAll(t, l, 100, plain)
	st, err := b.JetStream().Stream(context.Background(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil || info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream info %+v, %v", info, err)
	}
	for _, s := range servers {
		if s.Name() != info.Cluster.Leader {
			s.Shutdown() // a follower: the stream keeps its quorum
			s.WaitForShutdown()
			break
		}
	}
	appendAll(t, l, 50, plain)
	natstest.WaitFor(t, 10*time.Second, "every record readable", func() bool {
		rep, err := Verify(context.Background(), b)
		return err == nil && rep.Records == 150
	})
	if rep := verify(t, b); len(rep.Breaks) != 0 || rep.Chains[0].LastSeq != 150 {
		t.Errorf("report %+v", rep)
	}
}

// TestAStreamThatLetsRecordsBeDeletedIsClosedToDeletes: a stream an operator made beforehand
// without Sluice's refusal of deletes and purges gets it when a replica opens it; a record
// cannot then be deleted (which would make a chain's start read as trimmed by age).
func TestAStreamThatLetsRecordsBeDeletedIsClosedToDeletes(t *testing.T) {
	ctx := context.Background()
	b := openBox(t, t.TempDir())
	loose := StreamConfig(defaults)
	loose.DenyDelete, loose.DenyPurge = false, false
	if _, err := b.JetStream().CreateStream(ctx, loose); err != nil {
		t.Fatal(err)
	}
	l := openLog(t, b, "r1", defaults)
	appendAll(t, l, 3, plain)
	st, err := b.JetStream().Stream(ctx, Stream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || !info.Config.DenyDelete || !info.Config.DenyPurge {
		t.Fatalf("deny delete %v, deny purge %v, %v", info.Config.DenyDelete, info.Config.DenyPurge, err)
	}
	if err := st.DeleteMsg(ctx, 1); err == nil {
		t.Fatal("a record was deleted")
	}
	if rep := verify(t, b); len(rep.Breaks) != 0 || rep.Records != 3 {
		t.Fatalf("%+v", rep)
	}
}
