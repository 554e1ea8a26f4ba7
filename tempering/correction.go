package tempering

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// CorrectionMethod names a construction of the Barker correction
// distribution.
type CorrectionMethod string

// Available constructions of the correction distribution.
const (
	// CorrectionNNLS fits C as a non-negative mixture of uniform cells by
	// non-negative least squares, so that N(0, sigma^2) + C matches the
	// logistic CDF on a grid (the default: more accurate).
	CorrectionNNLS CorrectionMethod = "nnls"
	// CorrectionHermite is the paper's construction: a kernel-regularised
	// Gaussian deconvolution expanded in Hermite polynomials times even
	// derivatives of the logistic density.
	CorrectionHermite CorrectionMethod = "hermite"
)

// CorrectionOptions tunes the construction of a correction table.
type CorrectionOptions struct {
	Method CorrectionMethod
	Gamma  float64 // Hermite: kernel exp(-gamma^2 t^4); default 0.05
	Terms  int     // Hermite: series terms k = 0..Terms-1; default 8
	Width  float64 // NNLS: cell width; default 0.1
}

// Correction is the tabulated distribution of the correction variable C for
// Gaussian noise of standard deviation Sigma: N(0, Sigma^2) + C is
// approximately standard logistic. Its CDF is piecewise linear between the
// grid points X, so C's density is constant on each cell [X_j, X_{j+1}].
type Correction struct {
	Sigma  float64
	Method CorrectionMethod
	X      []float64 // grid, increasing
	CDF    []float64 // CDF at X: 0 at X[0], 1 at the last point
}

// Logistic returns the standard logistic CDF 1/(1+e^-x).
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// NewCorrection tabulates the correction distribution for noise sd sigma.
func NewCorrection(sigma float64, opt CorrectionOptions) (*Correction, error) {
	if !(sigma > 0) || sigma > 1.6 {
		// Beyond about 1.8 the logistic (variance pi^2/3) no longer
		// dominates the Gaussian; tables become meaningless well before.
		return nil, fmt.Errorf("correction: sigma %v outside (0, 1.6]", sigma)
	}
	switch opt.Method {
	case CorrectionHermite:
		return hermiteCorrection(sigma, opt)
	case CorrectionNNLS, "":
		return nnlsCorrection(sigma, opt)
	}
	return nil, fmt.Errorf("correction: unknown method %q: expected nnls or hermite", opt.Method)
}

// Sample draws C by inverting the tabulated CDF.
func (c *Correction) Sample(rng *rand.Rand) float64 {
	u := rng.Float64()
	j := sort.SearchFloat64s(c.CDF, u)
	if j == 0 {
		return c.X[0]
	}
	if j >= len(c.CDF) {
		return c.X[len(c.X)-1]
	}
	f0, f1 := c.CDF[j-1], c.CDF[j]
	if f1 == f0 {
		return c.X[j]
	}
	return c.X[j-1] + (u-f0)/(f1-f0)*(c.X[j]-c.X[j-1])
}

// CDFAt returns the tabulated CDF of C at x.
func (c *Correction) CDFAt(x float64) float64 {
	j := sort.SearchFloat64s(c.X, x)
	switch {
	case j == 0:
		return 0
	case j >= len(c.X):
		return 1
	}
	x0, x1 := c.X[j-1], c.X[j]
	return c.CDF[j-1] + (x-x0)/(x1-x0)*(c.CDF[j]-c.CDF[j-1])
}

// gaussUniformCDF returns P(N(0, sigma^2) + U <= x) for U uniform on [a, b]:
// sigma/(b-a) [G((x-a)/sigma) - G((x-b)/sigma)] with G(z) = z Phi(z) + phi(z).
func gaussUniformCDF(x, a, b, sigma float64) float64 {
	g := func(z float64) float64 {
		return z*0.5*math.Erfc(-z/math.Sqrt2) + math.Exp(-0.5*z*z)/math.Sqrt(2*math.Pi)
	}
	return sigma / (b - a) * (g((x-a)/sigma) - g((x-b)/sigma))
}

