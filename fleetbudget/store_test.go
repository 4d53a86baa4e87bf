package fleetbudget

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/fleetbudget/redistest"
	"github.com/sluice-serving/sluice/logtest"
)

// replica is one replica's view of the shared budgets: its store and the Budgets over it.
type replica struct {
	store   *Store
	budgets *admission.Budgets
	reg     *prometheus.Registry
	log     *logtest.Buffer
}

// newReplica is a store on url with cfg's other fields (a short lease, a quick probe and a
// timeout generous for a loaded test machine unless cfg sets them).
func newReplica(t *testing.T, url string, cfg Config, deferred admission.BudgetsConfig) *replica {
	t.Helper()
	cfg.URL = url
	if cfg.Failure == "" {
		cfg.Failure = FailLocal
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Second
	}
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = 3 * cfg.Timeout
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = 20 * time.Millisecond
	}
	r := &replica{reg: prometheus.NewRegistry(), log: &logtest.Buffer{}}
	var err error
	r.store, err = New(cfg, clock.Real(), slog.New(slog.NewTextHandler(r.log, nil)), NewMetrics(r.reg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.store.Close() })
	if r.budgets, err = admission.NewBudgets(deferred, r.store, clock.Real(), admission.NewBudgetMetrics(r.reg)); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *replica) admit(t *testing.T, key string, b admission.Budget, tokens float64) (admission.Charge, *admission.BudgetRefusal) {
	t.Helper()
	ch, ref, err := r.budgets.Admit(context.Background(), key, "acme", b, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return ch, ref
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond) // the next look; the deadline bounds the wait
	}
}

// A rate this slow refills nothing while a test runs: the counts are exact.
const still = 1e-18

// Three replicas on one Redis share one budget: of 30 requests sent round-robin, the 10 of the
// requests burst are admitted, whichever replica each came to; the same for tokens.
func TestReplicasShareOneBudget(t *testing.T) {
	srv := redistest.Start(t)
	var fleet []*replica
	for range 3 {
		fleet = append(fleet, newReplica(t, srv.URL, Config{}, admission.BudgetsConfig{}))
	}
	for _, tc := range []struct {
		name   string
		budget admission.Budget
		tokens float64
		want   int
		reason string
	}{
		{"requests", admission.Budget{RequestsPerSecond: still, RequestBurst: 10}, 1, 10, admission.BudgetRequests},
		{"tokens", admission.Budget{TokensPerSecond: still, TokenBurst: 1000}, 30, 33, admission.BudgetTokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admitted := 0
			for i := range 3 * tc.want {
				_, ref := fleet[i%3].admit(t, "tenant:"+tc.name, tc.budget, tc.tokens)
				if ref == nil {
					admitted++
				} else if ref.Reason != tc.reason {
					t.Fatalf("request %d: %+v; want reason %s", i, ref, tc.reason)
				}
			}
			if admitted != tc.want {
				t.Fatalf("admitted %d of %d sent round-robin to three replicas; the shared budget holds %d", admitted, 3*tc.want, tc.want)
			}
		})
	}
}

// A refusal debits nothing: a request its tokens refuse leaves the requests bucket as it was.
// The refusal's wait is the request's own, and its state both dimensions', as locally.
func TestTakeIsAllOrNothingAndSizeAware(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{}, admission.BudgetsConfig{})
	b := admission.Budget{RequestsPerSecond: still, RequestBurst: 2, TokensPerSecond: still, TokenBurst: 100}
	if _, ref := r.admit(t, "k", b, 60); ref != nil {
		t.Fatal(ref)
	}
	_, ref := r.admit(t, "k", b, 50)
	if ref == nil || ref.Reason != admission.BudgetTokens {
		t.Fatalf("50 tokens with 40 left: %+v", ref)
	}
	if ref.Requests.Remaining != 1 || ref.Tokens.Remaining != 40 || ref.Tokens.Limit != 100 || ref.Requests.Limit != 2 {
		t.Fatalf("state: requests %+v tokens %+v", ref.Requests, ref.Tokens)
	}
	if _, ref := r.admit(t, "k", b, 40); ref != nil {
		t.Fatalf("40 tokens with 40 left and one request: %+v (the refusal took the request?)", ref)
	}
	// Size-aware: 100 tokens a second, 200 left; 500 wait 3 s, 1200 never fit the burst.
	sized := admission.Budget{TokensPerSecond: 100, TokenBurst: 1000}
	if _, ref := r.admit(t, "sized", sized, 800); ref != nil {
		t.Fatal(ref)
	}
	if _, ref := r.admit(t, "sized", sized, 500); ref == nil || ref.Reason != admission.BudgetTokens || ref.RetryAfter != 3*time.Second {
		t.Fatalf("500 tokens with 200 left at 100/s: %+v; want tokens, 3 s", ref)
	}
	if _, ref := r.admit(t, "sized", sized, 1200); ref == nil || ref.Reason != admission.BudgetTooLarge || ref.RetryAfter != 12*time.Second {
		t.Fatalf("1200 tokens, burst 1000: %+v; want too_large, 12 s", ref)
	}
}

