package driver

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// LadderTuning is the phase that tunes the ladder during burn-in in rounds
// (Adapt: the round lengths, the guards and the ladder's placement,
// tempering.LadderAdaptation; its progress in PTState.Tuning): every step
// and every exchange attempt join the round's trend statistics, and at a
// round's end the ladder is judged and moved (tune.go).
type LadderTuning struct {
	Base
	Adapt *tempering.LadderAdaptation
}

// Validate implements Phase.
func (lt *LadderTuning) Validate(d *Driver) error {
	if lt.Adapt == nil {
		return fmt.Errorf("ladder tuning without a ladder adaptation")
	}
	return lt.validate(d)
}

// After implements Phase: the rungs' energies join the round's trend.
func (lt *LadderTuning) After(_ *Driver, st *tempering.PTState, in *StepInfo) error {
	lt.observeStep(st, in.Setting.Hyper.Temp)
	return nil
}

// Swap implements Phase: the attempt's estimated deltaE joins the round's
// trend.
func (lt *LadderTuning) Swap(_ *Driver, st *tempering.PTState, sw tempering.SwapAttempt) {
	lt.observeSwap(st, sw.Pair, sw.Result.DeltaE)
}

// End implements Phase: a round that ends at this step is judged and the
// next ladder placed.
func (lt *LadderTuning) End(d *Driver, st *tempering.PTState, in *StepInfo) error {
	if st.Steps != st.Tuning.NextRound {
		return nil
	}
	return lt.tune(d, st, in.Setting.Hyper.Temp)
}
