package experiments

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TinyBNN is a one-hidden-unit tanh network for 1-d regression whose
// posterior has two modes that no symmetry of the network relates:
//
//	f(x; w, v) = v tanh(w x + Bias),
//	U(w, v) = sum_i (Y_i - f(X_i))^2 / (2 NoiseSD^2) + (w^2 + v^2) / (2 PriorSD^2).
//
// The hidden bias is fixed (a point-mass prior), which breaks the sign flip
// (w, v) -> (-w, -v) of a free network: the flipped weights compute
// v tanh(w x - Bias), a step centred at +Bias/w instead of -Bias/w. On data
// close to an odd function both fit, with different losses, so the
// posterior has a mode with v > 0 and one with v < 0, of unequal mass and
// different predictions, separated by v = 0 where f vanishes.
//
// Like the paper's mixtures, every evaluation of U carries Gaussian noise of
// variance GradNoiseVar (the mean of PerEval per-example terms, which the
// exchange test sees) and every gradient coordinate noise of the same
// variance; no sampler is told it.
type TinyBNN struct {
	X, Y         []float64 // the data set
	NoiseSD      float64   // the likelihood's noise sd sigma
	PriorSD      float64   // the prior sd of w and v
	Bias         float64   // the fixed hidden bias
	GradNoiseVar float64   // variance of the noise on U and on each gradient coordinate
	PerEval      int       // per-example terms per evaluation of U
	Test         []float64 // the inputs at which the posterior predictive mean is scored
}

// NewTinyBNN returns the sweep's network: 20 inputs evenly spaced on
// [-2, 2] with Y = tanh(2 (X + Shift)), NoiseSD 0.5, PriorSD 2, Bias 1,
// gradient noise variance 0.25 over 16 terms (as gauss1d4), scored at
// X = -0.5, 0, 0.5. Shift 0 makes the two modes mirror images of equal mass;
// the sweep's Shift 0.03 gives the v > 0 mode about 0.7 of the mass.
func NewTinyBNN(shift float64) *TinyBNN {
	const n = 20
	b := &TinyBNN{NoiseSD: 0.5, PriorSD: 2, Bias: 1, GradNoiseVar: 0.25, PerEval: 16, Test: []float64{-0.5, 0, 0.5}}
	for i := 0; i < n; i++ {
		x := -2 + 4*float64(i)/(n-1)
		b.X = append(b.X, x)
		b.Y = append(b.Y, math.Tanh(2*(x+shift)))
	}
	return b
}

// Dim returns 2: theta = (w, v).
func (b *TinyBNN) Dim() int { return 2 }

// Size returns 0: the noise terms are unlimited.
func (b *TinyBNN) Size() int { return 0 }

// Predict returns the network's output f(x; theta) = v tanh(w x + Bias).
func (b *TinyBNN) Predict(theta []float64, x float64) float64 {
	return theta[1] * math.Tanh(theta[0]*x+b.Bias)
}

// Exact returns U(theta) and writes grad U(theta) into grad (if not nil).
func (b *TinyBNN) Exact(theta, grad []float64) float64 {
	w, v := theta[0], theta[1]
	s2, p2 := b.NoiseSD*b.NoiseSD, b.PriorSD*b.PriorSD
	u := (w*w + v*v) / (2 * p2)
	gw, gv := w/p2, v/p2
	for i, x := range b.X {
		t := math.Tanh(w*x + b.Bias)
		r := b.Y[i] - v*t
		u += r * r / (2 * s2)
		gv -= r * t / s2
		gw -= r * v * (1 - t*t) * x / s2
	}
	if grad != nil {
		grad[0], grad[1] = gw, gv
	}
	return u
}

// Gradient returns a noisy U and writes a noisy gradient into grad.
func (b *TinyBNN) Gradient(theta, grad []float64, _ sampler.Minibatch, rng *rand.Rand) (float64, error) {
	if len(theta) != 2 || len(grad) != 2 {
		return 0, fmt.Errorf("tiny bnn: theta and grad have %d and %d coordinates, want 2", len(theta), len(grad))
	}
	u := b.Exact(theta, grad)
	sd := math.Sqrt(b.GradNoiseVar)
	for i := range grad {
		grad[i] += sd * rng.NormFloat64()
	}
	return u + sd*rng.NormFloat64(), nil
}

// Terms writes to-from per-example terms u_i = U(theta) + e_i with e_i ~
// N(0, PerEval*GradNoiseVar) for each theta, as sampler.Mixture.Terms does.
func (b *TinyBNN) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	per := b.PerEval
	if per <= 0 {
		per = 16
	}
	sampler.NoisyTerms(b.Exact, thetas, to-from, math.Sqrt(b.GradNoiseVar*float64(per)), rng, out)
	return nil
}

// BNNReference is the exact posterior of a TinyBNN by quadrature.
type BNNReference struct {
	Predictive []float64    // E[f(x)] at each of the network's Test inputs
	MassPos    float64      // P(v > 0): the mass of the mode with v > 0
	Modes      [2][]float64 // the minimiser of U with v > 0 and with v < 0
	UMin       [2]float64   // U at each of those minimisers
}

