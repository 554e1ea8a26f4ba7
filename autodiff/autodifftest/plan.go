// Package autodifftest holds what the tests of several packages check
// autodiff's evaluators against: Plan, the hand-written BLAS plan of an
// MLP, the engine MLP runs stepped on before the compiled graph computed
// its arithmetic bit for bit. Only tests import it; no run steps on it.
package autodifftest

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/convert"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/dense"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/evalargs"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Plan evaluates an MLP with all buffers allocated once, calling BLAS GEMM
// directly: the forward pass Z_l = A_{l-1} W_l + b_l, A_l = act(Z_l), and the
// backward pass dW_l = A_{l-1}^T D_l, db_l = 1^T D_l,
// D_{l-1} = (D_l W_l^T) .* act'(Z_{l-1}), with D_L = dU/dZ_L from the
// likelihood. It computes the same function as the Gorgonia graph of the
// spec (tests check the two against each other and against finite
// differences) without the VM's per-run overhead. Steady-state evaluations
// allocate nothing.
type Plan struct {
	spec  nn.Spec
	shape nn.Model // what evalargs.Check reads of the spec (no graph)
	dtype string
	f32   *plan[float32]
	f64   *plan[float64]
}

// NewPlan returns a plan of spec for batches of up to batch examples, in
// dtype "float32" or "float64" (an autodiff.DType).
func NewPlan[D ~string](spec nn.Spec, batch int, dtype D) (*Plan, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if batch <= 0 {
		return nil, fmt.Errorf("plan: batch size %d must be positive", batch)
	}
	p := &Plan{spec: spec, dtype: string(dtype), shape: nn.Model{Name: spec.Arch(), Layout: spec.Layout(),
		Inputs: spec.Sizes[0], Outputs: spec.Sizes[len(spec.Sizes)-1], OneHot: spec.Likelihood == nn.Categorical}}
	switch string(dtype) {
	case "float32":
		p.f32 = newPlan[float32](spec, batch, blas32.Implementation().Sgemm)
	case "float64", "":
		p.dtype = "float64"
		p.f64 = newPlan[float64](spec, batch, blas64.Implementation().Dgemm)
	default:
		return nil, fmt.Errorf("plan: dtype %q: expected float32 or float64", dtype)
	}
	return p, nil
}

// Dim returns the number of parameters.
func (p *Plan) Dim() int { return p.spec.NumParams() }

// MaxBatch returns the largest batch the plan was allocated for.
func (p *Plan) MaxBatch() int {
	if p.f32 != nil {
		return p.f32.maxBatch
	}
	return p.f64.maxBatch
}

// Eval implements Evaluator.
func (p *Plan) Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	if err := evalargs.Check(p.shape, p.MaxBatch(), theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	if p.spec.PriorDF == 0 {
		// Gaussian prior: its value and gradient are summed in the passes
		// that convert theta and the gradient (the gradient as
		// AddNegLogPriorGrad adds it; the value per layer in four partial
		// sums, so it can differ from Spec.NegLogPrior's single running sum
		// in the last bits)
		var sumLL, prior float64
		if p.f32 != nil {
			sumLL, prior = p.f32.eval(theta, data, idx, scale, grad, loglik, true)
		} else {
			sumLL, prior = p.f64.eval(theta, data, idx, scale, grad, loglik, true)
		}
		return prior - scale*sumLL, nil
	}
	sumLL, _ := p.likelihood(theta, data, idx, scale, grad, loglik)
	if grad != nil {
		p.spec.AddNegLogPriorGrad(theta, grad)
	}
	return p.spec.NegLogPrior(theta) - scale*sumLL, nil
}

// CanStream reports whether EvalStream is available: with the Gaussian
// prior, whose gradient the plan adds as it converts the likelihood's.
func (p *Plan) CanStream() bool { return p.spec.PriorDF == 0 }

// EvalStream is Eval with a gradient, which it hands to consume in
// consecutive chunks covering every parameter, in order, instead of
// writing it: the same values, computed the same way. consume may change
// theta's chunk; the plan has read it by then and does not read it after.
// It needs the Gaussian prior (CanStream).
func (p *Plan) EvalStream(theta []float64, data *datasets.Dataset, idx []int, scale float64, consume func(lo int, g []float64)) (float64, error) {
	if !p.CanStream() {
		return 0, fmt.Errorf("plan: a Student-t prior's gradient cannot be streamed")
	}
	if err := evalargs.Check(p.shape, p.MaxBatch(), theta, data, idx, nil, nil); err != nil {
		return 0, err
	}
	var sumLL, prior float64
	if p.f32 != nil {
		sumLL, prior = p.f32.evalStream(theta, data, idx, scale, consume)
	} else {
		sumLL, prior = p.f64.evalStream(theta, data, idx, scale, consume)
	}
	return prior - scale*sumLL, nil
}

