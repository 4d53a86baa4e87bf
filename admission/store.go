package admission

import (
	"context"
	"sync"
	"time"

	"github.com/sluice-serving/sluice/bucket"
	"github.com/sluice-serving/sluice/clock"
)

// BudgetStore keeps the state of callers' budgets: what each one's buckets hold and how many
// of its requests run. Budgets asks it once per attempt to admit a request and decides the rest
// itself (the refusal's reason and wait, deferral, the metrics). LocalStore keeps the state in
// this process; a store shared by a fleet keeps it where every replica sees it (package
// fleetbudget: Redis).
type BudgetStore interface {
	// Take charges key one request of tokens under b, atomically: both buckets debited and a
	// running place taken, or nothing at all. It reports what the buckets held at that instant
	// either way. It returns an error only when ctx ended first; a store that cannot reach its
	// state answers by its own failure mode (BudgetTake.Applied, BudgetTake.Unavailable),
	// never by admitting without a limit.
	Take(ctx context.Context, key string, b Budget, tokens float64) (BudgetTake, error)
}

// BudgetTake is one Take's answer.
type BudgetTake struct {
	// Lease is the admitted request's hold on the budget; nil when it was refused.
	Lease BudgetLease
	// Applied is the budget the store enforced: the one asked for, or a fleet store's share of
	// it while the fleet's state is out of reach.
	Applied Budget
	// Requests and Tokens are what the buckets held when the store looked, before any debit.
	Requests, Tokens float64
	// Concurrency says the request was refused because Applied.MaxConcurrent are running.
	Concurrency bool
	// Unavailable, when above 0, says the store could not decide, and when to ask again: its
	// state is out of reach and it is configured to refuse then.
	Unavailable time.Duration
}

// BudgetLease is an admitted request's hold on its caller's budget.
type BudgetLease interface {
	// Settle frees the request's running place and gives back tokens to its tokens bucket
	// (negative: takes more, into debt) and, when request, the request to its requests
	// bucket. It is called once.
	Settle(tokens float64, request bool)
}

// LocalStore keeps every caller's buckets and running count in this process. It is safe for
// concurrent use.
type LocalStore struct {
	clk     clock.Clock
	mu      sync.Mutex
	callers map[string]*caller
	swept   time.Time
}

// NewLocalStore is an empty store on clk.
func NewLocalStore(clk clock.Clock) *LocalStore {
	return &LocalStore{clk: clk, callers: map[string]*caller{}}
}

type caller struct {
	mu       sync.Mutex
	dead     bool // swept from the map: a request that finds it looks its caller up again
	requests bucket.Bucket
	tokens   bucket.Bucket // in debt after a request settled for more than its estimate
	running  int
	budget   Budget
}

// Take implements BudgetStore; it never fails.
func (s *LocalStore) Take(_ context.Context, key string, b Budget, tokens float64) (BudgetTake, error) {
	for {
		now := s.clk.Now()
		if t, ok := s.caller(key, b, now).take(now, b, tokens); ok {
			return t, nil
		} // swept between the lookup and the take: look it up again
	}
}

// caller finds or makes key's state, with budget as it is configured now (a reload may have
// changed it). Idle callers whose buckets are full are swept once a minute, so a key per peer
// does not grow the map without bound.
func (s *LocalStore) caller(key string, budget Budget, now time.Time) *caller {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.swept) >= time.Minute {
		s.swept = now
		for k, c := range s.callers {
			if c.sweep(now) {
				delete(s.callers, k)
			}
		}
	}
	c, ok := s.callers[key]
	if !ok {
		c = &caller{requests: bucket.Full(budget.requests(), now), tokens: bucket.Full(budget.tokens(), now), budget: budget}
		s.callers[key] = c
	}
	return c
}

// sweep marks c dead and says so when it holds nothing a fresh state would not: no running
// request and both buckets refilled by now.
func (c *caller) sweep(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.budget
	c.dead = c.running == 0 && (b.RequestsPerSecond <= 0 || c.requests.Full(b.requests(), now)) &&
		(b.TokensPerSecond <= 0 || c.tokens.Full(b.tokens(), now))
	return c.dead
}

// take charges one request of cost tokens if the running count and both buckets allow it; not
// ok when c was swept.
func (c *caller) take(now time.Time, budget Budget, tokens float64) (t BudgetTake, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return t, false
	}
	c.budget = budget
	reqs, toks := budget.requests(), budget.tokens()
	t = BudgetTake{Applied: budget, Requests: c.requests.Level(reqs, now), Tokens: c.tokens.Level(toks, now)}
	switch {
	case budget.MaxConcurrent > 0 && c.running >= budget.MaxConcurrent:
		t.Concurrency = true
	case reqs.PerSecond > 0 && t.Requests < 1, toks.PerSecond > 0 && t.Tokens < tokens:
	default:
		if reqs.PerSecond > 0 {
			c.requests.Take(1)
		}
		if toks.PerSecond > 0 {
			c.tokens.Take(tokens)
		}
		c.running++
		t.Lease = c
	}
	return t, true
}

// Settle implements BudgetLease.
func (c *caller) Settle(tokens float64, request bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running--
	if tokens != 0 {
		c.tokens.Give(c.budget.tokens(), tokens)
	}
	if request {
		c.requests.Give(c.budget.requests(), 1)
	}
}
