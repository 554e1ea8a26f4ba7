package autodiff

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/convert"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/evalargs"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GraphEvaluator evaluates any model of the contract (nn.Graph) by running
// its Gorgonia expression graph on a tape machine. On top of the model's
// per-example log-likelihoods it builds
//
//	cost = -scale * sum_r mask_r LogLik_r
//
// (mask_r = 0 for the rows that pad a short batch) and its gradient with
// respect to the learnables by Gorgonia's symbolic differentiation (Grad);
// the prior's term and gradient are added in float64 from the layout, as
// Plan does. Every buffer (input, target, mask and parameter tensors) is
// allocated once; parameter values are copied in before each run and the
// gradient copied out after it (Gorgonia reuses its gradient memory, so no
// reference to it is kept). Not safe for concurrent use: give each goroutine
// its own (each builds its own graph).
type GraphEvaluator struct {
	model  nn.Model
	graph  *nn.Graph
	vm     G.VM
	mask   *G.Node
	scale  *G.Node
	grads  G.Nodes // nil for a forward-only evaluator
	llOut  *G.Node // copies outside the cost's ancestry: the backward
	outOut *G.Node // pass cannot overwrite their values in place
	inShp  tensor.Shape

	x, y, m *tensor.Dense
	params  []*tensor.Dense
	ll      []float64
}

// NewGraphEvaluator builds spec's MLP graph for batches of up to batch
// examples.
func NewGraphEvaluator(spec nn.Spec, batch int, dtype DType) (*GraphEvaluator, error) {
	m, err := spec.Model()
	if err != nil {
		return nil, err
	}
	return NewModelEvaluator(m, batch, dtype)
}

// NewModelEvaluator builds model's graph for batches of up to batch examples,
// with its gradient.
func NewModelEvaluator(model nn.Model, batch int, dtype DType) (*GraphEvaluator, error) {
	return newGraphEvaluator(model, batch, dtype, true)
}

// NewForwardEvaluator builds model's graph without the backward pass: Eval
// then reports U~ and log-likelihoods but no gradient, and Logits the
// model's logits, at about the cost of the forward pass alone (for
// prediction and validation).
func NewForwardEvaluator(model nn.Model, batch int, dtype DType) (*GraphEvaluator, error) {
	return newGraphEvaluator(model, batch, dtype, false)
}

func gorgoniaDType(dtype DType) (tensor.Dtype, error) {
	switch dtype {
	case Float64, "":
		return tensor.Float64, nil
	case Float32:
		return tensor.Float32, nil
	}
	return tensor.Float64, fmt.Errorf("dtype %q: expected float32 or float64", dtype)
}

