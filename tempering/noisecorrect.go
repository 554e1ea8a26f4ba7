package tempering

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// NoiseEstimate is one rung's running per-coordinate estimate of the
// gradient noise that enters its momentum, h^2 Var[g~_i]/(m_i T) per step
// (in the units of State.P): Sum holds Count steps' estimates (see
// sgnhtStepper.general). Plain data, checkpointed with the run.
type NoiseEstimate struct {
	Count int
	Sum   []float64
}

// noiseWindow returns the steps (start, end] over which PT.NoiseCorrection
// estimates the gradient noise: from the last mass re-estimate (the mass
// changes the noise per step) or the middle of burn-in, to its end.
func (pt *PT) noiseWindow() (start, end int) {
	start = pt.BurnIn / 2
	if ends := MassWindowEnds(pt.BurnIn); pt.Precondition != PrecondNone && len(ends) > 0 {
		start = ends[len(ends)-1]
	}
	return start, pt.BurnIn
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

// armNoise points each rung's per-coordinate noise sums at its estimate
// while the estimation window runs (states restored from a checkpoint are
// re-armed here).
func (pt *PT) armNoise(st *PTState) {
	if !pt.NoiseCorrection {
		return
	}
	start, end := pt.noiseWindow()
	for j, s := range st.Rungs {
		s.SumNoise(nil)
		if st.Steps >= start && st.Steps < end && j < len(st.Noise) && len(st.Noise[j].Sum) == len(s.Theta) {
			s.SumNoise(st.Noise[j].Sum)
		}
	}
}

// correctNoise counts the step just taken into the noise estimates, and at
// the end of burn-in sets each rung's InjScale from its estimate (with the
// rung's kernel's injected variance inj[j]) and ends the estimation.
func (pt *PT) correctNoise(st *PTState, kernels []sampler.Kernel) error {
	if !pt.NoiseCorrection {
		return nil
	}
	start, end := pt.noiseWindow()
	if st.Steps <= start || st.Steps > end {
		return nil
	}
	for j, s := range st.Rungs {
		e := &st.Noise[j]
		e.Count++
		if st.Steps < end {
			continue
		}
		fk, ok := kernels[j].(sampler.Frictional)
		if !ok {
			return fmt.Errorf("rung %d: noise correction needs a kernel with friction, not %s", j, kernels[j].Name())
		}
		h, a := fk.Dynamics()
		b := make([]float64, len(e.Sum))
		for i, v := range e.Sum {
			b[i] = v / float64(e.Count)
		}
		s.InjScale = InjectionScale(b, sampler.InjectedVariance(a, h))
		s.SumNoise(nil)
		*e = NoiseEstimate{}
		st.Stats.Health[j].PrevWork.Valid = false
	}
	return nil
}
