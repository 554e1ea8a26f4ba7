// Package autodiff evaluates a Bayesian MLP's minibatch potential
//
//	U~(theta) = -log p(theta) - (N/|S|) sum_{x in S} log l(theta; x),
//
// its gradient and its per-example log-likelihoods for a flat parameter
// vector theta, and exposes them as the stochastic potential a sampler needs.
//
// Two evaluators compute the same thing: GraphEvaluator runs the model's
// Gorgonia expression graph on Gorgonia's VM (the reference), and Plan runs a
// preallocated execution plan of the same network that calls BLAS directly
// (the fast path, checked against the graph and finite differences).
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
	EnginePlan  Engine = "plan"  // preallocated BLAS plan (fast)
	EngineGraph Engine = "graph" // Gorgonia's VM on the expression graph (reference)
)

// DType is the floating-point type an evaluator computes in.
type DType string

// Supported dtypes.
const (
	Float32 DType = "float32"
	Float64 DType = "float64"
)

// New returns an evaluator of spec for batches of up to batch examples.
func New(engine Engine, spec nn.Spec, batch int, dtype DType) (Evaluator, error) {
	switch engine {
	case EnginePlan, "":
		return NewPlan(spec, batch, dtype)
	case EngineGraph:
		return NewGraphEvaluator(spec, batch, dtype)
	}
	return nil, fmt.Errorf("unknown engine %q: expected plan or graph", engine)
}

func checkEval(spec nn.Spec, maxBatch int, theta []float64, data *datasets.Dataset, idx []int, grad, loglik []float64) error {
	n := spec.NumParams()
	switch {
	case len(theta) != n:
		return fmt.Errorf("eval: theta has %d values, model %s has %d parameters", len(theta), spec.Arch(), n)
	case grad != nil && len(grad) != n:
		return fmt.Errorf("eval: gradient buffer has %d values, need %d", len(grad), n)
	case len(idx) == 0 || len(idx) > maxBatch:
		return fmt.Errorf("eval: %d examples, expected 1 to %d", len(idx), maxBatch)
	case loglik != nil && len(loglik) < len(idx):
		return fmt.Errorf("eval: log-likelihood buffer has %d values for %d examples", len(loglik), len(idx))
	case data.D != spec.Sizes[0]:
		return fmt.Errorf("eval: data has %d features, model %s takes %d", data.D, spec.Arch(), spec.Sizes[0])
	}
	out := spec.Sizes[len(spec.Sizes)-1]
	if spec.Likelihood == nn.Categorical && data.Classes != out {
		return fmt.Errorf("eval: data has %d classes, model %s has %d outputs", data.Classes, spec.Arch(), out)
	}
	if spec.Likelihood == nn.Gaussian && data.Outputs != out {
		return fmt.Errorf("eval: data has %d targets, model %s has %d outputs", data.Outputs, spec.Arch(), out)
	}
	return nil
}
