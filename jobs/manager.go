package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/natsbox"
)

// The buckets and the stream, by storage: a key makes them files, no key keeps them in memory
// (separate names, since JetStream cannot change a bucket's storage).
type names struct{ records, results, stream, subject string }

var (
	fileNames   = names{"SLUICE_JOBS", "SLUICE_JOBS_RESULTS", "SLUICE_JOBS_QUEUE", "sluice.jobs.queue"}
	memoryNames = names{"SLUICE_JOBS_MEM", "SLUICE_JOBS_MEM_RESULTS", "SLUICE_JOBS_MEM_QUEUE", "sluice.jobsmem.queue"}
)

// consumerName is the work queue's one durable consumer, shared by every replica.
const consumerName = "workers"

// Manager creates, reads and cancels jobs, and works on any job's documents. It is safe for
// concurrent use.
type Manager struct {
	cfg     Config
	box     *natsbox.Box
	js      jetstream.JetStream // the Manager's own, for its asynchronous publishes
	clk     clock.Clock
	met     *Metrics
	log     *slog.Logger
	seal    *sealer
	n       names
	records jetstream.KeyValue
	results jetstream.KeyValue
	stream  jetstream.Stream
	cons    jetstream.Consumer
	client  *http.Client

	tries  tries      // failed tries of documents in this process
	sealed sealedJobs // jobs this process found sealed under another key, since when

	mu   sync.Mutex
	stop context.CancelFunc
	// fingerprint is Work.Fingerprint, set by Start before any worker runs.
	fingerprint func(tenant, text string) string
	workers     sync.WaitGroup
	// creating is createRecord's locks, one per stripe of tenants (replicas can still pass
	// MaxPerTenant together, by one job each at most).
	creating [16]sync.Mutex
	// storing is the documents of this process's creates not yet all in the queue
	// (reserveQueue's, one at a time under reserving; replicas can still pass
	// MaxQueuedDocuments together, by one job each).
	storing   atomic.Int64
	reserving sync.Mutex
	// kick wakes the sweep (a job finished at Create, having no documents);
	// sweeping holds a place per delivery the sweep runs.
	kick, sweeping chan struct{}
	details        *detailsCache
	// ownAckWait is this process's Config.AckWait; ackWait the consumer's as last read (in
	// nanoseconds), and ackRead when (m.clk's Unix nanoseconds): see readAckWait.
	ownAckWait       time.Duration
	ackWait, ackRead atomic.Int64
	// draining is the embedded server's streams whose byte bound a start left above this
	// process's share of them (each held more), by name, with that share: drainBounds brings
	// each down as it drains.
	drainMu  sync.Mutex
	draining map[string]int64
	// ackPendingShare, when not 0, is MaxQueuedDocuments, which the consumer's MaxAckPending
	// was left above since the queue held more (drainBounds).
	ackPendingShare int
}

