package driver

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// NoiseCorrection is the phase that estimates each rung's gradient noise
// per coordinate over the end of burn-in (after the last mass
// re-estimate, or its second half) and from the end of burn-in injects
// less noise where the gradient brings more (adapt.Noise,
// adapt.InjectionScale; Chen et al.'s B-hat), so that no coordinate runs
// hot or cold under the one thermostat. With Ceiling it first raises the
// mass of the coordinates whose noise the injected noise cannot absorb
// (adapt.NoiseMass); with Track it goes on estimating after burn-in and
// corrects the injection at the end of every window of the burn-in
// estimate's length. It needs an SGNHT or SGHMC kernel and a fixed step
// (no StepHealth.NoiseTarget). The zero NoiseCorrection (no Ceiling, no
// Track) is the correction of runs recorded before them.
type NoiseCorrection struct {
	Base
	// Precondition is the run's mass estimate (Mass.Precondition): the
	// estimate starts after its last window.
	Precondition adapt.Preconditioner
	// Ceiling is adapt.Noise.Ceiling: the largest noise per step, as a
	// fraction of the injected variance, that the correction leaves a
	// coordinate at the end of burn-in, where it raises the masses of
	// noisier ones (0: no mass raised).
	Ceiling float64
	// Track is adapt.Noise.Track: the estimate goes on after burn-in.
	Track bool
}

// noise returns the correction over d's burn-in.
func (n *NoiseCorrection) noise(d *Driver) adapt.Noise {
	return adapt.Noise{Correct: true, BurnIn: d.BurnIn, Precondition: n.Precondition, Ceiling: n.Ceiling, Track: n.Track}
}

// Validate implements Phase.
func (n *NoiseCorrection) Validate(d *Driver) error {
	return n.noise(d).Validate(d.Kernel, noiseTarget(d))
}

// Start implements Phase.
func (n *NoiseCorrection) Start(d *Driver, st *tempering.PTState) {
	st.Noise = n.noise(d).Start(st.Rungs)
}

// Check implements Phase.
func (n *NoiseCorrection) Check(d *Driver, st *tempering.PTState, dim int) error {
	for j, s := range st.Rungs {
		if s.InjScale != nil && len(s.InjScale) != dim {
			return fmt.Errorf("rung %d has a noise correction of dimension %d, the model has %d", j, len(s.InjScale), dim)
		}
	}
	return n.noise(d).Check(st.Steps, st.Noise, len(st.Rungs), dim)
}

// Before implements Phase: the rungs' noise sums point at their estimates
// while the window runs.
func (n *NoiseCorrection) Before(d *Driver, st *tempering.PTState, _ *StepInfo) {
	n.noise(d).Arm(st.Steps, st.Rungs, st.Noise)
}

// After implements Phase: the step joins the estimates, and at the end of
// burn-in (and with Track of every later window) each rung's injected
// noise is corrected by its estimate.
func (n *NoiseCorrection) After(d *Driver, st *tempering.PTState, in *StepInfo) error {
	changed, err := n.noise(d).Update(st.Steps, st.Rungs, st.Noise, in.Kernels)
	if changed {
		forgetKicks(st)
	}
	return err
}

// setInjScale restores a rung's noise correction from a snapshot, each
// multiplier in [0, sqrt(2)] (nil: none).
func setInjScale(s *sampler.State, sc []float64) error {
	for i, v := range sc {
		if !(v >= 0 && v <= math.Sqrt2) {
			return fmt.Errorf("noise correction %d is %v, outside [0, sqrt(2)]", i, v)
		}
	}
	s.InjScale = sc
	return nil
}
