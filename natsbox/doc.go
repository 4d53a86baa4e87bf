// Package natsbox owns the one NATS connection a Sluice process has, and the JetStream it
// keeps durable state in: a nats-server embedded in the process by default, or an external
// cluster.
//
// # How to use it
//
//	box, err := natsbox.Open(ctx, cfg, logger)   // cfg: natsbox.Config from the environment
//	defer box.Close()
//	st, err := box.EnsureStream(ctx, jetstream.StreamConfig{Name: "AUDIT", Subjects: []string{"audit.>"}})
//	ack, err := box.JetStream().Publish(ctx, "audit.r1", data)
//
// Embedded (Config.URL empty), the server runs JetStream with file storage under
// Config.DataDir, listens on no port (the process talks to it over an in-process pipe),
// installs no signal handlers (it would end the process on SIGTERM), and is checked to have
// JetStream really enabled before Open returns (a failed JetStream start is otherwise only
// a log line). The data directory is locked while the server runs: a second process on the
// same directory is refused instead of corrupting the store. Streams keep one copy.
//
// External (Config.URL set: one or more nats:// URLs), the client reconnects for ever and
// EnsureStream gives every stream Config.Replicas copies, which the cluster keeps with Raft.
//
// Durability: a message is in the stream once its publish is acknowledged (PubAck). With one
// copy the server has written it to its file (the operating system's page cache) before it
// acknowledges, so it survives the process being killed; Config.SyncAlways also syncs each
// write to the disk, for a host that may crash. Never use JetStream's asynchronous persist
// mode here: it acknowledges before writing.
//
// EnsureStream, DirectBatch, LastBefore, SeqAt and LastOf are what any stream's user needs
// beyond the jetstream package: a stream created or brought to its configuration, reads of
// many messages in one request, the last message of each subject before a sequence, the first
// at a time, and a subject's last message as the stream's leader knows it. A read whose context
// has no deadline gives up after 10 s (a stream without a leader answers nothing).
package natsbox