// Reconciliation: what a request used below its estimate comes back, above it is debt, and a
// refund gives back the request too; each settles once. Requests without a concurrency slot
// settle in batches, a round trip after Done: the checks wait for what each must let in.
func TestReconciliationRefunds(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{}, admission.BudgetsConfig{})
	b := admission.Budget{RequestsPerSecond: still, RequestBurst: 2, TokensPerSecond: still, TokenBurst: 1000}
	ch, ref := r.admit(t, "k", b, 900)
	if ref != nil {
		t.Fatal(ref)
	}
	ch.Done(100) // 800 of the 900 come back
	ch.Done(100)
	eventually(t, "850 tokens admitted once 800 came back", func() bool {
		ch, ref = r.admit(t, "k", b, 850)
		return ref == nil
	})
	ch.Refund() // the request and its 850 back: one request and 900 tokens left
	eventually(t, "900 tokens admitted after a refund", func() bool {
		ch, ref = r.admit(t, "k", b, 900)
		return ref == nil
	})
	ch.Done(1000) // 100 more than estimated: the bucket owes them
	eventually(t, "a debt of 100 tokens", func() bool {
		_, ref = r.admit(t, "k", admission.Budget{TokensPerSecond: still, TokenBurst: 1000}, 1)
		if ref == nil || ref.Reason != admission.BudgetTokens {
			t.Fatalf("with no tokens left: %+v", ref)
		}
		return ref.Tokens.Remaining == -100
	})
	if got := testutil.ToFloat64(r.store.metrics.errors.WithLabelValues(opSettle)); got != 0 {
		t.Errorf("%v settlements failed", got)
	}
}

// MaxConcurrent is the fleet's: slots held on one replica refuse another's, and come back when
// their requests end.
func TestConcurrencyIsShared(t *testing.T) {
	srv := redistest.Start(t)
	a := newReplica(t, srv.URL, Config{}, admission.BudgetsConfig{})
	b := newReplica(t, srv.URL, Config{}, admission.BudgetsConfig{})
	budget := admission.Budget{MaxConcurrent: 2}
	first, _ := a.admit(t, "k", budget, 1)
	second, ref := b.admit(t, "k", budget, 1)
	if ref != nil || !first.Charged() || !second.Charged() {
		t.Fatalf("two slots of two: %+v", ref)
	}
	if _, ref := a.admit(t, "k", budget, 1); ref == nil || ref.Reason != admission.BudgetConcurrency {
		t.Fatalf("a third: %+v; want concurrency", ref)
	}
	second.Done(-1)
	third, ref := a.admit(t, "k", budget, 1)
	if ref != nil {
		t.Fatalf("after one ended: %+v", ref)
	}
	if got := testutil.ToFloat64(a.store.metrics.leases); got != 2 {
		t.Errorf("replica a holds %v leases; want 2", got)
	}
	first.Done(-1)
	third.Done(-1)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	if n := rdb.ZCard(context.Background(), a.store.keys("k")[1]).Val(); n != 0 {
		t.Errorf("%d leases left in Redis after every request ended", n)
	}
}

// The child of TestLeaseOfAKilledReplicaExpires: a replica that takes two slots of three, says so, and
// runs (renewing them) until it is killed.
func TestLeaseHolderChild(t *testing.T) {
	url := os.Getenv("FLEETBUDGET_CHILD_REDIS")
	if url == "" {
		return // only as a child
	}
	r := newReplica(t, url, Config{Timeout: 300 * time.Millisecond, LeaseTTL: time.Second}, admission.BudgetsConfig{})
	for range 2 {
		if _, ref := r.admit(t, "k", admission.Budget{MaxConcurrent: 3}, 1); ref != nil {
			t.Fatalf("child: %+v", ref)
		}
	}
	os.Stdout.WriteString("held\n")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
}