// Open ensures the buckets, the work stream and its consumer. It reads the key once.
func Open(ctx context.Context, box *natsbox.Box, cfg Config, clk clock.Clock, met *Metrics, logger *slog.Logger) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var key []byte
	if cfg.KeyFile != "" {
		var err error
		if key, err = ReadKey(cfg.KeyFile); err != nil {
			return nil, err
		}
	}
	s, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, box: box, clk: clk, met: met, log: logger, seal: s, n: memoryNames, kick: make(chan struct{}, 1),
		sweeping: make(chan struct{}, maxSweepDeliveries), details: newDetailsCache(detailsCacheBytes), ownAckWait: cfg.AckWait}
	m.client = webhookClient(cfg)
	storage := jetstream.MemoryStorage
	if s != nil {
		storage, m.n = jetstream.FileStorage, fileNames
	}
	if m.js, err = jetstream.New(box.Conn()); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	// The buckets, the queue and its consumer are the fleet's: this process's settings make
	// them when they do not exist, and otherwise it works with theirs (see fleets), but on the
	// embedded server, which is this process's alone.
	var retention time.Duration // the shorter of the buckets' TTLs
	queueBytes, resultsBytes, recordsBytes := cfg.storeShares()
	bucket := func(name string, maxBytes int64) (jetstream.KeyValue, error) {
		kv, err := m.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1,
			TTL: cfg.Retention, MaxBytes: maxBytes, Storage: storage, Replicas: box.Replicas()})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = m.js.KeyValue(ctx, name)
		}
		var st jetstream.Stream
		if err == nil {
			if st, err = m.js.Stream(ctx, "KV_"+name); err == nil {
				err = natsbox.AwaitLeader(ctx, st)
			}
		}
		var held jetstream.StreamConfig
		if err == nil {
			held, err = m.fleetStream(ctx, st, "bucket "+name, "TTL", "nats kv edit "+name,
				streamLimits{cfg.Retention, maxBytes, jetstream.DiscardNew})
		}
		if err != nil {
			return nil, fmt.Errorf("jobs: bucket %s: %w", name, err)
		}
		if ttl := held.MaxAge; ttl > 0 && (retention == 0 || ttl < retention) {
			retention = ttl
		}
		return kv, nil
	}
	if m.records, err = bucket(m.n.records, recordsBytes); err != nil {
		return nil, err
	}
	if m.results, err = bucket(m.n.results, resultsBytes); err != nil {
		return nil, err
	}
	// A job is served as gone once its results may have expired: by the buckets' TTL, which
	// is this replica's setting only where it made them (none: they keep their entries for ever,
	// and a job is served as gone after this replica's).
	if retention > 0 {
		m.cfg.Retention = retention
	}
	m.stream, err = m.js.CreateStream(ctx, jetstream.StreamConfig{Name: m.n.stream,
		Description: "Sluice's job documents waiting to be de-identified (sealed when durable)",
		Subjects:    []string{m.n.subject + ".>"}, Retention: jetstream.WorkQueuePolicy, MaxAge: cfg.Retention,
		MaxBytes: queueBytes, Discard: jetstream.DiscardNew, Storage: storage, Replicas: box.Replicas()})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		m.stream, err = m.js.Stream(ctx, m.n.stream)
	}
	if err == nil {
		err = natsbox.AwaitLeader(ctx, m.stream)
	}
	if err == nil {
		_, err = m.fleetStream(ctx, m.stream, "stream "+m.n.stream, "MaxAge", "nats stream edit "+m.n.stream,
			streamLimits{cfg.Retention, queueBytes, jetstream.DiscardNew})
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: stream %s: %w", m.n.stream, err)
	}
	// Every queued document may be pending at once (a throttled tenant's, given back to wait
	// for its budget, stay pending): a smaller bound would let them stop everyone's delivery.
	m.cons, err = m.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: consumerName,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.AckWait, MaxDeliver: -1,
		MaxAckPending: cfg.MaxQueuedDocuments})
	if errors.Is(err, jetstream.ErrConsumerExists) {
		m.cons, err = m.stream.Consumer(ctx, consumerName)
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: consumer: %w", err)
	}
	cc := m.cons.CachedInfo().Config
	held := cc
	// Nor below the documents queued already, those a smaller bound would find pending
	// (such a throttled tenant's) stopping everyone's delivery while they stay: the bound is
	// then what the queue holds, and the sweep lowers it as the queue drains (drainBounds).
	// Creates keep to MaxQueuedDocuments meanwhile.
	ackPending := cfg.MaxQueuedDocuments
	if m.box.Embedded() {
		info, err := m.stream.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("jobs: stream %s: %w", m.n.stream, err)
		}
		if queued := int(min(info.State.Msgs, 1<<31-1)); queued > ackPending {
			ackPending, m.ackPendingShare = queued, cfg.MaxQueuedDocuments
		}
	}
	if m.box.Embedded() && (cc.AckWait != cfg.AckWait || cc.MaxAckPending != ackPending) {
		cc.AckWait, cc.MaxAckPending = cfg.AckWait, ackPending
		if m.cons, err = m.stream.UpdateConsumer(ctx, cc); err != nil {
			return nil, fmt.Errorf("jobs: consumer: applying SLUICE_JOBS_ACK_WAIT_MS and SLUICE_JOBS_MAX_QUEUED_DOCUMENTS: %w", err)
		}
		cc = m.cons.CachedInfo().Config
	}
	what, edit := "consumer "+consumerName, "nats consumer edit "+m.n.stream+" "+consumerName
	m.fleets(what, "AckWait", "SLUICE_JOBS_ACK_WAIT_MS's", edit, held.AckWait, cfg.AckWait)
	if m.ackPendingShare > 0 {
		m.log.Warn("jobs: the queue holds more documents than SLUICE_JOBS_MAX_QUEUED_DOCUMENTS; the consumer's MaxAckPending is what it holds, and comes down to the setting as it drains",
			slog.Int("queued", ackPending), slog.Int("configured", cfg.MaxQueuedDocuments))
	} else {
		m.fleets(what, "MaxAckPending", "SLUICE_JOBS_MAX_QUEUED_DOCUMENTS's", edit, held.MaxAckPending, cfg.MaxQueuedDocuments)
	}
	// The heartbeat keeps to the consumer's AckWait, and the queue's bound to what may be
	// pending, whatever this replica was configured with.
	m.cfg.AckWait = cc.AckWait
	m.ackWait.Store(int64(cc.AckWait))
	m.ackRead.Store(m.clk.Now().UnixNano())
	if cc.MaxAckPending > 0 {
		m.cfg.MaxQueuedDocuments = min(m.cfg.MaxQueuedDocuments, cc.MaxAckPending)
	}
	// Its asynchronous publishes (a job's documents, results) give up after half of the
	// shorter AckWait, the consumer's or this replica's own.
	if m.js, err = jetstream.New(box.Conn(), jetstream.WithPublishAsyncMaxPending(4096),
		jetstream.WithPublishAsyncTimeout(min(cc.AckWait, cfg.AckWait)/2)); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return m, nil
}

