package adapt

import (
	"errors"
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// NoiseEstimate is one chain's running per-coordinate estimate of the
// gradient noise that enters its momentum, h^2 Var[g~_i]/(m_i T) per step
// (in the units of sampler.State.P): Sum holds Count steps' estimates (see
// sampler.State.SumNoise). Plain data, checkpointed with the run.
type NoiseEstimate struct {
	Count int
	Sum   []float64
}

// Noise is the noise correction (Chen et al. 2014's B-hat): each chain's
// gradient noise per coordinate estimated over the end of burn-in (after
// the last mass re-estimate, or its second half), and from the end of
// burn-in less noise injected where the gradient brings more
// (InjectionScale), so that no coordinate runs hot or cold under the one
// thermostat. What a driver stepping the chains (driver.NoiseCorrection, a driver.Driver phase) calls
// around each step; the zero Noise corrects nothing.
//
// The correction cannot take out more noise than it injects: a coordinate
// whose gradient noise per step exceeds the injected variance keeps none
// injected and still runs hot. Chen et al. ask for a friction C >= B-hat;
// with Ceiling the noisiest coordinates get a larger mass instead (a
// friction cannot dissipate a noise per step above the momentum's own
// variance, which a mass's smaller step can), so that every coordinate's
// noise is within what the correction takes out. And the noise moves as
// the chain settles after burn-in (make run: the output layer's by a third
// down, the first layer's noisiest weights' about twofold up): with Track
// the estimate goes on after burn-in and the injection follows it, within
// the injected variance (the masses are not raised again: a mass that
// followed the chain's noise would depend on where the chain has been,
// and bias it toward the noisy regions it slows it in).
type Noise struct {
	// Correct turns the correction on.
	Correct bool
	// BurnIn is the length of the burn-in, at whose end the correction
	// starts.
	BurnIn int
	// Precondition is the run's mass estimate (Mass.Precondition): the
	// mass changes the noise per step, so the estimate starts after its
	// last window.
	Precondition Preconditioner
	// Ceiling, when positive, is the most gradient noise per step the
	// correction leaves a coordinate at the end of burn-in, as a fraction
	// of the injected variance: a noisier coordinate's mass is multiplied
	// by b_i/(Ceiling inj) (NoiseMass), which divides its noise per step by
	// as much and its step by the square root, and its injected noise is
	// then corrected for the noise that is left. 0 changes no mass: a
	// coordinate whose noise exceeds the injected variance runs hot (the
	// correction of runs recorded before Ceiling).
	Ceiling float64
	// Track goes on estimating after burn-in: over each window of the
	// burn-in estimate's length (Window) after it, at whose end each
	// chain's injected noise is corrected by that window's estimate (the
	// masses stay as set at the end of burn-in). It is an adaptation
	// during sampling: the kernel of each window depends on the chain's
	// past, through a noise estimate only (the injected noise, never the
	// gradient, the friction or the mass), so that the total diffusion
	// stays the nominal one where the noise moves; a frozen estimate
	// leaves coordinates hot where it grows and cold where it shrinks. A
	// coordinate whose noise outgrows the injected variance still runs
	// hot (the ceiling's margin, 1 - Ceiling, is what it may grow by).
	// false freezes the correction at the end of burn-in (runs recorded
	// before Track). The estimate is checkpointed with the run (D floats
	// per chain).
	Track bool
}

// Window returns the steps (start, end] over which the gradient noise is
// estimated: from the last mass re-estimate (the mass changes the noise
// per step) or the middle of burn-in, to its end.
func (n Noise) Window() (start, end int) {
	start = n.BurnIn / 2
	if ends := MassWindowEnds(n.BurnIn); n.Precondition != PrecondNone && len(ends) > 0 {
		start = ends[len(ends)-1]
	}
	return start, n.BurnIn
}

// estimating reports whether the step after step (steps taken so far)
// adds to the estimate: in the burn-in's window, and with Track after it.
func (n Noise) estimating(step int) bool {
	start, end := n.Window()
	return step >= start && step < end || n.Track && step >= end
}

// windowEnd reports whether step (steps taken) ends an estimation window:
// the burn-in's, and with Track each later one of the same length.
func (n Noise) windowEnd(step int) bool {
	start, end := n.Window()
	return step == end || n.Track && step > end && (step-end)%(end-start) == 0
}

// Validate checks that kernel k has a friction to correct (SGNHT, SGHMC),
// that the step is fixed (no noise target, the noise-aware step: the
// estimate is of the noise at one step), that the window has at least 2
// steps and that Ceiling is in [0, 1].
func (n Noise) Validate(k sampler.Kernel, noiseTarget float64) error {
	if !n.Correct {
		return nil
	}
	if !(n.Ceiling >= 0 && n.Ceiling <= 1) {
		return fmt.Errorf("noise correction's ceiling %v: it must be in [0, 1] (0: none)", n.Ceiling)
	}
	if _, ok := k.(sampler.Frictional); !ok {
		return fmt.Errorf("noise correction needs an sgnht or sghmc kernel, not %s", k.Name())
	}
	if n.Ceiling > 0 && (n.Precondition == PrecondDense || n.Precondition == PrecondLowRank) {
		return fmt.Errorf("noise correction's ceiling raises a diagonal mass: a %s mass needs ceiling 0", n.Precondition)
	}
	if noiseTarget > 0 {
		return errors.New("noise correction needs a fixed step: it cannot be combined with a noise target")
	}
	if start, end := n.Window(); end-start < 2 {
		return fmt.Errorf("noise correction needs a burn-in (%d steps) with at least 2 steps after the last mass estimate", n.BurnIn)
	}
	return nil
}

// Start returns the estimates of chains at their first step, one per
// chain (nil without the correction).
func (n Noise) Start(chains []*sampler.State) []NoiseEstimate {
	if !n.Correct {
		return nil
	}
	est := make([]NoiseEstimate, len(chains))
	for j := range est {
		est[j].Sum = make([]float64, len(chains[j].Theta))
	}
	return est
}

// Check reports whether est are the estimates of c chains of dimension
// dim at step (for states restored from checkpoints): none are needed
// once the correction is set, unless it Tracks the noise.
func (n Noise) Check(step int, est []NoiseEstimate, c, dim int) error {
	if _, end := n.Window(); !n.Correct || step >= end && !n.Track {
		return nil
	}
	if len(est) != c {
		return fmt.Errorf("%d noise estimates for %d rungs", len(est), c)
	}
	for j, e := range est {
		if len(e.Sum) != dim || e.Count < 0 {
			return fmt.Errorf("rung %d's noise estimate has %d coordinates (count %d), the model has %d", j, len(e.Sum), e.Count, dim)
		}
	}
	return nil
}

// InjectionScale returns the per-coordinate multipliers of the injected
// noise's sd that correct for estimated gradient noise b (per step and
// coordinate) against an injected variance inj: sqrt(1 - b_i/inj), Chen et
// al. 2014's B-hat correction (inject 2 (C - B^) h) in the exact-friction
// form, so that the momentum of every coordinate receives inj in all. The
// estimate is used as it is, negative values included (the multiplier is
// then above 1), so that its statistical errors cancel over coordinates
// rather than add up to an over-correction; the multiplier is kept in [0,
// sqrt(2)]. A coordinate whose noise exceeds inj gets no injected noise and
// still runs hot.
func InjectionScale(b []float64, inj float64) []float64 {
	sc := make([]float64, len(b))
	for i, v := range b {
		sc[i] = math.Sqrt(math.Min(math.Max(1-v/inj, 0), 2))
	}
	return sc
}

// NoiseMass returns the factors by which Noise.Ceiling multiplies the
// masses of coordinates whose estimated gradient noise per step b_i
// exceeds ceiling times the injected variance inj: b_i/(ceiling inj),
// which brings their noise per step, h^2 Var[g~_i]/m_i, down to ceiling
// inj; 1 elsewhere. It returns nil when no factor exceeds 1 (ceiling <=
// 0: none).
func NoiseMass(b []float64, inj, ceiling float64) []float64 {
	if !(ceiling > 0) || !(inj > 0) {
		return nil
	}
	var f []float64
	for i, v := range b {
		if r := v / (ceiling * inj); r > 1 {
			if f == nil {
				f = make([]float64, len(b))
				for k := range f {
					f[k] = 1
				}
			}
			f[i] = r
		}
	}
	return f
}

// Arm points each chain's per-coordinate noise sums at its estimate
// while an estimation window runs, before the step after step (states
// restored from a checkpoint are re-armed here).
func (n Noise) Arm(step int, chains []*sampler.State, est []NoiseEstimate) {
	if !n.Correct {
		return
	}
	for j, s := range chains {
		s.SumNoise(nil)
		if n.estimating(step) && j < len(est) && len(est[j].Sum) == len(s.Theta) {
			s.SumNoise(est[j].Sum)
		}
	}
}

// Update counts the step just taken, step, into the noise estimates, and
// at the end of burn-in sets each chain's InjScale from its estimate (with
// the injected variance of kernels[j], the kernel chain j stepped with),
// after raising the masses of the coordinates noisier than Ceiling allows
// (NoiseMass); with Track it does the same, masses aside, at the end of
// every later window, and otherwise ends the estimation. It reports
// whether a correction was set (a driver's health watch then pairs no
// kick terms across the change). An error is a kernel without friction or
// a mass that SetMass refuses.
func (n Noise) Update(step int, chains []*sampler.State, est []NoiseEstimate, kernels []sampler.Kernel) (changed bool, err error) {
	if !n.Correct || !n.estimating(step-1) {
		return false, nil
	}
	_, end := n.Window()
	for j, s := range chains {
		e := &est[j]
		e.Count++
		if !n.windowEnd(step) {
			continue
		}
		fk, ok := kernels[j].(sampler.Frictional)
		if !ok {
			return changed, fmt.Errorf("rung %d: noise correction needs a kernel with friction, not %s", j, kernels[j].Name())
		}
		h, a := fk.Dynamics()
		inj := sampler.InjectedVariance(a, h)
		b := make([]float64, len(e.Sum))
		for i, v := range e.Sum {
			b[i] = v / float64(e.Count)
		}
		if step == end {
			if err := raiseMass(s, b, inj, n.Ceiling); err != nil {
				return changed, fmt.Errorf("rung %d: %w", j, err)
			}
		}
		s.InjScale = InjectionScale(b, inj)
		s.SumNoise(nil)
		if n.Track {
			// a new slice: a health watch reading this step's noise from
			// the sums (health.Health.ObserveCoords) may come after
			*e = NoiseEstimate{Sum: make([]float64, len(e.Sum))}
		} else {
			*e = NoiseEstimate{}
		}
		changed = true
	}
	return changed, nil
}

// raiseMass multiplies s's masses by NoiseMass(b, inj, ceiling) and
// divides the noise estimates b by the same factors (the noise per step
// at the new mass); it leaves s as it is when no coordinate is above the
// ceiling.
func raiseMass(s *sampler.State, b []float64, inj, ceiling float64) error {
	f := NoiseMass(b, inj, ceiling)
	if f == nil {
		return nil
	}
	switch s.MassMatrix().(type) {
	case nil, sampler.DiagonalMass:
	default:
		return fmt.Errorf("noise ceiling: a %T cannot be raised per coordinate (only a diagonal mass can)", s.MassMatrix())
	}
	m := make([]float64, len(f))
	for i, v := range f {
		m[i] = v
		if s.Mass != nil {
			m[i] *= s.Mass[i]
		}
		b[i] /= v
	}
	return s.SetMass(m)
}
