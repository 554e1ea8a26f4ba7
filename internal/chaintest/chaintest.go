// Package chaintest holds the helpers the samplers' statistical tests share
// (package tempering's and package driver's): a single chain stepped by
// hand, its sample moments, and a standard Gaussian's energy. Only tests
// import it.
package chaintest

import (
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// Moments returns the per-coordinate mean and variance of samples.
func Moments(xs [][]float64) (mean, variance []float64) {
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

// RunChain runs kernel k for n steps on pot at temperature temp and returns
// every thin-th position after burn steps: a single chain, stepped by hand,
// to compare PT with.
func RunChain(t testing.TB, k sampler.Kernel, pot sampler.Potential, theta0 []float64, temp float64, n, burn, thin int, seed uint64) [][]float64 {
	t.Helper()
	rng := sampler.NewStream(seed, 0)
	s := sampler.NewState(theta0)
	k.Init(s, rng.Rand)
	var xs [][]float64
	for i := 0; i < n; i++ {
		if err := k.Step(s, pot, sampler.Minibatch{}, sampler.At(temp), rng.Rand); err != nil {
			t.Fatal(err)
		}
		if i >= burn && i%thin == 0 {
			xs = append(xs, append([]float64(nil), s.Theta...))
		}
	}
	return xs
}

// HalfSquaredNorm returns x'x/2, the energy of a standard Gaussian.
func HalfSquaredNorm(x []float64) float64 {
	u := 0.0
	for _, v := range x {
		u += 0.5 * v * v
	}
	return u
}
