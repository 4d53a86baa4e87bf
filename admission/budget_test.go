package admission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sluice-serving/sluice/clock"
)

func newTestBudgets(t *testing.T, cfg BudgetsConfig) (*Budgets, *clock.Fake, *prometheus.Registry) {
	t.Helper()
	clk := clock.NewFake(epoch)
	reg := prometheus.NewRegistry()
	b, err := NewBudgets(cfg, nil, clk, NewBudgetMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	return b, clk, reg
}

// admit is Admit that must not wait: a refusal's reason, or "" when admitted.
func admit(t *testing.T, b *Budgets, budget Budget, tokens float64) (Charge, *BudgetRefusal) {
	t.Helper()
	ch, ref, err := b.Admit(context.Background(), "k", "acme", budget, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return ch, ref
}

func TestBudgetRequestsBucket(t *testing.T) {
	b, clk, _ := newTestBudgets(t, BudgetsConfig{})
	budget := Budget{RequestsPerSecond: 0.5, RequestBurst: 2}
	for i := range 2 {
		if _, ref := admit(t, b, budget, 1); ref != nil {
			t.Fatalf("request %d refused: %+v", i, ref)
		}
	}
	_, ref := admit(t, b, budget, 1)
	if ref == nil || ref.Reason != BudgetRequests || ref.RetryAfter != 2*time.Second {
		t.Fatalf("third request: %+v; want requests, 2 s (one request at 0.5/s)", ref)
	}
	if ref.Requests.Limit != 2 || ref.Requests.Remaining != 0 || ref.Requests.Reset != 4*time.Second || ref.Tokens.Limited {
		t.Errorf("state %+v %+v", ref.Requests, ref.Tokens)
	}
	clk.Advance(2 * time.Second)
	if _, ref := admit(t, b, budget, 1); ref != nil {
		t.Fatalf("after the wait it gave: %+v", ref)
	}
}

// The wait is the refused request's own: what it lacks against the tokens bucket, at the
// refill rate. A small request still fits where a large one does not.
func TestBudgetRetryAfterIsSizeAware(t *testing.T) {
	b, clk, _ := newTestBudgets(t, BudgetsConfig{})
	budget := Budget{TokensPerSecond: 100, TokenBurst: 1000}
	if _, ref := admit(t, b, budget, 800); ref != nil {
		t.Fatal(ref)
	}
	_, ref := admit(t, b, budget, 500)
	if ref == nil || ref.Reason != BudgetTokens || ref.RetryAfter != 3*time.Second {
		t.Fatalf("500 tokens with 200 left: %+v; want tokens, 3 s", ref)
	}
	_, ref = admit(t, b, budget, 1200)
	if ref == nil || ref.Reason != BudgetTooLarge || ref.RetryAfter != 12*time.Second {
		t.Fatalf("1200 tokens, burst 1000: %+v; want too_large, 12 s", ref)
	}
	if _, ref := admit(t, b, budget, 150); ref != nil {
		t.Fatalf("150 tokens with 200 left: %+v", ref)
	}
	_, ref = admit(t, b, budget, 50.5)
	if ref == nil || ref.RetryAfter != time.Second {
		t.Fatalf("a wait under a second: %+v; want the 1 s floor", ref)
	}
	// A rate so slow that the request's wait is past what a Duration holds is the cap, not a
	// wrapped-around second.
	_, ref = admit(t, b, Budget{TokensPerSecond: 1e-8, TokenBurst: 10}, 1000)
	if ref == nil || ref.Reason != BudgetTooLarge || ref.RetryAfter != CallerRetryAfter.Max {
		t.Fatalf("1000 tokens at 1e-8 a second: %+v; want too_large, a day", ref)
	}
	_, ref = admit(t, b, Budget{TokensPerSecond: 1, TokenBurst: 1}, 1e9)
	if ref == nil || ref.RetryAfter != 24*time.Hour {
		t.Fatalf("a year's tokens: %+v; want the one-day cap", ref)
	}
	clk.Advance(time.Second)
}

func TestBudgetConcurrencyAndReconciliation(t *testing.T) {
	b, _, reg := newTestBudgets(t, BudgetsConfig{})
	budget := Budget{TokensPerSecond: 10, TokenBurst: 1000, MaxConcurrent: 1}
	ch, ref := admit(t, b, budget, 900)
	if ref != nil {
		t.Fatal(ref)
	}
	if _, ref := admit(t, b, budget, 10); ref == nil || ref.Reason != BudgetConcurrency || ref.RetryAfter != time.Second {
		t.Fatalf("second at once: %+v; want concurrency", ref)
	}
	ch.Done(100) // used 100 of the 900 estimated: 800 come back
	ch.Done(0)   // once only
	if _, ref := admit(t, b, budget, 850); ref != nil {
		t.Fatalf("after reconciliation 900 are left; 850 refused: %+v", ref)
	}
	if got := refusalsCounted(reg, "acme", BudgetConcurrency); got != 1 {
		t.Errorf("concurrency refusals counted %v", got)
	}
}

// refusalsCounted reads sluice_budget_refusals_total{tenant, reason} back from reg.
func refusalsCounted(reg *prometheus.Registry, tenant, reason string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "sluice_budget_refusals_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["tenant"] == tenant && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestDeferredAdmission(t *testing.T) {
	b, clk, _ := newTestBudgets(t, BudgetsConfig{MaxWait: 2 * time.Second, MaxHeld: 1})
	budget := Budget{TokensPerSecond: 100, TokenBurst: 1000}
	if _, ref := admit(t, b, budget, 1000); ref != nil {
		t.Fatal(ref)
	}
	// 150 tokens arrive in 1.5 s: held, then admitted.
	type result struct {
		ref *BudgetRefusal
		err error
	}
	done := make(chan result, 1)
	armed := clk.TimerCreated()
	go func() {
		_, ref, err := b.Admit(context.Background(), "k", "acme", budget, 150)
		done <- result{ref, err}
	}()
	select {
	case <-armed:
	case r := <-done:
		t.Fatalf("not held: %+v %v", r.ref, r.err)
	}
	if b.Held() != 1 {
		t.Fatalf("held %d", b.Held())
	}
	// A second deferrable request finds the one place taken.
	if _, ref := admit(t, b, budget, 100); ref == nil || ref.Reason != BudgetHeldFull {
		t.Fatalf("with max_held 1 taken: %+v; want deferral_full", ref)
	}
	clk.Advance(1500 * time.Millisecond)
	if r := <-done; r.ref != nil || r.err != nil {
		t.Fatalf("held request: %+v %v", r.ref, r.err)
	}
	if b.Held() != 0 {
		t.Fatalf("held %d after admission", b.Held())
	}
	// 300 tokens would take 3 s: past max_wait, refused at once; too large, never held.
	if _, ref := admit(t, b, budget, 300); ref == nil || ref.Reason != BudgetTokens || ref.RetryAfter != 3*time.Second {
		t.Fatalf("3 s away: %+v", ref)
	}
	if _, ref := admit(t, b, budget, 2000); ref == nil || ref.Reason != BudgetTooLarge {
		t.Fatalf("larger than the burst: %+v", ref)
	}
	// A client that leaves while held gives its place back at once.
	ctx, cancel := context.WithCancel(context.Background())
	armed = clk.TimerCreated()
	go func() {
		_, ref, err := b.Admit(ctx, "k", "acme", budget, 100)
		done <- result{ref, err}
	}()
	select {
	case <-armed:
	case r := <-done:
		t.Fatalf("not held: %+v %v", r.ref, r.err)
	}
	cancel()
	if r := <-done; !errors.Is(r.err, ErrBudgetWait) {
		t.Fatalf("cancelled while held: %+v %v", r.ref, r.err)
	}
	if b.Held() != 0 {
		t.Fatalf("held %d after the client left", b.Held())
	}
}

// A hold that another caller's admission outruns is refused at the end of max_wait, not
// held beyond it.
func TestDeferredAdmissionEndsAtMaxWait(t *testing.T) {
	b, clk, reg := newTestBudgets(t, BudgetsConfig{MaxWait: 2 * time.Second})
	budget := Budget{TokensPerSecond: 100, TokenBurst: 1000}
	admit(t, b, budget, 1000)
	done := make(chan *BudgetRefusal, 1)
	armed := clk.TimerCreated()
	go func() {
		_, ref, _ := b.Admit(context.Background(), "k", "acme", budget, 150)
		done <- ref
	}()
	select {
	case <-armed:
	case ref := <-done:
		t.Fatalf("not held: %+v", ref)
	}
	// Someone else spends 100 tokens meanwhile: at 1.5 s the hold finds 50, would need 1 s
	// more, past the 2 s max_wait, and is refused then.
	c := b.store.(*LocalStore).caller("k", budget, clk.Now())
	c.mu.Lock()
	c.tokens.Take(100)
	c.mu.Unlock()
	clk.Advance(1500 * time.Millisecond)
	if ref := <-done; ref == nil || ref.Reason != BudgetTokens {
		t.Fatalf("past max_wait: %+v; want a tokens refusal", ref)
	}
	want := "# HELP sluice_budget_deferred_total Requests deferred admission held, by tenant and how the hold ended: admitted, refused (the wait ran past max_wait), cancelled (the client left).\n" +
		"# TYPE sluice_budget_deferred_total counter\n" + `sluice_budget_deferred_total{outcome="refused",tenant="acme"} 1` + "\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "sluice_budget_deferred_total"); err != nil {
		t.Error(err)
	}
}

func TestBudgetValidation(t *testing.T) {
	err := Budget{RequestsPerSecond: -1, TokenBurst: -2, MaxConcurrent: -1}.Validate()
	for _, want := range []string{"RequestsPerSecond", "TokenBurst", "MaxConcurrent"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not name %s", err, want)
		}
	}
	if _, err := NewBudgets(BudgetsConfig{MaxWait: -1, MaxHeld: -1}, nil, clock.Real(), nil); err == nil ||
		!strings.Contains(err.Error(), "MaxWait") || !strings.Contains(err.Error(), "MaxHeld") {
		t.Errorf("config errors: %v", err)
	}
}

