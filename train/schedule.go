package train

import (
	"math"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// The cyclical step-size schedule (Zhang et al. 2020, Config.Cycle) and
// which steps keep samples (Config.BurnIn, Thin, CycleKeep). Both depend on
// the step counter alone, so a resumed run follows them exactly.

// stepScale returns the learning-rate multiplier of step k (1-based) under
// the cyclical schedule of Zhang et al. (2020): (cos(pi u)+1)/2 at position
// u = ((k-1) mod Cycle)/Cycle of the step's cycle, so each cycle starts at
// the full rate, explores, and ends with small steps that sample. Without a
// cycle the multiplier is 1.
func stepScale(c runspec.Config, k int) float64 {
	if c.Cycle == 0 {
		return 1
	}
	return (math.Cos(math.Pi*cyclePos(c, k)) + 1) / 2
}

// cyclePos returns step k's position in its cycle, in [0, 1).
func cyclePos(c runspec.Config, k int) float64 {
	return float64((k-1)%c.Cycle) / float64(c.Cycle)
}

// keepSample reports whether the rung-1 state after step k is kept by a
// run whose kernel is an optimiser or not (a run knows which once, from its
// kernel registry).
func keepSample(c runspec.Config, k int, optimiser bool) bool {
	if optimiser || c.SGDWarmup >= c.Steps {
		return k == c.Steps
	}
	if k <= c.BurnIn || (k-c.BurnIn)%c.Thin != 0 {
		return false
	}
	if c.Cycle == 0 {
		return true
	}
	window := max(1, int(math.Round(c.CycleKeep*float64(c.Cycle))))
	return (k-1)%c.Cycle >= c.Cycle-window
}

// scheduledStep returns kernel k's step size (sampler.Hyper.StepSize) for
// the next step of st under the config's cyclical schedule, at learning
// rate r, and rescales each rung's thermostat with it; without a schedule
// it returns 0 (the kernel's own step) and changes nothing. The
// Nose-Hoover xi settles near A = alpha/h, so xi*h, the friction per step,
// is what must carry over when h changes by sqrt(next/prev).
func scheduledStep(cfg runspec.Config, r sampler.Rate, k sampler.Kernel, st *tempering.PTState) float64 {
	if cfg.Cycle == 0 {
		return 0
	}
	steps := st.Steps
	prev, next := stepScale(cfg, max(steps, 1)), stepScale(cfg, steps+1)
	f := math.Sqrt(prev / next)
	for _, s := range st.Rungs {
		s.MoveStep(f, 1)
	}
	return r.StepOf(k, next)
}
