package fleetbudget

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// Store keeps callers' budgets in Redis, shared by every replica that uses the same Redis:
// an admission is one script (both buckets and a concurrency lease, or nothing), a request's
// end another. It implements admission.BudgetStore; it is safe for concurrent use. Close it
// when done.
type Store struct {
	cfg     Config
	rdb     *redis.Client
	clk     clock.Clock
	log     *slog.Logger
	metrics *Metrics
	// secret keys the hash of a caller's key (nil: a plain hash).
	secret []byte
	// local decides while Redis is out of reach and the failure mode is FailLocal.
	local *admission.LocalStore
	// replica makes this process's lease ids unique in the fleet; seq numbers them.
	replica string
	seq     atomic.Uint64
	// down is set while Redis is out of reach; until probe (unix ns), requests do not try it.
	down  atomic.Bool
	probe atomic.Int64

	mu     sync.Mutex
	leases map[*lease]struct{} // renewed until settled
	// freed are the slots whose release could not be sent while Redis was out of reach (at
	// most maxFreed), sent once it answers again rather than held until LeaseTTL.
	freed []*lease
	// settles queues settlements, sent in batches; settlerGone is closed when nothing reads it
	// any more.
	settles     chan settlement
	settlerGone chan struct{}
	stop        chan struct{}
	done        sync.WaitGroup
	closeOnce   sync.Once
}

// settlement is what a request gives back at its end; sent, when its request waits for it
// (it frees a slot), closes sent.
type settlement struct {
	l       *lease
	tokens  float64
	request bool
	sent    chan struct{}
}

// settleBatch is the most settlements one round trip carries.
const settleBatch = 256

// maxFreed bounds the slots kept to free once Redis answers again; past it, a slot expires
// by itself after LeaseTTL.
const maxFreed = 4096

// New validates cfg and connects. Redis out of reach at start is not an error: the store
// starts degraded, says so in the log, and tries again as it does later. logger receives one
// line per change between reachable and not; metrics may be nil.
func New(cfg Config, clk clock.Clock, logger *slog.Logger, metrics *Metrics) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, err // Validate parsed it
	}
	secret, err := cfg.readKeySecret()
	if err != nil {
		return nil, err
	}
	// Every wait is bounded by the timeout; a call that fails is not retried (the next request
	// is the retry), and the client announces nothing Redis 7.0 does not know. RESP2: under
	// RESP3 the client looks for push notifications, which the store never subscribes to, on
	// the socket before every command, a system call each time.
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.PoolTimeout = cfg.Timeout, cfg.Timeout, cfg.Timeout, cfg.Timeout
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	opts.DisableIdentity = true
	opts.Protocol = 2
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	var id [8]byte
	_, _ = rand.Read(id[:])
	s := &Store{cfg: cfg, secret: secret, rdb: redis.NewClient(opts), clk: clk, log: logger, metrics: metrics,
		local: admission.NewLocalStore(clk), replica: hex.EncodeToString(id[:]),
		leases: map[*lease]struct{}{}, settles: make(chan settlement, 16*settleBatch), settlerGone: make(chan struct{}),
		stop: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.unreachable(err)
	}
	s.done.Add(2)
	go s.renew()
	go s.settleQueued()
	return s, nil
}

// ClientLog carries go-redis's own lines (a dial that failed, a connection dropped) into a
// slog.Logger at debug level: the store says what matters once per change, and go-redis would
// otherwise print a plain line to stderr on every failed dial. go-redis keeps one logger per
// process (redis.SetLogger); the server sets it once at start.
type ClientLog struct{ Logger *slog.Logger }

// Printf implements go-redis's logging interface.
func (l ClientLog) Printf(ctx context.Context, format string, v ...any) {
	l.Logger.DebugContext(ctx, "fleet budgets: redis client", slog.String("detail", fmt.Sprintf(format, v...)))
}

// Close sends the settlements still queued, stops renewing leases and closes the connections.
// The leases of requests still running expire in Redis after LeaseTTL.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		s.done.Wait()
		err = s.rdb.Close()
	})
	return err
}

