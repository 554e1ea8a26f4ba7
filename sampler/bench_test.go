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

// BenchmarkNormals compares the kernels' Gaussian generator with the
// standard library's.
func BenchmarkNormals(b *testing.B) {
	b.Run("ziggurat-wyrand", func(b *testing.B) {
		ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
		s := 0.0
		for i := 0; i < b.N; i++ {
			s += ns.norm()
		}
		_ = s
	})
	b.Run("math-rand-v2", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		s := 0.0
		for i := 0; i < b.N; i++ {
			s += rng.NormFloat64()
		}
		_ = s
	})
}

// BenchmarkNormalFill times the buffered generator SGNHTUpdate uses, per
// variate.
func BenchmarkNormalFill(b *testing.B) {
	ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
	buf := make([]float64, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i += len(buf) {
		ns.fill(buf)
	}
}
