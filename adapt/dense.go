package adapt

import (
	"errors"
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/gonum/mat"
)

// ShrinkDraws is the regularisation weight of a mass from n draws, as
// Stan's dense metric weighs its regularisation (n/(n + 5) of the
// estimate). Stan adds 1e-3 (5/(n + 5)) I to n/(n + 5) of the covariance,
// in the model's units; here the shrinkage is of the correlation matrix R
// toward I in the logarithm of its spectrum, R' = R^w with w = n/(n +
// ShrinkDraws) (eigenvalues lambda^w: the condition number kappa becomes
// kappa^w), which needs no units and keeps a small eigenvalue small.
// Shrinking R linearly, w R + (1 - w) I, adds 1 - w to every eigenvalue:
// on diamonds, whose correlation matrix's smallest eigenvalue is 1.3e-5,
// a window of 50,000 draws would add 1e-4 and widen that direction's
// mass 8-fold.
const ShrinkDraws = 5

// MinDrawsPerCoordinate is how many draws per coordinate a window needs
// for a dense mass: with fewer than 2 D draws (or gradients) the sample
// matrix is singular or nearly so (its smallest eigenvalues are noise:
// Marchenko and Pastur), so the window's mass is its diagonal alone (R
// taken as I): on a 1,600-parameter network a first window of 40 steps
// gave a gradient matrix of rank 40.
const MinDrawsPerCoordinate = 2

// tooFew reports whether n draws are too few for a dense estimate of d
// coordinates (n <= 0: exact, never).
func tooFew(n, d int) bool { return n > 0 && n < MinDrawsPerCoordinate*d }

// shrinkWeight returns w = n/(n + ShrinkDraws) (1 for n <= 0: exact).
func shrinkWeight(n int) float64 {
	if n <= 0 {
		return 1
	}
	return float64(n) / float64(n+ShrinkDraws)
}

// shrinkEigen returns lambda^w, lambda held to at least 1e-12 (a sample
// correlation matrix from fewer draws than coordinates is singular).
func shrinkEigen(lambda, w float64) float64 {
	return math.Pow(math.Max(lambda, 1e-12), w)
}

// corrSpectrum returns the sds of the symmetric positive-definite a (d x
// d, row-major) and the eigen-decomposition of its correlation matrix
// (eigenvalues ascending, eigenvectors as columns).
func corrSpectrum(a []float64, d int) (sd, vals []float64, vecs *mat.Dense, err error) {
	sd = make([]float64, d)
	for i := range sd {
		v := a[i*d+i]
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, nil, nil, fmt.Errorf("coordinate %d's variance is %v", i, v)
		}
		sd[i] = math.Sqrt(v)
	}
	r := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := a[i*d+j] / (sd[i] * sd[j])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, nil, fmt.Errorf("entry (%d, %d) is %v", i, j, a[i*d+j])
			}
			r.SetSym(i, j, v)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(r, true) {
		return nil, nil, nil, errors.New("eigen-decomposition did not converge")
	}
	vecs = new(mat.Dense)
	es.VectorsTo(vecs)
	return sd, es.Values(nil), vecs, nil
}

// identitySpectrum returns the eigen-decomposition of I (d x d).
func identitySpectrum(d int) ([]float64, *mat.Dense) {
	vals := make([]float64, d)
	v := mat.NewDense(d, d, nil)
	for i := range vals {
		vals[i] = 1
		v.Set(i, i, 1)
	}
	return vals, v
}

// fromSpectrum returns V diag(f(lambda)) V' (d x d, row-major) scaled by
// the outer product of sc: out_ij = sc_i sc_j sum_k V_ik f(lambda_k) V_jk.
func fromSpectrum(vals []float64, vecs *mat.Dense, sc []float64, f func(float64) float64) []float64 {
	d := len(vals)
	fl := make([]float64, d)
	for k, l := range vals {
		fl[k] = f(l)
	}
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := 0.0
			for k := 0; k < d; k++ {
				v += vecs.At(i, k) * fl[k] * vecs.At(j, k)
			}
			v *= sc[i] * sc[j]
			out[i*d+j], out[j*d+i] = v, v
		}
	}
	return out
}

