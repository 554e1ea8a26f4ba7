package tempering

import (
	"context"
	"fmt"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// Hooks are what a driver attaches to the one loop of PT runs, RunUntil:
// adapters that set the next step's settings before it, and recorders
// that observe the state after it. Training runs (samples, metrics,
// checkpoints, progress; the cyclical schedule and the SGD warm-up) and
// the benchmark (its timers) are hooks on the same loop. Nil hooks do
// nothing.
type Hooks struct {
	// Before is called before every step with the state as it stands; it
	// may set pt.StepSize for the step (a learning-rate schedule's), replace
	// pt.Kernel (an SGD warm-up) and change the rungs' auxiliary state (a
	// thermostat rescaled with the step).
	Before func(pt *PT, st *PTState) error
	// After is called after every step with the new state.
	After func(st *PTState) error
}

// RunUntil steps st until st.Steps reaches steps, calling h.Before before
// and h.After after every step. It checks ctx before each step and, once
// ctx is done, returns ctx's error with st between steps (whole, to be
// checkpointed and resumed). An error of a step or a hook ends the loop
// and is returned, wrapped with the step it happened at.
func (pt *PT) RunUntil(ctx context.Context, pots []sampler.Potential, tp sampler.TermPotential, st *PTState, steps int, h Hooks) error {
	for st.Steps < steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if h.Before != nil {
			if err := h.Before(pt, st); err != nil {
				return fmt.Errorf("before step %d: %w", st.Steps+1, err)
			}
		}
		if err := pt.Step(pots, tp, st); err != nil {
			return err
		}
		if h.After != nil {
			if err := h.After(st); err != nil {
				return fmt.Errorf("after step %d: %w", st.Steps, err)
			}
		}
	}
	return nil
}