// fleets tells of a setting that what (a bucket, the stream or the consumer) held (have) other
// than this replica's (want). On an external cluster it is a warning, and the replica starts
// on what is held: those settings bound every replica's jobs, so that changing them is an
// operator's act (edit, a nats CLI command), not a side effect of the last replica to start (a
// shorter retention would trim every tenant's jobs, a shorter AckWait hand the others' batches
// out again while they run); and refusing to start would take a fleet down halfway through a
// rollout of new settings. The embedded server is this process's alone (its directory locked,
// no port open, so that no nats CLI reaches it): the caller has applied want, and this says so.
func (m *Manager) fleets(what, field, setting, edit string, have, want any) {
	if have == want {
		return
	}
	held, configured := slog.String("held", fmt.Sprint(have)), slog.String("configured", fmt.Sprint(want))
	if m.box.Embedded() {
		m.log.Info("jobs: the "+what+"'s "+field+" was not "+setting+"; it is now (the embedded server's store is this process's alone)",
			held, configured)
		return
	}
	m.log.Warn("jobs: the "+what+"'s "+field+" is not "+setting+"; the "+what+"'s applies to every replica (change it with `"+edit+"`)",
		held, configured)
}

// streamLimits is what Open sets of a bucket's or the queue's stream: the retention, the
// jobs' share of the store, and what a full one does.
type streamLimits struct {
	maxAge   time.Duration
	maxBytes int64
	discard  jetstream.DiscardPolicy
}

// fleetStream compares st's limits with want (fleets), their names field (the age: a bucket's
// TTL, the queue's MaxAge) and how to change them on a cluster, edit; on the embedded server
// it applies want. It returns st's config as it now is. A bound lowered below what the stream
// holds removes nothing: its streams discard new messages, not old.
func (m *Manager) fleetStream(ctx context.Context, st jetstream.Stream, what, field, edit string, want streamLimits) (jetstream.StreamConfig, error) {
	sc := st.CachedInfo().Config
	held := streamLimits{sc.MaxAge, sc.MaxBytes, sc.Discard}
	apply := want
	// A share lowered below what the stream holds would refuse every write until it drained:
	// each queued document's result refused as full, its tries spent, and the document
	// failed by the restart. The bound is what it holds instead, and comes down to the share
	// as the stream drains (drainBounds); meanwhile a result refused as full waits (retry).
	holds := int64(st.CachedInfo().State.Bytes)
	over := m.box.Embedded() && want.maxBytes > 0 && holds > want.maxBytes
	if over {
		apply.maxBytes = holds
		m.drainMu.Lock()
		if m.draining == nil {
			m.draining = map[string]int64{}
		}
		m.draining[sc.Name] = want.maxBytes
		m.drainMu.Unlock()
	}
	if held != apply && m.box.Embedded() {
		sc.MaxAge, sc.MaxBytes, sc.Discard = apply.maxAge, apply.maxBytes, apply.discard
		// The server refuses a window of duplicates longer than what is kept.
		if sc.MaxAge > 0 && sc.Duplicates > sc.MaxAge {
			sc.Duplicates = sc.MaxAge
		}
		updated, err := m.js.UpdateStream(ctx, sc)
		if err != nil {
			return sc, fmt.Errorf("applying SLUICE_JOBS_RETENTION_S and SLUICE_JOBS_MAX_STORE_BYTES: %w", err)
		}
		sc = updated.CachedInfo().Config
	}
	m.fleets(what, field, "SLUICE_JOBS_RETENTION_S's", edit, held.maxAge, want.maxAge)
	if over {
		m.log.Warn("jobs: the "+what+" holds more than its share of SLUICE_JOBS_MAX_STORE_BYTES; its bound is what it holds, and comes down to the share as it drains (documents whose results do not fit meanwhile wait)",
			slog.Int64("held_bytes", holds), slog.Int64("share_bytes", want.maxBytes))
	} else {
		m.fleets(what, "MaxBytes", "SLUICE_JOBS_MAX_STORE_BYTES's", edit, held.maxBytes, want.maxBytes)
	}
	m.fleets(what, "Discard", "new (a full share refuses writes rather than dropping what it holds)",
		"nats stream edit "+sc.Name+" --discard new", held.discard, want.discard)
	return sc, nil
}

