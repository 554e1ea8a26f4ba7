package adapt

import (
	"errors"
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/mat"
)

// ShrinkDraws is Stan's regularisation weight of a dense metric: a
// covariance estimated from n draws is shrunk toward its diagonal as
// (n/(n + ShrinkDraws)) Cov + (ShrinkDraws/(n + ShrinkDraws)) diag(Cov)
// (Stan shrinks toward 1e-3 I, whose scale is the model's units; toward
// the diagonal the shrinkage has none, and the variances are kept).
const ShrinkDraws = 5

// observeFull adds position theta to a dense or low-rank estimate: Mean
// and M2 as observe, and for PrecondDense, with delta = theta - Mean
// before the step and n the new count, the co-moment's update (Welford's,
// exact for the symmetric matrix)
//
//	Cross += ((n-1)/n) delta delta'   (D(D+1)/2 values)
//
// so that Cross is the sum of the deviations' products from the window's
// mean; for PrecondLowRank the subspace iteration's (Subspace.observe).
func (e *MassEstimate) observeFull(theta []float64) {
	d := len(theta)
	if len(e.delta) != d {
		e.delta = make([]float64, d)
	}
	e.Count++
	n := float64(e.Count)
	for i, x := range theta {
		dl := x - e.Mean[i]
		e.delta[i] = dl
		e.Mean[i] += dl / n
		e.M2[i] += dl * (x - e.Mean[i])
	}
	if len(e.Cross) == d*(d+1)/2 {
		f := (n - 1) / n
		off := 0
		for i, di := range e.delta {
			di *= f
			row := e.Cross[off : off+i+1]
			for j, dj := range e.delta[:i+1] {
				row[j] += di * dj
			}
			off += i + 1
		}
	}
	if e.Sub != nil {
		e.Sub.observe(theta)
	}
}

// setFull sets chain s's dense or low-rank mass from its estimate at the
// end of the window ending at step, and
// starts the next window's estimate (a low-rank mass's subspace iteration
// from this window's subspace), or, after the last, empties it.
func (m Mass) setFull(s *sampler.State, e *MassEstimate, step int) error {
	var mm sampler.MassMatrix
	var next *Subspace
	var err error
	switch {
	case m.Precondition == PrecondDense && e.GradCross != nil:
		mm, err = DenseMassFromGradients(*e, m.Scale)
	case m.Precondition == PrecondDense:
		mm, err = DenseMassFrom(*e, m.Scale)
	case m.Precondition == PrecondLowRank:
		mm, next, err = lowRankFrom(e, m.Scale, m.rank())
	default:
		return fmt.Errorf("preconditioner %v has a diagonal mass", m.Precondition)
	}
	if err != nil {
		return err
	}
	if err := s.SetMassMatrix(mm); err != nil {
		return err
	}
	if debugMass {
		if dm, ok := mm.(*sampler.DenseMass); ok {
			n := dm.N
			dg := make([]float64, n)
			for i := 0; i < n; i++ {
				for k := 0; k <= i; k++ {
					dg[i] += dm.Chol[i*n+k] * dm.Chol[i*n+k]
				}
			}
			fmt.Println("DEBUG window", step, "grad", e.GradCross != nil, "dense diag(M^-1)", dg)
		}
	}
	ends := MassWindowEnds(m.BurnIn)
	if step == ends[len(ends)-1] {
		*e = MassEstimate{}
		s.KeepGrad(false)
		return nil
	}
	m.resetWindow(e, step+1, len(s.Theta))
	if next != nil {
		e.Sub = next
	}
	return nil
}

// observeGrad adds a dense mass's gradient window's step: the stochastic
// gradient g's outer product to GradCross; it counts the step.
func (e *MassEstimate) observeGrad(g []float64) {
	e.Count++
	off := 0
	for i, gi := range g {
		row := e.GradCross[off : off+i+1]
		for j, gj := range g[:i+1] {
			row[j] += gi * gj
		}
		off += i + 1
	}
}