func newGraphEvaluator(model nn.Model, batch int, dtype DType, withGrad bool) (*GraphEvaluator, error) {
	dt, err := gorgoniaDType(dtype)
	if err != nil {
		return nil, fmt.Errorf("graph evaluator: %w", err)
	}
	if batch <= 0 {
		return nil, fmt.Errorf("graph evaluator: batch size %d must be positive", batch)
	}
	if model.Build == nil {
		return nil, fmt.Errorf("graph evaluator: model %q has no builder", model.Name)
	}
	g, err := model.Build(batch, dt)
	if err != nil {
		return nil, fmt.Errorf("graph evaluator: model %s: %w", model.Name, err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("graph evaluator: model %s: %w", model.Name, err)
	}
	if g.Batch != batch || g.DType != dt {
		return nil, fmt.Errorf("graph evaluator: model %s: asked for batch %d %v, built %d %v", model.Name, batch, dt, g.Batch, g.DType)
	}
	if l := g.Layout(); l.String() != model.Layout.String() {
		return nil, fmt.Errorf("graph evaluator: model %s: graph's learnables %s differ from the model's %s", model.Name, l, model.Layout)
	}
	e := &GraphEvaluator{model: model, graph: g, inShp: g.Input.Shape().Clone(), ll: make([]float64, batch)}
	eg := g.G
	e.mask = G.NewVector(eg, dt, G.WithShape(batch), G.WithName("ptsghmc.mask"))
	e.scale = G.NewScalar(eg, dt, G.WithName("ptsghmc.scale"))
	zero := G.NewConstant(0.0)
	if dt == tensor.Float32 {
		zero = G.NewConstant(float32(0))
	}
	if e.llOut, err = G.Add(g.LogLik, zero); err != nil {
		return nil, fmt.Errorf("graph evaluator: %w", err)
	}
	if g.Logits != nil {
		if e.outOut, err = G.Add(g.Logits, zero); err != nil {
			return nil, fmt.Errorf("graph evaluator: %w", err)
		}
	}
	if withGrad {
		masked, err := G.HadamardProd(g.LogLik, e.mask)
		if err != nil {
			return nil, fmt.Errorf("graph evaluator: %w", err)
		}
		sum, err := G.Sum(masked)
		if err != nil {
			return nil, fmt.Errorf("graph evaluator: %w", err)
		}
		scaled, err := G.Mul(e.scale, sum)
		if err != nil {
			return nil, fmt.Errorf("graph evaluator: %w", err)
		}
		cost, err := G.Neg(scaled)
		if err != nil {
			return nil, fmt.Errorf("graph evaluator: %w", err)
		}
		if e.grads, err = G.Grad(cost, g.Learnables...); err != nil {
			return nil, fmt.Errorf("graph evaluator: model %s: gradient: %w", model.Name, err)
		}
	}
	e.x = tensor.New(tensor.WithShape(e.inShp...), tensor.Of(dt))
	e.y = tensor.New(tensor.WithShape(batch, g.Outputs()), tensor.Of(dt))
	e.m = tensor.New(tensor.WithShape(batch), tensor.Of(dt))
	for _, n := range g.Learnables {
		p := tensor.New(tensor.WithShape(n.Shape().Clone()...), tensor.Of(dt))
		e.params = append(e.params, p)
		if err := G.Let(n, p); err != nil {
			return nil, fmt.Errorf("graph evaluator: bind %s: %w", n.Name(), err)
		}
	}
	e.vm = G.NewTapeMachine(eg)
	return e, nil
}

// Dim returns the number of parameters.
func (e *GraphEvaluator) Dim() int { return e.model.NumParams() }

// MaxBatch returns the graph's batch size.
func (e *GraphEvaluator) MaxBatch() int { return e.graph.Batch }

// Model returns the model evaluated.
func (e *GraphEvaluator) Model() nn.Model { return e.model }

// setFloats copies src into a float32 or float64 tensor's backing array.
func setFloats(t *tensor.Dense, src []float64) {
	switch d := t.Data().(type) {
	case []float64:
		copy(d, src)
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	}
}

func getFloats(dst []float64, v G.Value) error {
	switch d := v.Data().(type) {
	case []float64:
		copy(dst, d)
	case []float32:
		for i := range dst {
			dst[i] = float64(d[i])
		}
	case float64:
		dst[0] = d
	case float32:
		dst[0] = float64(d)
	default:
		return fmt.Errorf("unexpected value type %T", d)
	}
	return nil
}

// load writes the examples idx of data into the input, target and mask
// tensors: rows past len(idx) are padding with mask 0, zero targets and
// the first example's features (finite wherever the graph is on the
// examples: a NaN there, times the padding's zero adjoints, would reach
// every weight's gradient).
func (e *GraphEvaluator) load(data *datasets.Dataset, idx []int) {
	d, k := data.D, e.graph.Outputs()
	switch x := e.x.Data().(type) {
	case []float32:
		for r, i := range idx {
			copy(x[r*d:(r+1)*d], data.Row(i))
		}
		for lo := len(idx) * d; lo < len(x); lo += d {
			copy(x[lo:lo+d], x[:d])
		}
	case []float64:
		for r, i := range idx {
			dst := x[r*d : (r+1)*d]
			for j, v := range data.Row(i) {
				dst[j] = float64(v)
			}
		}
		for lo := len(idx) * d; lo < len(x); lo += d {
			copy(x[lo:lo+d], x[:d])
		}
	}
	set := func(t *tensor.Dense, i int, v float64) {
		switch s := t.Data().(type) {
		case []float32:
			s[i] = float32(v)
		case []float64:
			s[i] = v
		}
	}
	e.y.Zero()
	e.m.Zero()
	for r, i := range idx {
		set(e.m, r, 1)
		if data.Classes > 0 {
			set(e.y, r*k+data.Labels[i], 1)
			continue
		}
		for j := 0; j < k; j++ {
			set(e.y, r*k+j, float64(data.Targets[i*k+j]))
		}
	}
}

// run loads theta and the examples and runs the tape.
func (e *GraphEvaluator) run(theta []float64, data *datasets.Dataset, idx []int, scale float64) error {
	for i, p := range e.model.Layout {
		setFloats(e.params[i], theta[p.Offset:p.Offset+p.Size()])
	}
	e.load(data, idx)
	// Gorgonia may transpose or reshape inputs in place during a run, so
	// restore shapes and bindings before every run.
	if err := e.x.Reshape(e.inShp...); err != nil {
		return fmt.Errorf("graph evaluator: reshape input: %w", err)
	}
	var sc any = scale
	if e.graph.DType == tensor.Float32 {
		sc = float32(scale)
	}
	binds := [...]struct {
		n *G.Node
		v any
	}{{e.graph.Input, e.x}, {e.graph.Target, e.y}, {e.mask, e.m}, {e.scale, sc}}
	for _, b := range binds {
		if err := G.Let(b.n, b.v); err != nil {
			return fmt.Errorf("graph evaluator: bind %s: %w", b.n.Name(), err)
		}
	}
	if err := e.vm.RunAll(); err != nil {
		return fmt.Errorf("graph evaluator: model %s: run: %w", e.model.Name, err)
	}
	return nil
}

// Eval implements Evaluator.
func (e *GraphEvaluator) Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	sum, err := e.Likelihood(theta, data, idx, scale, grad, loglik)
	if err != nil {
		return 0, err
	}
	return convert.WithPrior(e.model.Layout, theta, grad, scale, sum), nil
}