// ConvolvedCDF returns P(N(0, Sigma^2) + C <= x) for the tabulated C.
func (c *Correction) ConvolvedCDF(x float64) float64 {
	f := 0.0
	for j := 0; j+1 < len(c.X); j++ {
		m := c.CDF[j+1] - c.CDF[j]
		if m == 0 {
			continue
		}
		f += m * gaussUniformCDF(x, c.X[j], c.X[j+1], c.Sigma)
	}
	return f
}

// SwapProbability returns the probability that the corrected Barker test
// swaps given its estimate deltaE of the log swap ratio and the sd pad of
// the Gaussian noise it adds to bring the estimate's noise up to Sigma:
//
//	P(deltaE + pad Z + C > 0) = 1 - P(pad Z + C <= -deltaE),
//
// Z standard normal and C the tabulated correction (C's CDF at -deltaE when
// pad is 0). Averaged over the estimate's own noise it is the Barker swap
// probability Logistic(true deltaE), up to the table's error, so its mean
// over a pair's attempts estimates the pair's swap acceptance with the test
// noise integrated out (Rao-Blackwellised).
func (c *Correction) SwapProbability(deltaE, pad float64) float64 {
	if pad <= 1e-9*c.Sigma {
		return 1 - c.CDFAt(-deltaE)
	}
	return 1 - c.paddedCDF(-deltaE, pad)
}

// paddedCDF returns P(N(0, pad^2) + C <= x) for the tabulated C, skipping
// the cells more than 10 pad away from x (whose terms are 0 or their mass
// to within 1e-23).
func (c *Correction) paddedCDF(x, pad float64) float64 {
	f := 0.0
	for j := 0; j+1 < len(c.X); j++ {
		m := c.CDF[j+1] - c.CDF[j]
		switch {
		case m == 0 || x-c.X[j] < -10*pad:
			continue
		case x-c.X[j+1] > 10*pad:
			f += m
		default:
			f += m * gaussUniformCDF(x, c.X[j], c.X[j+1], pad)
		}
	}
	return f
}

// MaxError returns the largest |P(N(0,Sigma^2)+C <= x) - Logistic(x)| over x
// in [-15, 15] on a grid of step 0.05.
func (c *Correction) MaxError() float64 {
	worst := 0.0
	for i := 0; i <= 600; i++ {
		x := -15 + 0.05*float64(i)
		worst = math.Max(worst, math.Abs(c.ConvolvedCDF(x)-Logistic(x)))
	}
	return worst
}

// hermiteCorrection builds the paper's series
//
//	p_C(x) = sum_{k>=0} (-1)^k/k! H_k(sigma^2/(4 gamma)) gamma^k p_L^(2k)(x),
//
// truncated to opt.Terms terms, with p_L^(2k) = s^(2k+1) the derivatives of
// the logistic function s by the recursion s^(n+1) = d/ds[s^(n)] s(1-s); it
// clamps negative density to zero and normalises.
func hermiteCorrection(sigma float64, opt CorrectionOptions) (*Correction, error) {
	gamma, terms := opt.Gamma, opt.Terms
	if gamma == 0 {
		gamma = 0.05
	}
	if terms == 0 {
		terms = 8
	}
	if !(gamma > 0) || terms < 1 || terms > 20 {
		return nil, fmt.Errorf("correction: hermite needs gamma > 0 and 1 to 20 terms, have %v and %d", gamma, terms)
	}
	// Series coefficients a_k = (-1)^k/k! H_k(z) gamma^k, z = sigma^2/(4 gamma),
	// with physicists' Hermite polynomials H_{k+1} = 2z H_k - 2k H_{k-1}.
	z := sigma * sigma / (4 * gamma)
	h := []float64{1, 2 * z}
	for k := 1; len(h) < terms; k++ {
		h = append(h, 2*z*h[k]-2*float64(k)*h[k-1])
	}
	coef := make([]float64, terms)
	fact, gk := 1.0, 1.0
	for k := 0; k < terms; k++ {
		if k > 0 {
			fact *= float64(k)
			gk *= gamma
		}
		sign := 1.0
		if k%2 == 1 {
			sign = -1
		}
		coef[k] = sign / fact * h[k] * gk
	}
	deriv := LogisticDerivatives(2*terms - 1)
	const lo, hi, step = -25.0, 25.0, 0.01
	n := int(math.Round((hi-lo)/step)) + 1
	c := &Correction{Sigma: sigma, Method: CorrectionHermite, X: make([]float64, n), CDF: make([]float64, n)}
	dens := make([]float64, n)
	for i := range c.X {
		x := lo + step*float64(i)
		c.X[i] = x
		s := Logistic(x)
		d := 0.0
		for k, a := range coef {
			d += a * evalPoly(deriv[2*k+1], s)
		}
		dens[i] = math.Max(0, d)
	}
	for i := 1; i < n; i++ {
		c.CDF[i] = c.CDF[i-1] + 0.5*(dens[i]+dens[i-1])*step
	}
	total := c.CDF[n-1]
	if !(total > 0) {
		return nil, fmt.Errorf("correction: hermite series with gamma %v, %d terms has no positive mass", gamma, terms)
	}
	for i := range c.CDF {
		c.CDF[i] /= total
	}
	return c, nil
}