// Take implements admission.BudgetStore: Redis decides while it answers within the timeout;
// otherwise the failure mode does.
func (s *Store) Take(ctx context.Context, key string, b admission.Budget, tokens float64) (admission.BudgetTake, error) {
	if s.tryShared() {
		t, err := s.takeShared(ctx, key, b, tokens)
		if err == nil {
			s.reachable()
			return t, nil
		}
		if ctx.Err() != nil {
			return admission.BudgetTake{}, ctx.Err() // the caller left: this says nothing of Redis
		}
		s.unreachable(err)
	}
	s.metrics.fellBack(s.cfg.Failure)
	share := Share(b, s.cfg.Replicas)
	// A request over this replica's share of the tokens burst but within the budget's fits
	// once Redis answers: refused as unavailable, not as larger than the whole budget, which
	// callers take as final.
	if s.cfg.Failure == FailClosed || share.TokensPerSecond > 0 && tokens > share.TokenLimit().Burst && tokens <= b.TokenLimit().Burst {
		return admission.BudgetTake{Applied: b, Unavailable: s.cfg.ProbeInterval}, nil
	}
	return s.local.Take(ctx, key, share, tokens)
}

// Share is one of n replicas' part of b: its rates and bursts divided by n (a requests burst
// of at least 1), and its concurrency (at least 1 where it is limited).
func Share(b admission.Budget, n int) admission.Budget {
	if n <= 1 {
		return b
	}
	f := float64(n)
	share := admission.Budget{
		RequestsPerSecond: b.RequestsPerSecond / f, RequestBurst: max(1, b.RequestLimit().Burst/f),
		TokensPerSecond: b.TokensPerSecond / f, TokenBurst: b.TokenLimit().Burst / f,
	}
	if b.MaxConcurrent > 0 {
		share.MaxConcurrent = max(1, b.MaxConcurrent/n)
	}
	return share
}

// tryShared says whether this request asks Redis: always while it answers; while it does not,
// one request per ProbeInterval, the others deciding without it at once.
func (s *Store) tryShared() bool {
	if !s.down.Load() {
		return true
	}
	now, next := s.clk.Now().UnixNano(), s.probe.Load()
	return now >= next && s.probe.CompareAndSwap(next, now+s.cfg.ProbeInterval.Nanoseconds())
}

func (s *Store) unreachable(err error) {
	s.probe.Store(s.clk.Now().Add(s.cfg.ProbeInterval).UnixNano())
	if s.down.CompareAndSwap(false, true) {
		s.metrics.setDegraded(true)
		s.log.Warn("fleet budgets: Redis is out of reach; budgets are decided without it until it answers again",
			slog.String("failure_mode", string(s.cfg.Failure)), slog.Int("replicas", s.cfg.Replicas),
			slog.String("error", err.Error()))
	}
}

func (s *Store) reachable() {
	if !s.down.Load() {
		return
	}
	s.mu.Lock()
	turned := s.down.CompareAndSwap(true, false)
	freed := s.freed
	s.freed = nil
	s.mu.Unlock()
	if turned {
		s.metrics.setDegraded(false)
		s.log.Info("fleet budgets: Redis answers again; budgets are shared by the fleet")
	}
	for _, l := range freed {
		s.release(l)
	}
}

// keys are key's two Redis keys. The caller's key is hashed, under the secret where there is
// one: it may hold a client's address.
func (s *Store) keys(key string) [2]string {
	var sum []byte
	if s.secret != nil {
		mac := hmac.New(sha256.New, s.secret)
		mac.Write([]byte(key))
		sum = mac.Sum(nil)
	} else {
		plain := sha256.Sum256([]byte(key))
		sum = plain[:]
	}
	base := s.cfg.KeyPrefix + "{" + hex.EncodeToString(sum[:16]) + "}"
	return [2]string{base, base + ":leases"}
}

// errReply is a script's answer that is not what it returns.
var errReply = errors.New("fleetbudget: unexpected reply from the take script")

