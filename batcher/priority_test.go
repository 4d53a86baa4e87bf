package batcher

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
)

// TestWeightedDispatchNeverStarvesBulk fills both classes and lets one worker take batches of
// one request: four of every five go to admission.Interactive, one to admission.Bulk, and admission.Bulk takes every turn
// once admission.Interactive is empty.
func TestWeightedDispatchNeverStarvesBulk(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 1
	cfg.MaxWait = 0
	b, _ := newTestBatcher(t, cfg, r, nil)
	var res []<-chan outcome
	for i := range 10 {
		res = append(res, submitAsyncP(b, t.Context(), admission.Interactive, 100+i, one(8)))
		res = append(res, submitAsyncP(b, t.Context(), admission.Bulk, 200+i, one(8)))
	}
	b.Start(t.Context())
	var classes []byte
	var order []int
	for range 20 {
		call := recv(t, r.calls, "run call")
		if len(call.batch) != 1 {
			t.Fatalf("batch %v, want one request", call.batch)
		}
		order = append(order, call.batch[0])
		if call.batch[0] < 200 {
			classes = append(classes, 'I')
		} else {
			classes = append(classes, 'B')
		}
		call.reply <- nil
	}
	if got, want := string(classes), "IIBIIIIBIIIIBBBBBBBB"; got != want {
		t.Fatalf("dispatch order by class = %s, want %s (requests %v)", got, want, order)
	}
	// Within a class, arrival order holds.
	var inter, bulk []int
	for _, id := range order {
		if id < 200 {
			inter = append(inter, id)
		} else {
			bulk = append(bulk, id)
		}
	}
	if !slices.IsSorted(inter) || !slices.IsSorted(bulk) {
		t.Fatalf("arrival order broken within a class: %v / %v", inter, bulk)
	}
	for _, ch := range res {
		if o := recv(t, ch, "result"); o.err != nil {
			t.Fatalf("request failed: %v", o.err)
		}
	}
}

func TestBatchesHoldOneClassOnly(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxWait = 0
	b, _ := newTestBatcher(t, cfg, r, nil)
	a := submitAsyncP(b, t.Context(), admission.Bulk, 1, one(8))
	c := submitAsyncP(b, t.Context(), admission.Interactive, 2, one(8))
	d := submitAsyncP(b, t.Context(), admission.Bulk, 3, one(8))
	b.Start(t.Context())
	first := recv(t, r.batches, "first batch")
	second := recv(t, r.batches, "second batch")
	wantBatch(t, first, []int{2})
	wantBatch(t, second, []int{1, 3})
	wantServed(t, recv(t, a, "result 1"), 1)
	wantServed(t, recv(t, c, "result 2"), 2)
	wantServed(t, recv(t, d, "result 3"), 3)
}

func TestEachClassHasItsOwnCapacity(t *testing.T) {
	cfg := baseConfig()
	cfg.QueueSize = 2
	m := NewMetrics(nil)
	b, _ := newTestBatcher(t, cfg, newEchoRunner(), m)
	for i := range 2 {
		submitAsyncP(b, t.Context(), admission.Interactive, i, one(8))
	}
	if _, err := b.Submit(t.Context(), admission.Interactive, 9, one(8)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third interactive: err = %v, want ErrQueueFull", err)
	}
	for i := range 2 {
		if o := submitAsyncP(b, t.Context(), admission.Bulk, 10+i, one(8)); len(o) != 0 {
			t.Fatalf("bulk request %d refused although its class is empty: %v", i, (<-o).err)
		}
	}
	if _, err := b.Submit(t.Context(), admission.Bulk, 19, one(8)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third bulk: err = %v, want ErrQueueFull", err)
	}
	l := b.Load()
	if l.Waiting != [admission.NumPriorities]int{2, 2} || l.Depth() != 4 || b.Limits().QueueSize != 2 {
		t.Fatalf("load = %+v, want 2 waiting per class", l)
	}
	if got := counterValue(t, m.requests.WithLabelValues("test", outcomeQueueFull)); got != 2 {
		t.Errorf("requests{queue_full} = %v, want 2 (one per class)", got)
	}
	if _, err := b.Submit(t.Context(), admission.Priority(7), 1, one(8)); err == nil {
		t.Fatal("invalid priority accepted")
	}
}