// A replica killed with SIGKILL never settles its requests: their slots stay taken while it
// lives (renewed past their first expiry) and come back once their leases expire by Redis's
// clock after it died, while a live replica's slot in the same set stays taken.
func TestLeaseOfAKilledReplicaExpires(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{Timeout: 300 * time.Millisecond, LeaseTTL: time.Second}, admission.BudgetsConfig{})
	budget := admission.Budget{MaxConcurrent: 3}
	mine, ref := r.admit(t, "k", budget, 1) // held, and renewed, throughout
	if ref != nil {
		t.Fatal(ref)
	}
	defer mine.Done(-1)
	child := exec.Command(os.Args[0], "-test.run=^TestLeaseHolderChild$", "-test.count=1")
	child.Env = append(os.Environ(), "FLEETBUDGET_CHILD_REDIS="+srv.URL)
	stdin, _ := child.StdinPipe()
	defer stdin.Close()
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	start := rdb.Time(ctx).Val()
	eventually(t, "Redis's clock two lease lives (2 s) on", func() bool {
		if _, ref := r.admit(t, "k", budget, 1); ref == nil || ref.Reason != admission.BudgetConcurrency {
			t.Fatalf("while the holder lives: %+v; want concurrency", ref)
		}
		return rdb.Time(ctx).Val().Sub(start) > 2*time.Second
	})
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	eventually(t, "the killed holder's two slots back", func() bool {
		first, ref := r.admit(t, "k", budget, 1)
		if ref != nil {
			return false
		}
		defer first.Done(-1)
		second, ref := r.admit(t, "k", budget, 1)
		second.Done(-1)
		return ref == nil
	})
}

// Redis stopped mid-run: in mode local each replica enforces its share (here half the
// burst), in mode closed every budgeted request is refused, 429 unavailable with a
// Retry-After; never unlimited. One warning per outage, a metric while it lasts, and the
// shared budget again once Redis answers.
func TestRedisStoppedMidRun(t *testing.T) {
	for _, mode := range []FailureMode{FailLocal, FailClosed} {
		t.Run(string(mode), func(t *testing.T) {
			srv := redistest.Start(t)
			// Every request tries Redis again: a warning per failed try would show.
			r := newReplica(t, srv.URL, Config{Failure: mode, Replicas: 2, ProbeInterval: time.Nanosecond}, admission.BudgetsConfig{MaxWait: time.Second})
			b := admission.Budget{RequestsPerSecond: still, RequestBurst: 10}
			for range 3 {
				if _, ref := r.admit(t, "k", b, 1); ref != nil {
					t.Fatal(ref)
				}
			}
			srv.Stop()
			admitted, refusals := 0, map[string]int{}
			for range 20 {
				ch, ref := r.admit(t, "k", b, 1)
				if ref != nil {
					refusals[ref.Reason]++
					if mode == FailClosed && ref.RetryAfter != time.Second {
						t.Fatalf("closed: Retry-After %s; want 1 s", ref.RetryAfter)
					}
					continue
				}
				admitted++
				ch.Done(-1)
			}
			want, wantReason := 5, admission.BudgetRequests // half of the burst of 10, on this replica's own
			if mode == FailClosed {
				want, wantReason = 0, admission.BudgetUnavailable
			}
			if admitted != want || refusals[wantReason] != 20-want {
				t.Fatalf("with Redis stopped, mode %s: %d admitted, refusals %v; want %d and %d %s", mode, admitted, refusals, want, 20-want, wantReason)
			}
			if got := testutil.ToFloat64(r.store.metrics.degraded); got != 1 {
				t.Errorf("degraded gauge %v; want 1", got)
			}
			if got := testutil.ToFloat64(r.store.metrics.fallback.WithLabelValues(string(mode))); got != 20 {
				t.Errorf("fallback counted %v; want 20", got)
			}
			if n := r.log.Count("Redis is out of reach"); n != 1 {
				t.Errorf("%d warnings for one outage; want 1", n)
			}
			srv.Restart() // empty: the budget is whole again
			eventually(t, "the shared budget again", func() bool {
				ch, ref := r.admit(t, "k", b, 1)
				ch.Done(-1)
				return ref == nil && testutil.ToFloat64(r.store.metrics.degraded) == 0
			})
			if n := r.log.Count("Redis answers again"); n != 1 {
				t.Errorf("%d recovery lines; want 1", n)
			}
		})
	}
}