func (s *Store) takeShared(ctx context.Context, key string, b admission.Budget, tokens float64) (admission.BudgetTake, error) {
	reqs, toks := b.RequestLimit(), b.TokenLimit()
	l := &lease{s: s, keys: s.keys(key), budget: b, slot: b.MaxConcurrent > 0}
	if l.slot {
		l.id = s.replica + "-" + strconv.FormatUint(s.seq.Add(1), 36)
	}
	call, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := s.clk.Now()
	reply, err := takeScript.Run(call, s.rdb, l.keys[:], reqs.PerSecond, reqs.Burst, toks.PerSecond, toks.Burst,
		tokens, b.MaxConcurrent, s.cfg.LeaseTTL.Microseconds(), l.id).Slice()
	if ctx.Err() != nil {
		s.metrics.call(opTake, s.clk.Now().Sub(start).Seconds(), nil) // the caller left: no failure of Redis's
	} else {
		s.metrics.call(opTake, s.clk.Now().Sub(start).Seconds(), err)
	}
	if err != nil {
		if l.slot {
			// The answer was lost (the caller left, the call timed out), but the script may
			// have run: its slot, if taken, is nobody's. Freed now, not held for LeaseTTL.
			// (What it may have taken of the buckets is not given back: whether it did is
			// unknown, and giving back what was never taken would admit more than the budget.)
			s.release(l)
		}
		return admission.BudgetTake{}, err
	}
	t := admission.BudgetTake{Applied: b}
	if len(reply) != 3 {
		return t, errReply
	}
	code, ok := reply[0].(int64)
	if !ok {
		return t, errReply
	}
	for i, level := range []*float64{&t.Requests, &t.Tokens} {
		text, _ := reply[i+1].(string)
		if *level, err = strconv.ParseFloat(text, 64); err != nil {
			return t, fmt.Errorf("%w: %v", errReply, err)
		}
	}
	switch code {
	case 1:
		t.Lease = l
		if l.slot {
			s.mu.Lock()
			s.leases[l] = struct{}{}
			s.mu.Unlock()
			s.metrics.leasesHeld(1)
		}
	case 2:
		t.Concurrency = true
	}
	return t, nil
}

// lease is a request admitted by Redis: its keys and the budget to settle against, and its
// concurrency slot's id when it holds one.
type lease struct {
	s      *Store
	keys   [2]string
	budget admission.Budget
	slot   bool
	id     string
}

// Settle implements admission.BudgetLease. Settlements are sent in batches, one round trip
// for as many as end at once. A request with a concurrency slot waits for its batch, so that
// the caller's next request finds the slot free; what a request without one gives back lands
// a round trip after its answer. While Redis is out of reach nothing waits on it: a slot is
// freed once Redis answers again (or expires by itself after LeaseTTL), and what would have
// been given back is lost.
func (l *lease) Settle(tokens float64, request bool) {
	s := l.s
	x := settlement{l: l, tokens: tokens, request: request}
	if l.slot {
		s.mu.Lock()
		delete(s.leases, l)
		s.mu.Unlock()
		s.metrics.leasesHeld(-1)
		x.sent = make(chan struct{})
	} else if tokens == 0 && !request {
		return // nothing to tell
	}
	select {
	case s.settles <- x:
	default: // the queue is full: this request waits its turn
		s.settle([]settlement{x})
		return
	}
	if x.sent != nil {
		select {
		case <-x.sent:
		case <-s.settlerGone: // closed meanwhile: the slot expires by itself
		}
	}
}

// release frees l's slot and settles nothing else.
func (s *Store) release(l *lease) {
	select {
	case s.settles <- settlement{l: l}:
	default: // the queue is full: the slot expires after LeaseTTL
	}
}

// settleQueued sends the queued settlements, as many as wait at once in one round trip,
// until Close, then what is left.
func (s *Store) settleQueued() {
	defer s.done.Done()
	defer close(s.settlerGone)
	batch := make([]settlement, 0, settleBatch)
	for {
		select {
		case x := <-s.settles:
			batch = append(batch[:0], x)
		case <-s.stop:
			for {
				batch = batch[:0]
				for len(batch) < settleBatch && s.dequeue(&batch) {
				}
				if len(batch) == 0 {
					return
				}
				s.settle(batch)
			}
		}
		for len(batch) < settleBatch && s.dequeue(&batch) {
		}
		s.settle(batch)
	}
}

