package batcher

import (
	"errors"
	"fmt"
	"time"
)

// Config sets the limits of one Batcher. The first five fields are required; the rest have
// defaults when zero. Validate says which are wrong.
type Config struct {
	MaxBatchSize    int           // max sequences per batch
	MaxWait         time.Duration // batch window: how long the oldest waiting request may wait for company
	MaxPaddedTokens int           // budget: sequences x longest sequence in the batch
	QueueSize       int           // hard bound on waiting requests per priority class; Submit past it fails at once
	Workers         int           // concurrent batches in flight (engine workers)

	// MaxQueueWait is how long a request may wait for dispatch. One still waiting when it
	// runs out fails with ErrExpired, is never computed, and frees its slot at once. 0 means
	// no limit. A value at or below MaxWait lets through only requests that fill a batch at
	// once or find a worker free after the window, which is what OpenMed's 0 means.
	MaxQueueWait time.Duration
	// InteractiveWeight and BulkWeight set how often each class leads a batch when both have
	// requests ready: with 4 and 1 (the defaults, used when a field is 0), four of every five
	// batches are led by Interactive and one by Bulk, so Bulk never starves.
	InteractiveWeight int
	BulkWeight        int
	// MaxBulkWorkers caps how many workers may run bulk batches at once; 0 means no cap.
	// Below Workers, it keeps workers free for interactive requests, so a bulk flood costs an
	// interactive request at most the time to form its batch, not the end of a bulk batch.
	MaxBulkWorkers int
}

// Default dispatch weights, used when Config leaves a weight at 0.
const (
	DefaultInteractiveWeight = 4
	DefaultBulkWeight        = 1
)

// weights returns the dispatch weight of each class, defaults applied.
func (c Config) weights() [NumPriorities]int {
	w := [NumPriorities]int{c.InteractiveWeight, c.BulkWeight}
	if w[Interactive] == 0 {
		w[Interactive] = DefaultInteractiveWeight
	}
	if w[Bulk] == 0 {
		w[Bulk] = DefaultBulkWeight
	}
	return w
}

// Validate reports every field that is out of range, naming the field and the value it got.
func (c Config) Validate() error {
	var errs []error
	if c.MaxBatchSize < 1 || c.MaxBatchSize > maxBatchSizeLimit {
		errs = append(errs, fmt.Errorf("batcher: MaxBatchSize must be between 1 and %d, got %d", maxBatchSizeLimit, c.MaxBatchSize))
	}
	if c.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("batcher: MaxWait must not be negative, got %s", c.MaxWait))
	}
	if c.MaxPaddedTokens < 1 {
		errs = append(errs, fmt.Errorf("batcher: MaxPaddedTokens must be at least 1, got %d", c.MaxPaddedTokens))
	}
	if c.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("batcher: QueueSize must be at least 1, got %d", c.QueueSize))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("batcher: Workers must be at least 1, got %d", c.Workers))
	}
	if c.MaxQueueWait < 0 {
		errs = append(errs, fmt.Errorf("batcher: MaxQueueWait must not be negative (0: no limit), got %s", c.MaxQueueWait))
	}
	if c.InteractiveWeight < 0 || c.InteractiveWeight > maxWeight {
		errs = append(errs, fmt.Errorf("batcher: InteractiveWeight must be between 0 (default %d) and %d, got %d", DefaultInteractiveWeight, maxWeight, c.InteractiveWeight))
	}
	if c.MaxBulkWorkers < 0 || (c.Workers >= 1 && c.MaxBulkWorkers > c.Workers) {
		errs = append(errs, fmt.Errorf("batcher: MaxBulkWorkers must be between 0 (no cap) and Workers %d, got %d", c.Workers, c.MaxBulkWorkers))
	}
	if c.BulkWeight < 0 || c.BulkWeight > maxWeight {
		errs = append(errs, fmt.Errorf("batcher: BulkWeight must be between 0 (default %d) and %d, got %d", DefaultBulkWeight, maxWeight, c.BulkWeight))
	}
	return errors.Join(errs...)
}

// Cost is what one request adds to a batch: the number of sequences (windows) it was tokenized
// into and the length of its longest one, in tokens. The batch pads every sequence to the
// longest in the batch, which is why only the maximum matters.
type Cost struct{ Sequences, MaxLen int }

// Upper bounds that keep every padded-token product far from integer overflow: at most
// (maxBatchSizeLimit + maxCostDim) x maxCostDim, under 2^49.
const (
	maxBatchSizeLimit = 1 << 16
	maxCostDim        = 1 << 24
)

// maxWeight keeps the weighted round robin's credit arithmetic far from overflow.
const maxWeight = 1 << 20

func (c Cost) validate() error {
	if c.Sequences < 1 || c.MaxLen < 1 || c.Sequences > maxCostDim || c.MaxLen > maxCostDim {
		return fmt.Errorf("%w: need 1 to %d sequences of 1 to %d tokens, got %d sequences of max length %d",
			ErrInvalidCost, maxCostDim, maxCostDim, c.Sequences, c.MaxLen)
	}
	return nil
}

// Sentinel errors. Callers compare with errors.Is; the messages carry no request content.
var (
	// ErrQueueFull means the request's priority class already holds QueueSize waiting
	// requests. Nothing was enqueued; the HTTP layer answers 503 backpressure ("saturated").
	ErrQueueFull = errors.New("batcher: queue full")
	// ErrExpired means the request waited MaxQueueWait without being dispatched. It was taken
	// out of the queue and never computed; the HTTP layer answers 503 backpressure ("max_wait").
	ErrExpired = errors.New("batcher: max queue wait exceeded")
	// ErrClosed means the batcher no longer accepts work, or gave up on a request it had
	// accepted because Close's context or Start's context ended first.
	ErrClosed = errors.New("batcher: closed")
	// ErrInvalidCost means Submit got a Cost with no sequences or no tokens.
	ErrInvalidCost = errors.New("batcher: invalid cost")
	// ErrRunnerPanic is returned to every request of a batch whose Run panicked. The panic
	// value is dropped on purpose: it may hold request content.
	ErrRunnerPanic = errors.New("batcher: runner panicked")
	// ErrLeftQueued and ErrLeftRunning say where a caller whose context ended was: still in
	// the queue (never computed) or in a running batch (its result dropped). Submit wraps the
	// context's error with one of them, so errors.Is matches both.
	ErrLeftQueued  = errors.New("batcher: caller left while queued")
	ErrLeftRunning = errors.New("batcher: caller left while its batch ran")
)