// drainBounds lowers each draining stream's bound to the larger of its share and what it
// holds now, and forgets it once that is the share. Never below what it holds, so that the
// stream refuses only what would grow it. A stream that does not answer is tried again at
// the next sweep.
func (m *Manager) drainBounds(ctx context.Context) {
	m.drainMu.Lock()
	streams, pending := maps.Clone(m.draining), m.ackPendingShare
	m.drainMu.Unlock()
	if pending > 0 {
		m.drainAckPending(ctx, pending)
	}
	for name, share := range streams {
		st, err := m.js.Stream(ctx, name)
		if err != nil {
			continue
		}
		info := st.CachedInfo()
		bound := max(share, int64(info.State.Bytes))
		if bound < info.Config.MaxBytes {
			sc := info.Config
			sc.MaxBytes = bound
			if _, err := m.js.UpdateStream(ctx, sc); err != nil {
				continue
			}
		}
		if bound == share {
			m.drainMu.Lock()
			delete(m.draining, name)
			m.drainMu.Unlock()
			m.log.Info("jobs: the stream "+name+" holds no more than its share of SLUICE_JOBS_MAX_STORE_BYTES; its bound is the share",
				slog.Int64("share_bytes", share))
		}
	}
}

// drainAckPending lowers the consumer's MaxAckPending to the larger of MaxQueuedDocuments
// (share) and the documents the queue holds now, and forgets it once that is the setting.
// Creates keep the queue under the setting, so what it holds only comes down.
func (m *Manager) drainAckPending(ctx context.Context, share int) {
	info, err := m.stream.Info(ctx)
	if err != nil {
		return
	}
	ci, err := m.cons.Info(ctx)
	if err != nil {
		return
	}
	bound := max(share, int(min(info.State.Msgs, 1<<31-1)))
	if bound < ci.Config.MaxAckPending {
		cc := ci.Config
		cc.MaxAckPending = bound
		if _, err := m.stream.UpdateConsumer(ctx, cc); err != nil {
			return
		}
	}
	if bound == share {
		m.drainMu.Lock()
		m.ackPendingShare = 0
		m.drainMu.Unlock()
		m.log.Info("jobs: the queue holds no more documents than SLUICE_JOBS_MAX_QUEUED_DOCUMENTS; it is the consumer's MaxAckPending",
			slog.Int("configured", share))
	}
}

// overShare says whether bucket (the records', the results') holds more than its share: a
// write it refuses as full was refused for what a start found there, not for the document's
// jobs.
func (m *Manager) overShare(bucket string) bool {
	m.drainMu.Lock()
	defer m.drainMu.Unlock()
	_, ok := m.draining["KV_"+bucket]
	return ok
}

// Durable says whether jobs survive a restart (a key is configured).
func (m *Manager) Durable() bool { return m.seal != nil }

// tenantKey is a tenant as a token of a key: its hash, since a tenant's name may hold any
// character.
func tenantKey(tenant string) string {
	h := sha256.Sum256([]byte(tenant))
	return hex.EncodeToString(h[:12])
}

func recordKey(tenant, id string) string { return tenantKey(tenant) + "." + id }
func docKey(id string, i int) string     { return id + "." + strconv.Itoa(i) }

// validID: a job id is what newID makes, so that a path segment never becomes a key wildcard.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CheckCount is Create's bound on a job's documents, for a caller that would read n of them
// first: a *Bound past it.
func (m *Manager) CheckCount(n int) error {
	if n > m.cfg.MaxDocuments {
		return &Bound{Status: http.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("a job holds at most %d documents (SLUICE_JOBS_MAX_DOCUMENTS)", m.cfg.MaxDocuments)}
	}
	return nil
}