// TestMaxQueueWaitExpiresWaitingRequest: a request that cannot be dispatched because the only
// worker is busy fails with ErrExpired exactly at MaxQueueWait, frees its slot at once, and
// is never computed.
func TestMaxQueueWaitExpiresWaitingRequest(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxWait = 0
	cfg.QueueSize = 1
	cfg.MaxQueueWait = 100 * time.Millisecond
	m := NewMetrics(nil)
	b, fake := newTestBatcher(t, cfg, r, m)
	b.Start(t.Context())
	running := submitAsync(b, t.Context(), 1, one(8))
	call := recv(t, r.calls, "first batch")
	wantBatch(t, call.batch, []int{1})

	armed := fake.TimerCreated()
	waiting := submitAsync(b, t.Context(), 2, one(8))
	recv(t, armed, "expiry timer")
	fake.Advance(cfg.MaxQueueWait - time.Nanosecond)
	expectNone(t, waiting, "answer before the max queue wait")
	if l := b.Load(); l.Waiting[admission.Interactive] != 1 || l.Running != 1 || l.BusyWorkers != 1 {
		t.Fatalf("load before expiry = %+v", l)
	}
	fake.Advance(time.Nanosecond)
	if o := recv(t, waiting, "expired result"); !errors.Is(o.err, ErrExpired) {
		t.Fatalf("err = %v, want ErrExpired", o.err)
	}
	// The caller has its answer, so the slot is already free: the queue of one takes another.
	if w, _ := depthOf(b); w != 0 {
		t.Fatalf("waiting = %d after expiry, want 0", w)
	}
	next := submitAsync(b, t.Context(), 3, one(8))
	call.reply <- nil
	wantServed(t, recv(t, running, "result 1"), 1)
	call = recv(t, r.calls, "second batch")
	wantBatch(t, call.batch, []int{3}) // never [2]
	call.reply <- nil
	wantServed(t, recv(t, next, "result 3"), 3)

	if got := counterValue(t, m.requests.WithLabelValues("test", outcomeExpired)); got != 1 {
		t.Errorf("requests{expired} = %v, want 1", got)
	}
	if l := b.Load(); l.Completed != 2 || l.BusyWorkers != 0 || l.Running != 0 {
		t.Fatalf("load after two batches = %+v, want 2 completed, idle", l)
	}
}

// TestMaxQueueWaitBelowWindowPassesOnlyFullBatches is OpenMed's "0": with a max queue wait
// shorter than the batch window, a lone request expires instead of waiting for company,
// while a request that fills a batch goes at once.
func TestMaxQueueWaitBelowWindowPassesOnlyFullBatches(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig() // MaxBatchSize 4
	cfg.MaxWait = time.Second
	cfg.MaxQueueWait = time.Millisecond
	b, fake := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	armed := fake.TimerCreated()
	lone := submitAsync(b, t.Context(), 1, one(8))
	recv(t, armed, "expiry timer")
	fake.Advance(time.Millisecond)
	if o := recv(t, lone, "lone result"); !errors.Is(o.err, ErrExpired) {
		t.Fatalf("lone request: err = %v, want ErrExpired", o.err)
	}
	full := submitAsync(b, t.Context(), 2, Cost{Sequences: 4, MaxLen: 8})
	wantBatch(t, recv(t, r.batches, "full batch"), []int{2})
	wantServed(t, recv(t, full, "full result"), 2)
	expectNone(t, r.batches, "a batch with the expired request")
}

