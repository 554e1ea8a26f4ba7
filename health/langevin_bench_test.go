package health

import (
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// BenchmarkLangevinObserve times the SGLD watch's work a step on a chain
// of 784-32-10's 25,450 coordinates (a diagonal mass), the per-step price
// of watching SGLD, to set beside the step's own (BenchmarkSGLDStep in
// package sampler, or train's steps/s).
func BenchmarkLangevinObserve(b *testing.B) {
	const d = 25450
	rng := rand.New(rand.NewPCG(1, 2))
	s := sampler.NewState(make([]float64, d))
	mass := make([]float64, d)
	for i := range mass {
		mass[i] = 0.5 + rng.Float64()
		s.Theta[i] = rng.NormFloat64()
	}
	if err := s.SetMass(mass); err != nil {
		b.Fatal(err)
	}
	s.Grad = make([]float64, d)
	var w LangevinWatch
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range s.Grad {
			s.Grad[j] = float64(j%7) - 3
			s.Theta[j] += 1e-3
		}
		w.observe(s, 1e-3, 2e-3)
	}
}
