package scheduler

import (
	"context"

	"github.com/sluice-serving/sluice/engine"
)

// Model is the decoder a Scheduler drives; *engine.Decoder is the real one. The scheduler
// calls Shape and RunStep from its loop only, one step at a time; its watchdog calls
// Terminate from another goroutine when a step hangs.
type Model interface {
	// Shape is the model's geometry, which sizes the KV cache and every step's tensors.
	Shape() engine.DecoderShape
	// RunStep runs one forward pass into the step's own buffers (see engine.Step).
	RunStep(ctx context.Context, st *engine.Step) error
	// Terminate makes the step in flight return an error soon.
	Terminate()
}
