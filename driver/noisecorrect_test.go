package driver

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// coordNoiseGauss is a standard Gaussian whose gradient carries white noise
// of a per-coordinate variance NoiseVar[i].
type coordNoiseGauss struct{ NoiseVar []float64 }

func (g coordNoiseGauss) Dim() int { return len(g.NoiseVar) }

func (g coordNoiseGauss) Gradient(theta, grad []float64, _ sampler.Minibatch, rng *rand.Rand) (float64, error) {
	u := 0.0
	for i, x := range theta {
		u += x * x / 2
		grad[i] = x + math.Sqrt(g.NoiseVar[i])*rng.NormFloat64()
	}
	return u, nil
}

// TestNoiseCorrectionHotCold shows the hot and cold coordinates of one
// scalar thermostat under uneven gradient noise, and their removal by the
// per-coordinate noise correction. On a 40-dimensional standard Gaussian
// whose first 20 coordinates' gradients carry noise of variance 12 (h^2 V
// = 0.12 per step against 0.19 injected) and the others none, SGNHT's
// thermostat absorbs the mean heating: the noisy coordinates run hot (by
// about (0.19 + 0.12)/(0.19 + 0.06), variance 1.2) and the quiet ones cold
// (0.19/0.25, 0.8). With NoiseCorrection the per-coordinate estimate b_i
// (about 0.12 and 0) lowers the injected noise of the noisy coordinates
// and every coordinate's variance is 1 within 5%.
func TestNoiseCorrectionHotCold(t *testing.T) {
	const d, half, h = 40, 20, 0.1
	nv := make([]float64, d)
	for i := 0; i < half; i++ {
		nv[i] = 12
	}
	pot := coordNoiseGauss{NoiseVar: nv}
	for _, correct := range []bool{false, true} {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}, Temps: []float64{1}, Workers: 1, BurnIn: 40000, HealthWindow: 10000, NoiseCorrection: correct})
		st, err := pt.Init([][]float64{make([]float64, d)}, 3)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, d)
		n := 0
		err = pt.Run([]sampler.Potential{pot}, nil, st, 240000, func(s *tempering.PTState) error {
			if s.Steps > pt.BurnIn {
				for i, x := range s.Rungs[0].Theta {
					v[i] += x * x
				}
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		noisy, quiet := 0.0, 0.0
		for i := range v {
			v[i] /= float64(n)
			if i < half {
				noisy += v[i] / half
			} else {
				quiet += v[i] / (d - half)
			}
		}
		sc := st.Rungs[0].InjScale
		t.Logf("correction %v: variance of the noisy coordinates %.3f, of the quiet ones %.3f; injection scales %.3f (noisy), %.3f (quiet); health %v",
			correct, noisy, quiet, meanOf(sc, 0, half), meanOf(sc, half, d), st.Stats.Health[0].Last)
		if !correct {
			if noisy < 1.12 || quiet > 0.88 {
				t.Errorf("without correction the noisy coordinates (%.3f) should run hot and the quiet ones (%.3f) cold", noisy, quiet)
			}
			continue
		}
		for i, x := range v {
			if math.Abs(x-1) > 0.1 {
				t.Errorf("coordinate %d: variance %.3f with the correction, want 1", i, x)
			}
		}
		if math.Abs(noisy-1) > 0.05 || math.Abs(quiet-1) > 0.05 {
			t.Errorf("with the correction: noisy %.3f, quiet %.3f, want both 1 within 5%%", noisy, quiet)
		}
	}
}

// meanOf returns the mean of x[lo:hi] (NaN for nil x).
func meanOf(x []float64, lo, hi int) float64 {
	if x == nil {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x[lo:hi] {
		s += v
	}
	return s / float64(hi-lo)
}
