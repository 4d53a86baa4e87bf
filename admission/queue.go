package admission

import (
	"errors"
	"time"
)

// Queue is what a Gate guards: bounded per-class queues in front of a fixed number of
// workers (the batcher of an entity route; a generation scheduler). The Gate calls Limits
// once, when it is built, and Load on every request, so Load must be cheap: no lock a caller
// waits on and no allocation.
type Queue interface {
	Load() Load
	Limits() Limits
}

// Load is a Queue's live state. The fields may be read one after the other rather than as one
// snapshot; the Gate only needs them to be recent.
type Load struct {
	// Waiting is the requests of each class waiting for dispatch.
	Waiting [NumPriorities]int
	// Running is the requests being computed.
	Running int
	// BusyWorkers is how many of Limits.Workers are computing.
	BusyWorkers int
	// Completed counts requests that finished running (answered or failed) since the Queue
	// was built. It only grows: its rate over time is what the drain-rate estimate measures,
	// unless the Queue measures work (Limits.WorkUnits).
	Completed uint64
	// Work is the demand the Queue holds in its unit of work (tokens, for a generation
	// model: every sequence's prompt and new tokens not yet computed), and WorkDone the units
	// computed since it was built. Read only when Limits.WorkUnits is set: then the drain
	// rate is WorkDone's and every estimate converts requests into work at Work / depth.
	Work     int64
	WorkDone uint64
	// MemoryUsed is how much of the Queue's bounded working memory its work holds (KV cache
	// blocks, for a generation model), out of Limits.Memory.
	MemoryUsed int
}

// Depth is every request the Queue holds: waiting in any class plus running.
func (l Load) Depth() int {
	d := l.Running
	for _, w := range l.Waiting {
		d += w
	}
	return d
}

// Limits are a Queue's fixed bounds and its dispatch policy.
type Limits struct {
	// QueueSize is each class's hard capacity; 0 means the Queue enforces none.
	QueueSize int
	// MaxQueueWait is how long a request may wait for dispatch; 0 means no limit.
	MaxQueueWait time.Duration
	// Workers is how many requests' worth of work runs at once (batches, sequences).
	Workers int
	// Weights is each class's dispatch weight: while several classes have requests waiting,
	// class p is served Weights[p] / (the sum of their weights) of the time.
	Weights [NumPriorities]int
	// ClassWorkers caps the workers class p may hold at once (0: Workers): its share of the
	// rate is at most that part of the workers, whatever its weight.
	ClassWorkers [NumPriorities]int
	// WorkUnits says Load.Work and Load.WorkDone measure the Queue's work; otherwise a
	// request is the unit.
	WorkUnits bool
	// Memory is the Queue's bounded working memory in its own unit (0: it reports none).
	Memory int
}

// share is the part of the Queue's completion rate that class p gets while the classes with
// requests waiting (and p itself) compete for dispatch, and, beside them, its workers' cap
// allows.
func (lim Limits) share(p Priority, waiting [NumPriorities]int) float64 {
	total := 0
	for q, w := range lim.Weights {
		if Priority(q) == p || waiting[q] > 0 {
			total += w
		}
	}
	share := 1.0 // no weights given: the class is taken to have the whole rate
	if total > 0 {
		share = float64(lim.Weights[p]) / float64(total)
	}
	// Beside others, a class held to some of the workers drains at most at their part of the
	// rate; alone, the rate measured is already theirs.
	if most := lim.ClassWorkers[p]; most > 0 && lim.Workers > most && total > lim.Weights[p] {
		share = min(share, float64(most)/float64(lim.Workers))
	}
	return share
}

// Errors a Queue returns when it refuses or drops work itself. A Queue wraps them in its own
// errors (errors.Is finds them); Gate.Refuse turns the first two into refusals.
var (
	// ErrQueueFull: the request's class already held QueueSize requests; nothing was queued.
	ErrQueueFull = errors.New("queue full")
	// ErrExpired: the request waited MaxQueueWait without being dispatched and was never
	// computed.
	ErrExpired = errors.New("max queue wait exceeded")
	// ErrClosed: the Queue no longer takes work (the server is shutting down).
	ErrClosed = errors.New("queue closed")
)