// likelihood returns sum_i log l_i over idx; grad, when not nil, receives
// the likelihood's part of dU~/dtheta (no prior). Arguments are checked by
// the caller.
func (p *Plan) likelihood(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	var sumLL float64
	if p.f32 != nil {
		sumLL, _ = p.f32.eval(theta, data, idx, scale, grad, loglik, false)
	} else {
		sumLL, _ = p.f64.eval(theta, data, idx, scale, grad, loglik, false)
	}
	return sumLL, nil
}

type float interface{ ~float32 | ~float64 }

type gemmFunc[T float] = dense.Gemm[T]

type plan[T float] struct {
	spec     nn.Spec
	layers   []nn.Layer
	maxBatch int
	gemm     gemmFunc[T]
	w, g     []T   // parameters and likelihood gradient in the flat layout
	acts     [][]T // acts[0] inputs, acts[l] layer l's output (logits last)
	dA, dB   []T   // backward deltas, maxBatch x widest layer
	ll       []float64
	stream   [convert.StreamChunk]float64 // dense.StreamGrad's chunk
}

func newPlan[T float](spec nn.Spec, batch int, gemm gemmFunc[T]) *plan[T] {
	p := &plan[T]{spec: spec, layers: spec.Layers(), maxBatch: batch, gemm: gemm}
	n := spec.NumParams()
	p.w = make([]T, n)
	p.g = make([]T, n)
	wide := 0
	for _, s := range spec.Sizes {
		p.acts = append(p.acts, make([]T, batch*s))
		wide = max(wide, s)
	}
	p.dA = make([]T, batch*wide)
	p.dB = make([]T, batch*wide)
	p.ll = make([]float64, batch)
	return p
}

// eval runs the network on idx and returns sum_i log l_i; with grad != nil it
// writes -scale * d(sum_i log l_i)/dtheta into grad. With gaussPrior (the
// spec's prior must then be Gaussian) it also returns the prior's
// -log p(theta) and adds its gradient to grad, in float64, within the
// passes that convert theta and the gradient; otherwise the caller adds the
// prior.
func (p *plan[T]) eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64, gaussPrior bool) (sumLL, negLogPrior float64) {
	negLogPrior = p.forward(theta, data, idx, gaussPrior)
	n := len(idx)
	last := len(p.layers) - 1
	return p.loss(theta, data, idx, scale, grad, loglik, n, last, gaussPrior), negLogPrior
}

// evalStream is eval with the Gaussian prior and the gradient streamed.
func (p *plan[T]) evalStream(theta []float64, data *datasets.Dataset, idx []int, scale float64, consume func(lo int, g []float64)) (sumLL, negLogPrior float64) {
	negLogPrior = p.forward(theta, data, idx, true)
	sumLL = p.backward(data, idx, scale, true, nil, len(idx), len(p.layers)-1)
	dense.StreamGrad(p.layers, p.spec.Precision, p.g, theta, &p.stream, consume)
	return sumLL, negLogPrior
}

// forward loads theta and the examples idx and runs the forward pass; the
// logits end in acts[len(layers)]. With gaussPrior it returns the Gaussian
// prior's -log p(theta), summed per layer as Spec.NegLogPrior does (each
// layer's sum of squares in convert.SumSquares' four partial sums).
func (p *plan[T]) forward(theta []float64, data *datasets.Dataset, idx []int, gaussPrior bool) float64 {
	prior := dense.LoadTheta(p.layers, p.spec.Precision, p.w, theta, gaussPrior)
	n := len(idx)
	x := p.acts[0]
	d := data.D
	for r, i := range idx {
		convert.Features(x[r*d:(r+1)*d], data.Row(i))
	}
	last := len(p.layers) - 1
	for l, ly := range p.layers {
		dense.Forward(p.gemm, p.spec.Activation, l < last, p.acts[l], p.w[ly.W:ly.B], p.w[ly.B:ly.B+ly.Out], p.acts[l+1], n, ly.In, ly.Out)
	}
	return prior
}

// loss computes the per-example log-likelihoods from the logits and, with
// grad != nil, runs the backward pass and writes the gradient into grad.
func (p *plan[T]) loss(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64, n, last int, gaussPrior bool) float64 {
	sum := p.backward(data, idx, scale, grad != nil, loglik, n, last)
	if grad != nil {
		dense.WriteGrad(p.layers, p.spec.Precision, p.g, theta, grad, gaussPrior)
	}
	return sum
}

