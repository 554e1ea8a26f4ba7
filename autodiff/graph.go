package autodiff

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GraphEvaluator evaluates a model by running its Gorgonia expression graph
// on a tape machine. Parameter values are copied in before each run and the
// gradient copied out after it (Gorgonia reuses its gradient memory, so no
// reference to it is kept).
type GraphEvaluator struct {
	graph  *nn.Graph
	vm     G.VM
	x, y   *tensor.Dense
	mask   *tensor.Dense
	params []*tensor.Dense
	layout []nn.Layer
}

// NewGraphEvaluator builds spec's graph for batches of up to batch examples.
func NewGraphEvaluator(spec nn.Spec, batch int, dtype DType) (*GraphEvaluator, error) {
	dt := tensor.Float64
	if dtype == Float32 {
		dt = tensor.Float32
	} else if dtype != Float64 {
		return nil, fmt.Errorf("graph evaluator: dtype %q: expected float32 or float64", dtype)
	}
	g, err := nn.NewGraph(spec, batch, dt)
	if err != nil {
		return nil, err
	}
	e := &GraphEvaluator{graph: g, layout: spec.Layers()}
	nOut := spec.Sizes[len(spec.Sizes)-1]
	e.x = tensor.New(tensor.WithShape(batch, spec.Sizes[0]), tensor.Of(dt))
	e.y = tensor.New(tensor.WithShape(batch, nOut), tensor.Of(dt))
	e.mask = tensor.New(tensor.WithShape(batch), tensor.Of(dt))
	for _, ly := range e.layout {
		e.params = append(e.params,
			tensor.New(tensor.WithShape(ly.In, ly.Out), tensor.Of(dt)),
			tensor.New(tensor.WithShape(ly.Out), tensor.Of(dt)))
	}
	for i, p := range g.Params {
		if err := G.Let(p, e.params[i]); err != nil {
			return nil, fmt.Errorf("graph evaluator: bind %s: %w", p.Name(), err)
		}
	}
	e.vm = G.NewTapeMachine(g.G)
	return e, nil
}

// Dim returns the number of parameters.
func (e *GraphEvaluator) Dim() int { return e.graph.Spec.NumParams() }

// MaxBatch returns the graph's batch size.
func (e *GraphEvaluator) MaxBatch() int { return e.graph.Batch }

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

// Eval implements Evaluator.
func (e *GraphEvaluator) Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	spec := e.graph.Spec
	if err := checkEval(spec, e.graph.Batch, theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	defer e.vm.Reset()
	for i, ly := range e.layout {
		setFloats(e.params[2*i], theta[ly.W:ly.B])
		setFloats(e.params[2*i+1], theta[ly.B:ly.B+ly.Out])
	}
	b, d := e.graph.Batch, data.D
	nOut := spec.Sizes[len(spec.Sizes)-1]
	xs := make([]float64, b*d)
	ys := make([]float64, b*nOut)
	ms := make([]float64, b)
	for r, i := range idx {
		for j, v := range data.Row(i) {
			xs[r*d+j] = float64(v)
		}
		if spec.Likelihood == nn.Categorical {
			ys[r*nOut+data.Labels[i]] = 1
		} else {
			for j := 0; j < nOut; j++ {
				ys[r*nOut+j] = float64(data.Targets[i*nOut+j])
			}
		}
		ms[r] = 1
	}
	// Gorgonia may transpose inputs in place during the backward pass, so
	// reset shapes before every run.
	e.x.Reshape(b, d)
	setFloats(e.x, xs)
	setFloats(e.y, ys)
	setFloats(e.mask, ms)
	var sc any = scale
	if e.graph.DType == tensor.Float32 {
		sc = float32(scale)
	}
	for _, bind := range []struct {
		n *G.Node
		v any
	}{{e.graph.X, e.x}, {e.graph.Y, e.y}, {e.graph.Mask, e.mask}, {e.graph.Scale, sc}} {
		if err := G.Let(bind.n, bind.v); err != nil {
			return 0, fmt.Errorf("graph evaluator: bind %s: %w", bind.n.Name(), err)
		}
	}
	if err := e.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("graph evaluator: run: %w", err)
	}
	var u [1]float64
	if err := getFloats(u[:], e.graph.U.Value()); err != nil {
		return 0, fmt.Errorf("graph evaluator: potential: %w", err)
	}
	if loglik != nil {
		ll := make([]float64, b)
		if err := getFloats(ll, e.graph.LogLikOut.Value()); err != nil {
			return 0, fmt.Errorf("graph evaluator: log-likelihood: %w", err)
		}
		copy(loglik, ll[:len(idx)])
	}
	if grad != nil {
		for i, ly := range e.layout {
			for k, dst := range [][]float64{grad[ly.W:ly.B], grad[ly.B : ly.B+ly.Out]} {
				if err := getFloats(dst, e.graph.Grads[2*i+k].Value()); err != nil {
					return 0, fmt.Errorf("graph evaluator: gradient: %w", err)
				}
			}
		}
	}
	return u[0], nil
}