func TestUnlimitedBudgetChargesNothing(t *testing.T) {
	b, _, _ := newTestBudgets(t, BudgetsConfig{})
	ch, ref := admit(t, b, Budget{}, 1e12)
	if ref != nil {
		t.Fatal(ref)
	}
	ch.Done(5) // a zero charge: nothing to settle
	if len(b.store.(*LocalStore).callers) != 0 {
		t.Errorf("an unlimited caller took state")
	}
}

// Done settles once: a second call gives nothing back twice, and the running count stays
// exact. Refund gives back the request too.
func TestChargeSettlesOnce(t *testing.T) {
	b, _, _ := newTestBudgets(t, BudgetsConfig{})
	budget := Budget{RequestsPerSecond: 1e-9, RequestBurst: 3, TokensPerSecond: 1e-9, TokenBurst: 1000, MaxConcurrent: 1}
	ch, ref := admit(t, b, budget, 900)
	if ref != nil {
		t.Fatal(ref)
	}
	ch.Done(100)
	ch.Done(100)
	ch.Refund()
	if _, ref := admit(t, b, budget, 950); ref == nil || ref.Reason != BudgetTokens {
		t.Fatalf("900 tokens are left, not more: %+v", ref)
	}
	held, ref := admit(t, b, budget, 900)
	if ref != nil {
		t.Fatalf("900 of 900: %+v", ref)
	}
	if _, ref := admit(t, b, budget, 1); ref == nil || ref.Reason != BudgetConcurrency {
		t.Fatalf("a second at once: %+v; want concurrency", ref)
	}
	held.Refund() // requests: 3 - 3 charged + 1 back; tokens: all 900 back
	if _, ref := admit(t, b, budget, 900); ref != nil {
		t.Fatalf("after a refund: %+v", ref)
	}
	if _, ref := admit(t, b, budget, 1); ref == nil || ref.Reason != BudgetConcurrency {
		t.Fatalf("%+v", ref)
	}
}

