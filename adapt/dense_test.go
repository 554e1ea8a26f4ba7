package adapt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/mat"
)

// corrFactor returns cov's sds and the Cholesky factor of its
// correlation matrix (far better conditioned than cov).
func corrFactor(t *testing.T, cov []float64, d int) ([]float64, *mat.Cholesky) {
	t.Helper()
	sd := make([]float64, d)
	for i := range sd {
		sd[i] = math.Sqrt(cov[i*d+i])
	}
	r := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			r.SetSym(i, j, cov[i*d+j]/(sd[i]*sd[j]))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(r) {
		t.Fatal("correlation matrix not positive definite")
	}
	return sd, &ch
}

// gaussDraws returns n independent draws of N(0, cov) (d x d, row-major).
func gaussDraws(t *testing.T, cov []float64, d, n int, rng *rand.Rand) [][]float64 {
	t.Helper()
	sd, ch := corrFactor(t, cov, d)
	var l mat.TriDense
	ch.LTo(&l)
	out := make([][]float64, n)
	z := make([]float64, d)
	for i := range out {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		x := make([]float64, d)
		for a := 0; a < d; a++ {
			for b := 0; b <= a; b++ {
				x[a] += l.At(a, b) * z[b]
			}
			x[a] *= sd[a]
		}
		out[i] = x
	}
	return out
}

// sampleCov returns the two-pass sample covariance of xs.
func sampleCov(xs [][]float64) []float64 {
	d, n := len(xs[0]), float64(len(xs))
	mean := make([]float64, d)
	for _, x := range xs {
		for i, v := range x {
			mean[i] += v / n
		}
	}
	cov := make([]float64, d*d)
	for _, x := range xs {
		for i := range x {
			for j := range x {
				cov[i*d+j] += (x[i] - mean[i]) * (x[j] - mean[j]) / (n - 1)
			}
		}
	}
	return cov
}

// spiked returns a d x d covariance with sds from 1e-2 to 1e2 whose
// correlation matrix is B B' renormalised to a unit diagonal, B = I +
// sum_j a_j v_j v_j' - sum_j b_j w_j w_j' (v_j, w_j random unit
// vectors): a few strongly correlated directions (a) and a few nearly
// collinear ones (b near 1).
func spiked(d int, a, b []float64, rng *rand.Rand) []float64 {
	bm := make([]float64, d*d)
	for i := 0; i < d; i++ {
		bm[i*d+i] = 1
	}
	add := func(s float64) {
		v := make([]float64, d)
		n := 0.0
		for i := range v {
			v[i] = rng.NormFloat64()
			n += v[i] * v[i]
		}
		for i := range v {
			for j := range v {
				bm[i*d+j] += s * v[i] * v[j] / n
			}
		}
	}
	for _, s := range a {
		add(s)
	}
	for _, s := range b {
		add(-s)
	}
	c := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				c[i*d+j] += bm[i*d+k] * bm[j*d+k]
			}
		}
	}
	sd := make([]float64, d)
	for i := range sd {
		sd[i] = math.Pow(10, -2+4*float64(i)/float64(d-1)) / math.Sqrt(c[i*d+i])
	}
	for i := range sd {
		for j := range sd {
			c[i*d+j] *= sd[i] * sd[j]
		}
	}
	return c
}

// gradOf returns the gradient of U = x' cov^-1 x/2 at x: S^-1/2 R^-1
// S^-1/2 x, with cov = S^1/2 R S^1/2.
func gradOf(t *testing.T, cov []float64, d int, x []float64) []float64 {
	t.Helper()
	sd, ch := corrFactor(t, cov, d)
	y := make([]float64, d)
	for i := range y {
		y[i] = x[i] / sd[i]
	}
	var g mat.VecDense
	if err := ch.SolveVecTo(&g, mat.NewVecDense(d, y)); err != nil {
		t.Fatal(err)
	}
	out := g.RawVector().Data
	for i := range out {
		out[i] /= sd[i]
	}
	return out
}

// TestDenseMassFrom feeds 20,000 draws of a Gaussian through the window's
// running co-moment and checks the dense mass against DenseMassOf the
// two-pass sample covariance (to rounding) and against the exact
// covariance (to sampling error: M^-1 c within 5% of Sigma, entry by entry
// relative to the sds).
func TestDenseMassFrom(t *testing.T) {
	const d, n = 4, 20000
	rng := rand.New(rand.NewPCG(2, 3))
	cov := spiked(d, []float64{30, 3}, nil, rng)
	xs := gaussDraws(t, cov, d, n, rng)
	var e MassEstimate
	e.reset(PrecondDense, d, false, 0)
	for _, x := range xs {
		e.observeFull(x, nil)
	}
	for _, scale := range []MassScale{MassScaleWidest, MassScaleStiffest} {
		got, err := DenseMassFrom(e, scale)
		if err != nil {
			t.Fatal(err)
		}
		want, err := DenseMassOf(sampleCov(xs), d, n, scale)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range want.Chol {
			if math.Abs(got.Chol[i]-c) > 1e-9*math.Abs(want.Chol[(i/d)*d+i/d]) {
				t.Errorf("%v: factor entry %d is %v, two-pass %v", scale, i, got.Chol[i], c)
			}
		}
		exact, err := DenseMassOf(cov, d, 0, scale)
		if err != nil {
			t.Fatal(err)
		}
		// compare C C' up to the common scale c, relative to the sds
		cc := func(m []float64) []float64 {
			out := make([]float64, d*d)
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					for k := 0; k < d; k++ {
						out[i*d+j] += m[i*d+k] * m[j*d+k]
					}
				}
			}
			return out
		}
		g, x := cc(got.Chol), cc(exact.Chol)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				if r := (g[i*d+j]/g[0] - x[i*d+j]/x[0]) / math.Sqrt(x[i*d+i]*x[j*d+j]/(x[0]*x[0])); math.Abs(r) > 0.05 {
					t.Errorf("%v: M^-1 (%d, %d) off by %.3f of the sds", scale, i, j, r)
				}
			}
		}
	}
}

