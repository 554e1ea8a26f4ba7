package driver

import (
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// A Phase is one of the adaptations (or watches) of a run that the
// driver runs around every step, attached as recorders are
// (Driver.Phases; gonum optimize's Recorder, Pigeons.jl's adapt): the
// burn-in's mass estimation (Mass), the noise correction
// (NoiseCorrection), the step's health watch and the noise-aware step
// (StepHealth), the ladder's tuning (LadderTuning) and the restart of
// the window statistics at the end of burn-in (WindowRestart). Each
// keeps its estimates in the run's state, plain data that a checkpoint
// saves. Phases run in the order attached; embed Base for the methods a
// phase does not need.
type Phase interface {
	// Validate checks the phase's settings against the driver's.
	Validate(d *Driver) error
	// Start sets the phase's state up in a new run's state.
	Start(d *Driver, st *tempering.PTState)
	// Check reports whether a restored state holds the phase's state for
	// a model of dim parameters.
	Check(d *Driver, st *tempering.PTState, dim int) error
	// Before prepares the next step's rungs and settings (in, the step's
	// kernels and Hypers).
	Before(d *Driver, st *tempering.PTState, in *StepInfo)
	// After runs after the rungs stepped (st.Steps counts the step).
	After(d *Driver, st *tempering.PTState, in *StepInfo) error
	// Swap sees an exchange attempt of the step's exchange round.
	Swap(d *Driver, st *tempering.PTState, sw tempering.SwapAttempt)
	// End runs at the end of the step, after its exchange round.
	End(d *Driver, st *tempering.PTState, in *StepInfo) error
}

// An armer is a phase that arms the rungs for the next step after every
// phase's Before: StepHealth's per-coordinate watch, which after burn-in
// takes the noise sums that NoiseCorrection's Before clears.
type armer interface {
	armLast(d *Driver, st *tempering.PTState, in *StepInfo)
}

// Base is a Phase that does nothing; phases embed it.
type Base struct{}

// Validate implements Phase.
func (Base) Validate(*Driver) error { return nil }

// Start implements Phase.
func (Base) Start(*Driver, *tempering.PTState) {}

// Check implements Phase.
func (Base) Check(*Driver, *tempering.PTState, int) error { return nil }

// Before implements Phase.
func (Base) Before(*Driver, *tempering.PTState, *StepInfo) {}

// After implements Phase.
func (Base) After(*Driver, *tempering.PTState, *StepInfo) error { return nil }

// Swap implements Phase.
func (Base) Swap(*Driver, *tempering.PTState, tempering.SwapAttempt) {}

// End implements Phase.
func (Base) End(*Driver, *tempering.PTState, *StepInfo) error { return nil }

// StepInfo is one step as the phases see it: the schedule's setting, and
// per rung the kernel as it steps (a Frictional kernel at its step, At),
// its Hyper, its thermostat before the step and its kinetic temperature
// after it.
type StepInfo struct {
	Setting Setting
	Kernels []sampler.Kernel
	Hypers  []sampler.Hyper
	Xi0     []float64
	Kin     []float64
	errs    []error
	rs      rungSteps
}

// size makes the step's slices hold r rungs.
func (in *StepInfo) size(r int) {
	if len(in.Kin) != r {
		in.Kin, in.Xi0, in.errs = make([]float64, r), make([]float64, r), make([]error, r)
		in.Kernels, in.Hypers = make([]sampler.Kernel, r), make([]sampler.Hyper, r)
	}
}