// TestSlotWaitsAreBounded: requests waiting for a concurrency slot, each asking the store a
// hundred times a second, are at most MaxHeld; the next is refused at once.
func TestSlotWaitsAreBounded(t *testing.T) {
	b, clk, _ := newTestBudgets(t, BudgetsConfig{ConcurrencyWait: time.Second, MaxHeld: 2})
	budget := Budget{MaxConcurrent: 1}
	running, ref := admit(t, b, budget, 1)
	if ref != nil {
		t.Fatal(ref)
	}
	done := make(chan *BudgetRefusal, 2)
	for range 2 {
		armed := clk.TimerCreated()
		go func() {
			_, ref, _ := b.Admit(context.Background(), "k", "acme", budget, 1)
			done <- ref
		}()
		<-armed
	}
	armed := clk.TimerCreated()
	third := make(chan *BudgetRefusal, 1)
	go func() {
		_, ref, _ := b.Admit(context.Background(), "k", "acme", budget, 1)
		third <- ref
	}()
	select {
	case ref := <-third:
		if ref == nil || ref.Reason != BudgetConcurrency {
			t.Fatalf("a third waiter: %+v; want refused for concurrency", ref)
		}
	case <-armed:
		t.Fatal("a third request waits for a slot past MaxHeld")
	}
	running.Done(1)
	for ended, looks := 0, 0; ended < 2; looks++ { // one takes the slot, the other waits it out
		if looks > 300 {
			t.Fatal("still waiting for a slot past the wait")
		}
		armed := clk.TimerCreated()
		clk.Advance(slotPoll)
		select {
		case <-done:
			ended++
		case <-armed:
		}
	}
	if n := b.slotWaiters.Load(); n != 0 {
		t.Fatalf("%d slot waiters counted after both ended", n)
	}
}

