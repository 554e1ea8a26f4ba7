package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Mixture is an isotropic Gaussian mixture target with noisy evaluations:
// U(theta) = -log sum_m W_m N(theta; Means_m, SD^2 I), and each evaluation of
// U and of grad U is perturbed by zero-mean Gaussian noise of variance
// NoiseVar, realised as the mean of PerEval independent per-example terms (so
// an exchange test can estimate the noise as it would from a minibatch).
// No sampler is told NoiseVar.
type Mixture struct {
	Weights  []float64
	Means    [][]float64
	SD       float64
	NoiseVar float64
	PerEval  int // per-example terms per evaluation; default 16
}

// Gauss1D4 returns the paper's 1-d target: weights 0.1, 0.2, 0.3, 0.4 at
// -9, -3, 3, 9, sd 0.6, noise variance 0.25.
func Gauss1D4() *Mixture {
	return &Mixture{Weights: []float64{0.1, 0.2, 0.3, 0.4}, Means: [][]float64{{-9}, {-3}, {3}, {9}}, SD: 0.6, NoiseVar: 0.25, PerEval: 16}
}

// Gauss2D5 returns the paper's 2-d target: weights 0.3, 0.25, 0.2, 0.15, 0.1
// at (0,0), (6,6), (-6,6), (-6,-6), (6,-6), sd 0.6, noise variance 0.25.
func Gauss2D5() *Mixture {
	return &Mixture{Weights: []float64{0.3, 0.25, 0.2, 0.15, 0.1},
		Means: [][]float64{{0, 0}, {6, 6}, {-6, 6}, {-6, -6}, {6, -6}}, SD: 0.6, NoiseVar: 0.25, PerEval: 16}
}

// Target returns a named mixture target: gauss1d4 or gauss2d5.
func Target(name string) (*Mixture, error) {
	switch name {
	case "gauss1d4":
		return Gauss1D4(), nil
	case "gauss2d5":
		return Gauss2D5(), nil
	}
	return nil, fmt.Errorf("unknown target %q: expected gauss1d4 or gauss2d5", name)
}

// Start returns the mean of the lowest-weight component, where the paper
// starts every chain.
func (m *Mixture) Start() []float64 {
	lo := 0
	for i, w := range m.Weights {
		if w < m.Weights[lo] {
			lo = i
		}
	}
	return append([]float64(nil), m.Means[lo]...)
}

// NearestMode returns the index of the component whose mean is nearest x.
func (m *Mixture) NearestMode(x []float64) int {
	best, bd := 0, math.Inf(1)
	for c, mu := range m.Means {
		d := 0.0
		for i := range x {
			d += (x[i] - mu[i]) * (x[i] - mu[i])
		}
		if d < bd {
			best, bd = c, d
		}
	}
	return best
}

// ModeWeights returns the fraction of samples nearest each component.
func (m *Mixture) ModeWeights(xs [][]float64) []float64 {
	w := make([]float64, len(m.Means))
	for _, x := range xs {
		w[m.NearestMode(x)] += 1 / float64(len(xs))
	}
	return w
}

// Dim returns the dimension.
func (m *Mixture) Dim() int { return len(m.Means[0]) }

// Size returns 0: the noise terms are unlimited.
func (m *Mixture) Size() int { return 0 }

func (m *Mixture) terms() int {
	if m.PerEval <= 0 {
		return 16
	}
	return m.PerEval
}

// Exact returns U(theta) and writes grad U(theta) into grad (if not nil).
func (m *Mixture) Exact(theta, grad []float64) float64 {
	// log-sum-exp over components of log W_m - |theta-mu_m|^2/(2 SD^2)
	lw := make([]float64, len(m.Weights))
	best := math.Inf(-1)
	for c, mu := range m.Means {
		d2 := 0.0
		for i, v := range theta {
			d := v - mu[i]
			d2 += d * d
		}
		lw[c] = math.Log(m.Weights[c]) - d2/(2*m.SD*m.SD)
		best = math.Max(best, lw[c])
	}
	sum := 0.0
	for c := range lw {
		lw[c] = math.Exp(lw[c] - best)
		sum += lw[c]
	}
	d := float64(len(theta))
	u := -(best + math.Log(sum)) + 0.5*d*math.Log(2*math.Pi*m.SD*m.SD)
	if grad != nil {
		clear(grad)
		for c, mu := range m.Means {
			r := lw[c] / sum
			for i, v := range theta {
				grad[i] += r * (v - mu[i]) / (m.SD * m.SD)
			}
		}
	}
	return u
}

// Density returns the mixture density at theta.
func (m *Mixture) Density(theta []float64) float64 { return math.Exp(-m.Exact(theta, nil)) }

// Gradient returns a noisy U and writes a noisy gradient into grad.
func (m *Mixture) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	u := m.Exact(theta, grad)
	sd := math.Sqrt(m.NoiseVar) // mean of PerEval terms of variance PerEval*NoiseVar
	return u + sd*rng.NormFloat64(), m.addGradNoise(grad, sd, rng)
}

func (m *Mixture) addGradNoise(grad []float64, sd float64, rng *rand.Rand) error {
	for i := range grad {
		grad[i] += sd * rng.NormFloat64()
	}
	return nil
}

