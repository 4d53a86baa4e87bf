package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
)

// fetchWait bounds one wait for a first message, so that Close is not kept waiting.
const fetchWait = 2 * time.Second

// Start runs Config.Workers workers on the shared work queue. Each takes up to Config.Batch
// documents at a time and runs p on all of them at once, so that the batcher sees them
// together; their results are written as one burst of asynchronous requests, and each job's
// counts are folded into one compare-and-set of its record. Close stops them.
func (m *Manager) Start(w Work) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop != nil {
		return errors.New("jobs: the workers are started already")
	}
	p := w.Process
	m.fingerprint = w.Fingerprint
	if m.fingerprint == nil {
		m.fingerprint = func(_, text string) string { return Hash(text) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	m.workers.Add(1)
	go func() {
		defer m.workers.Done()
		m.sweep(ctx)
	}()
	for range m.cfg.Workers {
		m.workers.Add(1)
		go func() {
			defer m.workers.Done()
			for ctx.Err() == nil {
				batch, err := m.gather(ctx)
				if len(batch) > 0 {
					m.handle(ctx, p, batch)
				} else if err != nil && ctx.Err() == nil {
					m.pause(ctx, time.Second) // the server does not answer: do not spin
				}
			}
		}()
	}
	return nil
}

// sweepEvery is how often a process looks through the records for work nobody holds: a
// webhook left pending (a job that finished with no documents, a delivery whose process
// stopped or died before it ended) and a job whose documents will never all come.
const sweepEvery = time.Minute

// sweep looks through the records at start, when kicked and every sweepEvery, until ctx ends.
func (m *Manager) sweep(ctx context.Context) {
	for {
		m.sweepOnce(ctx)
		t := m.clk.NewTimer(sweepEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-m.kick:
			t.Stop()
		}
	}
}

// maxSweepDeliveries bounds the deliveries a sweep runs at once: one receiver that keeps
// failing does not hold the others up, and a sweep that finds every place taken leaves the
// rest to the next.
const maxSweepDeliveries = 8

// sweepOnce fails each orphaned job it finds, writes again the results of each long job that
// finished (keepResults), and starts the delivery of each webhook it can claim, up to
// maxSweepDeliveries at once.
func (m *Manager) sweepOnce(ctx context.Context) {
	m.drainBounds(ctx)
	keys, err := m.recordKeys(ctx, ">")
	if err != nil {
		return // the server does not answer: the next sweep tries again
	}
	for _, k := range keys {
		if ctx.Err() != nil {
			return
		}
		rec, _, err := m.getRecord(ctx, k)
		if err != nil {
			continue
		}
		if m.keepResultsDue(rec) {
			m.keepResults(ctx, k, rec)
		}
		// An orphan failed just now may owe its webhook; claimWebhook reads it afresh.
		if orphan := m.failOrphan(ctx, k, rec); !orphan && !webhookDue(rec, m.clk.Now()) {
			continue
		}
		select {
		case m.sweeping <- struct{}{}:
		default:
			continue // every place taken: the next sweep delivers the rest
		}
		rec, ok := m.claimWebhook(ctx, k)
		if !ok {
			<-m.sweeping
			continue
		}
		m.workers.Add(1)
		go func() {
			defer m.workers.Done()
			defer func() { <-m.sweeping }()
			m.deliver(ctx, k, rec)
		}()
	}
}

// orphanAge is how long an unfinished job may go without a change to its record while none
// of its documents is in the queue before it is taken for one whose documents will never all
// come: its creation died between storing the record and storing the documents.
const orphanAge = 10 * time.Minute

// failOrphan fails k's job, as rec shows it, if it is such an orphan, and says whether it did. One that never started was created by a
// request that died or was told it failed, so it may never have had its id: it is abandoned,
// without a webhook. One that started fails as a job does, its webhook sent.
func (m *Manager) failOrphan(ctx context.Context, k string, rec *Record) bool {
	if rec.Status.Terminal() || m.clk.Now().Sub(rec.UpdatedAt) < orphanAge {
		return false
	}
	subject := m.n.subject + "." + rec.ID
	info, err := m.stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil || info.State.Subjects[subject] > 0 {
		return false
	}
	const why = "the job's documents were not all stored"
	var changed bool
	if rec.Status == Queued {
		changed, err = m.abandon(ctx, rec.Tenant, rec.ID, why)
	} else {
		_, changed, err = m.cancel(ctx, k, Failed, why)
	}
	if err != nil || !changed {
		return false
	}
	m.met.job(string(Failed))
	m.log.Warn("jobs: a job whose documents will never all come is failed", slog.String("job_id", rec.ID))
	return true
}

// Close stops the workers (documents in progress are given back to the queue) and waits for
// them and for the webhooks being delivered. Call it before the Box's Close.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.stop != nil {
		m.stop()
	}
	m.mu.Unlock()
	m.workers.Wait()
}

