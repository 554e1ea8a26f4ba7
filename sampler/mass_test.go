package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// columns returns the n x n matrix whose column i is f(e_i), row-major.
func columns(n int, f func(dst, x []float64)) []float64 {
	out := make([]float64, n*n)
	e, dst := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		clear(e)
		e[i] = 1
		f(dst, e)
		for r := 0; r < n; r++ {
			out[r*n+i] = dst[r]
		}
	}
	return out
}

// mulT returns A B' of n x n row-major matrices.
func mulT(a, b []float64, n int) []float64 {
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += a[i*n+k] * b[j*n+k]
			}
			out[i*n+j] = s
		}
	}
	return out
}

// orthonormal returns k orthonormal random vectors of dimension d as a
// d x k row-major matrix (Gram-Schmidt).
func orthonormal(d, k int, rng *rand.Rand) []float64 {
	cols := make([][]float64, k)
	for j := range cols {
		v := make([]float64, d)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for _, u := range cols[:j] {
			p := dot(u, v)
			for i := range v {
				v[i] -= p * u[i]
			}
		}
		nv := math.Sqrt(dot(v, v))
		for i := range v {
			v[i] /= nv
		}
		cols[j] = v
	}
	out := make([]float64, d*k)
	for i := 0; i < d; i++ {
		for j := 0; j < k; j++ {
			out[i*k+j] = cols[j][i]
		}
	}
	return out
}

// TestMassMatrixFactor checks each mass's products against its matrix:
// Kick is C' (the transpose of Velocity's C) and C C' = M^-1.
func TestMassMatrixFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const d = 5
	// a covariance with correlations up to 0.998 and sds 1e-2 to 1e3
	u := orthonormal(d, d, rng)
	cov := make([]float64, d*d)
	eig := []float64{1e6, 30, 1, 0.1, 1e-4}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				cov[i*d+j] += u[i*d+k] * eig[k] * u[j*d+k]
			}
		}
	}
	dense, err := NewDenseMass(cov, d)
	if err != nil {
		t.Fatal(err)
	}
	lowU := orthonormal(d, 2, rng)
	low := &LowRankMass{Scale: []float64{0.5, 2, 1, 3, 0.1}, U: lowU, Lambda: []float64{40, 0.01}}
	lowInv := make([]float64, d*d) // S (I + U (Lambda - 1) U') S
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v := 0.0
			if i == j {
				v = 1
			}
			for k, l := range low.Lambda {
				v += (l - 1) * lowU[i*2+k] * lowU[j*2+k]
			}
			lowInv[i*d+j] = low.Scale[i] * v * low.Scale[j]
		}
	}
	diag := DiagonalMass{4, 1, 0.25, 100, 1e-4}
	diagInv := make([]float64, d*d)
	for i, m := range diag {
		diagInv[i*d+i] = 1 / m
	}
	for _, tc := range []struct {
		name string
		m    MassMatrix
		inv  []float64
	}{
		{"diagonal", diag, diagInv},
		{"dense", dense, cov},
		{"low-rank", low, lowInv},
	} {
		c := columns(d, tc.m.Velocity)
		ct := columns(d, tc.m.Kick)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				if math.Abs(ct[i*d+j]-c[j*d+i]) > 1e-12*math.Max(1, math.Abs(c[j*d+i])) {
					t.Errorf("%s: Kick (%d, %d) = %v, Velocity's transpose %v", tc.name, i, j, ct[i*d+j], c[j*d+i])
				}
			}
		}
		got := mulT(c, c, d)
		for i := range got {
			scale := math.Sqrt(math.Abs(tc.inv[(i/d)*d+i/d] * tc.inv[(i%d)*d+i%d]))
			if math.Abs(got[i]-tc.inv[i]) > 1e-9*scale {
				t.Errorf("%s: (C C')[%d, %d] = %v, M^-1 %v", tc.name, i/d, i%d, got[i], tc.inv[i])
			}
		}
		s := NewState(make([]float64, d))
		if err := s.SetMassMatrix(tc.m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.MassMatrix() == nil {
			t.Errorf("%s: no mass after SetMassMatrix", tc.name)
		}
	}
}

// TestMassMatrixChecks checks the errors of unusable masses.
func TestMassMatrixChecks(t *testing.T) {
	s := NewState(make([]float64, 2))
	for _, tc := range []struct {
		name string
		m    MassMatrix
	}{
		{"dense of the wrong size", &DenseMass{N: 3, Chol: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}}},
		{"dense above the diagonal", &DenseMass{N: 2, Chol: []float64{1, 1, 0, 1}}},
		{"dense with a zero pivot", &DenseMass{N: 2, Chol: []float64{1, 0, 0, 0}}},
		{"low-rank not orthonormal", &LowRankMass{Scale: []float64{1, 1}, U: []float64{1, 1}, Lambda: []float64{2}}},
		{"low-rank eigenvalue 0", &LowRankMass{Scale: []float64{1, 1}, U: []float64{1, 0}, Lambda: []float64{0}}},
		{"low-rank scale NaN", &LowRankMass{Scale: []float64{1, math.NaN()}, U: []float64{1, 0}, Lambda: []float64{2}}},
	} {
		if err := s.SetMassMatrix(tc.m); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := NewDenseMass([]float64{1, 2, 2, 1}, 2); err == nil {
		t.Error("NewDenseMass accepted an indefinite matrix")
	}
}