// backward computes the per-example log-likelihoods from the logits and
// returns their sum; with withGrad it also runs the backward pass, leaving
// -scale * d(sum_i log l_i)/dtheta in p.g.
func (p *plan[T]) backward(data *datasets.Dataset, idx []int, scale float64, withGrad bool, loglik []float64, n, last int) float64 {
	// Output layer: per-example log-likelihood and D_L = dU/dZ_L.
	ly := p.layers[last]
	logits := p.acts[last+1][:n*ly.Out]
	delta := p.dA[:n*ly.Out]
	s := T(scale)
	sum := 0.0
	for r, i := range idx {
		z := logits[r*ly.Out : (r+1)*ly.Out]
		dz := delta[r*ly.Out : (r+1)*ly.Out]
		var ll float64
		if p.spec.Likelihood == nn.Categorical {
			y := data.Labels[i]
			var lse float64
			ll, lse = dense.Categorical(z, y)
			if withGrad {
				dense.CategoricalGrad(z, dz, y, lse, s)
			}
		} else {
			inv := 1 / (p.spec.NoiseSD * p.spec.NoiseSD)
			t := data.Targets[i*ly.Out : (i+1)*ly.Out]
			ll = dense.Gaussian(z, t, inv, p.spec.GaussianLogNorm())
			if withGrad {
				dense.GaussianGrad(z, dz, t, inv, s)
			}
		}
		p.ll[r] = ll
		sum += ll
	}
	if loglik != nil {
		copy(loglik, p.ll[:n])
	}
	if !withGrad {
		return sum
	}
	for l := last; l >= 0; l-- {
		ly := p.layers[l]
		var prev []T
		if l > 0 {
			prev = p.dB
		}
		dense.Backward(p.gemm, p.acts[l], p.w[ly.W:ly.B], p.dA, p.g[ly.W:ly.B], p.g[ly.B:ly.B+ly.Out], prev, n, ly.In, ly.Out)
		if l > 0 {
			dense.ActivateGrad(p.spec.Activation, p.acts[l][:n*ly.In], prev[:n*ly.In])
			p.dA, p.dB = p.dB, p.dA
		}
	}
	return sum
}

// Logits writes the network's outputs for examples idx into out (row-major,
// len(idx) x outputs).
func (p *Plan) Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	if err := evalargs.Check(p.shape, p.MaxBatch(), theta, data, idx, nil, nil); err != nil {
		return err
	}
	k := p.spec.Sizes[len(p.spec.Sizes)-1]
	if len(out) < len(idx)*k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*k)
	}
	if p.f32 != nil {
		p.f32.forward(theta, data, idx, false)
		for i, v := range p.f32.acts[len(p.f32.layers)][:len(idx)*k] {
			out[i] = float64(v)
		}
	} else {
		p.f64.forward(theta, data, idx, false)
		copy(out, p.f64.acts[len(p.f64.layers)][:len(idx)*k])
	}
	return nil
}

// Float32 reports whether the plan computes in float32.
func (p *Plan) Float32() bool { return p.f32 != nil }

// LogitsFloat32 is Logits with the weights in float32, the precision a
// float32 plan computes in: they are read where they are, not converted,
// and the logits are those of Logits of the weights widened to float64,
// bit for bit. A float64 plan refuses them.
func (p *Plan) LogitsFloat32(w []float32, data *datasets.Dataset, idx []int, out []float64) error {
	if p.f32 == nil {
		return fmt.Errorf("logits: a %s plan takes float64 weights", p.dtype)
	}
	k := p.spec.Sizes[len(p.spec.Sizes)-1]
	switch {
	case len(w) != p.Dim():
		return fmt.Errorf("logits: %d weights, model %s has %d parameters", len(w), p.shape.Name, p.Dim())
	case len(idx) == 0 || len(idx) > p.MaxBatch():
		return fmt.Errorf("logits: %d examples, expected 1 to %d", len(idx), p.MaxBatch())
	case data.D != p.shape.Inputs:
		return fmt.Errorf("logits: data has %d features, model %s takes %d", data.D, p.shape.Name, p.shape.Inputs)
	case len(out) < len(idx)*k:
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*k)
	}
	own := p.f32.w
	p.f32.w = w // forward only reads the weights
	p.f32.forward(nil, data, idx, false)
	p.f32.w = own
	for i, v := range p.f32.acts[len(p.f32.layers)][:len(idx)*k] {
		out[i] = float64(v)
	}
	return nil
}
