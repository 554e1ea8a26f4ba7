package sampler

import (
	"math"
	"testing"
)

// moments returns the per-coordinate mean and variance of samples.
func moments(xs [][]float64) (mean, variance []float64) {
	d := len(xs[0])
	mean, variance = make([]float64, d), make([]float64, d)
	for _, x := range xs {
		for i, v := range x {
			mean[i] += v / float64(len(xs))
		}
	}
	for _, x := range xs {
		for i, v := range x {
			variance[i] += (v - mean[i]) * (v - mean[i]) / float64(len(xs)-1)
		}
	}
	return mean, variance
}

// runChain runs kernel k for n steps on pot at temperature temp and returns
// every thin-th position after burn steps.
func runChain(t *testing.T, k Kernel, pot Potential, theta0 []float64, temp float64, n, burn, thin int, seed uint64) [][]float64 {
	t.Helper()
	rng := NewStream(seed, 0)
	s := NewState(theta0)
	k.Init(s, rng.Rand)
	var xs [][]float64
	for i := 0; i < n; i++ {
		if err := k.Step(s, pot, Minibatch{}, At(temp), rng.Rand); err != nil {
			t.Fatal(err)
		}
		if i >= burn && i%thin == 0 {
			xs = append(xs, append([]float64(nil), s.Theta...))
		}
	}
	return xs
}

// TestKernelsGaussian checks the mean and variance each sampler reaches on a
// Gaussian target with noisy gradients. The noise (variance 4 per
// coordinate) is large enough that SGNHT without its thermostat (SGHMC with
// the same friction) overestimates the variance by about 20%: the
// "no thermostat" case must fail the tolerance SGNHT meets.
func TestKernelsGaussian(t *testing.T) {
	target := &Gaussian{Mean: []float64{1, -2}, Var: []float64{1, 4}, NoiseVar: 4}
	quiet := &Gaussian{Mean: []float64{1, -2}, Var: []float64{1, 4}, NoiseVar: 0.1}
	cases := []struct {
		name   string
		k      Kernel
		pot    *Gaussian
		temp   float64
		wantOK bool
	}{
		{"sgnht", SGNHT{StepSize: 0.1, Diffusion: 1}, target, 1, true},
		{"sgnht T=2", SGNHT{StepSize: 0.1, Diffusion: 1}, target, 2, true},
		{"sgnht low noise", SGNHT{StepSize: 0.1, Diffusion: 1}, quiet, 1, true},
		{"sghmc low noise", SGHMC{StepSize: 0.1, Friction: 1}, quiet, 1, true},
		{"sgld low noise", SGLD{StepSize: 0.02}, quiet, 1, true},
		{"hmc", HMC{StepSize: 0.3, Leapfrog: 5}, quiet, 1, true},
		// The thermostat removed: must fail.
		{"sghmc high noise (no thermostat)", SGHMC{StepSize: 0.1, Friction: 1}, target, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 400000
			if _, ok := c.k.(HMC); ok {
				n = 60000
			}
			xs := runChain(t, c.k, c.pot, []float64{0, 0}, c.temp, n, 5000, 5, 42)
			mean, variance := moments(xs)
			ok := true
			for i := range mean {
				wantVar := c.pot.Var[i] * c.temp
				if math.Abs(mean[i]-c.pot.Mean[i]) > 0.1*math.Sqrt(wantVar) || math.Abs(variance[i]/wantVar-1) > 0.07 {
					ok = false
				}
			}
			if ok != c.wantOK {
				t.Fatalf("mean %.3f variance %.3f (target mean %v var %v at T=%v): within tolerance = %v, want %v",
					mean, variance, c.pot.Mean, c.pot.Var, c.temp, ok, c.wantOK)
			}
		})
	}
}
