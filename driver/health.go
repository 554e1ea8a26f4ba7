package driver

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// StepHealth is the phase that watches each rung's dynamics, one
// health.Health per rung in the state's statistics (rungs of a
// Frictional kernel are watched, and those of SGLD by its own watch,
// health.Health.ObserveLangevin), and with a noise target shrinks the
// step of a rung whose gradient noise's share exceeds it during burn-in.
type StepHealth struct {
	Base
	// Window is the length in steps of the windows over which each rung's
	// health is measured (0: health.DefaultHealthWindow).
	Window int
	// MixCoords makes each rung's health verdict grade the mixing of every
	// coordinate after burn-in (health.Health.NoteDraw, MixFigures): a
	// chain with fewer than health.MinMixESS effective draws in one
	// fails, "not mixed". Meant for models whose coordinates are
	// identified (a regression, a GLM: refcheck's posteriors); a neural
	// network's weights are not (permutations, sign flips, flat ridges),
	// and their per-weight ESS is low in any chain of useful length, so
	// train leaves it off and only reports the ESS of the energy U/T,
	// which every rung's verdict carries ungraded.
	MixCoords bool
	// ExactGradients says every gradient is exact (a full batch; train
	// sets it when the batch is the training set): the health check then
	// names a heating beyond the injected noise and the measured
	// integration error the integrator's (an unstable step), never
	// gradient noise (health.Health.Exact).
	ExactGradients bool
	// NoiseTarget, when positive, makes the run noise-aware: at the end of
	// every health window during burn-in, a rung whose gradient-noise
	// share exceeds NoiseTarget shrinks its step (same friction per step)
	// toward the share NoiseTarget, and one whose shrunk step now gives
	// less than half of it grows back (never beyond the configured step).
	// The steps are then fixed for sampling.
	NoiseTarget float64
}

// Validate implements Phase.
func (h *StepHealth) Validate(*Driver) error {
	if !(h.NoiseTarget >= 0 && h.NoiseTarget < 1) {
		return fmt.Errorf("noise target %v must be in [0, 1) (0: off)", h.NoiseTarget)
	}
	if h.Window < 0 {
		return fmt.Errorf("health window %d must be >= 0 (0: %d steps)", h.Window, health.DefaultHealthWindow)
	}
	return nil
}

// Start implements Phase: every rung's watch starts at its kinetic
// temperature.
func (h *StepHealth) Start(_ *Driver, st *tempering.PTState) {
	st.Stats.Health = make([]health.Health, len(st.Rungs))
	for j, s := range st.Rungs {
		st.Stats.Health[j].Start(s.KineticTemperature())
	}
}

// Check implements Phase.
func (h *StepHealth) Check(_ *Driver, st *tempering.PTState, _ int) error {
	if len(st.Stats.Health) != len(st.Rungs) {
		return fmt.Errorf("per-rung statistics for the wrong number of rungs (%d)", len(st.Rungs))
	}
	return nil
}

// Before implements Phase: a rung whose noise-aware step has shrunk steps
// at its multiple of the step.
func (h *StepHealth) Before(_ *Driver, st *tempering.PTState, in *StepInfo) {
	if _, watched := in.Setting.Kernel.(sampler.Frictional); !watched {
		return
	}
	for j := range in.Hypers {
		if sc := st.Stats.Health[j].Multiplier(); sc != 1 {
			in.Hypers[j].StepSize = in.Setting.Hyper.StepSize * sc
			in.Kernels[j] = kernelAt(in.Setting.Kernel, in.Hypers[j].StepSize)
		}
	}
}

// armLast implements armer: after burn-in, each rung's per-coordinate
// watch takes the rung's noise sums for the next step (health.Health.
// ArmCoords), after the noise correction's Before has armed or cleared
// them.
func (h *StepHealth) armLast(d *Driver, st *tempering.PTState, in *StepInfo) {
	if _, watched := in.Setting.Kernel.(sampler.Frictional); !watched {
		return
	}
	for j, s := range st.Rungs {
		st.Stats.Health[j].ArmCoords(s, st.Steps, d.BurnIn)
	}
}

