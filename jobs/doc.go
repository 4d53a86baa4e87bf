// Package jobs runs corpus de-identification jobs (OpenMed's POST /jobs) durably in JetStream:
// any replica works on any job's documents, and a replica killed mid-job loses nothing.
//
// # How to use it
//
//	m, err := jobs.Open(ctx, box, cfg, clk, logger)       // cfg: jobs.Config from the environment
//	m.Start(process)                                       // process: de-identifies one document
//	defer m.Close()                                        // before box.Close()
//	rec, err := m.Create(ctx, tenant, jobs.Spec{Documents: docs, Options: raw, Webhook: wh})
//	rec, err = m.Get(ctx, tenant, rec.ID)
//	page, err := m.Results(ctx, tenant, rec.ID, from, limit)
//
// # Where things live
//
// Three key-value buckets and one work queue, all in the Box's JetStream:
//
//   - KVJobs: one record per job (key "<tenant hash>.<job id>"): status, counts, the label
//     histogram, a bitmap of the documents already counted, the webhook's delivery state.
//   - KVDocs: each document's text until it is processed (key "<job id>.<index>").
//   - KVResults: each document's outcome, its de-identified text and spans (same key).
//   - WorkStream, a WorkQueuePolicy stream: one message per document naming its key, read by
//     a durable pull consumer with explicit acknowledgement, shared by every replica.
//
// A document's message is acknowledged only once its result is stored and counted; until then
// the worker reports progress (InProgress) every AckWait/3, so that a slow document is not
// handed to another worker, while a worker that dies stops reporting and its message is
// delivered again after AckWait. Processing twice is harmless: the result is a put by key
// (one value per document), and the record's bitmap, updated by compare-and-set on the
// record's revision, counts each document once.
//
// # Text at rest
//
// With a key (Config.KeyFile, 32 bytes), every value is sealed with AES-256-GCM, the key of
// the value as additional data (a value moved to another key does not open), and the buckets
// and the stream are files: jobs survive restarts. Without a key no job text is written to a
// disk: the buckets and stream are kept in memory (the embedded server's, or the cluster's),
// and the API says so (Record.Durable false), as OpenMed's own jobs are kept.
//
// Everything expires with Config.Retention after its last write.
package jobs