// gather waits for a message, then takes those ready at once, up to Config.Batch. Nothing is
// fetched ahead into a buffer: every message delivered is one a batch's heartbeat covers.
func (m *Manager) gather(ctx context.Context) ([]jetstream.Msg, error) {
	fctx, cancel := context.WithTimeout(ctx, fetchWait)
	defer cancel()
	first, err := m.cons.Fetch(1, jetstream.FetchContext(fctx))
	if err != nil {
		return nil, err
	}
	var batch []jetstream.Msg
	for msg := range first.Messages() {
		batch = append(batch, msg)
	}
	if len(batch) == 0 || m.cfg.Batch == 1 {
		return batch, first.Error()
	}
	more, err := m.cons.FetchNoWait(m.cfg.Batch - 1)
	if err != nil {
		return batch, nil
	}
	for msg := range more.Messages() {
		batch = append(batch, msg)
	}
	return batch, nil
}

func (m *Manager) pause(ctx context.Context, d time.Duration) {
	t := m.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
}

// item is one document of a batch on its way: its message, its job's record as read when the
// batch began, its text and its result. settled is set once its message has been given back
// or acknowledged, so that the heartbeat leaves it alone.
type item struct {
	msg     jetstream.Msg
	w       work
	rec     *Record
	doc     Document
	res     Result
	settled atomic.Bool
	charge  func(kept bool) // the Processor's Outcome.Settle, once its result's fate is known
	// spent is set when res is the failure of a document whose tries the full store spent:
	// counted even where the store has no room for it either (unstored), and then lost is.
	spent, lost bool
}

// settleCharge tells the Processor whether this run's result is the document's; once.
func (it *item) settleCharge(kept bool) {
	if it.charge != nil {
		it.charge(kept)
		it.charge = nil
	}
}

func (it *item) key() string { return docKey(it.w.Job, it.w.Index) }

// sealedWait is how long a document whose job this process's key cannot open waits before
// it is handed out again; sealedGiveUp, how long after this process first found the job
// sealed the document is dropped. Variables for the tests' sake.
var sealedWait, sealedGiveUp = time.Minute, time.Hour

// sealedJobs remembers when this process first found each job's record sealed under another
// key, by record, up to maxTracked of them.
type sealedJobs struct {
	mu    sync.Mutex
	first map[string]time.Time
}

// since is how long this process has found record sealed, counting from now when it is new.
func (s *sealedJobs) since(record string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = map[string]time.Time{}
	}
	at, ok := s.first[record]
	if !ok {
		if len(s.first) >= maxTracked {
			for k := range s.first { // forget one: its documents wait a while longer
				delete(s.first, k)
				break
			}
		}
		s.first[record], at = now, now
	}
	return now.Sub(at)
}

// backstop times MaxAttempts is the most deliveries a failing document gets after this
// process first met it or it last waited here, whatever the tries this process counted: the
// others may be another replica's.
const backstop = 20

func (it *item) delivered() uint64 {
	if md, err := it.msg.Metadata(); err == nil {
		return md.NumDelivered
	}
	return 0
}

// nak gives the item's message back to the queue, to come again after delay.
func (m *Manager) nak(it *item, delay time.Duration, outcome string) {
	it.settled.Store(true)
	it.settleCharge(false)
	_ = it.msg.NakWithDelay(delay)
	m.met.docs(outcome, 1)
}

