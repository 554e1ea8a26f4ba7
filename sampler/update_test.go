package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUnitUpdateVectorSame: the SGNHT update gives the same positions,
// momenta, thermostat, kick sums and noise sums, bit for bit, with the
// vector paths as with the Go loops, for the unit-mass update and the
// general one (a mass, a per-coordinate noise scale, both, and with the
// noise sums, which stay in Go), over lengths that end inside a block of 8
// and values of very different sizes (where a fused multiply-add or another
// order of the sums would show).
func TestUnitUpdateVectorSame(t *testing.T) {
	defer func() { vectorUpdate = true }()
	cases := []struct {
		name             string
		mass, scale, acc bool
	}{
		{name: "unit"},
		{name: "mass", mass: true},
		{name: "noise scale", scale: true},
		{name: "mass and noise scale", mass: true, scale: true},
		{name: "noise sums", scale: true, acc: true},
	}
	for _, tc := range cases {
		for _, d := range []int{1, 7, 8, 9, 255, 256, 257, 1000, 5003} {
			run := func(vec bool) (theta, p, acc []float64, xi, kin, after float64, work [3]float64) {
				vectorUpdate = vec
				rng := rand.New(rand.NewPCG(uint64(d), 9))
				theta, p = make([]float64, d), make([]float64, d)
				grad := make([]float64, d)
				for i := range theta {
					theta[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-6))
					p[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-4))
					grad[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(16)-8))
				}
				var r, sc []float64
				if tc.mass {
					r = make([]float64, d)
					for i := range r {
						r[i] = math.Exp(rng.NormFloat64() * 3)
					}
				}
				if tc.scale {
					sc = make([]float64, d)
					for i := range sc {
						sc[i] = math.Sqrt(2) * rng.Float64()
					}
				}
				if tc.acc {
					acc = make([]float64, d)
				}
				xi = 3.7
				for range 3 {
					var u sgnhtStepper
					u.reset(xi, 1e-3, 2.5, temperCoef{grad: 1 / 0.3, pos: 1}, rng)
					u.r, u.nsc, u.nacc = r, sc, acc
					u.chunk(theta, p, grad)
					xi, kin, after = u.finish(d, 0.5)
					work = [3]float64{u.wb, u.wa, u.wk}
				}
				return theta, p, acc, xi, kin, after, work
			}
			th0, p0, n0, xi0, k0, a0, w0 := run(false)
			th1, p1, n1, xi1, k1, a1, w1 := run(true)
			for i := range th0 {
				if th0[i] != th1[i] || p0[i] != p1[i] {
					t.Fatalf("%s, d %d coordinate %d: theta %v p %v with the vector path, %v %v without", tc.name, d, i, th1[i], p1[i], th0[i], p0[i])
				}
			}
			for i := range n0 {
				if n0[i] != n1[i] {
					t.Fatalf("%s, d %d coordinate %d: noise sum %v with the vector path, %v without", tc.name, d, i, n1[i], n0[i])
				}
			}
			if xi0 != xi1 || k0 != k1 || a0 != a1 || w0 != w1 {
				t.Fatalf("%s, d %d: sums differ: xi %v %v, kinetic %v %v, after %v %v, work %v %v", tc.name, d, xi1, xi0, k1, k0, a1, a0, w1, w0)
			}
		}
	}
}

// TestScaledUnitSame: the general update with a noise scale of ones and no
// mass gives the unit-mass update's bits (multiplying by one is exact), so
// a run's samples do not depend on which loop took a step.
func TestScaledUnitSame(t *testing.T) {
	const d = 1001
	run := func(ones bool) (theta, p []float64, kin float64) {
		rng := rand.New(rand.NewPCG(3, 4))
		theta, p = make([]float64, d), make([]float64, d)
		grad := make([]float64, d)
		for i := range theta {
			theta[i], p[i], grad[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()*100
		}
		var u sgnhtStepper
		u.reset(0.5, 1e-2, 1, temperCoef{grad: 10, pos: 1}, rng)
		if ones {
			u.nsc = make([]float64, d)
			for i := range u.nsc {
				u.nsc[i] = 1
			}
		}
		u.chunk(theta, p, grad)
		return theta, p, u.kin
	}
	th0, p0, k0 := run(false)
	th1, p1, k1 := run(true)
	for i := range th0 {
		if th0[i] != th1[i] || p0[i] != p1[i] {
			t.Fatalf("coordinate %d: theta %v p %v with scale ones, %v %v without", i, th1[i], p1[i], th0[i], p0[i])
		}
	}
	if k0 != k1 {
		t.Fatalf("kinetic sum %v with scale ones, %v without", k1, k0)
	}
}

// BenchmarkUnitUpdatePaths times the unit-mass update of a 784-400-400-10
// network's parameters (its noise drawn outside the timer) and the update
// with a per-coordinate noise scale (--noise-correction's after burn-in),
// with and without the vector paths.
func BenchmarkUnitUpdatePaths(b *testing.B) {
	defer func() { vectorUpdate = true }()
	const d = 478410
	theta, p, grad, z := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
	ns.fill(z)
	ns.fill(grad)
	sc := make([]float64, d)
	for i := range sc {
		sc[i] = 0.9
	}
	for _, scaled := range []bool{false, true} {
		for _, vec := range []bool{false, true} {
			name := "unit/go"
			if scaled {
				name = "noise-scale/go"
			}
			if vec {
				name = name[:len(name)-2] + "vector"
			}
			b.Run(name, func(b *testing.B) {
				vectorUpdate = vec
				for b.Loop() {
					var u sgnhtStepper
					u.reset(1, 1e-3, 1, temperCoef{grad: 1, pos: 1}, nil)
					u.seeded, u.ahead = true, &noiseJob{buf: z}
					u.ahead.ready.Store(d)
					if scaled {
						u.nsc = sc
					}
					u.chunk(theta, p, grad)
				}
			})
		}
	}
}
