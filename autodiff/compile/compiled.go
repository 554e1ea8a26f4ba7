// Package compile compiles a model's Gorgonia expression graph (the
// contract nn.Graph: an MLP, a CNN, a model of the user's own) into an
// execution plan that evaluates the minibatch potential
//
//	U~(theta) = -log p(theta) - scale * sum_i log l(theta; x_i),
//
// its gradient, its per-example log-likelihoods and the model's logits:
// the graph's ops in topological order, each a small kernel over buffers
// allocated once (BLAS GEMM for products and convolutions), then their
// adjoints in reverse order. New compiles a model with its gradient,
// NewForward without; Check reports whether every op of a graph has a
// kernel. The package autodiff runs it (its engines plan and compiled) and
// falls back to Gorgonia's VM for a graph Check refuses; its tests check
// the two against each other.
package compile

import (
	"errors"
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/convert"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/dense"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/evalargs"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"gorgonia.org/tensor"
)

// Evaluator evaluates any model of the contract (nn.Graph) by
// compiling its Gorgonia expression graph once into an execution plan: the
// graph's ops in topological order, each a small kernel over buffers
// allocated at compile time (matrix products and the convolution's im2col
// products on BLAS GEMM, elementwise operations with broadcasting, fused
// ReLU, max pooling that remembers its argmax, (log-)softmax, sums), then
// their adjoints in reverse order, seeded with
//
//	d cost / d LogLik_r = -scale * mask_r
//
// for cost = -scale * sum_r mask_r LogLik_r, the likelihood's part of the
// potential (mask_r = 0 for the rows that pad a short batch). The prior is
// added in float64 from the layout, as autodiff.GraphEvaluator does. It
// computes what autodiff.GraphEvaluator computes on Gorgonia's VM (tests
// check the two against each other and against finite differences) without
// the VM's per-run allocations and layout copies; steady-state evaluations
// allocate nothing. A graph with an op the compiler has no kernel for is
// refused with an *UnsupportedOpError (Check); autodiff.NewFor then uses
// the VM. It satisfies autodiff.Evaluator. Not safe for concurrent use.
type Evaluator struct {
	model  nn.Model
	batch  int
	k      int // outputs
	f32    *program[float32]
	f64    *program[float64]
	ll     []float64
	gauss  bool                         // every learnable's prior is Gaussian
	mlp    *nn.Spec                     // an nn.Spec MLP's spec: the plan's arithmetic (mlp.go)
	layers []nn.Layer                   // the MLP's layers (mlp.Layers(), made once)
	stream [convert.StreamChunk]float64 // EvalStream's chunk
}

// New compiles model's graph for batches of up to batch examples of dtype
// (tensor.Float32 or tensor.Float64), with its gradient.
func New(model nn.Model, batch int, dtype tensor.Dtype) (*Evaluator, error) {
	return newEvaluator(model, batch, dtype, true)
}

// NewForward compiles model's graph without the backward pass (for
// prediction and validation): Eval reports no gradient.
func NewForward(model nn.Model, batch int, dtype tensor.Dtype) (*Evaluator, error) {
	return newEvaluator(model, batch, dtype, false)
}

// Check reports whether the graph compiler supports every op of model's
// graph: nil, or an error wrapping *UnsupportedOpError naming the first op
// it does not know (or another error if the graph cannot be built).
func Check(model nn.Model) error {
	_, err := newEvaluator(model, 1, tensor.Float64, true)
	return err
}

// IsUnsupported reports whether err says a graph has an op the compiler
// does not know.
func IsUnsupported(err error) bool {
	var u *UnsupportedOpError
	return errors.As(err, &u)
}

