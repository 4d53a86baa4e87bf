package batcher

import (
	"errors"
	"fmt"
	"time"
)

// Config sets the limits of one Batcher. Every field is required; Validate says which are wrong.
type Config struct {
	MaxBatchSize    int           // max sequences per batch
	MaxWait         time.Duration // batch window: how long the oldest waiting request may wait for company
	MaxPaddedTokens int           // budget: sequences x longest sequence in the batch
	QueueSize       int           // hard bound on waiting requests; Submit past it fails at once
	Workers         int           // concurrent batches in flight (engine workers)
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

func (c Cost) validate() error {
	if c.Sequences < 1 || c.MaxLen < 1 || c.Sequences > maxCostDim || c.MaxLen > maxCostDim {
		return fmt.Errorf("%w: need 1 to %d sequences of 1 to %d tokens, got %d sequences of max length %d",
			ErrInvalidCost, maxCostDim, maxCostDim, c.Sequences, c.MaxLen)
	}
	return nil
}

// Sentinel errors. Callers compare with errors.Is; the messages carry no request content.
var (
	// ErrQueueFull means the queue already holds QueueSize waiting requests. Nothing was
	// enqueued; the HTTP layer answers 503 backpressure.
	ErrQueueFull = errors.New("batcher: queue full")
	// ErrClosed means the batcher no longer accepts work, or gave up on a request it had
	// accepted because Close's context or Start's context ended first.
	ErrClosed = errors.New("batcher: closed")
	// ErrInvalidCost means Submit got a Cost with no sequences or no tokens.
	ErrInvalidCost = errors.New("batcher: invalid cost")
	// ErrRunnerPanic is returned to every request of a batch whose Run panicked. The panic
	// value is dropped on purpose: it may hold request content.
	ErrRunnerPanic = errors.New("batcher: runner panicked")
)
