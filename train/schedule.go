package train

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
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

// validateNew validates the settings of a new run (runspec.Config.Validate)
// and that some step keeps a sample: a burn-in, thinning or cycle that
// leaves none would train the whole run for nothing (eval then finds no
// sample). A resumed run is not held to it: a --time-limit may end it
// before its first sample.
func validateNew(c runspec.Config, s runspec.Setup) error {
	if err := c.Validate(s); err != nil {
		return err
	}
	opt := c.Optimiser(s.Kernels)
	// from the first step after burn-in, or the last (an optimiser's burn-in may pass it: it keeps its last)
	for k := min(c.BurnIn+1, c.Steps); k <= c.Steps; k++ {
		if keepSample(c, k, opt) {
			return nil
		}
	}
	cycle := ""
	if c.Cycle > 0 {
		cycle = fmt.Sprintf(", the last %.3g of each --cycle %d", c.CycleKeep, c.Cycle)
	}
	return fmt.Errorf("config: no step keeps a sample: every --thin %d-th step after --burnin %d%s, to --steps %d, is none", c.Thin, c.BurnIn, cycle, c.Steps)
}

// runSchedule is a run's driver.Schedule: each step's step size (the
// configured one, or the cyclical schedule's), the posterior temperature,
// and under an SGD warm-up the kernel and batch size (warmup). It depends
// on the step counter alone, so a resumed run follows it exactly.
type runSchedule struct {
	cfg    runspec.Config
	n      int            // training examples
	rate   sampler.Rate   // the configured learning rate
	kernel sampler.Kernel // the run's kernel at rate
	h      float64        // its step at rate (rate.StepOf at 1)
	temp   float64        // the posterior temperature
	sgd    sampler.Kernel // the SGD warm-up's kernel (nil without one)
	sgdH   float64        // its step at rate
}

// newSchedule returns the schedule of a run of cfg on n examples whose
// kernel is k (kernelFrom: at the configured learning rate).
func newSchedule(cfg runspec.Config, k sampler.Kernel, n int) (*runSchedule, error) {
	r := rateOf(cfg, n)
	s := &runSchedule{cfg: cfg, n: n, rate: r, kernel: k, h: r.StepOf(k, 1), temp: cfg.PosteriorTemperature()}
	if cfg.SGDWarmup > 0 {
		sgd, err := warmupKernel(cfg, n)
		if err != nil {
			return nil, err
		}
		s.sgd, s.sgdH = sgd, r.StepOf(sgd, 1)
	}
	return s, nil
}

// Next implements driver.Schedule: the step at the configured rate, or
// under the cyclical schedule (Config.Cycle) the kernel's step at
// stepScale times it, with each rung's thermostat rescaled: the
// Nose-Hoover xi settles near A = alpha/h, so xi*h, the friction per
// step, is what must carry over when h changes by sqrt(next/prev).
func (s *runSchedule) Next(st *tempering.PTState) (driver.Setting, error) {
	h := s.h
	if s.cfg.Cycle != 0 {
		prev, next := stepScale(s.cfg, max(st.Steps, 1)), stepScale(s.cfg, st.Steps+1)
		f := math.Sqrt(prev / next)
		for _, r := range st.Rungs {
			r.MoveStep(f, 1)
		}
		h = s.rate.StepOf(s.kernel, next)
	}
	k, h := s.warmup(st, h)
	return driver.Setting{Kernel: k, Hyper: sampler.Hyper{StepSize: h, Temp: s.temp}}, nil
}

// warmup returns the kernel and step size of the next step of st, whose
// scheduled step is h, under Config.SGDWarmup, and sets the minibatch
// orders' batch size: sgd (on WarmupBatch examples, when set) at the
// configured rate for steps 1..SGDWarmup, then the run's kernel, whose
// momentum and thermostat are drawn afresh (Kernel.Init, from each
// rung's stream) at the point the optimiser reached and whose health
// watch starts there.
func (s *runSchedule) warmup(st *tempering.PTState, h float64) (sampler.Kernel, float64) {
	// the warm-up's steps may take their own batch size (WarmupBatch)
	size := s.cfg.StepBatch(st.Steps, s.n)
	for _, o := range st.Orders {
		if b, ok := o.(*datasets.Batches); ok {
			b.Size = size
		}
	}
	w := s.cfg.SGDWarmup
	switch {
	case w == 0 || st.Steps > w:
		return s.kernel, h
	case st.Steps < w:
		return s.sgd, s.sgdH // at the configured rate, whatever the schedule
	}
	k := sampler.KernelAt(s.kernel, h) // the sampler as it steps next
	for j, r := range st.Rungs {
		k.Init(r, st.Streams[j].Rand)
		if j < len(st.Stats.Health) {
			st.Stats.Health[j].Start(r.KineticTemperature())
		}
	}
	return s.kernel, h
}
