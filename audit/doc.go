// Package audit is Sluice's durable, tamper-evident audit: one record per request to the
// privacy gateway and the de-identification routes (hashes and counts, never text), each
// replica's records a hash chain of their own in one JetStream stream.
//
// # How to use it
//
//	log, err := audit.Open(ctx, box, box.Replica(), cfg, clk, audit.NewMetrics(reg), logger)
//	defer log.Close()                       // before box.Close()
//	kept, err := log.Append(ctx, audit.Record{RequestID: id, Route: path, Status: "served", ...})
//	// answer the request only now: kept.RecordHash is its hash; err means it is not stored
//	page, err := audit.Read(ctx, box, audit.Query{Tenant: "acme", Limit: 100})
//	report, err := audit.Verify(ctx, box)   // the whole stream, every chain
//
// # The chain
//
// A record's stored form is its JSON without its own hash; its hash (RecordHash) is the
// SHA-256 of those bytes, and the next record of the same replica names it (PreviousHash),
// with its place in the chain (Seq, from 1; the first names ZeroHash). Replica r publishes on
// subject Subject(r) of Stream, over one connection and in chain order, so the stream holds
// each chain in order. A record changed, removed or inserted anywhere but at a chain's end
// breaks the link after it; Checker finds where and says why (Break). What no hash chain can
// show by itself is its own end cut off: the newest records of a replica removed leave a
// shorter chain that verifies. The stream denies deletes and purges through its API, so that
// records leave it only by the retention limits (Config.MaxAge, Config.MaxBytes), oldest
// first; a chain that then starts past record 1 is reported as trimmed, not broken.
//
// # Group commit
//
// Append links a record to the chain head under a lock and publishes it asynchronously
// (JetStream's PubAck comes later), then waits for its own acknowledgement without the lock.
// Many requests' records are thus in flight at once, sharing the connection's writes and the
// server's, and each request is answered only once its record is acknowledged: stored in the
// file (embedded server) or by a quorum of copies (cluster). Append returns within the
// acknowledgement timeout, whatever its caller's context.
//
// # After a failure
//
// A publish that fails (or times out: its record may still be stored, later) leaves the chain
// head unknown. (One the client refuses before writing it, a record larger than a message may
// be, fails its own Append only: the head is still certain, or, when that Append is the one
// resyncing, just read back.) One Append then resyncs, without the lock: it waits for the
// publishes in flight to settle, reads the head back from the stream's leader and publishes
// its record expecting that head to be the subject's last record, so that a record that lands
// late makes this publish fail instead of forking the chain. While it runs, and for a second
// after it fails with the head still unknown, every other Append fails at once
// (ErrUnavailable): during an outage
// requests are answered 503 promptly instead of queueing behind one another. Every record
// also carries the message id <replica>-<seq>: a record whose place the stream holds already
// is not stored twice, and its duplicate acknowledgement is a failure. A record that failed
// while later ones were already in flight and stored is a break the verifier reports: a
// request answered 503, never one answered 200.
//
// # Retention
//
// The stream's limits are the operator's: Open creates the stream with the configured ones
// when it does not exist, and never changes an existing stream, only warns when its limits
// differ from the configured ones (change them with the nats CLI).
//
// A restarted replica reads its chain's last record from the stream (Open) and goes on from
// it: a killed process loses only records whose requests were not answered.
//
// # Reading
//
// Read returns one page of records matching a Query (time stored, status, tenant, replica,
// route) from a cursor (a stream sequence), checking every record it reads (filtered out or
// not) against its chain, the first of each replica against that replica's record just
// before the cursor. A page's next cursor depends only on records the query matches (or on
// its scan budget running out), so that a tenant reading its own learns nothing from it of
// another's. Verify checks a whole stream. Both read through natsbox's direct reads, which any
// copy of the stream may answer.
package audit