// Deferred admission works over the shared store as it does locally: a request the tokens
// bucket takes within MaxWait is held, then admitted.
func TestDeferredAdmissionOverRedis(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{}, admission.BudgetsConfig{MaxWait: 5 * time.Second})
	b := admission.Budget{TokensPerSecond: 100, TokenBurst: 100}
	if _, ref := r.admit(t, "k", b, 100); ref != nil {
		t.Fatal(ref)
	}
	if _, ref := r.admit(t, "k", b, 50); ref != nil {
		t.Fatalf("50 tokens half a second away, max wait 5 s: %+v; want held, then admitted", ref)
	}
	want := `sluice_budget_deferred_total{outcome="admitted",tenant="acme"} 1`
	if err := testutil.GatherAndCompare(r.reg, strings.NewReader("# HELP sluice_budget_deferred_total Requests deferred admission held, by tenant and how the hold ended: admitted, refused (the wait ran past max_wait), cancelled (the client left).\n# TYPE sluice_budget_deferred_total counter\n"+want+"\n"), "sluice_budget_deferred_total"); err != nil {
		t.Error(err)
	}
}

func TestConfigValidation(t *testing.T) {
	err := Config{URL: "http://x", Failure: "open", Replicas: 0, Timeout: 0, LeaseTTL: time.Millisecond, ProbeInterval: -1}.Validate()
	for _, want := range []string{"URL", "Failure", "Replicas", "Timeout", "LeaseTTL", "ProbeInterval"} {
		if err == nil || !strings.Contains(err.Error(), "fleetbudget: "+want+" ") {
			t.Errorf("%v does not name %s", err, want)
		}
	}
	err = Config{URL: "redis://user:hunter2@host:6379/x", Failure: FailLocal, Replicas: 1, Timeout: time.Second, LeaseTTL: 3 * time.Second}.Validate()
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad URL's error %v: want one, without the password", err)
	}
	if err := (Config{URL: "redis://localhost:6379/0", Failure: FailClosed, Replicas: 3, Timeout: 50 * time.Millisecond, LeaseTTL: time.Second}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestShare(t *testing.T) {
	got := Share(admission.Budget{RequestsPerSecond: 90, TokensPerSecond: 300, TokenBurst: 3000, MaxConcurrent: 4}, 3)
	want := admission.Budget{RequestsPerSecond: 30, RequestBurst: 30, TokensPerSecond: 100, TokenBurst: 1000, MaxConcurrent: 1}
	if got != want {
		t.Errorf("a third: %+v; want %+v", got, want)
	}
	if got := Share(admission.Budget{RequestsPerSecond: 1, RequestBurst: 2, MaxConcurrent: 1}, 4); got.RequestBurst != 1 || got.MaxConcurrent != 1 {
		t.Errorf("a quarter of small limits: %+v; want a burst and a slot of 1", got)
	}
}

// TestARequestOverTheShareWaitsForRedis: while Redis is out of reach a replica keeps its
// share of each budget; a request larger than its share of the tokens burst but within the
// budget's is refused as unavailable (retried, and served once Redis answers), never as
// larger than the whole budget, which the client and the jobs take as final.
func TestARequestOverTheShareWaitsForRedis(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{Replicas: 3, ProbeInterval: time.Nanosecond}, admission.BudgetsConfig{})
	b := admission.Budget{TokensPerSecond: 300, TokenBurst: 3000}
	srv.Stop()
	if ch, ref := r.admit(t, "k", b, 900); ref != nil {
		t.Fatalf("within the share: %+v", ref)
	} else {
		ch.Done(-1)
	}
	if _, ref := r.admit(t, "k", b, 1500); ref == nil || ref.Reason != admission.BudgetUnavailable {
		t.Fatalf("over the share, within the budget: %+v; want %s", ref, admission.BudgetUnavailable)
	}
	if _, ref := r.admit(t, "k", b, 3500); ref == nil || ref.Reason != admission.BudgetTooLarge {
		t.Fatalf("over the budget: %+v; want %s", ref, admission.BudgetTooLarge)
	}
	srv.Restart()
	eventually(t, "the request over the share admitted", func() bool {
		ch, ref := r.admit(t, "k", b, 1500)
		ch.Done(-1)
		return ref == nil
	})
}