// Terms writes to-from per-example terms u_i = U(theta) + e_i with e_i ~
// N(0, PerEval*NoiseVar) for each theta (the terms are independent, so there
// is no order to continue): their mean has the noise of one evaluation when
// to-from = PerEval.
func (m *Mixture) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	NoisyTerms(m.Exact, thetas, to-from, math.Sqrt(m.NoiseVar*float64(m.terms())), rng, out)
	return nil
}

// NoisyTerms writes n per-example terms u_i = exact(theta) + sd Z_i, Z_i
// standard normal, into out[t] for each thetas[t]: the Terms of a synthetic
// target whose terms are its exact energy plus independent noise (drawn from
// rng theta by theta, term by term).
func NoisyTerms(exact func(theta, grad []float64) float64, thetas [][]float64, n int, sd float64, rng *rand.Rand, out [][]float64) {
	for t, th := range thetas {
		u := exact(th, nil)
		for i := 0; i < n; i++ {
			out[t][i] = u + sd*rng.NormFloat64()
		}
	}
}

// Gaussian is a d-dimensional Gaussian target N(Mean, diag(Var)) with
// gradient noise of variance NoiseVar per coordinate: a target whose answer
// is known, for tests.
type Gaussian struct {
	Mean, Var []float64
	NoiseVar  float64
}

// Dim returns the dimension.
func (g *Gaussian) Dim() int { return len(g.Mean) }

// Gradient returns U(theta) and a noisy gradient.
func (g *Gaussian) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	u := 0.0
	sd := math.Sqrt(g.NoiseVar)
	for i, v := range theta {
		d := v - g.Mean[i]
		u += 0.5 * d * d / g.Var[i]
		grad[i] = d/g.Var[i] + sd*rng.NormFloat64()
	}
	return u, nil
}

// StdGaussian is the D-dimensional standard Gaussian target, U = |theta|^2/2,
// with exact energies and gradients: Size is 1, so every exchange test on it
// is the exact Barker test. Tempered to T it is N(0, T I), and its
// communication barrier between temperatures T1 < T2 is known in the limit
// of many rungs, sqrt(D/(2 pi)) ln(T2/T1), which makes it the reference for
// ladder adaptation.
type StdGaussian struct{ D int }

// Dim returns D.
func (g StdGaussian) Dim() int { return g.D }

// Size returns 1: energies are exact.
func (g StdGaussian) Size() int { return 1 }

// Gradient writes theta into grad and returns |theta|^2/2.
func (g StdGaussian) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	copy(grad, theta)
	return halfSquaredNorm(theta), nil
}

// Terms writes each theta's exact energy as its single term.
func (g StdGaussian) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	for t, th := range thetas {
		out[t][0] = halfSquaredNorm(th)
	}
	return nil
}

func halfSquaredNorm(x []float64) float64 {
	u := 0.0
	for _, v := range x {
		u += 0.5 * v * v
	}
	return u
}

// CorrelatedGaussian is the Gaussian target N(Mean, Cov) with any
// covariance, U = (theta - Mean)' Cov^-1 (theta - Mean)/2, whose gradient
// is estimated with noise of covariance NoiseVar Cov^-1: the shape of a
// minibatch gradient's noise, whose covariance is about (N/b - 1) times the
// per-example Fisher information, the posterior's precision over N. A
// target whose answer is known, for tests of masses that are not
// diagonal. Build it with NewCorrelatedGaussian.
type CorrelatedGaussian struct {
	Mean     []float64
	NoiseVar float64
	chol     *DenseMass // Cov = L L' (L in Chol)
	w        []float64
}

// NewCorrelatedGaussian returns N(mean, cov) (cov row-major D x D,
// symmetric positive definite) with gradient noise of covariance noiseVar
// cov^-1.
func NewCorrelatedGaussian(mean, cov []float64, noiseVar float64) (*CorrelatedGaussian, error) {
	l, err := NewDenseMass(cov, len(mean))
	if err != nil {
		return nil, fmt.Errorf("correlated Gaussian: covariance: %w", err)
	}
	return &CorrelatedGaussian{Mean: append([]float64(nil), mean...), NoiseVar: noiseVar, chol: l, w: make([]float64, len(mean))}, nil
}

// Dim returns the dimension.
func (g *CorrelatedGaussian) Dim() int { return len(g.Mean) }

// Gradient returns U(theta) and Cov^-1 (theta - Mean) + sqrt(NoiseVar)
// L^-T z (z standard normal, Cov = L L'): with w = L^-1 (theta - Mean),
// U = w'w/2 and the gradient is L^-T (w + sqrt(NoiseVar) z).
func (g *CorrelatedGaussian) Gradient(theta, grad []float64, _ Minibatch, rng *rand.Rand) (float64, error) {
	d, l, w := len(g.Mean), g.chol.Chol, g.w
	for i := 0; i < d; i++ { // forward solve L w = theta - Mean
		s := theta[i] - g.Mean[i]
		for j := 0; j < i; j++ {
			s -= l[i*d+j] * w[j]
		}
		w[i] = s / l[i*d+i]
	}
	u := 0.5 * dot(w, w)
	sd := math.Sqrt(g.NoiseVar)
	for i := range w {
		w[i] += sd * rng.NormFloat64()
	}
	for i := d - 1; i >= 0; i-- { // back solve L' grad = w
		s := w[i]
		for j := i + 1; j < d; j++ {
			s -= l[j*d+i] * grad[j]
		}
		grad[i] = s / l[i*d+i]
	}
	return u, nil
}

// dot returns a'b.
func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
