package batcher

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/settings"
)

// Config sets the limits of one Batcher. The first five fields are required; the rest have
// defaults when zero. Validate says which are wrong. The tags are where the server's
// environment sets each field (SLUICE_ and the env tag; see the package documentation).
type Config struct {
	MaxBatchSize    int           `env:"BATCH_MAX_SIZE" envDefault:"32"`             // max sequences per batch
	MaxWait         time.Duration `env:"BATCH_MAX_WAIT_MS" envDefault:"5" unit:"ms"` // batch window: how long the oldest waiting request may wait for company
	MaxPaddedTokens int           `env:"BATCH_MAX_PADDED_TOKENS" envDefault:"4096"`  // budget: sequences x longest sequence in the batch
	QueueSize       int           `env:"BATCH_MAX_QUEUE_SIZE" envDefault:"256"`      // hard bound on waiting requests per priority class; Submit past it fails at once
	Workers         int           `env:"BATCH_WORKERS" envDefault:"1"`               // concurrent batches in flight (engine workers)

	// MaxQueueWait is how long a request may wait for dispatch. One still waiting when it
	// runs out fails with ErrExpired, is never computed, and frees its slot at once. 0 means
	// no limit. A value at or below MaxWait lets through only requests that fill a batch at
	// once or find a worker free after the window, which is what OpenMed's 0 means.
	MaxQueueWait time.Duration `env:"BATCH_MAX_QUEUE_WAIT_MS" envDefault:"1000" unit:"ms"`
	// Weights set how often each class leads a batch when several have requests ready: with
	// the defaults (admission.DefaultWeights, used for a class whose weight is 0), four of every five
	// batches are led by Interactive and one by Bulk, so Bulk never starves.
	Weights [admission.NumPriorities]int `envEach:"interactive=BATCH_INTERACTIVE_WEIGHT,bulk=BATCH_BULK_WEIGHT" envEachDefault:"4,1"`
	// MaxBulkWorkers caps how many workers may run bulk batches at once; 0 means no cap.
	// Below Workers, it keeps workers free for interactive requests, so a bulk flood costs an
	// interactive request at most the time to form its batch, not the end of a bulk batch.
	MaxBulkWorkers int `env:"BATCH_MAX_BULK_WORKERS" envDefault:"0"`
	// BulkYieldSize caps a bulk batch's sequences while interactive requests are about (one
	// arrived within BulkYieldWindow): a batch, once running, cannot be interrupted, so an
	// interactive request that arrives behind a bulk batch waits at most a batch of this size.
	// With no interactive traffic, bulk batches fill to MaxBatchSize. 0 turns the cap off; one
	// at or above MaxBatchSize changes nothing.
	BulkYieldSize   int           `env:"BATCH_BULK_YIELD_SIZE" envDefault:"4"`
	BulkYieldWindow time.Duration `env:"BATCH_BULK_YIELD_WINDOW_MS" envDefault:"1000" unit:"ms"`
}

// GPULimits are the batch limits that replace Config's MaxBatchSize and MaxPaddedTokens where
// the batches run on a GPU: there a batch costs little more than one sequence up to far
// larger sizes. The fields are named as Config's, so that a Problem of either names its
// variable through these tags.
type GPULimits struct {
	MaxBatchSize    int `env:"GPU_BATCH_MAX_SIZE" envDefault:"128"`
	MaxPaddedTokens int `env:"GPU_BATCH_MAX_PADDED_TOKENS" envDefault:"32768"`
}

// OnGPU is c with the GPU's batch limits.
func (c Config) OnGPU(g GPULimits) Config {
	c.MaxBatchSize, c.MaxPaddedTokens = g.MaxBatchSize, g.MaxPaddedTokens
	return c
}

// Validate reports every field that is out of range: the result joins one *settings.Problem
// per bad field.
func (c Config) Validate() error {
	check := settings.For("batcher")
	bad := check.Addf
	if c.MaxBatchSize < 1 || c.MaxBatchSize > maxBatchSizeLimit {
		bad("MaxBatchSize", "must be between 1 and %d, got %d", maxBatchSizeLimit, c.MaxBatchSize)
	}
	if c.MaxWait < 0 {
		bad("MaxWait", "must not be negative, got %s", c.MaxWait)
	}
	if c.MaxPaddedTokens < 1 {
		bad("MaxPaddedTokens", "must be at least 1, got %d", c.MaxPaddedTokens)
	}
	if c.QueueSize < 1 {
		bad("QueueSize", "must be at least 1, got %d", c.QueueSize)
	}
	if c.Workers < 1 {
		bad("Workers", "must be at least 1, got %d", c.Workers)
	}
	if c.MaxQueueWait < 0 {
		bad("MaxQueueWait", "must not be negative (0: no limit), got %s", c.MaxQueueWait)
	}
	admission.CheckWeights(&check, c.Weights)
	if c.MaxBulkWorkers < 0 || (c.Workers >= 1 && c.MaxBulkWorkers > c.Workers) {
		bad("MaxBulkWorkers", "must be between 0 (no cap) and Workers %d, got %d", c.Workers, c.MaxBulkWorkers)
	}
	if c.BulkYieldSize < 0 || c.BulkYieldSize > maxBatchSizeLimit {
		bad("BulkYieldSize", "must be between 0 (no cap) and %d, got %d", maxBatchSizeLimit, c.BulkYieldSize)
	}
	if c.BulkYieldWindow < 0 || c.BulkYieldWindow > time.Hour {
		bad("BulkYieldWindow", "must be between 0 and an hour, got %s", c.BulkYieldWindow)
	}
	return check.Err()
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

// Sentinel errors. Callers compare with errors.Is; the messages carry no request content. The
// first three wrap the admission layer's, which is how the HTTP layer, which does not import
// this package, tells a refusal from a failure.
var (
	// ErrQueueFull means the request's priority class already holds QueueSize waiting
	// requests. Nothing was enqueued; the HTTP layer answers 503 backpressure ("saturated").
	ErrQueueFull = fmt.Errorf("batcher: %w", admission.ErrQueueFull)
	// ErrExpired means the request waited MaxQueueWait without being dispatched. It was taken
	// out of the queue and never computed; the HTTP layer answers 503 backpressure ("max_wait").
	ErrExpired = fmt.Errorf("batcher: %w", admission.ErrExpired)
	// ErrClosed means the batcher no longer accepts work, or gave up on a request it had
	// accepted because Close's context or Start's context ended first.
	ErrClosed = fmt.Errorf("batcher: %w", admission.ErrClosed)
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