// retry gives back an item that ran but whose result was not stored or counted because of err.
// A store that refused it for want of room (storeFull) makes it a failed try: its next
// delivery would run it again, so that a full store would otherwise run the document through
// the model every second for as long as the queue keeps it. It comes back a second later for
// each try, as a failed run's does; once this process has counted MaxAttempts tries, process
// runs it no more. Any other error (a timeout, a stream without a leader, no responders) is
// the store away for a while, not the document's: counted, a short outage would fail
// documents that ran well, so it comes back uncounted: after a second, and a second more for
// each delivery since this process met it, up to storeAwayWait, so that a long outage does not
// run every queued document through the model every second; nor are the outage's deliveries
// held against it by the deliveries' backstop afterwards. A refusal by the bucket the write
// went to, at its bound while it holds more than its share (a start lowered the share below
// what it held), is no try either: the room is the earlier jobs', and comes back as they
// expire, so the document waits drainWait rather than fail for them. The whole store full is
// a full store like any.
// bucket is the one the failed write went to (the records', the results').
func (m *Manager) retry(it *item, err error, bucket string) {
	switch {
	case bucketFull(err) && m.overShare(bucket):
		m.tries.deferred(it.key(), it.delivered())
		m.nak(it, drainWait, "deferred")
	case storeFull(err):
		n, _ := m.tries.add(it.key(), it.delivered())
		m.nak(it, time.Duration(n)*time.Second, "retried")
	default:
		away := m.tries.away(it.key(), it.delivered())
		m.nak(it, min(time.Duration(away+1)*time.Second, storeAwayWait), "retried")
	}
}

// storeAwayWait is the longest a document waits between runs while the store does not take
// its result.
const storeAwayWait = time.Minute

// drainWait is how long a document whose result a draining bucket refused waits: the sweep's
// pace, at which the bound comes down. A variable for the tests' sake.
var drainWait = sweepEvery

// handle works on a batch of documents' messages: each is skipped when its job is gone or
// finished or it was counted, else processed, its result stored and counted, then
// acknowledged (which removes it, text and all, from the queue). A step that fails gives the
// message back; what was done before is redone harmlessly: a result is written only where
// none is stored, and the record's bitmap counts a document once.
func (m *Manager) handle(ctx context.Context, p Processor, msgs []jetstream.Msg) {
	m.met.took(len(msgs))
	items := m.admit(ctx, msgs)
	if len(items) == 0 {
		return
	}
	m.readAckWait(ctx)
	defer m.heartbeat(ctx, items)()
	for _, it := range items {
		m.openText(it)
	}
	each(items, func(it *item) { m.process(ctx, p, it) })
	m.storeResults(ctx, items)
	for k, group := range groupByRecord(items) {
		rec, finished, err := m.countDocuments(ctx, k, group)
		if err != nil {
			for _, it := range group {
				m.retry(it, err, m.n.records)
			}
			continue
		}
		for _, it := range group {
			it.settled.Store(true)
			_ = it.msg.Ack()
			m.tries.forget(it.key())
		}
		if finished {
			m.met.job(string(rec.Status))
			if m.keepResultsDue(rec) {
				m.kickSweep()
			}
		}
		if finished && rec.Webhook != nil {
			m.workers.Add(1)
			go func() {
				defer m.workers.Done()
				if rec, ok := m.claimWebhook(ctx, k); ok {
					m.deliver(ctx, k, rec)
				}
			}()
		}
	}
}

// admit reads each message's job record once per batch, moving a queued job to running, and
// keeps the documents still to do; the rest are acknowledged (nothing to do) or given back.
func (m *Manager) admit(ctx context.Context, msgs []jetstream.Msg) []*item {
	type read struct {
		rec *Record // nil: the job is gone
		err error
	}
	records := map[string]read{}
	var items []*item
	for _, msg := range msgs {
		w, ok := workOf(msg)
		if !ok {
			_ = msg.Term()
			continue
		}
		r, seen := records[w.Record]
		if !seen {
			r.rec, r.err = m.markRunning(ctx, w.Record)
			if errors.Is(r.err, ErrNotFound) && !errors.Is(r.err, errSealed) {
				r = read{}
			}
			records[w.Record] = r
		}
		switch {
		case errors.Is(r.err, errSealed):
			// A job of another key: a replica that has it runs the document (a key being
			// rotated through the fleet). Back after a while, not at once; once this process
			// has found the job sealed for sealedGiveUp, no replica has the key (it was
			// replaced), and the document leaves the queue, whose room it would hold until it
			// expired.
			if m.sealed.since(w.Record, m.clk.Now()) >= sealedGiveUp {
				_ = msg.Term()
				m.met.docs("skipped", 1)
				continue
			}
			_ = msg.NakWithDelay(sealedWait)
			m.met.docs("deferred", 1)
		case r.err != nil:
			_ = msg.NakWithDelay(time.Second)
			m.met.docs("retried", 1)
		case r.rec == nil || r.rec.Status.Terminal() || w.Index >= r.rec.DocumentCount || r.rec.counted(w.Index):
			_ = msg.Ack()
			m.met.docs("skipped", 1)
		default:
			items = append(items, &item{msg: msg, w: w, rec: r.rec})
		}
	}
	return items
}

