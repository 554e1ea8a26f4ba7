package driver

import (
	"context"
	"fmt"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// RunUntil steps st until st.Steps reaches steps, calling after, if not
// nil, after every step with the new state: the one loop of every run
// (training runs record samples, metrics, checkpoints and progress there;
// the benchmark its timers). It checks ctx before each step and, once ctx
// is done, returns ctx's error with st between steps (whole, to be
// checkpointed and resumed). An error of a step or of after ends the loop
// and is returned, wrapped with the step it happened at.
func (d *Driver) RunUntil(ctx context.Context, pots []sampler.Potential, tp sampler.TermPotential, st *tempering.PTState, steps int, after func(*tempering.PTState) error) error {
	for st.Steps < steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.Step(pots, tp, st); err != nil {
			return err
		}
		if after != nil {
			if err := after(st); err != nil {
				return fmt.Errorf("after step %d: %w", st.Steps, err)
			}
		}
	}
	return nil
}

// Run calls Step n times, then returns; after, if not nil, is called after
// every step with the state (to record rung-1 samples).
func (d *Driver) Run(pots []sampler.Potential, tp sampler.TermPotential, st *tempering.PTState, n int, after func(*tempering.PTState) error) error {
	return d.RunUntil(context.Background(), pots, tp, st, st.Steps+n, after)
}
