package sampler

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// massBench is a step of the mass benchmarks: a potential whose gradient
// costs D (so that the step's own cost shows), and a chain of dimension d
// with the mass m.
type massBench struct {
	d int
	m func(d int) MassMatrix
}

// benchGradient is U = |theta|^2/2: its gradient, a copy, costs D.
type benchGradient struct{ d int }

func (g benchGradient) Dim() int { return g.d }

func (g benchGradient) Gradient(theta, grad []float64, _ Minibatch, _ *rand.Rand) (float64, error) {
	copy(grad, theta)
	return 0, nil
}

// benchMass returns a mass of each kind for d coordinates: nil (unit),
// diagonal, dense (a random lower-triangular factor) and low-rank of rank
// k (random orthonormal directions).
func benchMass(kind string, d, k int) MassMatrix {
	rng := rand.New(rand.NewPCG(1, uint64(d)))
	switch kind {
	case "diagonal":
		m := make(DiagonalMass, d)
		for i := range m {
			m[i] = 1 + rng.Float64()
		}
		return m
	case "dense":
		c := make([]float64, d*d)
		for i := 0; i < d; i++ {
			for j := 0; j < i; j++ {
				c[i*d+j] = 0.01 * rng.NormFloat64()
			}
			c[i*d+i] = 1
		}
		return &DenseMass{N: d, Chol: c}
	case "lowrank":
		u := make([]float64, d*k)
		for j := 0; j < k; j++ { // orthonormal: disjoint supports
			n := 0.0
			for i := j; i < d; i += k {
				u[i*k+j] = rng.NormFloat64()
				n += u[i*k+j] * u[i*k+j]
			}
			for i := j; i < d; i += k {
				u[i*k+j] /= math.Sqrt(n)
			}
		}
		scale, lam := make([]float64, d), make([]float64, k)
		for i := range scale {
			scale[i] = 1
		}
		for j := range lam {
			lam[j] = 0.01
		}
		return &LowRankMass{Scale: scale, U: u, Lambda: lam}
	}
	return nil
}

// BenchmarkMassStep times one SGNHT step (gradient, kick, noise, drift,
// thermostat) of a chain of D coordinates with each mass, on a potential
// whose gradient is a copy (so the figures are the step's own cost):
// unit, diagonal, dense (2 D^2 multiply-adds: C' g and C q) and low-rank
// of rank 4 and 16 (4 D k). The diagonal mass steps in the fused loop of
// every run before the dense mass; the dense and low-rank ones in
// sgnhtStepper.factored. It reports ns per step and per coordinate.
//
//	go test -run XXX -bench MassStep -benchtime 2000x ./sampler/
func BenchmarkMassStep(b *testing.B) {
	for _, d := range []int{3, 26, 100, 300, 1000, 10000, 100000} {
		for _, tc := range []struct {
			kind string
			k    int
		}{{"unit", 0}, {"diagonal", 0}, {"dense", 0}, {"lowrank", 4}, {"lowrank", 16}} {
			if tc.kind == "dense" && d > 2048 || tc.kind == "lowrank" && tc.k >= d {
				continue
			}
			name := tc.kind
			if tc.k > 0 {
				name += "-" + strconv.Itoa(tc.k)
			}
			b.Run("D="+strconv.Itoa(d)+"/"+name, func(b *testing.B) {
				s := NewState(make([]float64, d))
				if m := benchMass(tc.kind, d, tc.k); m != nil {
					if err := s.SetMassMatrix(m); err != nil {
						b.Fatal(err)
					}
				}
				k := SGNHT{StepSize: 0.01, Diffusion: 10}
				rng := rand.New(rand.NewPCG(2, 3))
				k.Init(s, rng)
				pot := benchGradient{d}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := k.Step(s, pot, Minibatch{}, Hyper{}, rng); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/coord")
			})
		}
	}
}