// heartbeat tells the queue every beat that the batch's unsettled messages are in progress,
// so that a slow batch is not handed to another worker, while a worker that dies stops
// telling and its messages go again after AckWait. The returned func stops it.
func (m *Manager) heartbeat(ctx context.Context, items []*item) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			t := m.clk.NewTimer(m.beat())
			select {
			case <-quit:
				t.Stop()
				return
			case <-t.C():
				for _, it := range items {
					if !it.settled.Load() {
						_ = it.msg.InProgress()
					}
				}
				m.readAckWait(ctx) // a long batch keeps up with a shortened AckWait too
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// beat is a third of the shorter of this process's AckWait and the consumer's as last read.
func (m *Manager) beat() time.Duration {
	return min(m.ownAckWait, time.Duration(m.ackWait.Load())) / 3
}

// readAckWait reads the consumer's AckWait again, at most once a beat: an operator's `nats
// consumer edit`, or an older replica's start during a rolling upgrade (it set the consumer's
// settings to its own), may shorten it under this process, whose heartbeat at the old beat
// would then let its batches be handed out again while they run. One read a beat, of the
// consumer's info, whichever worker's batch comes first.
func (m *Manager) readAckWait(ctx context.Context) {
	now, last := m.clk.Now().UnixNano(), m.ackRead.Load()
	if time.Duration(now-last) < m.beat() || !m.ackRead.CompareAndSwap(last, now) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, m.beat())
	defer cancel()
	if ci, err := m.cons.Info(ctx); err == nil && ci.Config.AckWait > 0 {
		m.ackWait.Store(int64(ci.Config.AckWait))
	}
}

// openText opens the item's text from its message. One that does not open (sealed under
// another key) never will: it becomes the document's failed result.
func (m *Manager) openText(it *item) {
	plain, err := m.seal.open(it.key(), it.msg.Data())
	if err == nil {
		err = json.Unmarshal(plain, &it.doc)
	}
	if err != nil {
		it.res = Result{Index: it.w.Index, Spans: []Span{}, Error: "the document's text could not be opened (was the jobs key replaced?)"}
	}
}

// process runs p on an item whose text opened and makes its result. A document that must wait
// goes back for as long as it asked; a failure that may pass goes back until this process has
// tried it MaxAttempts times, then counts as the document's failure. A run whose result the
// store refused as full is a try too (retry).
func (m *Manager) process(ctx context.Context, p Processor, it *item) {
	if it.res.Error != "" {
		return
	}
	d := it.doc
	if m.tries.failures(it.key()) >= m.cfg.MaxAttempts {
		// Its runs' results were refused by the store (or their counts by its record) that
		// many times: it fails without another run. A result stored meanwhile is kept instead
		// (storeResults writes this one only where none is).
		it.res = m.resultOf(it)
		it.res.Spans, it.res.Error = []Span{}, "the document's result could not be stored"
		it.spent = true
		return
	}
	out, err := m.run(ctx, p, it)
	var wait later
	var perm permanent
	switch {
	case err != nil && ctx.Err() != nil:
		m.nak(it, 0, "retried") // shutting down: another worker takes it now
		return
	case errors.As(err, &wait):
		m.tries.deferred(it.key(), it.delivered())
		m.nak(it, wait.after, "deferred")
		return
	case err != nil && !errors.As(err, &perm):
		// Counted in this process; the deliveries since it first met the document bound it too,
		// so that a document fails at last when its tries are spread over replicas.
		if n, since := m.tries.add(it.key(), it.delivered()); n < m.cfg.MaxAttempts && since < uint64(backstop*m.cfg.MaxAttempts) {
			m.nak(it, time.Duration(n)*time.Second, "retried")
			return
		}
	}
	it.charge = out.Settle
	it.res = m.resultOf(it)
	it.res.DeidentifiedText, it.res.Spans = out.Text, out.Spans
	if err != nil {
		it.res.DeidentifiedText, it.res.Spans, it.res.Error = "", []Span{}, "the document could not be de-identified"
	}
	for i := range it.res.Spans {
		it.res.Spans[i].DocumentID = d.ID
	}
}