func newEvaluator(model nn.Model, batch int, dtype tensor.Dtype, withGrad bool) (*Evaluator, error) {
	if batch <= 0 {
		return nil, fmt.Errorf("compile: batch size %d must be positive", batch)
	}
	e := &Evaluator{model: model, batch: batch, k: model.Outputs, ll: make([]float64, batch), gauss: convert.GaussianLayout(model.Layout), mlp: model.MLP}
	if e.mlp != nil {
		e.layers = e.mlp.Layers()
	}
	var err error
	switch dtype {
	case tensor.Float32:
		e.f32, _, err = compileModel[float32](model, batch, tensor.Float32, withGrad)
	case tensor.Float64:
		e.f64, _, err = compileModel[float64](model, batch, tensor.Float64, withGrad)
	default:
		return nil, fmt.Errorf("compile: dtype %v: expected float32 or float64", dtype)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Dim returns the number of parameters.
func (e *Evaluator) Dim() int { return e.model.NumParams() }

// MACs returns the multiply-adds of the matrix products and convolutions of
// one evaluation at the full compiled batch: the forward products, and with
// a gradient the backward ones (each product's adjoint for each operand
// that needs one: the input images need none). Twice that is the FLOP count
// a GEMM peak is compared with.
func (e *Evaluator) MACs() int64 {
	if e.f32 != nil {
		return e.f32.macs
	}
	return e.f64.macs
}

// MaxBatch returns the compiled batch size.
func (e *Evaluator) MaxBatch() int { return e.batch }

// Model returns the model evaluated.
func (e *Evaluator) Model() nn.Model { return e.model }

// HasGradient reports whether the plan was compiled with its backward pass
// (New) or without (NewForward).
func (e *Evaluator) HasGradient() bool {
	if e.f32 != nil {
		return e.f32.grads != nil
	}
	return e.f64.grads != nil
}

// Eval returns U~ = -log p(theta) - scale * sum_i log l(theta; x_i) over
// the examples idx of data (autodiff.Evaluator's Eval). When grad is not nil
// it receives dU~/dtheta; when loglik is not nil, loglik[i] receives
// log l(theta; x_idx[i]).
func (e *Evaluator) Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	if !e.gauss {
		sum, err := e.Likelihood(theta, data, idx, scale, grad, loglik)
		if err != nil {
			return 0, err
		}
		if e.mlp != nil { // the plan's prior, layer by layer
			if grad != nil {
				e.mlp.AddNegLogPriorGrad(theta, grad)
			}
			return e.mlp.NegLogPrior(theta) - scale*sum, nil
		}
		return convert.WithPrior(e.model.Layout, theta, grad, scale, sum), nil
	}
	// Gaussian priors: their value and gradient are summed in the passes
	// that convert theta and the gradient, as autodifftest.Plan does (the
	// gradient as Layout.AddNegLogPriorGrad adds it; the value learnable by
	// learnable in convert.SumSquares' four partial sums, which can differ
	// from Layout.NegLogPrior's in the last bits)
	if err := e.check(theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	var sum, prior float64
	if e.f32 != nil {
		sum, prior = runProgram(e, e.f32, theta, data, idx, scale, grad, loglik, true)
	} else {
		sum, prior = runProgram(e, e.f64, theta, data, idx, scale, grad, loglik, true)
	}
	return prior - scale*sum, nil
}

// CanStream reports whether EvalStream is available: every learnable's
// prior is Gaussian and the evaluator has its backward pass.
func (e *Evaluator) CanStream() bool { return e.gauss && e.HasGradient() }

// EvalStream is Eval with a gradient, which it hands to consume in
// consecutive chunks covering every parameter, in order, instead of writing
// it: the same values, computed the same way (autodifftest.Plan's EvalStream).
// consume may change theta's chunk; the evaluator has read it by then.
func (e *Evaluator) EvalStream(theta []float64, data *datasets.Dataset, idx []int, scale float64, consume func(lo int, g []float64)) (float64, error) {
	if !e.CanStream() {
		return 0, fmt.Errorf("eval: model %s: the gradient can be streamed with Gaussian priors and a backward pass only", e.model.Name)
	}
	if err := e.check(theta, data, idx, nil, nil); err != nil {
		return 0, err
	}
	var sum, prior float64
	if e.f32 != nil {
		sum, prior = streamProgram(e, e.f32, theta, data, idx, scale, consume)
	} else {
		sum, prior = streamProgram(e, e.f64, theta, data, idx, scale, consume)
	}
	return prior - scale*sum, nil
}

// backwardScaled runs the backward pass of -scale times the sum of the
// first n examples' log-likelihoods (the padding rows weigh 0), leaving the
// gradient in p.grads.
func backwardScaled[T float](p *program[T], n int, scale float64) {
	s := T(-scale)
	for r := range p.dLoglik {
		if r < n {
			p.dLoglik[r] = s
		} else {
			p.dLoglik[r] = 0
		}
	}
	p.backward()
}

// streamProgram is runProgram with the Gaussian priors and the gradient
// handed to consume in chunks.
func streamProgram[T float](e *Evaluator, p *program[T], theta []float64, data *datasets.Dataset, idx []int, scale float64, consume func(lo int, g []float64)) (sum, prior float64) {
	sum, prior = runProgram(e, p, theta, data, idx, scale, nil, nil, true)
	backwardScaled(p, len(idx), scale)
	buf := &e.stream
	if e.mlp != nil { // layer by layer, weights and biases together, as the plan streams
		dense.StreamGrad(e.layers, e.mlp.Precision, p.gflat, theta, buf, consume)
		return sum, prior
	}
	for i, par := range e.model.Layout {
		g := p.grads[i]
		for lo := 0; lo < len(g); lo += convert.StreamChunk {
			hi := min(lo+convert.StreamChunk, len(g))
			out := buf[:hi-lo]
			at := par.Offset + lo
			convert.AddPriorGrad(out, g[lo:hi], theta[at:at+hi-lo], par.Prior.Precision)
			consume(at, out)
		}
	}
	return sum, prior
}

// check validates the arguments of Eval and Likelihood.
func (e *Evaluator) check(theta []float64, data *datasets.Dataset, idx []int, grad, loglik []float64) error {
	if err := evalargs.Check(e.model, e.batch, theta, data, idx, grad, loglik); err != nil {
		return err
	}
	if grad != nil && !e.HasGradient() {
		return fmt.Errorf("eval: model %s: a forward-only evaluator has no gradient", e.model.Name)
	}
	return nil
}

// Likelihood returns the likelihood's part of U~ alone, sum_i log l(theta;
// x_i) over the examples idx, without the prior: when grad is not nil it
// receives the gradient of -scale times that sum (overwritten, not added
// to); loglik as in Eval. A sharded evaluator adds its shards' parts and the
// prior once.
func (e *Evaluator) Likelihood(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	if err := e.check(theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	var sum float64
	if e.f32 != nil {
		sum, _ = runProgram(e, e.f32, theta, data, idx, scale, grad, loglik, false)
	} else {
		sum, _ = runProgram(e, e.f64, theta, data, idx, scale, grad, loglik, false)
	}
	return sum, nil
}

// LogLiks writes log l(theta; x_i) for the examples idx, any number of
// them, into out[:len(idx)], MaxBatch examples at a time with theta
// converted once: an exchange test's terms over up to the whole data set,
// which Eval would convert (and sum the prior of) once a batch. The values
// are Eval's loglik, bit for bit: the forward pass does not depend on the
// prior.
func (e *Evaluator) LogLiks(theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	if len(out) < len(idx) {
		return fmt.Errorf("eval: log-likelihood buffer has %d values for %d examples", len(out), len(idx))
	}
	for s := 0; s < len(idx); s += e.batch {
		if err := evalargs.Check(e.model, e.batch, theta, data, idx[s:min(s+e.batch, len(idx))], nil, nil); err != nil {
			return err
		}
	}
	if e.f32 != nil {
		logLiks(e, e.f32, theta, data, idx, out)
	} else {
		logLiks(e, e.f64, theta, data, idx, out)
	}
	return nil
}

// logLiks is LogLiks on one program.
func logLiks[T float](e *Evaluator, p *program[T], theta []float64, data *datasets.Dataset, idx []int, out []float64) {
	if e.mlp != nil {
		dense.LoadTheta(e.layers, e.mlp.Precision, p.flat, theta, false)
	} else {
		loadParams(e.model, p, theta, false)
	}
	for s := 0; s < len(idx); s += e.batch {
		batch := idx[s:min(s+e.batch, len(idx))]
		loadExamples(e, p, data, batch)
		p.forward()
		dst := out[s : s+len(batch)]
		if p.ll64 != nil { // an MLP's, in float64
			copy(dst, p.ll64[:len(batch)])
			continue
		}
		for r, v := range p.loglik[:len(batch)] {
			dst[r] = float64(v)
		}
	}
}

// load writes theta and the examples idx into the program's buffers: rows
// past len(idx) are padding (loadExamples). With
// gaussPrior (every learnable's prior Gaussian) it returns the priors'
// -log p(theta), summed learnable by learnable (an MLP's layer by layer).
func load[T float](e *Evaluator, p *program[T], theta []float64, data *datasets.Dataset, idx []int, gaussPrior bool) float64 {
	p.rows = len(idx)
	var prior float64
	if e.mlp != nil {
		prior = dense.LoadTheta(e.layers, e.mlp.Precision, p.flat, theta, gaussPrior)
	} else {
		prior = loadParams(e.model, p, theta, gaussPrior)
	}
	loadExamples(e, p, data, idx)
	return prior
}

// loadExamples writes the examples idx into the program's input and target
// buffers. The input rows past len(idx) pad the batch: zero for an MLP,
// whose kernels do not read them; for any other graph, whose kernels run
// on the whole batch, copies of the first example, so that a graph finite
// on the examples is finite on the padding (a zero row can give 0/0, and
// the backward pass's products would carry its NaN, times the padding's
// zero adjoints, into every weight's gradient).
func loadExamples[T float](e *Evaluator, p *program[T], data *datasets.Dataset, idx []int) {
	p.rows = len(idx)
	d, k := data.D, e.model.Outputs
	for r, i := range idx {
		convert.Features(p.x[r*d:(r+1)*d], data.Row(i))
	}
	if e.mlp != nil {
		clear(p.x[len(idx)*d:])
	} else {
		for lo := len(idx) * d; lo < len(p.x); lo += d {
			copy(p.x[lo:lo+d], p.x[:d])
		}
	}
	if p.labels != nil { // an MLP's likelihood reads the classes, not the one-hot target
		for r, i := range idx {
			p.labels[r] = data.Labels[i]
		}
		return
	}
	clear(p.y)
	for r, i := range idx {
		if data.Classes > 0 {
			p.y[r*k+data.Labels[i]] = 1
			continue
		}
		for j := 0; j < k; j++ {
			p.y[r*k+j] = T(data.Targets[i*k+j])
		}
	}
}

// loadParams writes theta into the learnables' buffers; with gaussPrior it
// returns the priors' -log p(theta), summed learnable by learnable.
func loadParams[T float](m nn.Model, p *program[T], theta []float64, gaussPrior bool) float64 {
	prior := 0.0
	for i, par := range m.Layout {
		th := theta[par.Offset : par.Offset+par.Size()]
		if gaussPrior {
			prior += 0.5 * par.Prior.Precision * convert.SumSquares(p.params[i], th)
			continue
		}
		dst := p.params[i]
		for j, v := range th {
			dst[j] = T(v)
		}
	}
	return prior
}

// runProgram evaluates the program on theta and the examples idx and returns
// sum_i log l_i; with grad != nil it writes -scale * d(sum_i log l_i)/dtheta
// into grad. With gaussPrior it also returns the priors' -log p(theta) and
// adds their gradient to grad, in the passes that convert theta and the
// gradient.
func runProgram[T float](e *Evaluator, p *program[T], theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64, gaussPrior bool) (sum, prior float64) {
	prior = load(e, p, theta, data, idx, gaussPrior)
	p.forward()
	n := len(idx)
	if p.ll64 != nil { // an MLP's, in float64
		for r, v := range p.ll64[:n] {
			e.ll[r] = v
			sum += v
		}
	} else {
		for r, v := range p.loglik[:n] {
			e.ll[r] = float64(v)
			sum += float64(v)
		}
	}
	if loglik != nil {
		copy(loglik, e.ll[:n])
	}
	if grad == nil {
		return sum, prior
	}
	backwardScaled(p, n, scale)
	if e.mlp != nil {
		dense.WriteGrad(e.layers, e.mlp.Precision, p.gflat, theta, grad, gaussPrior)
		return sum, prior
	}
	for i, par := range e.model.Layout {
		dst := grad[par.Offset : par.Offset+par.Size()]
		if gaussPrior {
			convert.AddPriorGrad(dst, p.grads[i], theta[par.Offset:par.Offset+par.Size()], par.Prior.Precision)
			continue
		}
		for j, v := range p.grads[i] {
			dst[j] = float64(v)
		}
	}
	return sum, prior
}

// Logits writes the model's logits for examples idx into out (row-major,
// len(idx) x outputs). The model's graph must report logits.
func (e *Evaluator) Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	if err := evalargs.Check(e.model, e.batch, theta, data, idx, nil, nil); err != nil {
		return err
	}
	if !e.model.Logits {
		return fmt.Errorf("logits: model %s reports no logits", e.model.Name)
	}
	if len(out) < len(idx)*e.k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*e.k)
	}
	if e.f32 != nil {
		logitsOf(e, e.f32, theta, data, idx, out)
	} else {
		logitsOf(e, e.f64, theta, data, idx, out)
	}
	return nil
}

