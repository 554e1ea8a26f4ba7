package adapt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

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

// subspaceSeed seeds the first window's starting subspace.
const subspaceSeed = 0x5ca1ab1e

// Subspace is a low-rank mass's running estimate of the top eigen-
// directions of the window's correlation matrix R: a block power (subspace)
// iteration on the draws, one step per block of the window (Hardt and
// Price 2014's noisy power method), costing 2 D l multiply-adds a draw and
// D l values, so that no D x D matrix is ever formed. In a block the draws
// are standardised by the block's Scale, x~ = x/Scale, and Y sums the
// co-moment of x~ times the basis Q (Basis, D x l, orthonormal columns):
// Y = sum (x~ - mean)(x~ - mean)' Q with Welford's running mean of the
// block. At the block's end the next basis is Y's columns, rescaled to the
// window's sds so far and orthonormalised; at the window's end a
// Rayleigh-Ritz step on the last block (ritz) gives the eigenpairs, and
// the next window starts from their subspace. Plain data, checkpointed
// with the run.
type Subspace struct {
	Basis []float64 // Q, D x l row-major, orthonormal columns
	Scale []float64 // the block's sds (1 before any estimate)
	Mean  []float64 // the block's running mean of x/Scale
	Count int       // the block's draws
	Y     []float64 // D x l row-major

	xt []float64 // scratch: the standardised draw's deviation
}

// newSubspace returns the first window's subspace of l directions in d
// coordinates: a random orthonormal basis (from a fixed seed) and unit
// scales.
func newSubspace(d, l int) *Subspace {
	rng := rand.New(rand.NewPCG(subspaceSeed, uint64(l)))
	q := make([]float64, d*l)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	orthonormalize(q, d, l)
	scale := make([]float64, d)
	for i := range scale {
		scale[i] = 1
	}
	return &Subspace{Basis: q, Scale: scale, Mean: make([]float64, d), Y: make([]float64, d*l)}
}

// check reports whether s is a subspace of l directions in d coordinates.
func (s *Subspace) check(d, l int) error {
	if s == nil {
		return errors.New("no subspace")
	}
	if len(s.Basis) != d*l || len(s.Y) != d*l || len(s.Scale) != d || len(s.Mean) != d || s.Count < 0 {
		return fmt.Errorf("subspace of %d basis values, %d scales, %d means, %d sketch values, count %d for %d x %d", len(s.Basis), len(s.Scale), len(s.Mean), len(s.Y), s.Count, d, l)
	}
	return nil
}

// observe adds draw theta to the block: with x~ = theta/Scale, delta =
// x~ - Mean before the draw and n the block's new count,
//
//	Y += ((n-1)/n) delta (delta' Q).
func (s *Subspace) observe(theta []float64) {
	d := len(theta)
	l := len(s.Basis) / d
	if len(s.xt) != d {
		s.xt = make([]float64, d)
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

// nextBlock ends the low-rank estimate's block: the next basis is the
// block's Y with its rows rescaled from the block's sds to the window's so
// far, orthonormalised (one step of the subspace iteration), and the next
// block standardises by the window's sds. A block of fewer than 2 draws,
// or a window whose variances are not yet positive, keeps its basis and
// scale.
func (e *MassEstimate) nextBlock() {
	s := e.Sub
	sd, err := e.variances()
	if s.Count < 2 || err != nil {
		return
	}
	d := len(s.Scale)
	l := len(s.Basis) / d
	for i := range sd {
		sd[i] = math.Sqrt(sd[i])
		f := s.Scale[i] / sd[i]
		for c := 0; c < l; c++ {
			s.Basis[i*l+c] = f * s.Y[i*l+c]
		}
	}
	orthonormalize(s.Basis, d, l)
	s.Scale = sd
	clear(s.Mean)
	clear(s.Y)
	s.Count = 0
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
				p := 0.0
				for i := 0; i < d; i++ {
					p += a[i*l+b] * a[i*l+c]
				}
				for i := 0; i < d; i++ {
					a[i*l+c] -= p * a[i*l+b]
				}
				t[b*l+c] += p
			}
		}
		nv := colNorm(a, d, l, c)
		if !(nv > 1e-12*orig) || nv == 0 {
			rng := rand.New(rand.NewPCG(subspaceSeed, uint64(c)+1))
			for i := 0; i < d; i++ {
				a[i*l+c] = rng.NormFloat64()
			}
			for b := 0; b < c; b++ {
				p := 0.0
				for i := 0; i < d; i++ {
					p += a[i*l+b] * a[i*l+c]
				}
				for i := 0; i < d; i++ {
					a[i*l+c] -= p * a[i*l+b]
				}
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
	if err := sub.check(d, len(sub.Basis)/max(d, 1)); err != nil || len(sub.Basis) == 0 {
		return nil, nil, nil, 0, fmt.Errorf("subspace: %v", err)
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

// LowRankMassFrom returns the low-rank mass of a PrecondLowRank estimate
// e at the end of its window: the diagonal of the window's variances, and
// the top k Ritz pairs of its correlation matrix (Subspace, ritz), each
// eigenvalue, from the last block's n draws, shrunk toward 1 as
// DenseMassOf shrinks R: (n lambda + ShrinkDraws)/(n + ShrinkDraws).
// LowRankMass says how the mass is built of them and LowRankMassOf how it
// is scaled.
func LowRankMassFrom(e MassEstimate, scale MassScale, rank int) (*sampler.LowRankMass, error) {
	m, _, err := lowRankFrom(&e, scale, rank)
	return m, err
}

// lowRankFrom is LowRankMassFrom, with the subspace the next window's
// iteration starts from: the Ritz vectors, standardised by the window's
// sds.
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
	k := min(rank, l)
	u := make([]float64, 0, d*k)
	for i := 0; i < d; i++ {
		u = append(u, vec[i*l:i*l+k]...)
	}
	m, err := lowRankMass(s, lam[:k], u, n, scale)
	if err != nil {
		return nil, nil, err
	}
	next := &Subspace{Basis: vec, Scale: make([]float64, d), Mean: make([]float64, d), Y: make([]float64, d*l)}
	for i, v := range s {
		next.Scale[i] = math.Sqrt(v)
	}
	return m, next, nil
}
