package adapt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/mat"
)

// SketchOversample is how many directions beyond its rank k a low-rank
// mass's subspace iteration follows (l = k + SketchOversample, at most
// D): the top k of l Ritz values converge faster than the top k of k.
const SketchOversample = 10

// SubspaceBlocks is how many blocks of draws each burn-in window of a
// low-rank mass is cut into: one step of the subspace iteration each.
const SubspaceBlocks = 4

// sketchCols returns l, the subspace's dimension for a rank-k mass of dim
// coordinates.
func sketchCols(dim, rank int) int { return min(dim, rank+SketchOversample) }

// subspaceSeed seeds the first window's starting subspaces.
const subspaceSeed = 0x5ca1ab1e

// gradCols returns how many of a subspace's l directions come from the
// gradients' iteration: half.
func gradCols(l int) int { return l / 2 }

// Subspace is a low-rank mass's running estimate of the eigen-directions
// of the window's correlation matrix R farthest from 1, at both ends: the
// widest (R's top eigenvalues) from the draws and the stiffest (R's
// smallest, the top of the standardised precision R^-1) from the
// stochastic gradients, by block power (subspace) iterations, one step
// per block of the window (Hardt and Price 2014's noisy power method),
// costing 2 D l multiply-adds a draw for the draws and D l for the
// gradients, and D l values each, so that no D x D matrix is ever formed.
//
// In a block the draws are standardised by the block's Scale, x~ =
// x/Scale, and the gradients g~ = g Scale (the gradient in the
// standardised coordinates, whose second moment E[g~ g~'] is T R^-1 at
// equilibrium by the Fisher identity, and about (N/b) T R^-1 with a
// minibatch's noise). Y sums the co-moment of x~ times the basis Q (D x
// l, orthonormal columns), Y = sum (x~ - mean)(x~ - mean)' Q with
// Welford's running mean of the block, and GradY the gradients' second
// moment times their basis Qg (D x l/2), GradY = sum g~ g~' Qg. At the
// block's end (nextBlock) the gradients' basis steps to GradY's columns,
// the draws' wide directions to Y times the top Ritz vectors of R on Q,
// both rescaled to the window's sds so far, and Q to the two together,
// orthonormalised: Q then holds both ends. At the window's end a
// Rayleigh-Ritz step of R on Q (ritz) gives the eigenpairs, and the next
// window starts from their subspace. Plain data, checkpointed with the
// run.
type Subspace struct {
	Basis     []float64 // Q, D x l row-major, orthonormal columns
	Scale     []float64 // the block's sds (1 before any estimate)
	Mean      []float64 // the block's running mean of x/Scale
	Count     int       // the block's draws
	Y         []float64 // D x l row-major
	GradBasis []float64 // Qg, D x l/2 row-major, orthonormal columns
	GradY     []float64 // D x l/2 row-major

	xt, gt []float64 // scratch: the standardised draw's deviation, gradient
}

// randomBasis returns d x l random orthonormal columns from seed.
func randomBasis(d, l int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(subspaceSeed, seed))
	q := make([]float64, d*l)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	orthonormalize(q, d, l)
	return q
}

// newSubspace returns the first window's subspace of l directions in d
// coordinates: random orthonormal bases (from a fixed seed) and unit
// scales.
func newSubspace(d, l int) *Subspace {
	scale := make([]float64, d)
	for i := range scale {
		scale[i] = 1
	}
	lg := gradCols(l)
	return &Subspace{Basis: randomBasis(d, l, uint64(l)), Scale: scale, Mean: make([]float64, d), Y: make([]float64, d*l),
		GradBasis: randomBasis(d, lg, uint64(l)<<32|uint64(lg)), GradY: make([]float64, d*lg)}
}

// check reports whether s is a subspace of l directions in d coordinates.
func (s *Subspace) check(d, l int) error {
	if s == nil {
		return errors.New("no subspace")
	}
	lg := gradCols(l)
	if len(s.Basis) != d*l || len(s.Y) != d*l || len(s.Scale) != d || len(s.Mean) != d || s.Count < 0 ||
		len(s.GradBasis) != d*lg || len(s.GradY) != d*lg {
		return fmt.Errorf("subspace of %d basis values, %d scales, %d means, %d sketch values, %d and %d gradient values, count %d for %d x %d",
			len(s.Basis), len(s.Scale), len(s.Mean), len(s.Y), len(s.GradBasis), len(s.GradY), s.Count, d, l)
	}
	return nil
}

