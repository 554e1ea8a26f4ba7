// Package autodiff evaluates a Bayesian model's minibatch potential
//
//	U~(theta) = -log p(theta) - (N/|S|) sum_{x in S} log l(theta; x),
//
// its gradient and its per-example log-likelihoods for a flat parameter
// vector theta, and exposes them as the stochastic potential a sampler needs
// (Potential).
//
// An Evaluator computes U~ on the graph compiled into preallocated kernels
// by the package autodiff/compile (NewFor: engines plan and compiled; an
// MLP's graph in the arithmetic of its hand-written BLAS plan, Plan, which
// stays as the reference TestCompiledMLPMatchesPlan checks bit for bit),
// or on Gorgonia's VM on the same graph, differentiated by Gorgonia's Grad
// (GraphEvaluator, engine graph): the reference the compiled graph is
// tested against, and the fallback for a graph with an op the compiler
// does not know.
// ShardedEvaluator splits a minibatch over several graphs run in parallel.
package autodiff

import (
	"fmt"
	"sync/atomic"

	"github.com/ptsghmc/ptsghmc/autodiff/compile"
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

// BatchLogLiker is an Evaluator that also evaluates the per-example
// log-likelihoods of any number of examples with theta converted once (what
// compile.Evaluator does), the values Eval's loglik would give batch by
// batch. An exchange test's terms use it when their evaluator has it.
type BatchLogLiker interface {
	LogLiks(theta []float64, data *datasets.Dataset, idx []int, out []float64) error
}

// Engine names an Evaluator implementation.
type Engine string

// Available engines. An MLP's graph compiles to the arithmetic of its
// hand-written BLAS plan (Plan, kept as the reference): plan and compiled
// compute an MLP's potential bit for bit alike, on the compiled graph.
const (
	EnginePlan     Engine = "plan"     // the compiled graph, unsharded for an MLP (the MLP's engine before the compiler, the same bits)
	EngineCompiled Engine = "compiled" // every model's graph compiled (compile.Evaluator)
	EngineGraph    Engine = "graph"    // Gorgonia's VM on the expression graph (reference)
	// EngineCompiledGeneric compiles an MLP's graph with the kernels every
	// other graph gets (float32 log-softmax, the ReLU's mask from its
	// input, ...), not the plan's arithmetic: what the compiled engine
	// computed for an MLP before it learned the plan's, which the MLP runs
	// recorded on it then keep (runspec.Config.RunEngine). The same as
	// compiled for any other model.
	EngineCompiledGeneric Engine = "compiled-generic"
)

// DType is the floating-point type an evaluator computes in.
type DType string

// Supported dtypes.
const (
	Float32 DType = "float32"
	Float64 DType = "float64"
)

// NewFor returns an evaluator of model for batches of up to batch examples:
// with engine plan (the default) or compiled, the compiled graph (a
// *compile.Evaluator; an MLP's in the arithmetic of its hand-written BLAS
// plan, autodifftest.Plan); with compiled-generic, the compiled graph with the
// generic kernels; with graph, Gorgonia's VM. A graph the compiler cannot
// compile (an op it has no kernel for, compile.Check) runs on the VM.
func NewFor(engine Engine, model nn.Model, batch int, dtype DType) (Evaluator, error) {
	return newFor(engine, model, batch, dtype, true)
}

// MLPBuilder builds the evaluator of an MLP spec for batches of up to
// batch examples, with or without its gradient.
type MLPBuilder func(spec nn.Spec, batch int, dtype DType, withGrad bool) (Evaluator, error)

// reference is the MLPBuilder of ReferenceMLP (nil: none).
var reference atomic.Pointer[MLPBuilder]

// ReferenceMLP makes engines plan and compiled build an MLP's evaluators
// with build until restore is called: every evaluator a run builds (its
// rungs' gradients, its exchange tests' terms, its validation logits).
// Tests compare whole runs on the compiled graph with runs on a reference
// this way (train's TestCompiledMLPRunSameAsPlan, with
// autodifftest.Plan). It is a process-wide switch.
func ReferenceMLP(build MLPBuilder) (restore func()) {
	reference.Store(&build)
	return func() { reference.Store(nil) }
}

func newFor(engine Engine, model nn.Model, batch int, dtype DType, withGrad bool) (Evaluator, error) {
	if ref := reference.Load(); ref != nil && model.MLP != nil && (engine == EnginePlan || engine == "" || engine == EngineCompiled) {
		return (*ref)(*model.MLP, batch, dtype, withGrad)
	}
	switch engine {
	case EnginePlan, "", EngineCompiled:
		return compiledOrGraph(model, batch, dtype, withGrad)
	case EngineCompiledGeneric:
		generic := model
		generic.MLP = nil // the compiler's MLP kernels key on it
		return compiledOrGraph(generic, batch, dtype, withGrad)
	case EngineGraph:
		return newGraphEvaluator(model, batch, dtype, withGrad)
	}
	return nil, fmt.Errorf("unknown engine %q: expected plan, compiled, compiled-generic or graph", engine)
}

// compiledOrGraph compiles model's graph, or builds it on Gorgonia's VM if
// the compiler does not support one of its ops.
func compiledOrGraph(model nn.Model, batch int, dtype DType, withGrad bool) (Evaluator, error) {
	dt, err := gorgoniaDType(dtype)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	var ev *compile.Evaluator
	if withGrad {
		ev, err = compile.New(model, batch, dt)
	} else {
		ev, err = compile.NewForward(model, batch, dt)
	}
	if compile.IsUnsupported(err) {
		return newGraphEvaluator(model, batch, dtype, withGrad)
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// NewPredictor returns an evaluator of model whose Logits reports the
// model's logits: the compiled forward pass of the graph (an MLP's in its
// plan's arithmetic; Gorgonia's VM if the compiler does not support it).
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

// New returns an evaluator of spec for batches of up to batch examples,
// as NewFor on spec's model: with engine plan or compiled, the compiled
// graph (in the arithmetic of the hand-written BLAS plan the tests check
// it against, autodifftest.Plan); with graph, Gorgonia's VM.
func New(engine Engine, spec nn.Spec, batch int, dtype DType) (Evaluator, error) {
	switch engine {
	case EnginePlan, "", EngineCompiled:
		m, err := spec.Model()
		if err != nil {
			return nil, err
		}
		return compiledOrGraph(m, batch, dtype, true)
	case EngineGraph:
		return NewGraphEvaluator(spec, batch, dtype)
	}
	return nil, fmt.Errorf("unknown engine %q: expected plan, compiled or graph", engine)
}
