package scheduler

import (
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/settings"
)

// Config sets a Scheduler's limits. Validate says which fields are wrong. The tags are where
// the server's environment sets each field (SLUICE_ and the env tag; see the package
// documentation); MaxPositions and PadID are the model's, set by the server.
type Config struct {
	// MaxRunning is how many sequences decode together: the batch of a decode step.
	MaxRunning int `env:"GENERATE_MAX_RUNNING" envDefault:"32"`
	// MaxStepTokens bounds the prefill of one iteration: the new positions computed, rows x
	// padded new positions of each prefill step together. A prompt longer than that is
	// prefilled in chunks over several iterations, decode steps going on between them.
	MaxStepTokens int `env:"GENERATE_MAX_STEP_TOKENS" envDefault:"4096"`
	// QueueSize is each priority class's hard capacity of waiting sequences.
	QueueSize int `env:"GENERATE_QUEUE_SIZE" envDefault:"64"`
	// MaxQueueWait ends a sequence still waiting for admission with ErrExpired; 0 means no
	// limit.
	MaxQueueWait time.Duration `env:"GENERATE_MAX_QUEUE_WAIT_MS" envDefault:"5000" unit:"ms"`
	// Weights are the classes' admission weights when several wait (0: the class's
	// admission.DefaultWeights).
	Weights [admission.NumPriorities]int `envEach:"interactive=BATCH_INTERACTIVE_WEIGHT,bulk=BATCH_BULK_WEIGHT" envEachDefault:"4,1"`
	// OutBuffer is how many events a stream may leave unread before its sequence pauses.
	OutBuffer int `env:"GENERATE_STREAM_BUFFER" envDefault:"16"`
	// StallTimeout is the least time a step may take before the watchdog ends it and its
	// streams (longer for a step measured to cost more), and ends a paused stream whose
	// reader has not caught up for this long.
	StallTimeout time.Duration `env:"GENERATE_STALL_TIMEOUT_MS" envDefault:"10000" unit:"ms"`
	// MaxPositions is the longest sequence served, prompt and generated tokens together: at
	// most the model's positions, and what the KV pool holds (New checks).
	MaxPositions int
	// PadID fills the padded input positions (any valid id: the mask hides them).
	PadID int64
	// TokenStallTimeout ends a sequence that has streamed tokens and then gets none for this
	// long (preempted and waiting, or starved of steps) with ErrStarved, so that a stream
	// never hangs silent between tokens; 0: no limit. A reader that stopped reading is
	// StallTimeout's, and a step that hangs the watchdog's.
	TokenStallTimeout time.Duration `env:"GENERATE_TOKEN_STALL_MS" envDefault:"60000" unit:"ms"`
	// PreemptLimit is how many times a sequence may be preempted for a higher class waiting
	// behind a full running set or a short pool; 0 never preempts for priority. It bounds the
	// work a low-class sequence can lose, so it always finishes.
	PreemptLimit int `env:"GENERATE_PREEMPT_LIMIT" envDefault:"2"`
}

// Validate reports every field that is out of range: the result joins one *settings.Problem
// per bad field.
func (c Config) Validate() error {
	check := settings.For("scheduler")
	for _, f := range []struct {
		name string
		v    int
		max  int
	}{{"MaxRunning", c.MaxRunning, 1 << 12}, {"MaxStepTokens", c.MaxStepTokens, 1 << 24},
		{"QueueSize", c.QueueSize, 1 << 20}, {"OutBuffer", c.OutBuffer, 1 << 16}, {"MaxPositions", c.MaxPositions, 1 << 24}} {
		if f.v < 1 || f.v > f.max {
			check.Addf(f.name, "must be between 1 and %d, got %d", f.max, f.v)
		}
	}
	if c.PreemptLimit < 0 || c.PreemptLimit > 1<<10 {
		check.Addf("PreemptLimit", "must be between 0 and %d, got %d", 1<<10, c.PreemptLimit)
	}
	if c.TokenStallTimeout < 0 {
		check.Addf("TokenStallTimeout", "must not be negative (0: no limit), got %s", c.TokenStallTimeout)
	}
	if c.MaxQueueWait < 0 {
		check.Addf("MaxQueueWait", "must not be negative (0: no limit), got %s", c.MaxQueueWait)
	}
	if c.StallTimeout <= 0 {
		check.Addf("StallTimeout", "must be positive, got %s", c.StallTimeout)
	}
	admission.CheckWeights(&check, c.Weights)
	return check.Err()
}
