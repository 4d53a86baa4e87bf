package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/natsbox"
)

// Stream is the JetStream stream that holds every replica's chain.
const Stream = "SLUICE_AUDIT"

// subjects are the stream's: one per replica.
const subjects = "sluice.audit.>"

// Subject is the subject replica's chain is published on.
func Subject(replica string) string { return "sluice.audit." + replica }

// ErrUnavailable is an append that the stream did not acknowledge in time, or refused: its
// request must not be answered as if it were recorded.
var ErrUnavailable = errors.New("audit: the record was not stored")

// errResyncing is an append refused at once: the chain broke and its head is being read back
// (or was just tried and could not be), so the record would have nothing sure to link to.
var errResyncing = errors.New("the chain's head is being read back from the stream after a failed append")

// errDuplicate is an acknowledgement of a record whose message id (replica and place in the
// chain) the stream holds already: a record published earlier, thought lost, was stored.
var errDuplicate = errors.New("the stream holds a record at this place in the chain already")

// maxInFlight bounds the appends awaiting their acknowledgement; past it an append waits for a
// place.
const maxInFlight = 16384

// resyncBackoff is how long after a failed resync appends fail at once instead of trying
// again: during an outage one request a second waits for the stream, not every one (it is the
// Retry-After of the 503 they get).
const resyncBackoff = time.Second

// Log is one replica's chain in the stream: Append stamps a record, links it to the chain's
// head and returns once the stream has it. Appends pipeline: each is published as soon as it
// is linked, without waiting for the ones before it to be acknowledged, so that many requests'
// records share the stream's round trips and writes (a group commit); each still returns only
// on its own acknowledgement. It is safe for concurrent use.
//
// A record published is never assumed lost: one whose acknowledgement timed out may still be
// stored, later. So each record carries the message id <replica>-<seq>, which the stream's
// duplicate window refuses to store twice, and after a failure the chain goes on only once a
// record published with the stream sequence of the head it read back as the subject's
// expected last is stored: a late record that landed after the read fails that publish
// instead of forking the chain.
type Log struct {
	box     *natsbox.Box
	js      jetstream.JetStream // the Log's own, for its asynchronous publishes
	replica string
	subject string
	clock   clock.Clock
	metrics *Metrics
	logger  *slog.Logger
	timeout time.Duration

	mu   sync.Mutex
	seq  uint64 // the chain's head as published (maybe not yet acknowledged)
	last string
	// resyncing: one append is reading the head back and storing its record on it; the
	// others fail at once rather than queue behind it.
	resyncing bool
	// retryAt: a resync failed; until then appends fail at once.
	retryAt time.Time
	// broken: a publish failed or its fate is unknown, so a record the chain links to may be
	// missing; the next append reads the head back from the stream first. Set from the
	// publisher's callback, which must not wait for mu.
	broken atomic.Bool
}

// Open creates the stream when there is none (retention from cfg; an existing one keeps its
// limits, see warnOfOtherLimits, and is made to refuse deletes, see denyRemoval) and continues
// replica's chain (box.Replica() in a server) from the last record the stream holds of it.
func Open(ctx context.Context, box *natsbox.Box, replica string, cfg Config, clk clock.Clock, m *Metrics, logger *slog.Logger) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := box.EnsureStream(ctx, StreamConfig(cfg))
	if err != nil {
		return nil, err
	}
	warnOfOtherLimits(logger, st.CachedInfo().Config, cfg)
	if err := denyRemoval(ctx, box, st, logger); err != nil {
		return nil, err
	}
	l := &Log{box: box, replica: replica, subject: Subject(replica), clock: clk, metrics: m,
		logger: logger, timeout: cfg.AckTimeout}
	js, err := jetstream.New(box.Conn(), jetstream.WithPublishAsyncMaxPending(maxInFlight),
		jetstream.WithPublishAsyncTimeout(cfg.AckTimeout),
		jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { l.broken.Store(true) }))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	l.js = js
	h, err := l.readHead(ctx)
	if err != nil {
		return nil, err
	}
	l.seq, l.last = h.seq, h.hash
	return l, nil
}

// StreamConfig is the audit stream as cfg sets it: limits-based retention that removes the
// oldest records first, and no deletes or purges through the API, so that a record can only
// leave by age or size.
func StreamConfig(cfg Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        Stream,
		Description: "Sluice's audit: each replica's hash chain of request records",
		Subjects:    []string{subjects},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      cfg.MaxAge,
		MaxBytes:    maxBytes(cfg.MaxBytes),
		DenyDelete:  true,
		DenyPurge:   true,
		AllowDirect: true,
	}
}