// loseReply is a hook that lets the next take script run in Redis and then loses its answer,
// as a caller that leaves or a timeout does: after is what the call returns instead.
type loseReply struct {
	armed atomic.Bool
	after func() error
	// before drops the call unsent instead, as a connection reset does.
	before bool
}

func (h *loseReply) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *loseReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); h.before && (name == "evalsha" || name == "eval") && h.armed.CompareAndSwap(true, false) {
			err := h.after()
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && err == nil && h.armed.CompareAndSwap(true, false) {
			err = h.after()
			cmd.SetErr(err)
		}
		return err
	}
}

func (h *loseReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.before && h.armed.CompareAndSwap(true, false) {
			err := h.after()
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
}

// takesThroughRedis takes and settles one request of key's, and says whether Redis admitted it.
func (r *replica) takesThroughRedis(t *testing.T, key string, b admission.Budget) bool {
	t.Helper()
	bt, err := r.store.Take(context.Background(), key, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if bt.Lease != nil {
		bt.Lease.Settle(0, false)
	}
	return bt.Lease != nil && !r.store.down.Load()
}

// A take whose answer is lost after the script ran (the caller left; the call timed out) does
// not leave its slot taken in Redis for LeaseTTL: with one slot, the next request is admitted
// as soon as it is freed, and after a timeout, as soon as Redis answers again.
func TestALostTakeFreesItsSlot(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{LeaseTTL: time.Hour}, admission.BudgetsConfig{})
	hook := &loseReply{}
	r.store.rdb.AddHook(hook)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	budget := admission.Budget{MaxConcurrent: 1}
	held := func() int64 { return rdb.ZCard(context.Background(), r.store.keys("k")[1]).Val() }
	sharedTake := func() bool { return r.takesThroughRedis(t, "k", budget) }

	ctx, cancel := context.WithCancel(context.Background())
	hook.after = func() error { cancel(); return ctx.Err() }
	hook.armed.Store(true)
	if _, err := r.store.Take(ctx, "k", budget, 1); err == nil {
		t.Fatal("a take whose caller left answered")
	}
	eventually(t, "the slot of a caller that left is freed", func() bool { return held() == 0 })
	if n := testutil.ToFloat64(r.store.metrics.errors.WithLabelValues(opTake)); n != 0 {
		t.Errorf("a caller that left counted as %v failed takes of Redis", n)
	}
	if !sharedTake() {
		t.Fatal("after a caller left, its slot is still taken")
	}

	hook.after = func() error { return context.DeadlineExceeded }
	hook.armed.Store(true)
	if bt, err := r.store.Take(context.Background(), "k", budget, 1); err != nil || bt.Lease == nil || !r.store.down.Load() {
		t.Fatalf("a timed-out take: %+v %v, down %v; want a local lease and Redis taken for out of reach", bt, err, r.store.down.Load())
	} else {
		bt.Lease.Settle(0, false)
	}
	eventually(t, "a take through Redis again, its lost slot freed", sharedTake)
	if n := held(); n != 0 {
		t.Fatalf("%d slots held with nothing running", n)
	}
}

// A settlement whose call fails unsent (a reset connection) frees its slot once Redis answers
// again, as one made while Redis is out of reach does: it was left taken for LeaseTTL, renewed
// by nothing, and a tenant allowed one request at a time was refused meanwhile.
func TestAFailedSettlementFreesItsSlot(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{LeaseTTL: time.Hour}, admission.BudgetsConfig{})
	hook := &loseReply{before: true, after: func() error { return errors.New("connection reset") }}
	r.store.rdb.AddHook(hook)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	held := func() int64 { return rdb.ZCard(context.Background(), r.store.keys("k")[1]).Val() }
	budget := admission.Budget{MaxConcurrent: 1}
	bt, err := r.store.Take(context.Background(), "k", budget, 1)
	if err != nil || bt.Lease == nil || r.store.down.Load() {
		t.Fatalf("the take: %+v %v", bt, err)
	}
	hook.armed.Store(true)
	bt.Lease.Settle(0, false)
	if !r.store.down.Load() {
		t.Error("a settlement that failed did not take Redis for out of reach")
	}
	eventually(t, "a take through Redis again, the failed settlement's slot freed", func() bool { return r.takesThroughRedis(t, "k", budget) })
	if n := held(); n != 0 {
		t.Fatalf("%d slots held with nothing running", n)
	}
}

