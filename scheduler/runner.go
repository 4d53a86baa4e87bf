package scheduler

import (
	"context"

	"github.com/sluice-serving/sluice/stepplan"
)

// Runner executes the steps a Scheduler plans; *engine.Runner is the real one, which owns the
// model and the keys and values of the pool's blocks. The scheduler calls Vocab and Run from
// its loop only, one step at a time; its watchdog calls Terminate from another goroutine when
// a step hangs.
type Runner interface {
	// Vocab is the width of a row's scores: token ids run below it.
	Vocab() int
	// Run makes the plan's block copies, then computes its rows: each row's new tokens'
	// keys and values into its blocks after its past, and its scores into Row.Logits (see
	// stepplan.Plan). On an error no row's tokens count as computed; a panic counts as an
	// error, which ends that step's rows.
	Run(ctx context.Context, p *stepplan.Plan) error
	// Terminate makes the step in flight return an error soon.
	Terminate()
}
