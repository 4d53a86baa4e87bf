// Package jobs runs corpus de-identification jobs (OpenMed's POST /jobs) durably in JetStream:
// any replica works on any job's documents, and a replica killed mid-job loses nothing.
//
// # How to use it
//
//	m, err := jobs.Open(ctx, box, cfg, clk, jobs.NewMetrics(reg), logger) // cfg: from the environment
//	m.Start(jobs.Work{Process: process, Fingerprint: hash}) // process: de-identifies one document
//	defer m.Close()                                        // before box.Close()
//	rec, err := m.Create(ctx, tenant, jobs.Spec{Documents: docs, Options: raw, Webhook: wh})
//	rec, err = m.Get(ctx, tenant, rec.ID)
//	page, err := m.Results(ctx, tenant, rec.ID, from, limit)
//
// # Where things live
//
// Two key-value buckets and one work queue, all in the Box's JetStream:
//
//   - the records bucket: one record per job (key "<tenant hash>.<job id>"): status, counts,
//     the label histogram, a bitmap of the documents already counted, the webhook's delivery
//     state.
//   - the results bucket: each document's outcome, its de-identified text and spans (key
//     "<job id>.<index>").
//   - the queue, a WorkQueuePolicy stream: one message per document, its job and index in
//     headers and its text, sealed, as the body; read by one durable pull consumer with
//     explicit acknowledgement, shared by every replica. The acknowledgement that retires a
//     message removes the text with it.
//
// Workers take up to Config.Batch messages at a time and process them together. A message is
// acknowledged only once its result is stored and counted; until then the worker reports
// progress (InProgress) every AckWait/3, so that a slow batch is not handed to another worker,
// while a worker that dies stops reporting and its messages are delivered again after AckWait.
// Processing twice (a batch redelivered after a crash) changes nothing: a result is written
// only where none is stored, a second run counting the first's, and the record's bitmap,
// updated by compare-and-set on the record's revision (one per job and batch), counts each
// document once. Only the work, and its charge to the tenant's budget, is done again.
//
// # Text at rest
//
// With a key (Config.KeyFile, 32 bytes), every value and message body is sealed with
// AES-256-GCM, its key (a document's "<job id>.<index>") as additional data (a value moved to
// another key does not open), and the buckets and the stream are files: jobs survive restarts.
// Without a key no job text is written to a disk: the buckets and stream are kept in memory
// (the embedded server's, or the cluster's), and the API says so (Record.Durable false), as
// OpenMed's own jobs are kept.
//
// # The fleet's settings
//
// On an external cluster the buckets, the queue and its consumer are shared by every replica:
// Open makes them with this process's settings when they do not exist, and never changes
// existing ones (their TTL, MaxAge, MaxBytes and discard policy, the consumer's AckWait and
// MaxAckPending), only warns when they differ, naming the nats CLI command that changes them.
// The process then works with theirs: its heartbeat is a third of the consumer's AckWait (or
// of its own, if shorter), read again before a batch at most once a beat, so that an edit or
// an older replica's start that shortens it under a running process is kept up with; its
// retention the buckets' TTL, its bound on the queue no more than what may be pending. The
// embedded server's store is this process's alone (its directory locked, no port open, so
// that no CLI reaches it): there Open applies this process's settings to existing ones, but
// for a share of the store below what a bucket or the queue holds: its bound is then what it
// holds, and the sweep lowers it to the share as it drains; meanwhile a document whose result
// does not fit waits, no try, since the room is the earlier jobs'.
//
// Config.MaxStoreBytes bounds their bytes together, the queue discarding new messages at its
// bound: a full share refuses creates (and fails the documents whose results do not fit)
// rather than filling the store the audit shares.
//
// Everything expires with Config.Retention after its last write. A finished job is served as
// gone once its oldest result may have expired; a job that ran longer than a tenth of
// Retention has its results written again when it finishes, so that they last as its record
// does.
package jobs
