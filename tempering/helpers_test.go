package tempering

import (
	"bytes"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
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
// every thin-th position after burn steps: a single chain, stepped by hand,
// to compare PT with.
func runChain(t *testing.T, k sampler.Kernel, pot sampler.Potential, theta0 []float64, temp float64, n, burn, thin int, seed uint64) [][]float64 {
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

// halfSquaredNorm returns x'x/2, the energy of a standard Gaussian.
func halfSquaredNorm(x []float64) float64 {
	u := 0.0
	for _, v := range x {
		u += 0.5 * v * v
	}
	return u
}

// sameChains fails t when two PT states' rungs (theta, p, xi, U) or random
// streams differ, saying how they came to be compared (what).
func sameChains(t *testing.T, a, b *PTState, what string) {
	t.Helper()
	for r := range a.Rungs {
		x, y := a.Rungs[r], b.Rungs[r]
		if !slices.Equal(x.Theta, y.Theta) || !slices.Equal(x.P, y.P) || x.Xi != y.Xi || x.U != y.U {
			t.Fatalf("rung %d differs %s", r, what)
		}
	}
	for j := range a.Streams {
		sa, _ := a.Streams[j].MarshalBinary()
		sb, _ := b.Streams[j].MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("stream %d differs %s", j, what)
		}
	}
}
