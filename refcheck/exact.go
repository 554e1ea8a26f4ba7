package refcheck

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Exact returns the posterior moments of theta = (coefficients, log sigma)
// of the regression r on design d by quadrature: given sigma the
// coefficients are Gaussian (flat or Gaussian priors are conjugate), and
// log sigma's marginal is integrated on a grid of points values spanning
// 30 of its approximate sds. A Student-t prior on the intercept is left
// out: it is not conjugate, and on diamonds (the one posterior that has
// one, scale 10 against a posterior sd of 0.002) it moves the intercept's
// mean by about 1e-8. It returns the means and the covariance, in the
// order of theta.
//
// It is an independent check of the model (the graph of Regression.Model)
// and the data against Stan's reference draws.
func Exact(r Regression, d Design, points int) (mean []float64, cov [][]float64, err error) {
	ne := normalEquationsOf(r, d)
	prior, err := slopePrecisions(r, ne.p, ne.icpt)
	if err != nil {
		return nil, nil, err
	}
	nodes, best, err := ne.sigmaGrid(r, prior, points)
	if err != nil {
		return nil, nil, err
	}
	mean, cov = gridMoments(nodes, best, ne.p)
	return mean, cov, nil
}

// normalEquations are a regression's sufficient statistics: X'X, X'y and
// y'y of its n examples and p coefficients (the intercept at icpt; -1
// without one).
type normalEquations struct {
	n, p, icpt int
	xtx        *mat.SymDense
	xty        *mat.VecDense
	yty        float64
}

// normalEquationsOf returns the sufficient statistics of r on d.
func normalEquationsOf(r Regression, d Design) normalEquations {
	n, k := len(d.Y), len(d.X[0])
	p := k + 1 // coefficients, with the intercept
	icpt := 0  // the intercept's place among the coefficients
	switch {
	case r.NoIntercept:
		p, icpt = k, -1
	case !r.InterceptFirst:
		icpt = k
	}
	row := func(i int) []float64 {
		out := make([]float64, 0, p)
		if icpt == 0 {
			out = append(out, 1)
		}
		out = append(out, d.X[i]...)
		if icpt == k {
			out = append(out, 1)
		}
		return out
	}
	ne := normalEquations{n: n, p: p, icpt: icpt, xtx: mat.NewSymDense(p, nil), xty: mat.NewVecDense(p, nil)}
	for i := 0; i < n; i++ {
		x := row(i)
		ne.yty += d.Y[i] * d.Y[i]
		for a := 0; a < p; a++ {
			ne.xty.SetVec(a, ne.xty.AtVec(a)+x[a]*d.Y[i])
			for b := a; b < p; b++ {
				ne.xtx.SetSym(a, b, ne.xtx.At(a, b)+x[a]*x[b])
			}
		}
	}
	return ne
}

// slopePrecisions returns the prior precision of each of the p
// coefficients of r (the intercept, at icpt, and flat priors: 0), or an
// error for a prior that is not conjugate.
func slopePrecisions(r Regression, p, icpt int) ([]float64, error) {
	prior := make([]float64, p)
	if lam := r.SlopePrior.Precision; lam > 0 {
		if r.SlopePrior.DF > 0 {
			return nil, fmt.Errorf("exact posterior of %s: a Student-t prior on the slopes is not conjugate", r.Name)
		}
		for a := range prior {
			if a != icpt {
				prior[a] = lam
			}
		}
	}
	return prior, nil
}

// sigmaNode is one point of the grid of log sigma: its log weight and the
// coefficients' Gaussian given sigma (mean m, covariance v).
type sigmaNode struct {
	s, logw float64
	m       []float64
	v       *mat.SymDense
}