// DenseMassFromGradients returns the dense mass of a dense mass's
// gradient window (GradientWindows): with F = E[g g'] over the window's
// stochastic gradients, M^-1 is F^-1 (shrunk toward its diagonal as
// DenseMassOf shrinks a covariance) scaled as DenseMassOf scales a
// covariance. At equilibrium E[grad U grad U'] is T times the mean
// Hessian of U (the Fisher identity), so F^-1 is the covariance of a
// Gaussian posterior; a minibatch's noise adds about (N/b - 1) times
// the data's part, so its shape is kept, and the estimate needs no
// exploration of the posterior: a direction the chain has not yet spread
// along has a small gradient but a large noise. At full batch such a
// direction's curvature is underestimated (F = H Cov_window H there), so
// it moves faster than it should until the windows from the draws set
// the mass (on earnings at full batch, omega h = 0.5, the chain stayed in
// its regime: sds within 4%, health ok).
func DenseMassFromGradients(e MassEstimate, scale MassScale) (*sampler.DenseMass, error) {
	d := int((math.Sqrt(float64(8*len(e.GradCross)+1)) - 1) / 2)
	if d == 0 || len(e.GradCross) != d*(d+1)/2 {
		return nil, fmt.Errorf("dense mass: gradient estimate of %d values", len(e.GradCross))
	}
	if e.Count < 2 {
		return nil, fmt.Errorf("dense mass: %w", errFewDraws)
	}
	f := make([]float64, d*d)
	off := 0
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := e.GradCross[off+j] / float64(e.Count)
			f[i*d+j], f[j*d+i] = v, v
		}
		off += i + 1
	}
	inv, err := inverseShrunk(f, d, e.Count)
	if err != nil {
		return nil, fmt.Errorf("dense mass: %w", err)
	}
	return DenseMassOf(inv, d, 0, scale)
}

// inverseShrunk returns the inverse of the symmetric positive-definite
// matrix a (d x d, row-major) shrunk toward its diagonal as DenseMassOf
// shrinks a covariance from n draws, computed from its correlation form
// (whose condition is far better): a = S^1/2 R S^1/2, R' = w R + (1 - w)
// I, a'^-1 = S^-1/2 R'^-1 S^-1/2.
func inverseShrunk(a []float64, d, n int) ([]float64, error) {
	sd := make([]float64, d)
	for i := range sd {
		v := a[i*d+i]
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("diagonal %d is %v", i, v)
		}
		sd[i] = math.Sqrt(v)
	}
	w := float64(n) / float64(n+ShrinkDraws)
	r := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := 1.0
			if i != j {
				v = w * a[i*d+j] / (sd[i] * sd[j])
			}
			r.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(r) {
		return nil, errors.New("not positive definite")
	}
	var ri mat.SymDense
	if err := ch.InverseTo(&ri); err != nil {
		return nil, err
	}
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out[i*d+j] = ri.At(i, j) / (sd[i] * sd[j])
		}
	}
	return out, nil
}

// errFewDraws is returned for a window of fewer than 2 draws.
var errFewDraws = errors.New("fewer than 2 draws in the window")

// variances returns the window's variance of each coordinate, M2/(n-1),
// and an error when a coordinate did not move (or the window is short).
func (e *MassEstimate) variances() ([]float64, error) {
	if e.Count < 2 {
		return nil, errFewDraws
	}
	s := make([]float64, len(e.M2))
	for i, m2 := range e.M2 {
		s[i] = m2 / float64(e.Count-1)
		if !(s[i] > 0) || math.IsInf(s[i], 1) {
			return nil, fmt.Errorf("coordinate %d's variance over the window is %v", i, s[i])
		}
	}
	return s, nil
}

// DenseMassFrom returns the dense mass of a PrecondDense estimate e (its
// window's co-moment Cross from Count draws): DenseMassOf the window's
// covariance Cross/(Count-1) from Count draws.
func DenseMassFrom(e MassEstimate, scale MassScale) (*sampler.DenseMass, error) {
	d := len(e.M2)
	if d == 0 || len(e.Cross) != d*(d+1)/2 || len(e.Mean) != d {
		return nil, fmt.Errorf("dense mass: estimate of %d coordinates with %d co-moments", d, len(e.Cross))
	}
	if e.Count < 2 {
		return nil, fmt.Errorf("dense mass: %w", errFewDraws)
	}
	cov := make([]float64, d*d)
	off := 0
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			c := e.Cross[off+j] / float64(e.Count-1)
			cov[i*d+j], cov[j*d+i] = c, c
		}
		off += i + 1
	}
	return DenseMassOf(cov, d, e.Count, scale)
}