// warnOfOtherLimits logs a warning when the stream's retention limits are not cfg's. The
// replica starts anyway, on the stream's limits: they bound every replica's records, so that
// changing them is an operator's act on the stream (the nats CLI), not a side effect of one
// replica's settings; and refusing to start would take a whole fleet down over a setting
// that does not change what this replica stores, for instance while a rollout of new limits
// is half done.
func warnOfOtherLimits(logger *slog.Logger, have jetstream.StreamConfig, cfg Config) {
	want := StreamConfig(cfg)
	if have.MaxAge == want.MaxAge && have.MaxBytes == want.MaxBytes {
		return
	}
	logger.Warn("audit: the stream's retention limits are not the configured ones; the stream's apply (change them with the nats CLI)",
		slog.String("stream", Stream),
		slog.Duration("stream_max_age", have.MaxAge), slog.Int64("stream_max_bytes", have.MaxBytes),
		slog.Duration("configured_max_age", want.MaxAge), slog.Int64("configured_max_bytes", want.MaxBytes))
}

// denyRemoval sets the stream, made before this replica (by an operator's nats CLI), to
// refuse deletes and purges, as Sluice makes it: where anyone may delete a record, a chain
// whose first records are gone reads as trimmed by age and verifies. Both flags can be set on
// a stream, never cleared, so this changes nothing else.
func denyRemoval(ctx context.Context, box *natsbox.Box, st jetstream.Stream, logger *slog.Logger) error {
	if c := st.CachedInfo().Config; c.DenyDelete && c.DenyPurge {
		return nil
	}
	// The configuration as it is just before the update, not as this replica found it: an
	// operator's edit of the limits since is kept (one in the instant between the two is not).
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	have := info.Config
	have.DenyDelete, have.DenyPurge = true, true
	if _, err := box.JetStream().UpdateStream(ctx, have); err != nil {
		return fmt.Errorf("audit: the stream %s lets records be deleted, and refusing deletes failed: %w", Stream, err)
	}
	logger.Warn("audit: the stream let records be deleted or purged; it no longer does", slog.String("stream", Stream))
	return nil
}

