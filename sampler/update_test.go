package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUnitUpdateVectorSame: the unit-mass SGNHT update gives the same
// positions, momenta, thermostat and kick sums, bit for bit, with the vector
// path as with the Go loop, over lengths that end inside a block of 8 and
// values of very different sizes (where a fused multiply-add or another
// order of the sums would show).
func TestUnitUpdateVectorSame(t *testing.T) {
	defer func() { vectorUpdate = true }()
	for _, d := range []int{1, 7, 8, 9, 255, 256, 257, 1000, 5003} {
		run := func(vec bool) (theta, p []float64, xi, kin, after float64, work [3]float64) {
			vectorUpdate = vec
			rng := rand.New(rand.NewPCG(uint64(d), 9))
			theta, p = make([]float64, d), make([]float64, d)
			grad := make([]float64, d)
			for i := range theta {
				theta[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-6))
				p[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-4))
				grad[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(16)-8))
			}
			xi = 3.7
			for range 3 {
				var u sgnhtStepper
				u.reset(xi, 1e-3, 2.5, temperCoef{grad: 1 / 0.3, pos: 1}, rng)
				u.chunk(theta, p, grad)
				xi, kin, after = u.finish(d, 0.5)
				work = [3]float64{u.wb, u.wa, u.wk}
			}
			return theta, p, xi, kin, after, work
		}
		th0, p0, xi0, k0, a0, w0 := run(false)
		th1, p1, xi1, k1, a1, w1 := run(true)
		for i := range th0 {
			if th0[i] != th1[i] || p0[i] != p1[i] {
				t.Fatalf("d %d coordinate %d: theta %v p %v with the vector path, %v %v without", d, i, th1[i], p1[i], th0[i], p0[i])
			}
		}
		if xi0 != xi1 || k0 != k1 || a0 != a1 || w0 != w1 {
			t.Fatalf("d %d: sums differ: xi %v %v, kinetic %v %v, after %v %v, work %v %v", d, xi1, xi0, k1, k0, a1, a0, w1, w0)
		}
	}
}

// BenchmarkUnitUpdatePaths times the unit-mass update of a 784-400-400-10
// network's parameters (its noise drawn outside the timer) with and
// without the vector path.
func BenchmarkUnitUpdatePaths(b *testing.B) {
	defer func() { vectorUpdate = true }()
	const d = 478410
	theta, p, grad, z := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
	ns.fill(z)
	ns.fill(grad)
	for _, vec := range []bool{false, true} {
		name := "go"
		if vec {
			name = "vector"
		}
		b.Run(name, func(b *testing.B) {
			vectorUpdate = vec
			for b.Loop() {
				var u sgnhtStepper
				u.reset(1, 1e-3, 1, temperCoef{grad: 1, pos: 1}, nil)
				u.seeded, u.ahead = true, &noiseJob{buf: z}
				u.ahead.ready.Store(d)
				u.chunk(theta, p, grad)
			}
		})
	}
}