// TestExpiryLeavesOtherClassAlone: expiry is per request, in arrival order per class; a bulk
// request that arrived later is not expired with an interactive one.
func TestExpiryLeavesOtherClassAlone(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxWait = 0
	cfg.MaxQueueWait = 100 * time.Millisecond
	b, fake := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	submitAsync(b, t.Context(), 1, one(8))
	call := recv(t, r.calls, "first batch")

	armed := fake.TimerCreated()
	inter := submitAsyncP(b, t.Context(), admission.Interactive, 2, one(8))
	recv(t, armed, "expiry timer")
	fake.Advance(50 * time.Millisecond)
	armed = fake.TimerCreated()
	bulk := submitAsyncP(b, t.Context(), admission.Bulk, 3, one(8))
	// The interactive deadline stays the earliest, so the next timer is the bulk one, armed
	// only once the interactive request has expired.
	fake.Advance(50 * time.Millisecond)
	if o := recv(t, inter, "interactive result"); !errors.Is(o.err, ErrExpired) {
		t.Fatalf("interactive: err = %v, want ErrExpired", o.err)
	}
	recv(t, armed, "bulk expiry timer")
	expectNone(t, bulk, "bulk answer at 50ms of waiting")
	call.reply <- nil
	call = recv(t, r.calls, "bulk batch")
	wantBatch(t, call.batch, []int{3})
	call.reply <- nil
	wantServed(t, recv(t, bulk, "bulk result"), 3)
}

func TestClassMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxWait = 0
	cfg.MaxBatchSize = 1
	b, fake := newTestBatcher(t, cfg, r, m)
	submitAsyncP(b, t.Context(), admission.Bulk, 1, one(8))
	submitAsyncP(b, t.Context(), admission.Bulk, 2, one(8))
	submitAsyncP(b, t.Context(), admission.Interactive, 3, one(8))
	wantClassGauge(t, reg, "bulk", 2)
	wantClassGauge(t, reg, "interactive", 1)
	fake.Advance(5 * time.Millisecond)
	b.Start(t.Context())
	call := recv(t, r.calls, "first batch")
	wantBatch(t, call.batch, []int{3})
	wantClassGauge(t, reg, "interactive", 0)
	call.reply <- nil
	call = recv(t, r.calls, "second batch")
	wantBatch(t, call.batch, []int{1})
	call.reply <- nil
	recv(t, r.calls, "third batch").reply <- nil
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, f := range fams {
		if f.GetName() != "sluice_batcher_queue_wait_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "priority" {
					counts[l.GetValue()] = s.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if counts["interactive"] != 1 || counts["bulk"] != 2 {
		t.Fatalf("wait histogram counts = %v, want interactive 1, bulk 2", counts)
	}
}

func wantClassGauge(t *testing.T, reg prometheus.Gatherer, priority string, want float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "sluice_batcher_queue_depth" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "priority" && l.GetValue() == priority {
					if got := s.GetGauge().GetValue(); got != want {
						t.Fatalf("sluice_batcher_queue_depth{priority=%s} = %v, want %v", priority, got, want)
					}
					return
				}
			}
		}
	}
	t.Fatalf("sluice_batcher_queue_depth{priority=%s} missing", priority)
}