// observe adds draw theta, with its step's stochastic gradient g (nil: no
// gradient), to the block: with x~ = theta/Scale, delta = x~ - Mean
// before the draw, n the block's new count and g~ = g Scale,
//
//	Y     += ((n-1)/n) delta (delta' Q)
//	GradY += g~ (g~' Qg).
func (s *Subspace) observe(theta, g []float64) {
	d := len(theta)
	l := len(s.Basis) / d
	if len(s.xt) != d {
		s.xt, s.gt = make([]float64, d), make([]float64, d)
	}
	s.Count++
	n := float64(s.Count)
	var t [sampler.MaxMassRank + SketchOversample]float64
	for i, x := range theta {
		dl := x/s.Scale[i] - s.Mean[i]
		s.xt[i] = dl
		s.Mean[i] += dl / n
		for c, q := range s.Basis[i*l : i*l+l] {
			t[c] += dl * q
		}
	}
	f := (n - 1) / n
	for i, dl := range s.xt {
		dl *= f
		row := s.Y[i*l : i*l+l]
		for c := range row {
			row[c] += dl * t[c]
		}
	}
	if len(g) != d {
		return
	}
	lg := len(s.GradBasis) / d
	var tg [sampler.MaxMassRank + SketchOversample]float64
	for i, gi := range g {
		gi *= s.Scale[i]
		s.gt[i] = gi
		for c, q := range s.GradBasis[i*lg : i*lg+lg] {
			tg[c] += gi * q
		}
	}
	for i, gi := range s.gt {
		row := s.GradY[i*lg : i*lg+lg]
		for c := range row {
			row[c] += gi * tg[c]
		}
	}
}

// blockEnd reports whether step ends a block of a window of ends (a
// window's last step ends its last block, handled as the window's end).
func blockEnd(ends []int, step int) bool {
	start := 0
	for _, e := range ends {
		if step > start && step < e {
			for b := 1; b < SubspaceBlocks; b++ {
				if step == start+b*(e-start)/SubspaceBlocks {
					return true
				}
			}
			return false
		}
		start = e
	}
	return false
}

// nextBlock ends the low-rank estimate's block (one step of both
// subspace iterations; see Subspace): with F = diag(Scale/sd), sd the
// window's sds so far, the gradients' basis becomes orth(F^-1 GradY), the
// draws' wide directions F Y V (V the top l - l/2 eigenvectors of Q'Y,
// the Ritz vectors of R on Q, largest first), and Q orth of the two side
// by side; the next block standardises by sd. A block of fewer than 2
// draws, or a window whose variances are not yet positive, keeps its
// bases and scale.
func (e *MassEstimate) nextBlock() {
	s := e.Sub
	sd, err := e.variances()
	if s.Count < 2 || err != nil {
		return
	}
	d := len(s.Scale)
	l := len(s.Basis) / d
	lg := len(s.GradBasis) / d
	lw := l - lg
	for i := range sd {
		sd[i] = math.Sqrt(sd[i])
	}
	// the draws' Ritz vectors on Q, largest first
	b := mat.NewSymDense(l, nil)
	for a := 0; a < l; a++ {
		for c := a; c < l; c++ {
			v := 0.0
			for i := 0; i < d; i++ {
				v += s.Basis[i*l+a]*s.Y[i*l+c] + s.Basis[i*l+c]*s.Y[i*l+a]
			}
			b.SetSym(a, c, v/2)
		}
	}
	var es mat.EigenSym
	var v mat.Dense
	if es.Factorize(b, true) {
		es.VectorsTo(&v)
	} else { // keep Q's own order
		v = *mat.NewDense(l, l, nil)
		for a := 0; a < l; a++ {
			v.Set(l-1-a, a, 1)
		}
	}
	next := make([]float64, d*l)
	for i := 0; i < d; i++ {
		f := s.Scale[i] / sd[i]
		for c := 0; c < lw; c++ {
			u := 0.0
			for a := 0; a < l; a++ {
				u += s.Y[i*l+a] * v.At(a, l-1-c)
			}
			next[i*l+c] = f * u
		}
		for c := 0; c < lg; c++ {
			s.GradBasis[i*lg+c] = s.GradY[i*lg+c] / f
		}
	}
	orthonormalize(s.GradBasis, d, lg)
	for i := 0; i < d; i++ {
		copy(next[i*l+lw:i*l+l], s.GradBasis[i*lg:i*lg+lg])
	}
	orthonormalize(next, d, l)
	s.Basis, s.Scale = next, sd
	clear(s.Mean)
	clear(s.Y)
	clear(s.GradY)
	s.Count = 0
}