func maxBytes(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// Replica is the chain's replica.
func (l *Log) Replica() string { return l.replica }

// storedHead is the chain's last record as the stream holds it: its place, hash and stream
// sequence (all zero, and ZeroHash, when the stream holds none).
type storedHead struct {
	seq, streamSeq uint64
	hash           string
}

// readHead is the chain's head asked of the stream's leader, so that a copy that lags cannot
// fork the chain.
func (l *Log) readHead(ctx context.Context) (storedHead, error) {
	m, err := l.box.LastOf(ctx, Stream, l.subject)
	if err != nil {
		return storedHead{}, fmt.Errorf("audit: reading the chain's head: %w", err)
	}
	if m == nil {
		return storedHead{hash: ZeroHash}, nil
	}
	r, err := Decode(m.Data)
	if err != nil {
		return storedHead{}, fmt.Errorf("audit: the chain's head (stream sequence %d): %w", m.Sequence, err)
	}
	return storedHead{seq: r.Seq, streamSeq: m.Sequence, hash: r.RecordHash}, nil
}

// Append stamps r with the replica, its place in the chain, the time and the previous record's
// hash, and returns it (with its RecordHash) once the stream has acknowledged it. It returns
// within the acknowledgement timeout (sooner when ctx ends). An error means the request must
// not be answered as recorded (it wraps ErrUnavailable); the record may or may not be stored.
func (l *Log) Append(ctx context.Context, r Record) (Record, error) {
	start := l.clock.Now()
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	r, err := l.append(ctx, r)
	l.metrics.appended(err, l.clock.Now().Sub(start))
	if err != nil {
		return r, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return r, nil
}

func (l *Log) append(ctx context.Context, r Record) (Record, error) {
	l.mu.Lock()
	if !l.broken.Load() && !l.resyncing {
		fut, r, err := l.publish(r, nil)
		l.mu.Unlock()
		if err != nil {
			return r, err
		}
		return r, l.await(ctx, fut)
	}
	if l.resyncing || l.clock.Now().Before(l.retryAt) {
		l.mu.Unlock()
		return r, errResyncing
	}
	l.resyncing = true
	l.mu.Unlock()
	r, err := l.resync(ctx, r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.resyncing = false
	if err != nil {
		if l.broken.Load() { // the head is still unknown: the next resync waits a while
			l.retryAt = l.clock.Now().Add(resyncBackoff)
		}
		return r, err
	}
	l.broken.Store(false)
	return r, nil
}

// publish links r to the chain's head and publishes it, in chain order; with expect, only
// onto the stream's record at that sequence. Called with mu held.
func (l *Log) publish(r Record, expect *uint64) (jetstream.PubAckFuture, Record, error) {
	r.Replica, r.Seq, r.PreviousHash = l.replica, l.seq+1, l.last
	r.Timestamp = l.clock.Now().UTC().Format(time.RFC3339Nano)
	data, hash := Encode(r)
	r.RecordHash = hash
	// No retry of a publish that found no stream: a retry could land after later records
	// and take the chain out of order. A failure resyncs the chain instead.
	opts := []jetstream.PublishOpt{jetstream.WithRetryAttempts(0), jetstream.WithMsgID(msgID(l.replica, r.Seq))}
	if expect != nil {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(*expect))
	}
	fut, err := l.js.PublishMsgAsync(&nats.Msg{Subject: l.subject, Data: data}, opts...)
	if err != nil {
		if errors.Is(err, nats.ErrMaxPayload) {
			err = fmt.Errorf("the record is %d bytes, more than a message of the connection may hold: %w", len(data), err)
		}
		// A refusal before any byte went out leaves the head where it is, and certain: the
		// chain goes on from it, and the appends beside this one are not failed by a resync.
		if !unsent(err) {
			l.broken.Store(true)
		}
		return nil, r, err
	}
	l.seq, l.last = r.Seq, hash
	return fut, r, nil
}

// unsent says whether err, from PublishMsgAsync, is a refusal by the client before it wrote
// the message (nats.go's checks before its write: the message's size, its subject, a closed,
// draining or full connection, too many publishes awaiting their acknowledgement).
func unsent(err error) bool {
	for _, e := range []error{nats.ErrMaxPayload, nats.ErrBadSubject, nats.ErrHeadersNotSupported, nats.ErrConnectionClosed,
		nats.ErrConnectionDraining, nats.ErrReconnectBufExceeded, nats.ErrInvalidConnection, jetstream.ErrTooManyStalledMsgs} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// msgID is the record's message id: its replica and place in the chain, which the stream
// stores once within its duplicate window.
func msgID(replica string, seq uint64) string { return replica + "-" + strconv.FormatUint(seq, 10) }

// await waits for fut's acknowledgement. Anything but a plain one (a failure, a duplicate, or
// ctx ending first, when the record's fate is unknown) breaks the chain.
func (l *Log) await(ctx context.Context, fut jetstream.PubAckFuture) error {
	var err error
	select { // the publisher fails a record unacknowledged past the timeout
	case ack := <-fut.Ok():
		if ack.Duplicate {
			err = errDuplicate
		}
	case err = <-fut.Err():
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		l.broken.Store(true)
	}
	return err
}

// resync waits for the appends in flight to be settled, reads the chain's head back from the
// stream and stores r on it, published to be refused if the subject's last record is no
// longer that head (a record in flight landed after the read). Only one append resyncs at a
// time, without mu, so that the others can fail at once instead of waiting.
func (l *Log) resync(ctx context.Context, r Record) (Record, error) {
	select {
	case <-l.js.PublishAsyncComplete():
	case <-ctx.Done():
		return r, ctx.Err()
	}
	h, err := l.readHead(ctx)
	if err != nil {
		return r, err
	}
	l.mu.Lock()
	l.seq, l.last = h.seq, h.hash
	fut, r, err := l.publish(r, &h.streamSeq)
	if err != nil && unsent(err) {
		// The head was just read back, and a record refused before it was sent leaves it
		// there: the chain is whole, and the appends after this one need no resync (an
		// oversized record that happened to resync failed every append for a second).
		l.broken.Store(false)
		l.metrics.resynced()
	}
	l.mu.Unlock()
	if err != nil {
		return r, err
	}
	if err := l.await(ctx, fut); err != nil {
		return r, err
	}
	l.metrics.resynced()
	l.logger.Warn("audit: an append failed; the chain goes on from the last record stored",
		slog.String("replica", l.replica), slog.Uint64("seq", h.seq))
	return r, nil
}

// Close waits (at most the acknowledgement timeout) for the appends in flight; the Box is the
// caller's to close after it.
func (l *Log) Close() {
	timer := l.clock.NewTimer(l.timeout)
	defer timer.Stop()
	select {
	case <-l.js.PublishAsyncComplete():
	case <-timer.C():
	}
}