// LogisticDerivatives returns, for n = 0..max, the coefficients (lowest
// degree first) of the polynomial P_n with s^(n)(x) = P_n(s(x)), where s is
// the logistic function: P_0 = s, P_{n+1} = P_n'(s) (s - s^2).
func LogisticDerivatives(max int) [][]float64 {
	ps := [][]float64{{0, 1}}
	for n := 0; n < max; n++ {
		p := ps[n]
		next := make([]float64, len(p)+1)
		for d := 1; d < len(p); d++ {
			c := float64(d) * p[d] // derivative term c s^(d-1)
			next[d] += c           // times s
			next[d+1] -= c         // times -s^2
		}
		ps = append(ps, next)
	}
	return ps
}

func evalPoly(c []float64, s float64) float64 {
	v := 0.0
	for i := len(c) - 1; i >= 0; i-- {
		v = v*s + c[i]
	}
	return v
}

// nnlsCorrection fits non-negative masses m_j on cells of width opt.Width
// covering [-12, 12] so that sum_j m_j P(N(0,sigma^2) + U_j <= x) matches
// the logistic CDF at x in [-16, 16], by Lawson-Hanson non-negative least
// squares with a heavily weighted row for sum_j m_j = 1.
func nnlsCorrection(sigma float64, opt CorrectionOptions) (*Correction, error) {
	w := opt.Width
	if w == 0 {
		w = 0.1
	}
	if !(w >= 0.01 && w <= 1) {
		return nil, fmt.Errorf("correction: nnls cell width %v outside [0.01, 1]", w)
	}
	const span = 12.0
	cells := int(math.Round(2 * span / w))
	edges := make([]float64, cells+1)
	for j := range edges {
		edges[j] = -span + w*float64(j)
	}
	const xlo, xhi, xstep = -16.0, 16.0, 0.05
	rows := int(math.Round((xhi-xlo)/xstep)) + 1
	a := make([]float64, (rows+1)*cells)
	b := make([]float64, rows+1)
	for i := 0; i < rows; i++ {
		x := xlo + xstep*float64(i)
		for j := 0; j < cells; j++ {
			a[i*cells+j] = gaussUniformCDF(x, edges[j], edges[j+1], sigma)
		}
		b[i] = Logistic(x)
	}
	const sumWeight = 100.0
	for j := 0; j < cells; j++ {
		a[rows*cells+j] = sumWeight
	}
	b[rows] = sumWeight
	m, err := NNLS(a, rows+1, cells, b)
	if err != nil {
		return nil, fmt.Errorf("correction: nnls fit: %w", err)
	}
	c := &Correction{Sigma: sigma, Method: CorrectionNNLS, X: edges, CDF: make([]float64, cells+1)}
	for j := 0; j < cells; j++ {
		c.CDF[j+1] = c.CDF[j] + m[j]
	}
	total := c.CDF[cells]
	for j := range c.CDF {
		c.CDF[j] /= total
	}
	return c, nil
}