func logitsOf[T float](e *Evaluator, p *program[T], theta []float64, data *datasets.Dataset, idx []int, out []float64) {
	load(e, p, theta, data, idx, false)
	p.forward()
	for i, v := range p.logits[:len(idx)*e.k] {
		out[i] = float64(v)
	}
}

// Float32 reports whether the evaluator takes LogitsFloat32: an MLP's, in
// float32 (autodiff.Float32Logits).
func (e *Evaluator) Float32() bool { return e.f32 != nil && e.mlp != nil }

// LogitsFloat32 is Logits with the weights in float32, the precision a
// float32 MLP computes in: they are copied in, not converted, and the
// logits are those of Logits of the weights widened to float64, bit for
// bit. Other evaluators refuse them.
func (e *Evaluator) LogitsFloat32(w []float32, data *datasets.Dataset, idx []int, out []float64) error {
	if !e.Float32() {
		return fmt.Errorf("logits: model %s: only a float32 MLP takes float32 weights", e.model.Name)
	}
	if len(w) != e.Dim() {
		return fmt.Errorf("logits: %d weights, model %s has %d parameters", len(w), e.model.Name, e.Dim())
	}
	if !e.model.Logits {
		return fmt.Errorf("logits: model %s reports no logits", e.model.Name)
	}
	// the examples as Logits checks them: the forward pass reads their
	// labels
	if err := evalargs.CheckExamples(e.model, e.batch, data, idx); err != nil {
		return err
	}
	if len(out) < len(idx)*e.k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*e.k)
	}
	p := e.f32
	copy(p.flat, w)
	loadExamples(e, p, data, idx)
	p.forward()
	for i, v := range p.logits[:len(idx)*e.k] {
		out[i] = float64(v)
	}
	return nil
}