// With a concurrency wait, a caller at its concurrency limit waits for a slot (OpenMed's
// CONCURRENCY_WAIT_SECONDS): admitted when one ends within the wait, refused when none does.
func TestConcurrencyWaitHoldsForASlot(t *testing.T) {
	b, clk, _ := newTestBudgets(t, BudgetsConfig{ConcurrencyWait: 50 * time.Millisecond})
	budget := Budget{MaxConcurrent: 1}
	running, ref := admit(t, b, budget, 1)
	if ref != nil {
		t.Fatal(ref)
	}
	type result struct {
		ref *BudgetRefusal
		err error
	}
	done := make(chan result, 1)
	wait := func() {
		armed := clk.TimerCreated()
		go func() {
			_, ref, err := b.Admit(context.Background(), "k", "acme", budget, 1)
			done <- result{ref, err}
		}()
		select {
		case <-armed:
		case r := <-done:
			t.Fatalf("not waiting for a slot: %+v %v", r.ref, r.err)
		}
	}
	wait()
	running.Done(1) // the slot frees; the waiter finds it at its next look
	clk.Advance(slotPoll)
	r := <-done
	if r.ref != nil || r.err != nil {
		t.Fatalf("after the slot freed: %+v %v", r.ref, r.err)
	}
	if b.Held() != 0 {
		t.Fatalf("a slot wait counted as deferred admission's hold: %d", b.Held())
	}
	// Nobody leaves: refused when the wait is over, for concurrency.
	wait()
	for looks := 0; ; looks++ {
		armed := clk.TimerCreated()
		clk.Advance(slotPoll)
		select {
		case r = <-done:
		case <-armed:
			if looks > 10 {
				t.Fatal("still waiting for a slot past the wait")
			}
			continue
		}
		break
	}
	if r.ref == nil || r.ref.Reason != BudgetConcurrency {
		t.Fatalf("no slot within the wait: %+v %v", r.ref, r.err)
	}
}