// NNLS solves min ||A x - b|| subject to x >= 0 by the active-set method of
// Lawson and Hanson (1974). A is rows x cols, row-major. It uses no BLAS, so
// its result does not depend on the BLAS library or its thread count.
func NNLS(a []float64, rows, cols int, b []float64) ([]float64, error) {
	if len(a) != rows*cols || len(b) != rows {
		return nil, fmt.Errorf("nnls: %d values for %dx%d, %d right-hand sides", len(a), rows, cols, len(b))
	}
	x := make([]float64, cols)
	passive := make([]bool, cols)
	resid := make([]float64, rows)
	w := make([]float64, cols)
	gradient := func() {
		for i := 0; i < rows; i++ {
			r := b[i]
			for j, v := range a[i*cols : (i+1)*cols] {
				r -= v * x[j]
			}
			resid[i] = r
		}
		clear(w)
		for i := 0; i < rows; i++ {
			for j, v := range a[i*cols : (i+1)*cols] {
				w[j] += v * resid[i]
			}
		}
	}
	const tol = 1e-12
	for iter := 0; iter < 3*cols; iter++ {
		gradient()
		best, bj := tol, -1
		for j := 0; j < cols; j++ {
			if !passive[j] && w[j] > best {
				best, bj = w[j], j
			}
		}
		if bj < 0 {
			return x, nil
		}
		passive[bj] = true
		for inner := 0; inner < cols; inner++ {
			var idx []int
			for j, p := range passive {
				if p {
					idx = append(idx, j)
				}
			}
			sol, err := leastSquares(a, rows, cols, idx, b)
			if err != nil {
				return nil, err
			}
			s := make([]float64, cols)
			feasible := true
			for k, j := range idx {
				s[j] = sol[k]
				if sol[k] <= 0 {
					feasible = false
				}
			}
			if feasible {
				copy(x, s)
				break
			}
			alpha := math.Inf(1)
			for _, j := range idx {
				if s[j] <= 0 {
					alpha = math.Min(alpha, x[j]/(x[j]-s[j]))
				}
			}
			for j := range x {
				x[j] += alpha * (s[j] - x[j])
				if passive[j] && x[j] <= tol {
					passive[j], x[j] = false, 0
				}
			}
		}
	}
	return x, nil
}

// leastSquares solves min ||A[:, idx] y - b|| by Householder QR.
func leastSquares(a []float64, rows, cols int, idx []int, b []float64) ([]float64, error) {
	n := len(idx)
	if n > rows {
		return nil, fmt.Errorf("nnls: %d unknowns, %d equations", n, rows)
	}
	// column-major copy of the selected columns
	q := make([]float64, rows*n)
	for k, j := range idx {
		for i := 0; i < rows; i++ {
			q[k*rows+i] = a[i*cols+j]
		}
	}
	y := append([]float64(nil), b...)
	for k := 0; k < n; k++ {
		col := q[k*rows : (k+1)*rows]
		norm := 0.0
		for i := k; i < rows; i++ {
			norm += col[i] * col[i]
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			return nil, fmt.Errorf("nnls: rank-deficient columns")
		}
		if col[k] > 0 {
			norm = -norm
		}
		// v = col[k:] - norm e_1, stored in place; R[k][k] = norm
		col[k] -= norm
		vv := 0.0
		for i := k; i < rows; i++ {
			vv += col[i] * col[i]
		}
		apply := func(z []float64) {
			d := 0.0
			for i := k; i < rows; i++ {
				d += col[i] * z[i]
			}
			f := 2 * d / vv
			for i := k; i < rows; i++ {
				z[i] -= f * col[i]
			}
		}
		for c := k + 1; c < n; c++ {
			apply(q[c*rows : (c+1)*rows])
		}
		apply(y)
		col[k] = norm // keep R's diagonal; the rest of v is no longer needed
	}
	// back substitution R x = y[:n]
	sol := make([]float64, n)
	for k := n - 1; k >= 0; k-- {
		v := y[k]
		for c := k + 1; c < n; c++ {
			v -= q[c*rows+k] * sol[c]
		}
		sol[k] = v / q[k*rows+k]
	}
	return sol, nil
}
