package driver

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Setting is what one step runs: the kernel every rung steps with and its
// Hyper, the step size in the kernel's units and Temp, the posterior
// temperature T0 that rung 1 samples (rung j samples at T0 times its
// place on the ladder, tempering.TemperedRung). Both are explicit: the
// driver hands them on as they are.
type Setting struct {
	Kernel sampler.Kernel
	Hyper  sampler.Hyper
}

// A Schedule gives each step its Setting, as BlackJAX's kernels take the
// step size and the temperature as arguments of every step: the driver
// asks it before every step and changes nothing else of itself. A
// schedule may change the rungs' state for the step it sets (a
// thermostat rescaled with the step, the momentum drawn afresh when an
// SGD warm-up hands over to the sampler).
type Schedule interface {
	Next(st *tempering.PTState) (Setting, error)
}

// Constant is the schedule of a fixed kernel at a fixed step size and
// posterior temperature.
type Constant Setting

// Fixed returns the schedule that steps kernel k at step size h (in k's
// units) and posterior temperature t at every step.
func Fixed(k sampler.Kernel, h, t float64) Constant {
	return Constant{Kernel: k, Hyper: sampler.Hyper{StepSize: h, Temp: t}}
}

// Next implements Schedule.
func (c Constant) Next(*tempering.PTState) (Setting, error) { return Setting(c), nil }

// check reports whether s is a setting a step can run.
func (s Setting) check() error {
	if s.Kernel == nil {
		return fmt.Errorf("no kernel")
	}
	if !(s.Hyper.StepSize > 0) || math.IsInf(s.Hyper.StepSize, 1) {
		return fmt.Errorf("step size %v must be positive and finite", s.Hyper.StepSize)
	}
	if !(s.Hyper.Temp > 0) || math.IsInf(s.Hyper.Temp, 1) {
		return fmt.Errorf("posterior temperature %v must be positive and finite", s.Hyper.Temp)
	}
	return nil
}