// Create stores a job and queues its documents. A job past a bound is a *Bound.
func (m *Manager) Create(ctx context.Context, tenant string, spec Spec) (*Record, error) {
	if err := m.CheckCount(len(spec.Documents)); err != nil {
		return nil, err
	}
	var size int64
	for _, d := range spec.Documents {
		size += int64(len(d.Text))
	}
	if size > m.cfg.MaxBytes {
		return nil, &Bound{Status: http.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("a job's texts hold at most %d bytes (SLUICE_JOBS_MAX_BYTES)", m.cfg.MaxBytes)}
	}
	plains := make([][]byte, len(spec.Documents))
	for i, d := range spec.Documents {
		plains[i], _ = json.Marshal(d)
		if n := len(plains[i]); n > m.maxValue() {
			return nil, &Bound{Status: http.StatusRequestEntityTooLarge,
				Message: fmt.Sprintf("document %d is %d bytes as stored (its JSON), over the job store's %d a message", i, n, m.maxValue())}
		}
	}
	// The options and the webhook are the client's, and JSON may write them six times over
	// (each '<' as \u003c): a record the store cannot hold is the request's fault, not the
	// store's. Room is left for NoResult too, as large as Counted at most.
	if plain, _ := json.Marshal(m.newRecord(tenant, spec)); len(plain) > m.maxValue()-recordGrowth-noResultRoom(len(spec.Documents)) {
		return nil, &Bound{Status: http.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("the job's record (its options and webhook) is %d bytes as stored, over the job store's %d",
				len(plain), m.maxValue()-recordGrowth-noResultRoom(len(spec.Documents)))}
	}
	if spec.Webhook != nil {
		if err := m.CheckWebhookURL(ctx, spec.Webhook.URL); err != nil {
			return nil, err
		}
	}
	rec, release, err := m.createRecord(ctx, tenant, spec)
	if storeFull(err) {
		return nil, fullStore(err)
	}
	if err != nil {
		return nil, err
	}
	defer release()
	// One message a document, its text sealed in it: what a worker needs comes with the message,
	// and the acknowledgement that retires it removes the text.
	futures := make([]jetstream.PubAckFuture, 0, len(spec.Documents))
	err = func() error {
		rk := recordKey(tenant, rec.ID)
		for i, plain := range plains {
			k := docKey(rec.ID, i)
			msg := nats.NewMsg(m.n.subject + "." + rec.ID)
			msg.Header.Set(headerRecord, rk)
			msg.Header.Set(headerJob, rec.ID)
			msg.Header.Set(headerIndex, strconv.Itoa(i))
			msg.Data = m.seal.seal(k, plain)
			f, err := m.js.PublishMsgAsync(msg, jetstream.WithMsgID(k))
			if err != nil {
				return err
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}()
	if err != nil {
		m.log.Error("jobs: a job's documents were not all stored; it is failed", slog.String("job_id", rec.ID),
			slog.String("error", err.Error()))
		_, _ = m.abandon(context.Background(), tenant, rec.ID, "the job's documents could not be stored")
		_ = m.stream.Purge(context.Background(), jetstream.WithPurgeSubject(m.n.subject+"."+rec.ID))
		if storeFull(err) {
			return nil, fullStore(err)
		}
		return nil, fmt.Errorf("jobs: storing the documents: %w", err)
	}
	m.met.job("created")
	if rec.Status == Done && rec.Webhook != nil {
		m.kickSweep() // finished already: its webhook is the sweep's
	}
	return rec, nil
}

// fullStore is a create refused for want of room (storeFull's err): the queue or the records
// bucket at its bound (the jobs' share, MaxStoreBytes, which leaves the audit its room), or the
// whole store, the audit's too, at its own. Only the first is the jobs' setting's to name: an
// operator may never have set it, and raising it would not help the second.
func fullStore(err error) *Bound {
	if bucketFull(err) {
		return &Bound{Status: http.StatusServiceUnavailable, RetryAfter: time.Minute,
			Message: "the job store is full (SLUICE_JOBS_MAX_STORE_BYTES); retry once jobs have finished and expired"}
	}
	return &Bound{Status: http.StatusServiceUnavailable, RetryAfter: time.Minute,
		Message: "the server's store is full; retry once jobs have finished and expired"}
}

// storeFull says whether err is JetStream refusing a write for want of room: a stream at its
// MaxBytes (discarding new, bucketFull), or the server's store at its bound.
func storeFull(err error) bool {
	return bucketFull(err) || err != nil && strings.Contains(err.Error(), "insufficient resources")
}

// bucketFull says whether err is a stream refusing a write at its own MaxBytes.
func bucketFull(err error) bool {
	return err != nil && strings.Contains(err.Error(), "maximum bytes exceeded")
}

// stripeSeed spreads tenants over Manager.creating.
var stripeSeed = maphash.MakeSeed()

// maxValue is the most bytes a document or a result may hold before sealing: the connection's
// message limit (1 MiB unless the server says otherwise) less room for the seal and the
// headers. A larger one would be refused by every publish, and a document's would be retried
// for ever.
func (m *Manager) maxValue() int {
	return int(m.box.Conn().MaxPayload()) - valueRoom
}

// valueRoom is what a message holds beside its value: the seal's nonce and tag, and the
// headers that name the job and the document.
const valueRoom = 1 << 10

// newRecord is spec's job's record as it is first stored.
func (m *Manager) newRecord(tenant string, spec Spec) *Record {
	now := m.clk.Now().UTC()
	rec := &Record{ID: newID(), Status: Queued, Durable: m.Durable(), DocumentCount: len(spec.Documents),
		LabelHistogram: map[string]int{}, CreatedAt: now, UpdatedAt: now, ResultsSince: now, Tenant: tenant, Options: spec.Options, Payer: spec.Payer,
		Webhook: spec.Webhook, Counted: make([]byte, (len(spec.Documents)+7)/8)}
	if spec.Webhook != nil {
		rec.WebhookDelivery = &Delivery{Status: "pending"}
	}
	if len(spec.Documents) == 0 {
		rec.Status, rec.CompletedAt = Done, &now
	}
	return rec
}

// recordGrowth is what a record may gain after it is created (its labels' counts, an error,
// the webhook's delivery): a record must leave it free below the store's message limit.
const recordGrowth = 16 << 10

// noResultRoom is what Record.NoResult takes of a record of n documents at most (base64 and
// its name).
func noResultRoom(n int) int { return base64.StdEncoding.EncodedLen((n+7)/8) + len(`,"no_result":""`) }

// createRecord stores a new job's record once the tenant's and the queue's bounds allow it:
// the count of the tenant's unfinished jobs and the record that makes one more are one step
// in this process (its stripe of Manager.creating), so that concurrent creates cannot pass
// MaxPerTenant together. spec's documents are held in the queue's count (reserveQueue) until
// release, which its caller calls once they are in the queue (or will never be).
func (m *Manager) createRecord(ctx context.Context, tenant string, spec Spec) (_ *Record, release func(), err error) {
	stripe := &m.creating[maphash.String(stripeSeed, tenant)%uint64(len(m.creating))]
	stripe.Lock()
	defer stripe.Unlock()
	// Counted from the store's subjects, none read: the count of unfinished jobs below reads
	// every one kept, which a tenant creating empty jobs would otherwise grow without bound.
	kept, err := m.recordKeys(ctx, tenantKey(tenant)+".*")
	if err != nil {
		return nil, nil, fmt.Errorf("jobs: %w", err)
	}
	if len(kept) >= m.cfg.MaxKeptPerTenant {
		return nil, nil, &Bound{Status: http.StatusTooManyRequests, RetryAfter: time.Minute,
			Message: fmt.Sprintf("the tenant keeps %d jobs, the most it may (SLUICE_JOBS_MAX_KEPT_PER_TENANT); the oldest go as SLUICE_JOBS_RETENTION_S passes", len(kept))}
	}
	mine, err := m.readRecords(ctx, kept)
	if err != nil {
		return nil, nil, err
	}
	active := 0
	for _, r := range mine {
		if !r.Status.Terminal() {
			active++
		}
	}
	if active >= m.cfg.MaxPerTenant {
		return nil, nil, &Bound{Status: http.StatusTooManyRequests, RetryAfter: 30 * time.Second,
			Message: fmt.Sprintf("the tenant has %d unfinished jobs, the most it may have (SLUICE_JOBS_MAX_PER_TENANT)", active)}
	}
	if release, err = m.reserveQueue(ctx, int64(len(spec.Documents))); err != nil {
		return nil, nil, err
	}
	rec := m.newRecord(tenant, spec)
	if _, err := m.putRecord(ctx, rec, 0, true); err != nil {
		release()
		return nil, nil, err
	}
	return rec, release, nil
}

// reserveQueue counts n documents in Manager.storing if the queue has room for them beside
// those queued and those other creates of this process hold; release gives them back. One
// reservation at a time: the held count is read before the queue's, so a create that ends
// in between is counted twice (in the queue and held), never missed.
func (m *Manager) reserveQueue(ctx context.Context, n int64) (release func(), err error) {
	m.reserving.Lock()
	defer m.reserving.Unlock()
	held := m.storing.Load()
	info, err := m.stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if int64(info.State.Msgs)+held+n > int64(m.cfg.MaxQueuedDocuments) {
		return nil, &Bound{Status: http.StatusServiceUnavailable, RetryAfter: 10 * time.Second,
			Message: "the job queue is full (SLUICE_JOBS_MAX_QUEUED_DOCUMENTS); retry later"}
	}
	m.storing.Add(n)
	return func() { m.storing.Add(-n) }, nil
}

// A document's message names its job's record key, its job and its index in headers (no text
// there); its body is the sealed Document.
const (
	headerRecord = "Sluice-Job-Record"
	headerJob    = "Sluice-Job"
	headerIndex  = "Sluice-Job-Index"
)

// work is what a document's message names.
type work struct {
	Record, Job string
	Index       int
}

// workOf reads a message's names; ok is false for a message no Manager wrote.
func workOf(msg jetstream.Msg) (w work, ok bool) {
	h := msg.Headers()
	i, err := strconv.Atoi(h.Get(headerIndex))
	w = work{Record: h.Get(headerRecord), Job: h.Get(headerJob), Index: i}
	return w, err == nil && i >= 0 && validID(w.Job) && w.Record != ""
}

// putRecord writes rec: created (create true), or updated from revision rev.
func (m *Manager) putRecord(ctx context.Context, rec *Record, rev uint64, create bool) (uint64, error) {
	rec.UpdatedAt = m.clk.Now().UTC()
	k := recordKey(rec.Tenant, rec.ID)
	plain, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	if create {
		return m.records.Create(ctx, k, m.seal.seal(k, plain))
	}
	return m.records.Update(ctx, k, m.seal.seal(k, plain), rev)
}

// getRecord reads a record by its key, with its revision.
func (m *Manager) getRecord(ctx context.Context, k string) (*Record, uint64, error) {
	e, err := m.records.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("jobs: %w", err)
	}
	plain, err := m.seal.open(k, e.Value())
	if errors.Is(err, errSealed) {
		// Sealed under another key (SLUICE_JOBS_KEY_FILE replaced, or a replica that has the
		// other) or damaged: no one with this key can read it, so it is gone to them. An
		// error here would refuse the tenant every create until the record expired. The
		// workers tell it apart (errSealed too): its documents wait for a replica that can.
		return nil, 0, errRecordSealed
	}
	if err != nil {
		return nil, 0, err
	}
	var rec Record
	if err := json.Unmarshal(plain, &rec); err != nil {
		return nil, 0, fmt.Errorf("jobs: a stored record: %w", err)
	}
	return &rec, e.Revision(), nil
}

// change applies f to the record under k until its compare-and-set holds; f returns false to
// leave the record as it is. It returns the record as last read or written.
func (m *Manager) change(ctx context.Context, k string, f func(*Record) bool) (*Record, bool, error) {
	for {
		rec, rev, err := m.getRecord(ctx, k)
		if err != nil {
			return nil, false, err
		}
		if !f(rec) {
			return rec, false, nil
		}
		if _, err := m.putRecord(ctx, rec, rev, false); err == nil {
			return rec, true, nil
		} else if !casConflict(err) {
			return nil, false, fmt.Errorf("jobs: %w", err)
		}
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
	}
}

// Get is tenant's job id; another tenant's is ErrNotFound.
func (m *Manager) Get(ctx context.Context, tenant, id string) (*Record, error) {
	if !validID(id) {
		return nil, ErrNotFound
	}
	rec, _, err := m.getRecord(ctx, recordKey(tenant, id))
	if err == nil && m.expired(rec) {
		return nil, ErrNotFound
	}
	return rec, err
}

// List is tenant's jobs, in no order.
func (m *Manager) List(ctx context.Context, tenant string) ([]*Record, error) {
	keys, err := m.recordKeys(ctx, tenantKey(tenant)+".*")
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return m.readRecords(ctx, keys)
}

// readRecords reads the records under keys, leaving out those gone or expired meanwhile.
func (m *Manager) readRecords(ctx context.Context, keys []string) ([]*Record, error) {
	out := make([]*Record, 0, len(keys))
	for _, k := range keys {
		rec, _, err := m.getRecord(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue // expired meanwhile
		}
		if err != nil {
			return nil, err
		}
		if m.expired(rec) {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// recordKeys are the keys of the records bucket that match filter, from the stream's own
// count of its subjects. The bucket's key lister (a watcher's first pass) leaves out a key
// written while it starts, which a job being worked on is: a tenant's count of unfinished
// jobs would miss it, and so would the sweep.
func (m *Manager) recordKeys(ctx context.Context, filter string) ([]string, error) {
	prefix := "$KV." + m.n.records + "."
	st, err := m.js.Stream(ctx, "KV_"+m.n.records)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(prefix+filter))
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		keys = append(keys, strings.TrimPrefix(subj, prefix))
	}
	return keys, nil
}

// Cancel stops tenant's job id: its documents not yet taken are dropped. A finished job is
// returned as it is.
func (m *Manager) Cancel(ctx context.Context, tenant, id string) (*Record, error) {
	if !validID(id) {
		return nil, ErrNotFound
	}
	rec, changed, err := m.cancel(ctx, recordKey(tenant, id), Cancelled, "")
	if err == nil && !changed && m.expired(rec) {
		return nil, ErrNotFound
	}
	if err != nil || !changed {
		return rec, err
	}
	m.met.job(string(Cancelled))
	if err := m.stream.Purge(ctx, jetstream.WithPurgeSubject(m.n.subject+"."+id)); err != nil {
		m.log.Warn("jobs: a cancelled job's queued documents were not purged; workers skip them", slog.String("job_id", id))
	}
	return rec, nil
}

func (m *Manager) cancel(ctx context.Context, k string, to Status, why string) (*Record, bool, error) {
	return m.change(ctx, k, func(r *Record) bool {
		if r.Status.Terminal() {
			return false
		}
		now := m.clk.Now().UTC()
		r.Status, r.CompletedAt = to, &now
		if why != "" {
			r.Error = &why
		}
		if to == Cancelled && r.WebhookDelivery != nil {
			// The caller who cancelled is told by the answer; the record says no webhook will come.
			r.WebhookDelivery.Status = "skipped"
		}
		return true
	})
}

// abandon fails a job whose creation failed, unless it has finished: its caller was told so,
// or its request died, and may never have had its id, so no webhook is sent for it.
func (m *Manager) abandon(ctx context.Context, tenant, id string, why string) (bool, error) {
	_, changed, err := m.change(ctx, recordKey(tenant, id), func(r *Record) bool {
		// Running too: a worker may have taken its first documents while the rest were
		// being stored.
		if r.Status.Terminal() {
			return false
		}
		now := m.clk.Now().UTC()
		r.Status, r.CompletedAt, r.Error = Failed, &now, &why
		r.Webhook, r.WebhookDelivery = nil, nil
		return true
	})
	return changed, err
}

// Results is a page of a finished job's results, documents from..from+limit-1 in submission
// order; next is the first document after the page, or -1 at the end.
func (m *Manager) Results(ctx context.Context, tenant, id string, from, limit int) ([]Result, int, error) {
	rec, err := m.Get(ctx, tenant, id)
	if err != nil {
		return nil, 0, err
	}
	if rec.Status != Done && rec.Status != Failed {
		return nil, 0, ErrNotFinished
	}
	var out []Result
	i := max(from, 0)
	for ; i < rec.DocumentCount && len(out) < limit; i++ {
		r, err := m.result(ctx, rec.ID, i)
		if errors.Is(err, ErrNotFound) {
			continue // expired, or never stored (a job failed while storing)
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, *r)
	}
	if i >= rec.DocumentCount {
		i = -1
	}
	return out, i, nil
}

func (m *Manager) result(ctx context.Context, id string, i int) (*Result, error) {
	k := docKey(id, i)
	e, err := m.results.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	plain, err := m.seal.open(k, e.Value())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	var r Result
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	return &r, nil
}

// errRecordSealed is a record this process's key does not open: not found, to its readers.
var errRecordSealed = fmt.Errorf("%w (%w)", ErrNotFound, errSealed)

// errUnreadable is a stored result that does not open or parse.
var errUnreadable = errors.New("jobs: a stored result cannot be read")

// Details are a finished job's spans and documents (OpenMed's terminal record), read from its
// results.
func (m *Manager) Details(ctx context.Context, rec *Record) ([]Span, []DocumentInfo, error) {
	if m.expired(rec) {
		return nil, nil, ErrExpired
	}
	if spans, docs, ok := m.details.get(rec.ID); ok {
		return spans, docs, nil
	}
	spans, docs := []Span{}, []DocumentInfo{}
	whole := true
	for i := range rec.DocumentCount {
		r, err := m.result(ctx, rec.ID, i)
		if errors.Is(err, ErrNotFound) {
			// A copy that lags may answer so (not kept), but for a document counted without
			// a result.
			whole = whole && rec.noResult(i)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		spans = append(spans, r.Spans...)
		docs = append(docs, DocumentInfo{ID: r.DocumentID, Length: r.Length, TextHash: r.TextHash})
	}
	if rec.Status == Done && whole { // every result stored and counted: none changes from now on
		m.details.put(rec.ID, spans, docs)
	}
	return spans, docs, nil
}

// expired says whether rec is a finished job some of whose results may have expired:
// Retention has passed since the oldest could have been written. Its record, written last,
// outlives them a while; the job is served as gone from then, as it would be once all of it
// expired, rather than with what is left of its results.
func (m *Manager) expired(rec *Record) bool {
	return (rec.Status == Done || rec.Status == Failed) && !m.clk.Now().Before(rec.resultsFrom().Add(m.cfg.Retention))
}

// keepResultsDue says whether rec's results should be written again so that they expire with
// its record: it is finished, with results to serve, and its first results were written more
// than a tenth of Retention before it finished (a shorter job is served as gone up to that
// much before its record expires; a longer one's results are written twice).
func (m *Manager) keepResultsDue(rec *Record) bool {
	return (rec.Status == Done || rec.Status == Failed) && rec.CompletedAt != nil &&
		rec.CompletedAt.Sub(rec.resultsFrom()) > m.cfg.Retention/10 && !m.expired(rec)
}

// keepResults writes rec's stored results again as they are, then moves its ResultsSince to
// when it began. It stops at the first error or missing result (the next sweep begins
// again; a job whose result has expired is not made whole by keeping the rest).
func (m *Manager) keepResults(ctx context.Context, k string, rec *Record) {
	from := m.clk.Now().UTC()
	for i := range rec.DocumentCount {
		if !rec.counted(i) {
			continue // never stored (its job failed before it came): nothing to keep
		}
		rk := docKey(rec.ID, i)
		e, err := m.results.Get(ctx, rk)
		if errors.Is(err, jetstream.ErrKeyNotFound) && rec.noResult(i) {
			// Counted without one; a result another delivery stored meanwhile is kept above.
			continue
		}
		if err != nil {
			return // one gone (expired already) or unread: ResultsSince stays, and so does the rule
		}
		if _, err := m.results.Put(ctx, rk, e.Value()); err != nil {
			return
		}
	}
	_, _, _ = m.change(ctx, k, func(r *Record) bool {
		if !r.resultsFrom().Before(from) {
			return false
		}
		r.ResultsSince = from
		return true
	})
}

// kickSweep wakes the sweep now, rather than at its next minute.
func (m *Manager) kickSweep() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}
