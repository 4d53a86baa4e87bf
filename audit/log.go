package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// maxInFlight bounds the appends awaiting their acknowledgement; past it an append waits for a
// place.
const maxInFlight = 16384

// Log is one replica's chain in the stream: Append stamps a record, links it to the chain's
// head and returns once the stream has it. Appends pipeline: each is published as soon as it
// is linked, without waiting for the ones before it to be acknowledged, so that many requests'
// records share the stream's round trips and writes (a group commit); each still returns only
// on its own acknowledgement. It is safe for concurrent use.
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
	// broken: a publish failed, so a record the chain links to may be missing; the next
	// append reads the head back from the stream first. Set from the publisher's callback,
	// which must not wait for mu (a resync holds it while it waits for the publisher).
	broken atomic.Bool
}

// Open ensures the stream (retention from cfg) and continues replica's chain (box.Replica()
// in a server) from the last record the stream holds of it.
func Open(ctx context.Context, box *natsbox.Box, replica string, cfg Config, clk clock.Clock, m *Metrics, logger *slog.Logger) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := box.EnsureStream(ctx, StreamConfig(cfg)); err != nil {
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
	if err := l.readHead(ctx); err != nil {
		return nil, err
	}
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

func maxBytes(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// Replica is the chain's replica.
func (l *Log) Replica() string { return l.replica }

// readHead makes the chain's head the last record the stream holds of this replica: asked of
// the stream's leader, so that a copy that lags cannot fork the chain.
func (l *Log) readHead(ctx context.Context) error {
	m, err := l.box.LastOf(ctx, Stream, l.subject)
	if err != nil {
		return fmt.Errorf("audit: reading the chain's head: %w", err)
	}
	if m == nil {
		l.seq, l.last = 0, ZeroHash
		return nil
	}
	r, err := Decode(m.Data)
	if err != nil {
		return fmt.Errorf("audit: the chain's head (stream sequence %d): %w", m.Sequence, err)
	}
	l.seq, l.last = r.Seq, r.RecordHash
	return nil
}

// Append stamps r with the replica, its place in the chain, the time and the previous record's
// hash, and returns it (with its RecordHash) once the stream has acknowledged it. An error
// means the request must not be answered as recorded (it wraps ErrUnavailable); the record
// may or may not be stored.
func (l *Log) Append(ctx context.Context, r Record) (Record, error) {
	start := l.clock.Now()
	fut, r, err := l.publish(ctx, r)
	if err == nil {
		select { // the publisher fails a record unacknowledged past the timeout
		case <-fut.Ok():
		case err = <-fut.Err():
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	l.metrics.appended(err, l.clock.Now().Sub(start))
	if err != nil {
		return r, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return r, nil
}

// publish links r to the chain and publishes it, in chain order.
func (l *Log) publish(ctx context.Context, r Record) (jetstream.PubAckFuture, Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken.Load() {
		if err := l.resync(ctx); err != nil {
			return nil, r, err
		}
	}
	r.Replica, r.Seq, r.PreviousHash = l.replica, l.seq+1, l.last
	r.Timestamp = l.clock.Now().UTC().Format(time.RFC3339Nano)
	data, hash := Encode(r)
	r.RecordHash = hash
	// No retry of a publish that found no stream: a retry could land after later records
	// and take the chain out of order. A failure resyncs the chain instead.
	fut, err := l.js.PublishMsgAsync(&nats.Msg{Subject: l.subject, Data: data}, jetstream.WithRetryAttempts(0))
	if err != nil {
		l.broken.Store(true)
		return nil, r, err
	}
	l.seq, l.last = r.Seq, hash
	return fut, r, nil
}

// resync waits for the appends in flight to be settled, then reads the chain's head back from
// the stream: a record that failed is not linked to, whatever was stored after it (in flight
// when it failed) is. Called with mu held: appends wait until the head is known.
func (l *Log) resync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	select {
	case <-l.js.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := l.readHead(ctx); err != nil {
		return err
	}
	l.broken.Store(false)
	l.metrics.resynced()
	l.logger.Warn("audit: an append failed; the chain goes on from the last record stored",
		slog.String("replica", l.replica), slog.Uint64("seq", l.seq))
	return nil
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