// projectOut subtracts from column c of the d x l row-major a its
// projection on column b (a unit vector), and returns the projection.
func projectOut(a []float64, d, l, b, c int) float64 {
	p := 0.0
	for i := 0; i < d; i++ {
		p += a[i*l+b] * a[i*l+c]
	}
	for i := 0; i < d; i++ {
		a[i*l+c] -= p * a[i*l+b]
	}
	return p
}

// orthonormalize makes the l columns of a (d x l, row-major)
// orthonormal in place by modified Gram-Schmidt, twice (enough for
// orthogonality to rounding), and returns the triangular factor T (l x l,
// row-major, upper) with a_before = a_after T. A column that collapses
// (linearly dependent on the earlier ones) is replaced by a fixed
// pseudo-random direction orthogonal to them, with T's diagonal 0 there.
func orthonormalize(a []float64, d, l int) []float64 {
	t := make([]float64, l*l)
	for c := 0; c < l; c++ {
		orig := colNorm(a, d, l, c)
		for pass := 0; pass < 2; pass++ {
			for b := 0; b < c; b++ {
				t[b*l+c] += projectOut(a, d, l, b, c)
			}
		}
		nv := colNorm(a, d, l, c)
		if !(nv > 1e-12*orig) || nv == 0 {
			rng := rand.New(rand.NewPCG(subspaceSeed, uint64(c)+1))
			for i := 0; i < d; i++ {
				a[i*l+c] = rng.NormFloat64()
			}
			for b := 0; b < c; b++ {
				projectOut(a, d, l, b, c)
			}
			nv, t[c*l+c] = colNorm(a, d, l, c), 0
		} else {
			t[c*l+c] = nv
		}
		for i := 0; i < d; i++ {
			a[i*l+c] /= nv
		}
	}
	return t
}

// colNorm returns the norm of column c of a (d x l, row-major).
func colNorm(a []float64, d, l, c int) float64 {
	s := 0.0
	for i := 0; i < d; i++ {
		s += a[i*l+c] * a[i*l+c]
	}
	return math.Sqrt(s)
}