// resultOf is it's result without its outcome: which document, its length and keyed hash.
func (m *Manager) resultOf(it *item) Result {
	return Result{Index: it.w.Index, DocumentID: it.doc.ID, Length: utf8.RuneCountInString(it.doc.Text),
		TextHash: m.fingerprint(it.rec.Tenant, it.doc.Text)}
}

// run calls p, a panic in it (a bug that this document meets) a permanent failure of the
// document: let through, it would end the process, and the document, delivered again, the
// next replica's, and so the fleet's. Only the panic's type is logged; its value may hold the
// document's text.
func (m *Manager) run(ctx context.Context, p Processor, it *item) (out Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			m.log.Error("jobs: a document's processing panicked; the document fails",
				slog.String("job", it.w.Job), slog.Int("index", it.w.Index), slog.String("panic_type", fmt.Sprintf("%T", v)))
			out, err = Outcome{}, Permanent(errors.New("jobs: the processor panicked"))
		}
	}()
	return p(ctx, it.rec, it.doc)
}

// storeResults writes the unsettled items' results, all in flight at once, each only where no
// result is stored: a document run twice (redelivered after a crash) keeps its first result,
// and that is the one counted. An item whose write fails goes back to the queue (retry: a try
// when the store is full), but for a spent one's (unstored).
func (m *Manager) storeResults(ctx context.Context, items []*item) {
	futures := make([]jetstream.PubAckFuture, len(items))
	for i, it := range items {
		if it.settled.Load() {
			continue
		}
		plain, _ := json.Marshal(it.res)
		if len(plain) > m.maxValue() {
			// A result the store cannot hold would be refused on every try: the document
			// fails, and says why.
			it.res = Result{Index: it.res.Index, DocumentID: it.res.DocumentID, Length: it.res.Length, TextHash: it.res.TextHash,
				Spans: []Span{}, Error: fmt.Sprintf("the document's result is %d bytes, over the job store's %d a message", len(plain), m.maxValue())}
			plain, _ = json.Marshal(it.res)
		}
		f, err := m.js.PublishAsync("$KV."+m.n.results+"."+it.key(), m.seal.seal(it.key(), plain),
			jetstream.WithExpectLastSequencePerSubject(0))
		if err != nil {
			m.unstored(it, err)
			continue
		}
		futures[i] = f
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		it := items[i]
		select {
		case <-f.Ok():
			it.settleCharge(true)
		case err := <-f.Err():
			if casConflict(err) && m.keepStored(ctx, it) {
				continue
			}
			m.unstored(it, err)
		case <-ctx.Done():
			// Both may be ready, and select picks either: a result stored keeps its charge
			// (its next run finds it stored and refunds that run's).
			select {
			case <-f.Ok():
				it.settleCharge(true)
			default:
				m.nak(it, 0, "retried")
			}
		}
	}
}

// unstored gives back an item whose result was not stored (retry), except a spent one that the
// store refused as full: it is left to be counted as failed without a stored result, since
// its failure, written to the same full store, would be refused as long as the store stays
// full, and the job would stay running (and count against its tenant's unfinished jobs) until
// it expired.
func (m *Manager) unstored(it *item, err error) {
	if it.spent && storeFull(err) {
		it.lost = true
		return
	}
	m.retry(it, err, m.n.results)
}

// keepStored settles an item whose result lost the write to a stored one: the stored result is
// counted, this run's charge refunded. A stored result that cannot be read (sealed under another
// key, or deleted) is replaced by this one.
func (m *Manager) keepStored(ctx context.Context, it *item) bool {
	stored, err := m.result(ctx, it.w.Job, it.w.Index)
	if err == nil {
		it.res = *stored
		it.settleCharge(false)
		return true
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, errUnreadable) {
		plain, _ := json.Marshal(it.res)
		if _, err := m.results.Put(ctx, it.key(), m.seal.seal(it.key(), plain)); err == nil {
			it.settleCharge(true)
			return true
		}
	}
	return false
}

// casConflict says whether err is JetStream refusing a write whose expected last sequence did
// not hold (someone wrote first).
func casConflict(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return errors.Is(err, jetstream.ErrKeyExists) || (err != nil && strings.Contains(err.Error(), "wrong last sequence"))
}