// After implements Phase: it records the step just taken in each rung's
// watch (its energy for the window's descent, after burn-in each
// coordinate's (health.Health.ObserveCoords) and the verdict's mixing),
// and at the end of a burn-in window of a noise-aware
// run moves the rung's step toward the target share.
func (h *StepHealth) After(d *Driver, st *tempering.PTState, in *StepInfo) error {
	if _, ok := in.Setting.Kernel.(sampler.SGLD); ok {
		h.afterLangevin(d, st, in)
		return nil
	}
	if _, watched := in.Setting.Kernel.(sampler.Frictional); !watched {
		return nil
	}
	for j, s := range st.Rungs {
		hl := &st.Stats.Health[j]
		temp := in.Hypers[j].Temp
		hl.NotePotential(s.U/temp, h.Window) // the window's descent
		ended := hl.ObserveStep(in.Kernels[j].(sampler.Frictional), in.Xi0[j], in.Kin[j], s.Kinetic, s.Work, len(s.P), st.Steps, h.Window, st.Steps > d.BurnIn)
		hl.Exact = h.ExactGradients
		hl.ObserveCoords(in.Kernels[j].(sampler.Frictional), in.Xi0[j], s, st.Steps, d.BurnIn, ended)
		if st.Steps > d.BurnIn {
			hl.NoteDraw(s.U/temp, s.Theta, h.MixCoords) // the verdict's mixing
		}
		if ended && h.NoiseTarget > 0 && st.Steps <= d.BurnIn {
			if g := hl.AdaptStep(h.NoiseTarget); g != 1 {
				s.MoveStep(1, g) // the same friction per step
				hl.PrevWork.Valid = false
			}
		}
	}
	return nil
}

// afterLangevin is After for an SGLD kernel (no momentum): each rung's
// SGLD watch (health.Health.ObserveLangevin) and, after burn-in, the
// verdict's mixing. The watch only reads the state.
func (h *StepHealth) afterLangevin(d *Driver, st *tempering.PTState, in *StepInfo) {
	for j, s := range st.Rungs {
		hl := &st.Stats.Health[j]
		k, ok := in.Kernels[j].(sampler.SGLD)
		if !ok {
			continue
		}
		c, v := k.Scales(in.Hypers[j])
		hl.Exact = h.ExactGradients
		hl.ObserveLangevin(s, c, v, st.Steps, h.Window, st.Steps > d.BurnIn)
		if st.Steps > d.BurnIn {
			hl.NoteDraw(s.U/in.Hypers[j].Temp, s.Theta, h.MixCoords)
		}
	}
}

// Swap implements Phase: a swapped rung's next kick is at another
// position, with no energy error to pair (nor an SGLD step).
func (h *StepHealth) Swap(_ *Driver, st *tempering.PTState, sw tempering.SwapAttempt) {
	if sw.Result.Accepted {
		st.Stats.Health[sw.J].PrevWork.Valid, st.Stats.Health[sw.K].PrevWork.Valid = false, false
		for _, j := range []int{sw.J, sw.K} {
			if w := st.Stats.Health[j].Langevin; w != nil {
				w.Forget()
			}
		}
	}
}

// forgetKicks makes every rung's watch pair no kick terms across a change
// of its kernel's mass or noise (a state without a watch has none).
func forgetKicks(st *tempering.PTState) {
	for j := range st.Stats.Health {
		st.Stats.Health[j].PrevWork.Valid = false
	}
}

// noiseTarget returns the noise target of d's StepHealth phase (0 without
// one).
func noiseTarget(d *Driver) float64 {
	for _, p := range d.Phases {
		if h, ok := p.(*StepHealth); ok {
			return h.NoiseTarget
		}
	}
	return 0
}