// ritz returns the window's variances s and the Ritz pairs of its
// correlation matrix R on the last block's subspace, eigenvalues largest
// first with their unit vectors (d x l, row-major), and the draws behind
// them. With the block standardised by sds b_i and F = diag(b_i/sqrt(s_i)),
// R is F Sigma~ F (Sigma~ the block's covariance of x~, Y = (n - 1)
// Sigma~ Q); on the basis W T = F^-1 Q (orthonormalised), R W = F Y T^-1
// /(n - 1), and the eigenpairs of W' R W (l x l) give R's on span W.
func (e *MassEstimate) ritz() (s, lam, vec []float64, n int, err error) {
	sub := e.Sub
	s, err = e.variances()
	if err != nil {
		return nil, nil, nil, 0, err
	}
	d := len(s)
	if sub == nil || len(sub.Basis) == 0 {
		return nil, nil, nil, 0, errors.New("no subspace")
	}
	if err := sub.check(d, len(sub.Basis)/d); err != nil {
		return nil, nil, nil, 0, err
	}
	if sub.Count < 2 {
		return nil, nil, nil, 0, fmt.Errorf("subspace: %w", errFewDraws)
	}
	l := len(sub.Basis) / d
	f := make([]float64, d)
	w := make([]float64, d*l)
	for i := range f {
		f[i] = sub.Scale[i] / math.Sqrt(s[i])
		for c := 0; c < l; c++ {
			w[i*l+c] = sub.Basis[i*l+c] / f[i]
		}
	}
	t := orthonormalize(w, d, l)
	// rw = F Y T^-1 / (n - 1), row by row: x T = z
	rw := make([]float64, d*l)
	for i := 0; i < d; i++ {
		z, x := sub.Y[i*l:i*l+l], rw[i*l:i*l+l]
		for c := 0; c < l; c++ {
			v := f[i] * z[c] / float64(sub.Count-1)
			for a := 0; a < c; a++ {
				v -= x[a] * t[a*l+c]
			}
			if t[c*l+c] == 0 {
				return nil, nil, nil, 0, errors.New("subspace: the basis lost a direction")
			}
			x[c] = v / t[c*l+c]
		}
	}
	b := mat.NewSymDense(l, nil)
	for a := 0; a < l; a++ {
		for c := a; c < l; c++ {
			v := 0.0
			for i := 0; i < d; i++ {
				v += w[i*l+a]*rw[i*l+c] + w[i*l+c]*rw[i*l+a]
			}
			b.SetSym(a, c, v/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(b, true) {
		return nil, nil, nil, 0, errors.New("subspace: Ritz values did not converge")
	}
	vals := es.Values(nil) // ascending
	var v mat.Dense
	es.VectorsTo(&v)
	lam, vec = make([]float64, l), make([]float64, d*l)
	for j := 0; j < l; j++ {
		lam[j] = vals[l-1-j]
		for i := 0; i < d; i++ {
			u := 0.0
			for a := 0; a < l; a++ {
				u += w[i*l+a] * v.At(a, l-1-j)
			}
			vec[i*l+j] = u
		}
	}
	return s, lam, vec, sub.Count, nil
}

// farthest returns the indices of the k of lam farthest from 1 in ratio
// (|log lambda| largest; ties to the earlier), in that order.
func farthest(lam []float64, k int) []int {
	idx := make([]int, len(lam))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(math.Log(lam[idx[a]])) > math.Abs(math.Log(lam[idx[b]])) })
	return idx[:min(k, len(idx))]
}

// LowRankMassFrom returns the low-rank mass of a PrecondLowRank estimate
// e at the end of its window: the diagonal of the window's variances, and
// the k Ritz pairs of its correlation matrix on the subspace (Subspace,
// ritz) whose eigenvalues are farthest from 1 (|log lambda| largest: the
// widest and the stiffest directions), each eigenvalue, from the last
// block's n draws, shrunk toward 1 as DenseMassOf shrinks R: lambda^w, w =
// n/(n + ShrinkDraws). LowRankMass says how the mass is built
// of them and LowRankMassOf how it is scaled.
func LowRankMassFrom(e MassEstimate, scale MassScale, rank int) (*sampler.LowRankMass, error) {
	m, _, err := lowRankFrom(&e, scale, rank)
	return m, err
}

// lowRankFrom is LowRankMassFrom, with the subspace the next window's
// iteration starts from: the Ritz vectors and the gradients' basis,
// standardised by the window's sds.
func lowRankFrom(e *MassEstimate, scale MassScale, rank int) (*sampler.LowRankMass, *Subspace, error) {
	d := len(e.M2)
	if d == 0 || len(e.Mean) != d || e.Sub == nil {
		return nil, nil, fmt.Errorf("low-rank mass: estimate of %d coordinates without a subspace", d)
	}
	s, lam, vec, n, err := e.ritz()
	if err != nil {
		return nil, nil, fmt.Errorf("low-rank mass: %w", err)
	}
	l := len(lam)
	for j, x := range lam { // Ritz values of a positive-definite R
		lam[j] = math.Max(x, 1e-300)
	}
	pick := farthest(lam, rank)
	k := len(pick)
	u := make([]float64, 0, d*k)
	lk := make([]float64, 0, k)
	for _, j := range pick {
		lk = append(lk, lam[j])
	}
	for i := 0; i < d; i++ {
		for _, j := range pick {
			u = append(u, vec[i*l+j])
		}
	}
	m, err := lowRankMass(s, lk, u, n, scale)
	if err != nil {
		return nil, nil, err
	}
	lg := len(e.Sub.GradBasis) / d
	next := &Subspace{Basis: vec, Scale: make([]float64, d), Mean: make([]float64, d), Y: make([]float64, d*l),
		GradBasis: make([]float64, d*lg), GradY: make([]float64, d*lg)}
	for i, v := range s {
		next.Scale[i] = math.Sqrt(v)
		f := e.Sub.Scale[i] / next.Scale[i]
		for c := 0; c < lg; c++ { // the gradients' basis in the new standardisation
			next.GradBasis[i*lg+c] = e.Sub.GradBasis[i*lg+c] / f
		}
	}
	orthonormalize(next.GradBasis, d, lg)
	return m, next, nil
}
