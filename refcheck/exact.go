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
	xtx := mat.NewSymDense(p, nil)
	xty := mat.NewVecDense(p, nil)
	yty := 0.0
	for i := 0; i < n; i++ {
		x := row(i)
		yty += d.Y[i] * d.Y[i]
		for a := 0; a < p; a++ {
			xty.SetVec(a, xty.AtVec(a)+x[a]*d.Y[i])
			for b := a; b < p; b++ {
				xtx.SetSym(a, b, xtx.At(a, b)+x[a]*x[b])
			}
		}
	}
	prior := make([]float64, p) // prior precision of each coefficient
	if lam := r.SlopePrior.Precision; lam > 0 {
		if r.SlopePrior.DF > 0 {
			return nil, nil, fmt.Errorf("exact posterior of %s: a Student-t prior on the slopes is not conjugate", r.Name)
		}
		for a := range prior {
			if a != icpt {
				prior[a] = lam
			}
		}
	}
	// centre the grid on the least-squares residual sd
	var ls mat.VecDense
	var ch mat.Cholesky
	if !ch.Factorize(xtx) {
		return nil, nil, fmt.Errorf("exact posterior of %s: X'X not positive definite", r.Name)
	}
	if err := ch.SolveVecTo(&ls, xty); err != nil {
		return nil, nil, fmt.Errorf("exact posterior of %s: %w", r.Name, err)
	}
	rss := yty - mat.Dot(&ls, xty)
	s0 := 0.5 * math.Log(rss/float64(n-p))
	half := 15 / math.Sqrt(2*float64(n-p))
	type node struct {
		s, logw float64
		m       []float64
		v       *mat.SymDense
	}
	nodes := make([]node, points)
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
			return nil, nil, fmt.Errorf("exact posterior of %s: precision at log sigma %g not positive definite", r.Name, s)
		}
		var rhs, m mat.VecDense
		rhs.ScaleVec(e, xty)
		if err := ch.SolveVecTo(&m, &rhs); err != nil {
			return nil, nil, fmt.Errorf("exact posterior of %s at log sigma %g: %w", r.Name, s, err)
		}
		v := mat.NewSymDense(p, nil)
		if err := ch.InverseTo(v); err != nil {
			return nil, nil, fmt.Errorf("exact posterior of %s at log sigma %g: %w", r.Name, s, err)
		}
		// log p(y | sigma) p(sigma) sigma, up to a constant
		lw := -float64(n)*s - 0.5*e*yty + 0.5*mat.Dot(&m, &rhs) - 0.5*ch.LogDet() + r.Sigma.LogDensity(math.Exp(s)) + s
		nodes[g] = node{s: s, logw: lw, m: append([]float64(nil), m.RawVector().Data...), v: v}
		best = math.Max(best, lw)
	}
	if edge := math.Max(nodes[0].logw, nodes[points-1].logw); edge-best > -30 {
		return nil, nil, fmt.Errorf("exact posterior of %s: the grid of log sigma misses mass (log weight %.1f at its ends)", r.Name, edge-best)
	}
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
	return mean, cov, nil
}
