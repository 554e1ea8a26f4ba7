package driver

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Mass is the phase that estimates each rung's mass (diagonal, dense or
// low-rank) over windows of the burn-in and then freezes it (adapt.Mass;
// the estimates in PTState.Mass, the masses in the rungs' States). It
// needs an SGNHT, SGHMC or SGLD kernel.
type Mass struct {
	Base
	Precondition adapt.Preconditioner // the estimate (adapt.PrecondNone: the phase does nothing)
	// Scale is how the estimated mass is normalised (the zero value,
	// adapt.MassScaleWidest: the widest coordinates keep unit mass).
	Scale adapt.MassScale
	// Rank is a low-rank mass's k (adapt.Mass.Rank; 0: its default).
	Rank int
}

// mass returns the adaptation over d's burn-in.
func (m *Mass) mass(d *Driver) adapt.Mass {
	return adapt.Mass{Precondition: m.Precondition, Scale: m.Scale, Rank: m.Rank, BurnIn: d.BurnIn}
}

// Validate implements Phase.
func (m *Mass) Validate(d *Driver) error { return m.mass(d).Validate(d.Kernel) }

// CheckDim refuses a dense mass for a model of more than
// adapt.MaxDenseDim parameters.
func (m *Mass) CheckDim(d *Driver, dim int) error { return m.mass(d).CheckDim(dim) }

// Start implements Phase.
func (m *Mass) Start(d *Driver, st *tempering.PTState) { st.Mass = m.mass(d).Start(st.Rungs) }

// Check implements Phase.
func (m *Mass) Check(d *Driver, st *tempering.PTState, dim int) error {
	for j, s := range st.Rungs {
		if mm := s.MassMatrix(); mm != nil && mm.Dim() != dim {
			return fmt.Errorf("rung %d has a mass of dimension %d, the model has %d", j, mm.Dim(), dim)
		}
	}
	return m.mass(d).Check(st.Steps, st.Mass, len(st.Rungs), dim)
}

// Before implements Phase: the rungs' gradient sums point at their
// estimates.
func (m *Mass) Before(d *Driver, st *tempering.PTState, _ *StepInfo) {
	m.mass(d).Arm(st.Rungs, st.Mass)
}

// After implements Phase: the step joins the estimates, and at the end of
// a window the masses are set from them.
func (m *Mass) After(d *Driver, st *tempering.PTState, in *StepInfo) error {
	changed, err := m.mass(d).Update(st.Steps, st.Rungs, st.Mass, func(j int) float64 { return in.Hypers[j].Temp })
	if changed {
		forgetKicks(st)
	}
	return err
}