// DenseMassOf returns the dense mass of the covariance cov of theta (d x d,
// row-major) estimated from n draws (n <= 0: exact, not shrunk): with S
// its diagonal and R = S^-1/2 cov S^-1/2 its correlation matrix,
//
//	Sigma = S^1/2 (w R + (1 - w) I) S^1/2,  w = n/(n + ShrinkDraws),
//	M^-1  = Sigma / c,
//
// where c, the scale, is Sigma's smallest eigenvalue under
// MassScaleStiffest (every direction then moves at the pace of unit
// mass's stiffest, the curvature 1/lambda_min(Sigma) in every direction:
// the learning rate keeps its unit-mass meaning) and its largest under
// MassScaleWidest (at the pace of unit mass's widest). The factor
// C = S^1/2 chol(w R + (1 - w) I) / sqrt(c) is computed from the
// correlation matrix, whose condition is far better than Sigma's. A
// coordinate whose variance is not positive and finite is an error.
func DenseMassOf(cov []float64, d, n int, scale MassScale) (*sampler.DenseMass, error) {
	if d < 1 || len(cov) != d*d {
		return nil, fmt.Errorf("dense mass: %d values for a %d x %d covariance", len(cov), d, d)
	}
	sd := make([]float64, d)
	for i := range sd {
		v := cov[i*d+i]
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("dense mass: coordinate %d's variance is %v", i, v)
		}
		sd[i] = math.Sqrt(v)
	}
	w := 1.0
	if n > 0 {
		w = float64(n) / float64(n+ShrinkDraws)
	}
	corr := make([]float64, d*d)
	sigma := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			r := 1.0
			if i != j {
				r = w * cov[i*d+j] / (sd[i] * sd[j])
				if math.IsNaN(r) {
					return nil, fmt.Errorf("dense mass: covariance (%d, %d) is not a number", i, j)
				}
			}
			corr[i*d+j], corr[j*d+i] = r, r
			sigma.SetSym(i, j, r*sd[i]*sd[j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sigma, false) {
		return nil, errors.New("dense mass: eigenvalues of the covariance did not converge")
	}
	vals := es.Values(nil) // ascending
	c := vals[len(vals)-1]
	if scale == MassScaleStiffest {
		c = vals[0]
	}
	if !(c > 0) {
		return nil, fmt.Errorf("dense mass: covariance's eigenvalue %v is not positive", c)
	}
	dm, err := sampler.NewDenseMass(corr, d)
	if err != nil {
		return nil, err
	}
	for i := 0; i < d; i++ {
		f := sd[i] / math.Sqrt(c)
		for j := 0; j <= i; j++ {
			dm.Chol[i*d+j] *= f
		}
	}
	return dm, nil
}

// LowRankMassOf returns the low-rank mass of an exact covariance cov of
// theta (d x d, row-major), not shrunk: the diagonal of its variances and
// the top rank eigenpairs of its correlation matrix (by eigen-
// decomposition; LowRankMassFrom's sketch approximates them). With
// m = scale.MassFrom(1/s), the diagonal mass PrecondVariance would set,
//
//	M^-1 = diag(m)^-1/2 (I + sum_j (lambda_j - 1) u_j u_j') diag(m)^-1/2:
//
// at rank 0 the variance preconditioner's mass, and along each u_j the
// standardised variance lambda_j in place of 1.
func LowRankMassOf(cov []float64, d, rank int, scale MassScale) (*sampler.LowRankMass, error) {
	if d < 1 || len(cov) != d*d {
		return nil, fmt.Errorf("low-rank mass: %d values for a %d x %d covariance", len(cov), d, d)
	}
	s := make([]float64, d)
	for i := range s {
		s[i] = cov[i*d+i]
		if !(s[i] > 0) || math.IsInf(s[i], 1) {
			return nil, fmt.Errorf("low-rank mass: coordinate %d's variance is %v", i, s[i])
		}
	}
	r := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			r.SetSym(i, j, cov[i*d+j]/math.Sqrt(s[i]*s[j]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(r, true) {
		return nil, errors.New("low-rank mass: eigen-decomposition did not converge")
	}
	vals := es.Values(nil) // ascending
	var ev mat.Dense
	es.VectorsTo(&ev)
	k := min(rank, d)
	lam, vec := make([]float64, 0, k), make([]float64, 0, d*k)
	for j := 0; j < k; j++ {
		lam = append(lam, vals[d-1-j])
	}
	for i := 0; i < d; i++ {
		for j := 0; j < k; j++ {
			vec = append(vec, ev.At(i, d-1-j))
		}
	}
	return lowRankMass(s, lam, vec, 0, scale)
}

// lowRankMass returns the low-rank mass of variances s and standardised
// eigenpairs lam, vec (d x k, row-major) estimated from n draws (n <= 0:
// exact, not shrunk), scaled as LowRankMassOf says.
func lowRankMass(s, lam, vec []float64, n int, scale MassScale) (*sampler.LowRankMass, error) {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = 1 / x
	}
	m := scale.MassFrom(v)
	out := &sampler.LowRankMass{Scale: make([]float64, len(s)), U: vec, Lambda: make([]float64, len(lam))}
	for i, x := range m {
		out.Scale[i] = 1 / math.Sqrt(x)
	}
	for j, l := range lam {
		if n > 0 {
			l = (float64(n)*l + ShrinkDraws) / float64(n+ShrinkDraws)
		}
		if !(l > 0) {
			return nil, fmt.Errorf("low-rank mass: eigenvalue %d is %v", j, l)
		}
		out.Lambda[j] = l
	}
	return out, nil
}