// HasGradient reports whether the graph was built with its backward pass.
func (e *GraphEvaluator) HasGradient() bool { return e.grads != nil }

// Likelihood runs the graph on examples idx and returns the sum of their
// log-likelihoods, without the prior; grad, when not nil, receives the
// gradient of -scale * that sum (the likelihood's part of dU~/dtheta,
// overwritten), and loglik the per-example terms. ShardedEvaluator adds its
// shards' parts and the prior once.
func (e *GraphEvaluator) Likelihood(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	if err := evalargs.Check(e.model, e.graph.Batch, theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	if grad != nil && e.grads == nil {
		return 0, fmt.Errorf("eval: model %s: a forward-only evaluator has no gradient", e.model.Name)
	}
	defer e.vm.Reset()
	if err := e.run(theta, data, idx, scale); err != nil {
		return 0, err
	}
	if err := getFloats(e.ll, e.llOut.Value()); err != nil {
		return 0, fmt.Errorf("graph evaluator: log-likelihood: %w", err)
	}
	n := len(idx)
	sum := 0.0
	for _, v := range e.ll[:n] {
		sum += v
	}
	if loglik != nil {
		copy(loglik, e.ll[:n])
	}
	if grad != nil {
		for i, p := range e.model.Layout {
			if err := getFloats(grad[p.Offset:p.Offset+p.Size()], e.grads[i].Value()); err != nil {
				return 0, fmt.Errorf("graph evaluator: gradient of %s: %w", p.Name, err)
			}
		}
	}
	return sum, nil
}

// Logits writes the model's logits for examples idx into out (row-major,
// len(idx) x outputs). The model's graph must report logits.
func (e *GraphEvaluator) Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	if err := evalargs.Check(e.model, e.graph.Batch, theta, data, idx, nil, nil); err != nil {
		return err
	}
	if e.outOut == nil {
		return fmt.Errorf("logits: model %s reports no logits", e.model.Name)
	}
	k := e.graph.Outputs()
	if len(out) < len(idx)*k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*k)
	}
	defer e.vm.Reset()
	if err := e.run(theta, data, idx, 0); err != nil {
		return err
	}
	switch d := e.outOut.Value().Data().(type) {
	case []float64:
		copy(out, d[:len(idx)*k])
	case []float32:
		for i, v := range d[:len(idx)*k] {
			out[i] = float64(v)
		}
	default:
		return fmt.Errorf("logits: unexpected value type %T", d)
	}
	return nil
}