// TestLowRankMassFrom feeds draws of a 40-coordinate Gaussian with two
// strongly correlated directions and two nearly collinear ones
// (standardised eigenvalues about 13 and 4, and 0.001 and 0.01; sds 1e-2
// to 1e2), with their exact gradients, through two windows of the
// subspace iterations (rank 4: 14 directions; 4 blocks of 5,000 draws a
// window) and checks the mass's eigenpairs against the exact
// covariance's farthest from 1 (LowRankMassOf): eigenvalues within 8%
// (the last block's 5,000 draws have a sampling error of about 2%),
// directions' overlap above 0.98, and the diagonal within 3% of the
// variance preconditioner's. With as many directions as coordinates (6)
// the iteration's space is the whole space.
func TestLowRankMassFrom(t *testing.T) {
	for _, tc := range []struct {
		d           int
		wide, stiff []float64
	}{{40, []float64{20, 6}, []float64{0.97, 0.9}}, {6, []float64{10}, []float64{0.95}}} {
		rng := rand.New(rand.NewPCG(4, uint64(tc.d)))
		cov := spiked(tc.d, tc.wide, tc.stiff, rng)
		var e MassEstimate
		e.reset(PrecondLowRank, tc.d, false, 4)
		var got *sampler.LowRankMass
		for window := 0; window < 2; window++ {
			for b := 0; b < SubspaceBlocks; b++ {
				if b > 0 {
					e.nextBlock()
				}
				for _, x := range gaussDraws(t, cov, tc.d, 5000, rng) {
					e.observeFull(x, gradOf(t, cov, tc.d, x))
				}
			}
			m, next, err := lowRankFrom(&e, MassScaleStiffest, 4)
			if err != nil {
				t.Fatal(err)
			}
			got = m
			e.reset(PrecondLowRank, tc.d, false, 4)
			e.Sub = next
		}
		want, err := LowRankMassOf(cov, tc.d, 4, MassScaleStiffest)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("D %d: eigenvalues %.4g, exact %.4g", tc.d, got.Lambda, want.Lambda)
		for j, l := range want.Lambda {
			if math.Abs(got.Lambda[j]/l-1) > 0.08 {
				t.Errorf("D %d: eigenvalue %d is %.4g, exact %.4g", tc.d, j, got.Lambda[j], l)
			}
			ov := 0.0
			for i := 0; i < tc.d; i++ {
				ov += got.U[i*4+j] * want.U[i*4+j]
			}
			if math.Abs(ov) < 0.98 {
				t.Errorf("D %d: direction %d's overlap with the exact one is %.4f", tc.d, j, ov)
			}
		}
		for i, s := range want.Scale {
			if math.Abs(got.Scale[i]/s-1) > 0.03 {
				t.Errorf("D %d: scale %d is %v, exact %v", tc.d, i, got.Scale[i], s)
			}
		}
	}
}

// TestFullMassErrors checks that degenerate windows are errors, not masses.
func TestFullMassErrors(t *testing.T) {
	var e MassEstimate
	e.reset(PrecondDense, 2, false, 0)
	e.observeFull([]float64{1, 2}, nil)
	if _, err := DenseMassFrom(e, MassScaleWidest); err == nil {
		t.Error("a window of one draw gave a dense mass")
	}
	e.observeFull([]float64{1, 3}, nil) // coordinate 0 did not move
	if _, err := DenseMassFrom(e, MassScaleWidest); err == nil {
		t.Error("a coordinate that did not move gave a dense mass")
	}
	e.reset(PrecondLowRank, 2, false, 1)
	e.observeFull([]float64{1, 2}, nil)
	e.observeFull([]float64{1, 3}, nil)
	if _, err := LowRankMassFrom(e, MassScaleWidest, 1); err == nil {
		t.Error("a coordinate that did not move gave a low-rank mass")
	}
}

// TestDenseMassFewDraws checks that a window of fewer draws than twice
// the coordinates gives the diagonal mass (a 40-coordinate estimate from
// 30 draws is singular), and that from the same gradients.
func TestDenseMassFewDraws(t *testing.T) {
	const d = 40
	rng := rand.New(rand.NewPCG(5, 6))
	cov := spiked(d, []float64{10}, nil, rng)
	var e, g MassEstimate
	e.reset(PrecondDense, d, false, 0)
	g.reset(PrecondNone, d, false, 0)
	g.GradCross = make([]float64, d*(d+1)/2)
	for _, x := range gaussDraws(t, cov, d, 30, rng) {
		e.observeFull(x, nil)
		g.observeGrad(gradOf(t, cov, d, x))
	}
	for name, f := range map[string]func() (*sampler.DenseMass, error){
		"draws":     func() (*sampler.DenseMass, error) { return DenseMassFrom(e, MassScaleStiffest) },
		"gradients": func() (*sampler.DenseMass, error) { return DenseMassFromGradients(g, MassScaleStiffest) },
	} {
		m, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := 0; i < d; i++ {
			for j := 0; j < i; j++ {
				if m.Chol[i*d+j] != 0 {
					t.Fatalf("%s: factor (%d, %d) is %v from 30 draws, want a diagonal mass", name, i, j, m.Chol[i*d+j])
				}
			}
		}
	}
}