// TestMaxBulkWorkersKeepsAWorkerForInteractive: with two workers and at most one for bulk, a
// bulk backlog leaves the second worker idle, and an interactive request takes it at once.
func TestMaxBulkWorkersKeepsAWorkerForInteractive(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize = 1
	cfg.Workers = 2
	cfg.MaxBulkWorkers = 1
	b, fake := newTestBatcher(t, cfg, r, nil)
	b.Start(t.Context())
	bulk1 := submitAsyncP(b, t.Context(), admission.Bulk, 1, one(8))
	bulk2 := submitAsyncP(b, t.Context(), admission.Bulk, 2, one(8))
	first := recv(t, r.calls, "first bulk batch")
	wantBatch(t, first.batch, []int{1})
	fake.Advance(time.Hour) // no window or timer may move bulk 2 onto the reserved worker
	expectNone(t, r.calls, "second bulk batch on the reserved worker")
	if l := b.Load(); l.BusyWorkers != 1 || l.Waiting[admission.Bulk] != 1 {
		t.Fatalf("load = %+v, want one busy worker and bulk 2 waiting", l)
	}
	inter := submitAsyncP(b, t.Context(), admission.Interactive, 3, one(8))
	call := recv(t, r.calls, "interactive batch")
	wantBatch(t, call.batch, []int{3})
	call.reply <- nil
	wantServed(t, recv(t, inter, "interactive result"), 3)
	first.reply <- nil
	wantServed(t, recv(t, bulk1, "bulk 1"), 1)
	call = recv(t, r.calls, "second bulk batch")
	wantBatch(t, call.batch, []int{2})
	call.reply <- nil
	wantServed(t, recv(t, bulk2, "bulk 2"), 2)

	bad := baseConfig()
	bad.MaxBulkWorkers = 2 // Workers is 1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "MaxBulkWorkers") {
		t.Fatalf("MaxBulkWorkers over Workers: err = %v", err)
	}
	bad.MaxBulkWorkers = -1
	if err := bad.Validate(); err == nil {
		t.Fatal("negative MaxBulkWorkers accepted")
	}
}

func TestConfigValidatesPriorityFields(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.MaxQueueWait = -1 },
		func(c *Config) { c.Weights[admission.Interactive] = -1 },
		func(c *Config) { c.Weights[admission.Bulk] = admission.MaxWeight + 1 },
	} {
		c := baseConfig()
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	c := baseConfig()
	if w := admission.WithDefaults(c.Weights); w != [admission.NumPriorities]int{4, 1} || w != admission.DefaultWeights {
		t.Fatalf("default weights = %v", w)
	}
	b, err := New("weights", c, newHeldRunner(), clock.NewFake(time.Unix(0, 0)), nil)
	if err != nil || b.Limits().Weights != admission.DefaultWeights {
		t.Fatalf("Limits().Weights = %v (%v), want the defaults", b.Limits().Weights, err)
	}
	c.Weights = [admission.NumPriorities]int{2, 3}
	if w := admission.WithDefaults(c.Weights); w != [admission.NumPriorities]int{2, 3} {
		t.Fatalf("weights = %v, want [2 3]", w)
	}
}

// TestFreeWorkerBeatsExpiry: a request at its max queue wait that a free worker can take at
// that same instant is served, not expired; refusing it would waste capacity for nothing.
func TestFreeWorkerBeatsExpiry(t *testing.T) {
	r := newEchoRunner()
	cfg := baseConfig()
	cfg.MaxWait = 0
	cfg.MaxQueueWait = 100 * time.Millisecond
	b, fake := newTestBatcher(t, cfg, r, nil)
	res := submitAsync(b, t.Context(), 1, one(8))
	fake.Advance(cfg.MaxQueueWait) // not started: nothing could dispatch it until now
	b.Start(t.Context())
	wantServed(t, recv(t, res, "result"), 1)
}

// TestCappedBulkArmsNoWindowTimer: a bulk request that may not run (MaxBulkWorkers reached)
// must not arm the batch window, or the loop would wake for nothing at once, forever.
func TestCappedBulkArmsNoWindowTimer(t *testing.T) {
	cfg := baseConfig()
	cfg.Workers, cfg.MaxBulkWorkers = 2, 1
	b, _ := newTestBatcher(t, cfg, newEchoRunner(), nil)
	submitAsyncP(b, t.Context(), admission.Bulk, 1, one(8))
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, armed := b.nextDeadlineLocked(true, false); armed {
		t.Fatal("window timer armed for a bulk batch that may not run")
	}
	if _, armed := b.nextDeadlineLocked(true, true); !armed {
		t.Fatal("no window timer for a bulk batch that may run")
	}
	b.cfg.MaxQueueWait = time.Second
	if d, armed := b.nextDeadlineLocked(true, false); !armed || !d.Equal(epoch.Add(time.Second)) {
		t.Fatalf("expiry deadline = %v, %v; want epoch+1s", d, armed)
	}
}

