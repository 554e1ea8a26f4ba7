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

// Validate checks that kernel k has a friction to correct (SGNHT, SGHMC),
// that the step is fixed (no noise target, the noise-aware step: the
// estimate is of the noise at one step) and that the window has at least 2
// steps.
func (n Noise) Validate(k sampler.Kernel, noiseTarget float64) error {
	if !n.Correct {
		return nil
	}
	if _, ok := k.(sampler.Frictional); !ok {
		return fmt.Errorf("noise correction needs an sgnht or sghmc kernel, not %s", k.Name())
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
// once the correction is set.
func (n Noise) Check(step int, est []NoiseEstimate, c, dim int) error {
	if _, end := n.Window(); !n.Correct || step >= end {
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

// Arm points each chain's per-coordinate noise sums at its estimate
// while the estimation window runs, before the step after step (states
// restored from a checkpoint are re-armed here).
func (n Noise) Arm(step int, chains []*sampler.State, est []NoiseEstimate) {
	if !n.Correct {
		return
	}
	start, end := n.Window()
	for j, s := range chains {
		s.SumNoise(nil)
		if step >= start && step < end && j < len(est) && len(est[j].Sum) == len(s.Theta) {
			s.SumNoise(est[j].Sum)
		}
	}
}

// Update counts the step just taken, step, into the noise estimates, and
// at the end of burn-in sets each chain's InjScale from its estimate (with
// the injected variance of kernels[j], the kernel chain j stepped with)
// and ends the estimation. It reports whether the correction was set (a
// driver's health watch then pairs no kick terms across the change).
func (n Noise) Update(step int, chains []*sampler.State, est []NoiseEstimate, kernels []sampler.Kernel) (changed bool, err error) {
	if !n.Correct {
		return false, nil
	}
	start, end := n.Window()
	if step <= start || step > end {
		return false, nil
	}
	for j, s := range chains {
		e := &est[j]
		e.Count++
		if step < end {
			continue
		}
		fk, ok := kernels[j].(sampler.Frictional)
		if !ok {
			return changed, fmt.Errorf("rung %d: noise correction needs a kernel with friction, not %s", j, kernels[j].Name())
		}
		h, a := fk.Dynamics()
		b := make([]float64, len(e.Sum))
		for i, v := range e.Sum {
			b[i] = v / float64(e.Count)
		}
		s.InjScale = InjectionScale(b, sampler.InjectedVariance(a, h))
		s.SumNoise(nil)
		*e = NoiseEstimate{}
		changed = true
	}
	return changed, nil
}