// groupByRecord is the unsettled items by their job's record key.
func groupByRecord(items []*item) map[string][]*item {
	out := map[string][]*item{}
	for _, it := range items {
		if !it.settled.Load() {
			out[it.w.Record] = append(out[it.w.Record], it)
		}
	}
	return out
}

// each runs f on every item at once and waits for all.
func each(items []*item, f func(*item)) {
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(it)
		}()
	}
	wg.Wait()
}

// tries counts, in this process, the failed tries of documents not yet counted. It forgets a
// document once counted, and one at random when full (a document finished elsewhere leaves
// its count behind); forgetting only ever allows more tries, its backstop's count included
// (a table full is 100,000 documents failing in one process at once).
type tries struct {
	mu sync.Mutex
	n  map[string]*tried
}

// tried is a document's failed tries, and its delivery count when this process first met it
// or it last went back to wait (for load or its budget) here: the deliveries before that
// (waits, another replica's tries, what a restart forgot) are not held against it.
type tried struct {
	failed int
	from   uint64
	// awayFrom is the delivery at which the store first did not take the document's result
	// (0: it has not); an outage's deliveries lengthen its wait, not its backstop's count.
	awayFrom uint64
}

const maxTracked = 100_000

func (t *tries) get(key string, delivered uint64) *tried {
	if t.n == nil {
		t.n = map[string]*tried{}
	}
	e := t.n[key]
	if e == nil {
		if len(t.n) >= maxTracked {
			for k := range t.n { // forget one: at worst it is tried a few more times
				delete(t.n, k)
				break
			}
		}
		e = &tried{from: delivered}
		t.n[key] = e
	}
	return e
}

// add counts a failed try at delivery delivered and returns the tries so far and the
// deliveries since tried.from.
func (t *tries) add(key string, delivered uint64) (int, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(key, delivered)
	e.failed++
	return e.failed, delivered - min(delivered, e.from)
}

// away notes that the store did not take the document's result at delivery delivered and
// returns the deliveries since it first did not; the deliveries' backstop counts from here
// again, as after a wait (deferred): the outage's deliveries are no runs that failed.
func (t *tries) away(key string, delivered uint64) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(key, delivered)
	if e.awayFrom == 0 {
		e.awayFrom = delivered
	}
	e.from = delivered
	return delivered - min(delivered, e.awayFrom)
}

// deferred notes that the document went back to wait at delivery delivered.
func (t *tries) deferred(key string, delivered uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.get(key, delivered).from = delivered
}

// failures is key's failed tries so far.
func (t *tries) failures(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.n[key]; e != nil {
		return e.failed
	}
	return 0
}

func (t *tries) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.n, key)
}

// markRunning moves a queued job to running.
func (m *Manager) markRunning(ctx context.Context, k string) (*Record, error) {
	rec, _, err := m.change(ctx, k, func(r *Record) bool {
		if r.Status != Queued {
			return false
		}
		r.Status = Running
		return true
	})
	return rec, err
}

// countDocuments counts a batch's results of one job into its record, each once, in one
// compare-and-set; finished says these counts finished the job.
func (m *Manager) countDocuments(ctx context.Context, k string, group []*item) (*Record, bool, error) {
	finished := false
	var processed, failed int
	rec, _, err := m.change(ctx, k, func(r *Record) bool {
		finished, processed, failed = false, 0, 0
		for _, it := range group {
			res := &it.res
			if r.Status.Terminal() || res.Index >= r.DocumentCount || r.counted(res.Index) {
				continue
			}
			r.count(res.Index)
			if it.lost {
				r.countNoResult(res.Index)
			}
			if res.Error != "" {
				r.FailedCount++
				failed++
				continue
			}
			r.ProcessedCount++
			processed++
			for _, s := range res.Spans {
				r.LabelHistogram[s.Label]++
			}
		}
		if processed+failed == 0 {
			return false
		}
		finished = r.ProcessedCount+r.FailedCount == r.DocumentCount
		if finished {
			now := m.clk.Now().UTC()
			r.CompletedAt, r.Status = &now, Done
			if r.ProcessedCount == 0 {
				r.Status = Failed
				why := "no document could be de-identified"
				r.Error = &why
			}
		}
		return true
	})
	if err != nil {
		return nil, false, fmt.Errorf("jobs: counting: %w", err)
	}
	m.met.docs("processed", processed)
	m.met.docs("failed", failed)
	m.met.docs("skipped", len(group)-processed-failed)
	return rec, finished, nil
}