// TestFactoredMatchesDiagonal steps SGNHT, SGHMC and SGLD chains with a
// diagonal mass two ways: the kernels' fused diagonal loop (SetMass) and
// the non-diagonal path with the same mass as a DenseMass and as a
// LowRankMass of rank 0. They must agree to rounding over 200 steps.
func TestFactoredMatchesDiagonal(t *testing.T) {
	m, scale, dense := diagonalAsDense(t)
	pot := &Gaussian{Mean: []float64{1, -1, 0, 2}, Var: []float64{0.3, 2, 0.01, 1}, NoiseVar: 0.5}
	for _, k := range []Kernel{
		SGNHT{StepSize: 0.05, Diffusion: 2},
		SGHMC{StepSize: 0.05, Friction: 2},
		SGLD{StepSize: 0.002},
	} {
		run := func(set func(s *State) error) *State {
			s := NewState([]float64{0.5, 0.5, 0.5, 0.5})
			if err := set(s); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			k.Init(s, rng)
			for i := 0; i < 200; i++ {
				if err := k.Step(s, pot, Minibatch{}, Hyper{Temp: 1.5}, rng); err != nil {
					t.Fatal(err)
				}
			}
			return s
		}
		want := run(func(s *State) error { return s.SetMass(m) })
		for name, mm := range map[string]MassMatrix{"dense": dense, "low-rank": &LowRankMass{Scale: scale}} {
			got := run(func(s *State) error { return s.SetMassMatrix(mm) })
			for i := range want.Theta {
				if math.Abs(got.Theta[i]-want.Theta[i]) > 1e-9 || math.Abs(got.P[i]-want.P[i]) > 1e-9 {
					t.Errorf("%s, %s mass: coordinate %d at (%v, %v), diagonal (%v, %v)", k.Name(), name, i, got.Theta[i], got.P[i], want.Theta[i], want.P[i])
				}
			}
			if math.Abs(got.Xi-want.Xi) > 1e-9 || math.Abs(got.Kinetic-want.Kinetic) > 1e-9 {
				t.Errorf("%s, %s mass: xi %v kinetic %v, diagonal %v %v", k.Name(), name, got.Xi, got.Kinetic, want.Xi, want.Kinetic)
			}
		}
	}
}

// TestDenseMassCorrelated runs SGNHT on a Gaussian of correlation 0.998
// (earnings' intercept and slope), sds 1 and 100, with gradient noise
// shaped as a minibatch's, with the exact dense mass (M^-1 the covariance
// over its smallest eigenvalue: the stiffest direction at unit mass's
// pace) and with the exact diagonal of the precision (rmsprop's mass
// from exact gradients), at the same step and number of steps. The
// dense chain's sds along both eigen-directions are within 3%; the
// diagonal chain's wide direction, 700 times slower than its stiff one,
// has not mixed.
func TestDenseMassCorrelated(t *testing.T) {
	const rho = 0.998
	sd := []float64{1, 100}
	cov := []float64{sd[0] * sd[0], rho * sd[0] * sd[1], rho * sd[0] * sd[1], sd[1] * sd[1]}
	// eigen-decomposition of the 2 x 2 covariance
	tr, det := cov[0]+cov[3], cov[0]*cov[3]-cov[1]*cov[1]
	lmax := tr/2 + math.Sqrt(tr*tr/4-det)
	lmin := det / lmax
	vmax := []float64{cov[1], lmax - cov[0]}
	n := math.Hypot(vmax[0], vmax[1])
	vmax[0], vmax[1] = vmax[0]/n, vmax[1]/n
	vmin := []float64{-vmax[1], vmax[0]}
	pot, err := NewCorrelatedGaussian([]float64{0, 0}, cov, 0)
	if err != nil {
		t.Fatal(err)
	}
	// the unit-mass chain's stiffest curvature is 1/lmin: omega h = 0.2
	h := 0.2 * math.Sqrt(lmin)
	pot.NoiseVar = 0.5 * InjectedVariance(0.1/h, h) / (h * h / lmin) // half the injected noise per direction (dense)
	inv := []float64{cov[0] / lmin, cov[1] / lmin, cov[2] / lmin, cov[3] / lmin}
	dense, err := NewDenseMass(inv, 2)
	if err != nil {
		t.Fatal(err)
	}
	prec := []float64{cov[3] / det, cov[0] / det} // the precision's diagonal
	ref := math.Max(prec[0], prec[1])
	diag := DiagonalMass{prec[0] / ref, prec[1] / ref}
	k := SGNHT{StepSize: h, Diffusion: 0.1 / h}
	for _, tc := range []struct {
		name  string
		m     MassMatrix
		right bool
	}{{"dense", dense, true}, {"diagonal", diag, false}} {
		s := NewState([]float64{0, 0})
		if err := s.SetMassMatrix(tc.m); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 8))
		k.Init(s, rng)
		var sum, sq [2]float64
		const burn, steps = 20000, 400000
		for i := 0; i < burn+steps; i++ {
			if err := k.Step(s, pot, Minibatch{}, Hyper{}, rng); err != nil {
				t.Fatal(err)
			}
			if i < burn {
				continue
			}
			for j, v := range [][]float64{vmax, vmin} {
				x := dot(v, s.Theta)
				sum[j] += x
				sq[j] += x * x
			}
		}
		var ratio [2]float64
		for j, l := range []float64{lmax, lmin} {
			m := sum[j] / steps
			ratio[j] = math.Sqrt((sq[j]/steps-m*m)/l) - 1
		}
		worst := math.Max(math.Abs(ratio[0]), math.Abs(ratio[1]))
		t.Logf("%s mass: sd along the wide direction %+.1f%%, the stiff one %+.1f%%", tc.name, 100*ratio[0], 100*ratio[1])
		if tc.right && worst > 0.03 {
			t.Errorf("%s mass: sds off by %+.1f%% and %+.1f%%", tc.name, 100*ratio[0], 100*ratio[1])
		}
		if !tc.right && worst < 0.10 {
			t.Errorf("%s mass: sds off by only %+.1f%% and %+.1f%%: the test no longer tells the masses apart", tc.name, 100*ratio[0], 100*ratio[1])
		}
	}
}

