package evaluate

import (
	"runtime"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/nn"
)

// evalBatch returns the batch of validation and prediction evaluators of
// model: large for the BLAS plan of an MLP, smaller for a graph (a CNN's
// convolution buffers grow with the batch).
func evalBatch(m nn.Model) int {
	if m.MLP != nil {
		return 500
	}
	return 100
}

// PredictorShards returns how many forward graphs a predictor of m splits
// each batch over: a graph model's batches go over the cores (up to 4), an
// MLP's BLAS plan takes them whole (1). With more than one, each BLAS call
// should use one thread while the predictor runs.
func PredictorShards(m nn.Model) int {
	if n := min(runtime.GOMAXPROCS(0), MaxShards); m.MLP == nil && m.Logits && n > 1 {
		return n
	}
	return 1
}

// NewLogitEvaluator returns an evaluator of model's logits for validation and
// prediction on engine (Config.RunEngine): a graph model's batches are
// split over PredictorShards forward graphs in parallel (its callers give BLAS one thread per call
// while it runs).
func NewLogitEvaluator(engine autodiff.Engine, m nn.Model, dtype autodiff.DType) (autodiff.Evaluator, error) {
	if m.MLP != nil && engine == autodiff.EngineGraph {
		// An MLP's predictions have always come from its BLAS plan, whatever
		// engine its gradients ran on: its runs evaluate as they did.
		engine = autodiff.EnginePlan
	}
	if n := PredictorShards(m); n > 1 {
		return autodiff.NewShardedForwardFor(engine, m, evalBatch(m), dtype, n)
	}
	return autodiff.NewPredictorFor(engine, m, evalBatch(m), dtype)
}

// MaxShards bounds the graphs one batch is split over by default (gradient
// and forward): smaller shards gain little (docs/models.md).
const MaxShards = 4
