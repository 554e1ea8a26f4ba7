package sampler

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSGNHTUpdate times one SGNHT update (with its 478,410 Gaussian
// draws) of a 784-400-400-10 network's parameters.
func BenchmarkSGNHTUpdate(b *testing.B) {
	const d = 478410
	rng := rand.New(rand.NewPCG(1, 2))
	theta, p, grad := make([]float64, d), make([]float64, d), make([]float64, d)
	b.SetBytes(d * 8 * 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		SGNHTUpdate(theta, p, grad, 10, 1e-3, 10, 1, 100, rng)
	}
}

// BenchmarkNormFloat64 times the Gaussian generator the kernels use.
func BenchmarkNormFloat64(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := 0.0
	for i := 0; i < b.N; i++ {
		s += rng.NormFloat64()
	}
	_ = s
}