// Reference integrates exp(-U) on a grid x grid midpoint rule over
// [-half, half]^2 (the prior puts mass below 1e-6 outside 5 PriorSD) and
// returns the posterior predictive mean at b.Test, the mass of v > 0 and
// each sign's minimiser of U.
func (b *TinyBNN) Reference(grid int) (*BNNReference, error) {
	if grid < 10 {
		return nil, fmt.Errorf("tiny bnn reference: grid %d, want at least 10 points per axis", grid)
	}
	half := 5 * b.PriorSD
	d := 2 * half / float64(grid)
	us := make([]float64, grid*grid)
	ref := &BNNReference{UMin: [2]float64{math.Inf(1), math.Inf(1)}}
	umin := math.Inf(1)
	for a := 0; a < grid; a++ {
		for c := 0; c < grid; c++ {
			th := []float64{-half + (float64(a)+0.5)*d, -half + (float64(c)+0.5)*d}
			u := b.Exact(th, nil)
			us[a*grid+c] = u
			umin = math.Min(umin, u)
			s := 0
			if th[1] < 0 {
				s = 1
			}
			if u < ref.UMin[s] {
				ref.UMin[s], ref.Modes[s] = u, th
			}
		}
	}
	z, zpos := 0.0, 0.0
	ref.Predictive = make([]float64, len(b.Test))
	for a := 0; a < grid; a++ {
		for c := 0; c < grid; c++ {
			th := []float64{-half + (float64(a)+0.5)*d, -half + (float64(c)+0.5)*d}
			p := math.Exp(-(us[a*grid+c] - umin))
			z += p
			if th[1] > 0 {
				zpos += p
			}
			for j, x := range b.Test {
				ref.Predictive[j] += p * b.Predict(th, x)
			}
		}
	}
	for j := range ref.Predictive {
		ref.Predictive[j] /= z
	}
	ref.MassPos = zpos / z
	return ref, nil
}

// Start returns the minimiser of U in the lighter mode, where the sweep
// starts PT and the swaps-off ablation (as the paper starts in the
// lowest-weight mode).
func (r *BNNReference) Start() []float64 {
	if r.MassPos < 0.5 {
		return append([]float64(nil), r.Modes[0]...)
	}
	return append([]float64(nil), r.Modes[1]...)
}

// PredictiveSums are a chain's kept samples summarised at each checkpoint:
// Sum[c][j] is the sum of f(Test[j]) over the samples kept by checkpoint c,
// N[c] their number.
type PredictiveSums struct {
	Sum [][]float64
	N   []float64
}

// PredictiveError returns, at each checkpoint, the largest |E_hat f(x) -
// E f(x)| over the test inputs, E_hat from the samples pooled over ps, E
// from ref (1 with no samples).
func PredictiveError(ref []float64, ps ...PredictiveSums) []float64 {
	out := make([]float64, len(ps[0].N))
	for c := range out {
		n := 0.0
		sum := make([]float64, len(ref))
		for _, p := range ps {
			n += p.N[c]
			for j := range sum {
				sum[j] += p.Sum[c][j]
			}
		}
		if n == 0 {
			out[c] = 1
			continue
		}
		for j, r := range ref {
			out[c] = math.Max(out[c], math.Abs(sum[j]/n-r))
		}
	}
	return out
}

// RunBNNChains runs pt on b from starts for o.Steps() steps with seed and
// returns rung 1's PredictiveSums (samples kept after burn-in every o.Thin
// steps) at each checkpoint, and the final state.
func RunBNNChains(pt *driver.Driver, b *TinyBNN, o SweepSettings, starts [][]float64, seed uint64) (PredictiveSums, *tempering.PTState, error) {
	cps := o.Checkpoints()
	out := PredictiveSums{Sum: make([][]float64, len(cps)), N: make([]float64, len(cps))}
	cur := make([]float64, len(b.Test))
	n := 0.0
	st, err := runSweep(pt, b, b, o, starts, seed, func(theta []float64) {
		for j, x := range b.Test {
			cur[j] += b.Predict(theta, x)
		}
		n++
	}, func(c int) {
		out.Sum[c], out.N[c] = append([]float64(nil), cur...), n
	})
	return out, st, err
}

// BNNSweepCase runs the sweep's three methods on the network b with one
// seed, at equal gradient cost, as SweepCase does on a mixture: PT with the
// adapted ladder started in the lighter mode ("pt"), the same ladder with
// swaps off ("swaps-off"), and o.Replicas independent chains at T = 1
// started from the prior ("independent"). It returns each method's
// PredictiveError against ref by name, and PT's final state.
func BNNSweepCase(o SweepSettings, b *TinyBNN, ref *BNNReference, seed uint64) (map[string][]float64, *tempering.PTState, error) {
	errs := map[string][]float64{}
	start := ref.Start()
	st, err := threeMethods(o, seed, [][]float64{start}, func(k int, rng *rand.Rand) []float64 {
		return []float64{b.PriorSD * rng.NormFloat64(), b.PriorSD * rng.NormFloat64()}
	}, func(method string, pt *driver.Driver, starts [][]float64, seed uint64) (any, *tempering.PTState, error) {
		return RunBNNChains(pt, b, o, starts, seed)
	}, func(method string, rs []any) {
		ps := make([]PredictiveSums, len(rs))
		for i, r := range rs {
			ps[i] = r.(PredictiveSums)
		}
		errs[method] = PredictiveError(ref.Predictive, ps...)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("tiny bnn: %w", err)
	}
	return errs, st, nil
}
