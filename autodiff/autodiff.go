// Package autodiff evaluates a Bayesian model's minibatch potential
//
//	U~(theta) = -log p(theta) - (N/|S|) sum_{x in S} log l(theta; x),
//
// its gradient and its per-example log-likelihoods for a flat parameter
// vector theta, and exposes them as the stochastic potential a sampler needs.
//
// CompiledEvaluator runs any model of the contract nn.Graph (an MLP, a
// CNN, a model of the user's own): Compile turns the model's Gorgonia
// expression graph into preallocated forward and adjoint kernels (BLAS GEMM
// for products and convolutions). GraphEvaluator runs the same graph on
// Gorgonia's VM and differentiates it with Gorgonia's Grad: the reference
// the compiled plan is tested against, and the fallback for a graph with an
// op the compiler does not know. For MLPs, Plan computes the same thing
// with a hand-written BLAS plan (checked against the graph and finite
// differences) that can also stream its gradient; NewFor picks it when the
// model is an MLP and the engine is plan.
package autodiff

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// Evaluator computes a model's minibatch potential. Implementations are not
// safe for concurrent use; give each goroutine its own.
type Evaluator interface {
	// Dim returns the number of parameters.
	Dim() int
	// MaxBatch returns the largest number of examples one Eval takes.
	MaxBatch() int
	// Eval returns U~ = -log p(theta) - scale * sum_i log l(theta; x_i) over
	// the examples idx of data. When grad is not nil it receives dU~/dtheta;
	// when loglik is not nil, loglik[i] receives log l(theta; x_idx[i]).
	Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error)
}

// Engine names an Evaluator implementation.
type Engine string

// Available engines.
const (
	EnginePlan     Engine = "plan"     // an MLP's hand-written BLAS plan; any other model compiled
	EngineCompiled Engine = "compiled" // every model's graph compiled (CompiledEvaluator)
	EngineGraph    Engine = "graph"    // Gorgonia's VM on the expression graph (reference)
)

// DType is the floating-point type an evaluator computes in.
type DType string

// Supported dtypes.
const (
	Float32 DType = "float32"
	Float64 DType = "float64"
)

// NewFor returns an evaluator of model for batches of up to batch examples:
// with engine plan (the default), the BLAS plan for an MLP and the compiled
// graph (CompiledEvaluator) for any other model; with compiled, the
// compiled graph for every model; with graph, Gorgonia's VM. A graph the
// compiler cannot compile (an op it has no kernel for, Compilable) runs on
// the VM.
func NewFor(engine Engine, model nn.Model, batch int, dtype DType) (Evaluator, error) {
	return newFor(engine, model, batch, dtype, true)
}

func newFor(engine Engine, model nn.Model, batch int, dtype DType, withGrad bool) (Evaluator, error) {
	switch engine {
	case EnginePlan, "":
		if model.MLP != nil {
			return NewPlan(*model.MLP, batch, dtype)
		}
		return compiledOrGraph(model, batch, dtype, withGrad)
	case EngineCompiled:
		return compiledOrGraph(model, batch, dtype, withGrad)
	case EngineGraph:
		return newGraphEvaluator(model, batch, dtype, withGrad)
	}
	return nil, fmt.Errorf("unknown engine %q: expected plan, compiled or graph", engine)
}

// compiledOrGraph compiles model's graph, or builds it on Gorgonia's VM if
// the compiler does not support one of its ops.
func compiledOrGraph(model nn.Model, batch int, dtype DType, withGrad bool) (Evaluator, error) {
	ev, err := compileEvaluator(model, batch, dtype, withGrad)
	if IsUnsupported(err) {
		return newGraphEvaluator(model, batch, dtype, withGrad)
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// NewPredictor returns an evaluator of model whose Logits reports the
// model's logits: the BLAS plan for an MLP, the compiled forward pass of
// the graph otherwise (Gorgonia's VM if the compiler does not support it).
func NewPredictor(model nn.Model, batch int, dtype DType) (Evaluator, error) {
	return NewPredictorFor(EnginePlan, model, batch, dtype)
}

// NewPredictorFor is NewPredictor on the given engine (as NewFor chooses,
// without the backward pass).
func NewPredictorFor(engine Engine, model nn.Model, batch int, dtype DType) (Evaluator, error) {
	if !model.Logits {
		return nil, fmt.Errorf("predictor: model %s reports no logits (not a classifier)", model.Name)
	}
	return newFor(engine, model, batch, dtype, false)
}

// New returns an evaluator of spec for batches of up to batch examples.
func New(engine Engine, spec nn.Spec, batch int, dtype DType) (Evaluator, error) {
	switch engine {
	case EnginePlan, "":
		return NewPlan(spec, batch, dtype)
	case EngineGraph:
		return NewGraphEvaluator(spec, batch, dtype)
	case EngineCompiled:
		m, err := spec.Model()
		if err != nil {
			return nil, err
		}
		return Compile(m, batch, dtype)
	}
	return nil, fmt.Errorf("unknown engine %q: expected plan, compiled or graph", engine)
}

// checkModel checks an evaluation's arguments against a model.
func checkModel(m nn.Model, maxBatch int, theta []float64, data *datasets.Dataset, idx []int, grad, loglik []float64) error {
	n := m.NumParams()
	switch {
	case len(theta) != n:
		return fmt.Errorf("eval: theta has %d values, model %s has %d parameters", len(theta), m.Name, n)
	case grad != nil && len(grad) != n:
		return fmt.Errorf("eval: gradient buffer has %d values, need %d", len(grad), n)
	case len(idx) == 0 || len(idx) > maxBatch:
		return fmt.Errorf("eval: %d examples, expected 1 to %d", len(idx), maxBatch)
	case loglik != nil && len(loglik) < len(idx):
		return fmt.Errorf("eval: log-likelihood buffer has %d values for %d examples", len(loglik), len(idx))
	case data.D != m.Inputs:
		return fmt.Errorf("eval: data has %d features, model %s takes %d", data.D, m.Name, m.Inputs)
	case m.OneHot != (data.Classes > 0):
		if m.OneHot {
			return fmt.Errorf("eval: model %s is a classifier, data has regression targets", m.Name)
		}
		return fmt.Errorf("eval: model %s is a regression, data has class labels", m.Name)
	case data.Classes > 0 && data.Classes != m.Outputs:
		return fmt.Errorf("eval: data has %d classes, model %s has %d outputs", data.Classes, m.Name, m.Outputs)
	case data.Classes == 0 && data.Outputs != m.Outputs:
		return fmt.Errorf("eval: data has %d targets, model %s has %d outputs", data.Outputs, m.Name, m.Outputs)
	}
	return nil
}