// dequeue moves one queued settlement into batch, if one waits.
func (s *Store) dequeue(batch *[]settlement) bool {
	select {
	case x := <-s.settles:
		*batch = append(*batch, x)
		return true
	default:
		return false
	}
}

// settle sends batch in one round trip: frees each slot and gives back what each request
// did not use, or what a refund returns.
func (s *Store) settle(batch []settlement) {
	defer func() {
		for _, x := range batch {
			if x.sent != nil {
				close(x.sent)
			}
		}
	}()
	// Under mu, as reachable's turn back: a slot kept here is in freed before reachable
	// takes freed, or Redis is seen answering and the slot is sent now.
	s.mu.Lock()
	if s.down.Load() {
		for _, x := range batch {
			if x.l.slot && len(s.freed) < maxFreed {
				s.freed = append(s.freed, x.l)
			}
		}
		s.mu.Unlock()
		s.metrics.failed(opSettle, len(batch))
		return
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	args := func(x settlement) []any {
		reqs, toks := x.l.budget.RequestLimit(), x.l.budget.TokenLimit()
		request := 0
		if x.request {
			request = 1
		}
		return []any{reqs.PerSecond, reqs.Burst, toks.PerSecond, toks.Burst, x.tokens, request, x.l.id}
	}
	start := s.clk.Now()
	if len(batch) == 1 {
		err := settleScript.Run(ctx, s.rdb, batch[0].l.keys[:], args(batch[0])...).Err()
		s.metrics.call(opSettle, s.clk.Now().Sub(start).Seconds(), err)
		if err != nil {
			s.lost(batch, err)
		}
		return
	}
	cmds := make([]*redis.Cmd, len(batch))
	// Each command's own error is read below; the pipeline's is the first of them.
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, x := range batch {
			cmds[i] = settleScript.EvalSha(ctx, p, x.l.keys[:], args(x)...)
		}
		return nil
	})
	var failed []settlement
	var ferr error
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") { // a Redis restarted since: once more, with the script
			if cmd.SetErr(settleScript.Run(ctx, s.rdb, batch[i].l.keys[:], args(batch[i])...).Err()); cmd.Err() == nil {
				continue
			}
		}
		if cmd.Err() != nil {
			failed, ferr = append(failed, batch[i]), cmd.Err()
		}
	}
	s.metrics.call(opSettle, s.clk.Now().Sub(start).Seconds(), nil)
	s.metrics.failed(opSettle, len(failed))
	if len(failed) > 0 {
		s.lost(failed, ferr)
	}
}

// lost handles settlements whose call failed as those made while Redis is out of reach: their
// slots are kept to free once it answers again (held by nobody, they would otherwise count
// against their caller until LeaseTTL, renewed by nothing), and Redis is taken for out of reach.
func (s *Store) lost(batch []settlement, err error) {
	s.mu.Lock()
	for _, x := range batch {
		if x.l.slot && len(s.freed) < maxFreed {
			s.freed = append(s.freed, x.l)
		}
	}
	s.mu.Unlock()
	s.unreachable(err)
}

// renew pushes back the expiry of every slot this replica holds, every third of LeaseTTL,
// in one round trip.
func (s *Store) renew() {
	defer s.done.Done()
	for {
		t := s.clk.NewTimer(s.cfg.LeaseTTL / 3)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C():
		}
		s.renewOnce()
	}
}

func (s *Store) renewOnce() {
	byKey := map[string][]any{}
	s.mu.Lock()
	for l := range s.leases {
		if byKey[l.keys[1]] == nil {
			byKey[l.keys[1]] = []any{s.cfg.LeaseTTL.Microseconds()}
		}
		byKey[l.keys[1]] = append(byKey[l.keys[1]], l.id)
	}
	s.mu.Unlock()
	if len(byKey) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	start := s.clk.Now()
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for key, args := range byKey {
			p.Eval(ctx, renewSource, []string{key}, args...)
		}
		return nil
	})
	s.metrics.call(opRenew, s.clk.Now().Sub(start).Seconds(), err)
	if err != nil {
		// The leases run out after LeaseTTL, and with them the count of what runs here: told
		// as any failed call is, so that the next requests do not take Redis's word alone.
		s.unreachable(err)
	}
}