// TestSaveKickEveryMass: the kick per coordinate SaveKick asks for is
// written under every mass (the health watch's per-direction energy error,
// health.DirWatch, reads it on small models, where dense masses are used),
// and is the diagonal mass's kick for a dense or low-rank mass that equals
// it. The factored update ignored it: the kicks stayed 0 under a dense or
// low-rank mass, and the watch saw no integration error there.
func TestSaveKickEveryMass(t *testing.T) {
	m, scale, dense := diagonalAsDense(t)
	pot := &Gaussian{Mean: []float64{1, -1, 0, 2}, Var: []float64{0.3, 2, 0.01, 1}, NoiseVar: 0.5}
	for _, k := range []Kernel{SGNHT{StepSize: 0.05, Diffusion: 2}, SGHMC{StepSize: 0.05, Friction: 2}} {
		run := func(set func(s *State) error) []float64 {
			s := NewState([]float64{0.5, 0.5, 0.5, 0.5})
			if err := set(s); err != nil {
				t.Fatal(err)
			}
			kick := make([]float64, 4)
			s.SaveKick(kick)
			rng := rand.New(rand.NewPCG(3, 4))
			k.Init(s, rng)
			for i := 0; i < 20; i++ {
				if err := k.Step(s, pot, Minibatch{}, Hyper{Temp: 1.5}, rng); err != nil {
					t.Fatal(err)
				}
			}
			if kk := dot(kick, kick); math.Abs(kk-s.Work.Kick) > 1e-12*s.Work.Kick || kk == 0 {
				t.Errorf("%s: saved kicks' squares sum to %v, the step's Kick is %v", k.Name(), kk, s.Work.Kick)
			}
			return kick
		}
		want := run(func(s *State) error { return s.SetMass(m) })
		for _, c := range []struct {
			name string
			mm   MassMatrix
		}{{"dense", dense}, {"low-rank", &LowRankMass{Scale: scale}}} {
			got := run(func(s *State) error { return s.SetMassMatrix(c.mm) })
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-9 {
					t.Errorf("%s, %s mass: kick %d is %v, the diagonal mass's %v", k.Name(), c.name, i, got[i], want[i])
				}
			}
		}
	}
}

// diagonalAsDense returns the diagonal mass m of the factored-update tests,
// its scales 1/sqrt(m) and the DenseMass of the same diagonal.
func diagonalAsDense(t *testing.T) (m, scale []float64, dense *DenseMass) {
	t.Helper()
	m = []float64{4, 0.5, 100, 1}
	inv := make([]float64, 16)
	scale = make([]float64, 4)
	for i, v := range m {
		inv[i*4+i] = 1 / v
		scale[i] = 1 / math.Sqrt(v)
	}
	dense, err := NewDenseMass(inv, 4)
	if err != nil {
		t.Fatal(err)
	}
	return m, scale, dense
}