// sigmaGrid returns the grid of points values of log sigma, centred on the
// least-squares residual sd, with each node's weight and conditional
// Gaussian, and the largest log weight; an error when the grid's ends hold
// mass.
func (ne normalEquations) sigmaGrid(r Regression, prior []float64, points int) ([]sigmaNode, float64, error) {
	n, p, xtx, xty, yty := ne.n, ne.p, ne.xtx, ne.xty, ne.yty
	// centre the grid on the least-squares residual sd
	var ls mat.VecDense
	var ch mat.Cholesky
	if !ch.Factorize(xtx) {
		return nil, 0, fmt.Errorf("exact posterior of %s: X'X not positive definite", r.Name)
	}
	if err := ch.SolveVecTo(&ls, xty); err != nil {
		return nil, 0, fmt.Errorf("exact posterior of %s: %w", r.Name, err)
	}
	rss := yty - mat.Dot(&ls, xty)
	s0 := 0.5 * math.Log(rss/float64(n-p))
	half := 15 / math.Sqrt(2*float64(n-p))
	nodes := make([]sigmaNode, points)
	best := math.Inf(-1)
	prec := mat.NewSymDense(p, nil)
	for g := range nodes {
		s := s0 - half + 2*half*float64(g)/float64(points-1)
		e := math.Exp(-2 * s)
		for a := 0; a < p; a++ {
			for b := a; b < p; b++ {
				v := xtx.At(a, b) * e
				if a == b {
					v += prior[a]
				}
				prec.SetSym(a, b, v)
			}
		}
		if !ch.Factorize(prec) {
			return nil, 0, fmt.Errorf("exact posterior of %s: precision at log sigma %g not positive definite", r.Name, s)
		}
		var rhs, m mat.VecDense
		rhs.ScaleVec(e, xty)
		if err := ch.SolveVecTo(&m, &rhs); err != nil {
			return nil, 0, fmt.Errorf("exact posterior of %s at log sigma %g: %w", r.Name, s, err)
		}
		v := mat.NewSymDense(p, nil)
		if err := ch.InverseTo(v); err != nil {
			return nil, 0, fmt.Errorf("exact posterior of %s at log sigma %g: %w", r.Name, s, err)
		}
		// log p(y | sigma) p(sigma) sigma, up to a constant
		lw := -float64(n)*s - 0.5*e*yty + 0.5*mat.Dot(&m, &rhs) - 0.5*ch.LogDet() + r.Sigma.LogDensity(math.Exp(s)) + s
		nodes[g] = sigmaNode{s: s, logw: lw, m: append([]float64(nil), m.RawVector().Data...), v: v}
		best = math.Max(best, lw)
	}
	if edge := math.Max(nodes[0].logw, nodes[points-1].logw); edge-best > -30 {
		return nil, 0, fmt.Errorf("exact posterior of %s: the grid of log sigma misses mass (log weight %.1f at its ends)", r.Name, edge-best)
	}
	return nodes, best, nil
}

// gridMoments returns the mean and covariance of theta = (the p
// coefficients, log sigma) under the mixture of the grid's nodes (best:
// their largest log weight).
func gridMoments(nodes []sigmaNode, best float64, p int) (mean []float64, cov [][]float64) {
	d1 := p + 1
	mean = make([]float64, d1)
	second := make([][]float64, d1) // E[theta theta']
	for a := range second {
		second[a] = make([]float64, d1)
	}
	total := 0.0
	for _, nd := range nodes {
		total += math.Exp(nd.logw - best)
	}
	for _, nd := range nodes {
		w := math.Exp(nd.logw-best) / total
		th := append(append([]float64(nil), nd.m...), nd.s)
		for a := 0; a < d1; a++ {
			mean[a] += w * th[a]
			for b := 0; b < d1; b++ {
				c := th[a] * th[b]
				if a < p && b < p {
					c += nd.v.At(a, b)
				}
				second[a][b] += w * c
			}
		}
	}
	cov = make([][]float64, d1)
	for a := range cov {
		cov[a] = make([]float64, d1)
		for b := range cov[a] {
			cov[a][b] = second[a][b] - mean[a]*mean[b]
		}
	}
	return mean, cov
}