// observeFull adds position theta to a dense or low-rank estimate: Mean
// and M2 as observe, and for PrecondDense, with delta = theta - Mean
// before the step and n the new count, the co-moment's update (Welford's,
// exact for the symmetric matrix)
//
//	Cross += ((n-1)/n) delta delta'   (D(D+1)/2 values)
//
// so that Cross is the sum of the deviations' products from the window's
// mean; for PrecondLowRank, with the step's stochastic gradient g, the
// subspace iterations' (Subspace.observe).
func (e *MassEstimate) observeFull(theta, g []float64) {
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
		e.Sub.observe(theta, g)
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
// matrix a (d x d, row-major) shrunk as DenseMassOf shrinks a covariance
// from n draws, from its correlation form (whose condition is far
// better): a = S^1/2 R S^1/2, a'^-1 = S^-1/2 R^-w S^-1/2.
func inverseShrunk(a []float64, d, n int) ([]float64, error) {
	sd, vals, vecs, err := corrSpectrum(a, d)
	if err != nil {
		return nil, err
	}
	if tooFew(n, d) {
		vals, vecs = identitySpectrum(d)
	}
	inv := make([]float64, d)
	for i, v := range sd {
		inv[i] = 1 / v
	}
	w := shrinkWeight(n)
	return fromSpectrum(vals, vecs, inv, func(l float64) float64 { return 1 / shrinkEigen(l, w) }), nil
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
//	Sigma = S^1/2 R^w S^1/2,  w = n/(n + ShrinkDraws),
//	M^-1  = Sigma / c,
//
// where c, the scale, is Sigma's smallest eigenvalue under
// MassScaleStiffest (every direction then moves at the pace of unit
// mass's stiffest, the curvature 1/lambda_min(Sigma) in every direction:
// the learning rate keeps its unit-mass meaning) and its largest under
// MassScaleWidest (at the pace of unit mass's widest). The factor
// C = S^1/2 chol(R^w) / sqrt(c) is computed from the correlation matrix,
// whose condition is far better than Sigma's. From fewer than
// MinDrawsPerCoordinate draws per coordinate R is taken as I (the mass is
// the variances' diagonal). A coordinate whose variance is not positive
// and finite is an error.
func DenseMassOf(cov []float64, d, n int, scale MassScale) (*sampler.DenseMass, error) {
	if d < 1 || len(cov) != d*d {
		return nil, fmt.Errorf("dense mass: %d values for a %d x %d covariance", len(cov), d, d)
	}
	sd, vals, vecs, err := corrSpectrum(cov, d)
	if err != nil {
		return nil, fmt.Errorf("dense mass: %w", err)
	}
	if tooFew(n, d) {
		vals, vecs = identitySpectrum(d)
	}
	w := shrinkWeight(n)
	ones := make([]float64, d)
	for i := range ones {
		ones[i] = 1
	}
	corr := fromSpectrum(vals, vecs, ones, func(l float64) float64 { return shrinkEigen(l, w) })
	sigma := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			sigma.SetSym(i, j, corr[i*d+j]*sd[i]*sd[j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sigma, false) {
		return nil, errors.New("dense mass: eigenvalues of the covariance did not converge")
	}
	ev := es.Values(nil) // ascending
	c := ev[len(ev)-1]
	if scale == MassScaleStiffest {
		c = ev[0]
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
// the rank eigenpairs of its correlation matrix whose eigenvalues are
// farthest from 1 (|log lambda| largest: the widest and the stiffest
// directions; by eigen-decomposition, which LowRankMassFrom's subspace
// iterations approximate). With
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
	pick := farthest(vals, rank)
	lam, vec := make([]float64, 0, len(pick)), make([]float64, 0, d*len(pick))
	for _, j := range pick {
		lam = append(lam, vals[j])
	}
	for i := 0; i < d; i++ {
		for _, j := range pick {
			vec = append(vec, ev.At(i, j))
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
	w := shrinkWeight(n)
	for j, l := range lam {
		if n > 0 {
			l = shrinkEigen(l, w)
		}
		if !(l > 0) {
			return nil, fmt.Errorf("low-rank mass: eigenvalue %d is %v", j, l)
		}
		out.Lambda[j] = l
	}
	return out, nil
}