// A renewal that fails takes Redis for out of reach, as any failed call does: the leases it
// did not renew run out, and with them Redis's count of what runs here.
func TestAFailedRenewalTakesRedisForOutOfReach(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv.URL, Config{LeaseTTL: time.Hour}, admission.BudgetsConfig{})
	hook := &loseReply{before: true, after: func() error { return errors.New("i/o timeout") }}
	r.store.rdb.AddHook(hook)
	bt, err := r.store.Take(context.Background(), "k", admission.Budget{MaxConcurrent: 1}, 1)
	if err != nil || bt.Lease == nil {
		t.Fatalf("the take: %+v %v", bt, err)
	}
	defer bt.Lease.Settle(0, false)
	hook.armed.Store(true)
	r.store.renewOnce()
	if !r.store.down.Load() {
		t.Error("a renewal that failed left Redis taken for reachable")
	}
}

// Replicas whose LeaseTTL differ (a rolling change of it) share a lease set: the one with the
// shorter lease never shortens the set's life below the latest lease in it. It set the set to
// expire after its own lease, which took the other replica's running requests out of the
// count with it.
func TestAShorterLeaseLeavesOthersSlots(t *testing.T) {
	srv := redistest.Start(t)
	long := newReplica(t, srv.URL, Config{LeaseTTL: time.Hour}, admission.BudgetsConfig{})
	short := newReplica(t, srv.URL, Config{LeaseTTL: 3 * time.Second}, admission.BudgetsConfig{})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	budget := admission.Budget{MaxConcurrent: 2}
	running, ref := long.admit(t, "k", budget, 1)
	if ref != nil {
		t.Fatal(ref)
	}
	defer running.Done(-1)
	brief, ref := short.admit(t, "k", budget, 1)
	if ref != nil {
		t.Fatal(ref)
	}
	defer brief.Done(-1)
	if life := rdb.PTTL(context.Background(), long.store.keys("k")[1]).Val(); life < 50*time.Minute {
		t.Fatalf("the lease set expires in %v, with a lease of an hour in it", life)
	}
	short.store.renewOnce()
	if life := rdb.PTTL(context.Background(), long.store.keys("k")[1]).Val(); life < 50*time.Minute {
		t.Fatalf("after the shorter lease's renewal, the lease set expires in %v, with a lease of an hour in it", life)
	}
}

// TestAKeyedHashHidesTheCaller: with KeySecretFile, the replicas that read the same file share
// a caller's budget under a name that is not the plain hash of its key (which a reader of
// Redis could find from a guess at the key); a replica with another secret keeps its own.
func TestAKeyedHashHidesTheCaller(t *testing.T) {
	srv := redistest.Start(t)
	secret := func(s string) string {
		path := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	one := secret("0123456789abcdef0123456789abcdef")
	a := newReplica(t, srv.URL, Config{KeySecretFile: one}, admission.BudgetsConfig{})
	b := newReplica(t, srv.URL, Config{KeySecretFile: one}, admission.BudgetsConfig{})
	other := newReplica(t, srv.URL, Config{KeySecretFile: secret("fedcba9876543210fedcba9876543210")}, admission.BudgetsConfig{})
	budget := admission.Budget{RequestsPerSecond: still, RequestBurst: 1}
	const caller = "ip:203.0.113.7"
	if _, ref := a.admit(t, caller, budget, 1); ref != nil {
		t.Fatalf("the first request: %+v", ref)
	}
	if _, ref := b.admit(t, caller, budget, 1); ref == nil {
		t.Fatal("a replica with the same secret did not share the caller's budget")
	}
	if _, ref := other.admit(t, caller, budget, 1); ref != nil {
		t.Fatalf("a replica with another secret found the caller's budget: %+v", ref)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	keys, err := rdb.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	plain := sha256.Sum256([]byte(caller))
	for _, k := range keys {
		if strings.Contains(k, hex.EncodeToString(plain[:16])) {
			t.Fatalf("key %s is the caller's plain hash", k)
		}
	}
	if len(keys) == 0 {
		t.Fatal("no keys in Redis")
	}
	if err := (Config{URL: srv.URL, Failure: FailLocal, Replicas: 1, Timeout: time.Second, LeaseTTL: 3 * time.Second,
		KeySecretFile: secret("short")}).Validate(); err == nil || !strings.Contains(err.Error(), "KeySecretFile") {
		t.Fatalf("a five-byte secret: %v", err)
	}
}