// TestLoadMeasuresWorkInSequences: the admission layer sees a request's cost in sequences
// (windows), waiting, running and done.
func TestLoadMeasuresWorkInSequences(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxWait = 0
	b, _ := newTestBatcher(t, cfg, r, nil)
	if !b.Limits().WorkUnits {
		t.Fatal("the batcher does not say it measures work")
	}
	submitAsync(b, t.Context(), 1, Cost{Sequences: 3, MaxLen: 8})
	submitAsync(b, t.Context(), 2, Cost{Sequences: 2, MaxLen: 8})
	if l := b.Load(); l.Work != 5 || l.WorkDone != 0 {
		t.Fatalf("waiting: %+v, want 5 sequences of work", l)
	}
	b.Start(t.Context())
	call := recv(t, r.calls, "first batch") // 3 sequences: the other request does not fit in 4
	if l := b.Load(); l.Work != 5 || l.Running != 1 {
		t.Fatalf("running: %+v, want the same 5 sequences, one request running", l)
	}
	call.reply <- nil
	recv(t, r.calls, "second batch").reply <- nil
	waitFor(t, func() bool { return b.Load().WorkDone == 5 && b.Load().Work == 0 })
}

// TestBulkYieldsWhileInteractiveIsAbout: bulk batches fill to MaxBatchSize with no interactive
// traffic, hold at most BulkYieldSize for BulkYieldWindow after an interactive request
// arrives, and fill again once the window has passed.
func TestBulkYieldsWhileInteractiveIsAbout(t *testing.T) {
	r := newHeldRunner()
	cfg := baseConfig()
	cfg.MaxBatchSize, cfg.MaxWait = 8, 0
	cfg.BulkYieldSize, cfg.BulkYieldWindow = 2, time.Second
	b, fake := newTestBatcher(t, cfg, r, nil)
	var res []<-chan outcome
	bulk := func(from, n int) {
		for i := range n {
			res = append(res, submitAsyncP(b, t.Context(), admission.Bulk, from+i, one(8)))
		}
	}
	bulk(100, 6)
	b.Start(t.Context())
	call := recv(t, r.calls, "bulk before any interactive")
	wantBatch(t, call.batch, []int{100, 101, 102, 103, 104, 105})
	inter := submitAsyncP(b, t.Context(), admission.Interactive, 1, one(8))
	bulk(200, 5)
	call.reply <- nil
	call = recv(t, r.calls, "interactive batch")
	wantBatch(t, call.batch, []int{1})
	call.reply <- nil
	wantServed(t, recv(t, inter, "interactive result"), 1)
	for _, want := range [][]int{{200, 201}, {202, 203}, {204}} {
		call = recv(t, r.calls, "bulk batch beside interactive traffic")
		wantBatch(t, call.batch, want)
		if want[0] == 204 {
			bulk(300, 5) // queued behind the running batch
			fake.Advance(time.Second)
		}
		call.reply <- nil
	}
	call = recv(t, r.calls, "bulk batch after the window")
	wantBatch(t, call.batch, []int{300, 301, 302, 303, 304})
	call.reply <- nil
	for _, ch := range res {
		if o := recv(t, ch, "bulk result"); o.err != nil {
			t.Fatal(o.err)
		}
	}

	if err := (Config{MaxBatchSize: 1, MaxPaddedTokens: 1, QueueSize: 1, Workers: 1, BulkYieldSize: 4}).Validate(); err != nil {
		t.Fatalf("a yield size above the batch size (no batching): %v", err)
	}
	bad := baseConfig()
	bad.BulkYieldSize, bad.BulkYieldWindow = -1, -time.Second
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "BulkYieldSize") || !strings.Contains(err.Error(), "BulkYieldWindow") {
		t.Fatalf("bad yield settings: err = %v", err)
	}
}
