package autodiff

import (
	"fmt"
	"math"
	"runtime"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// The predictive distribution of one weight sample: a classifier's logits z
// give p(c | x, theta) = exp(z_c - LogSumExp(z)). A run's validation fit
// (Predictor.Fit) and evaluate's posterior-predictive ensemble share these
// functions.

// LogSumExp returns log sum_c exp(z_c), computed stably from the largest z.
func LogSumExp(z []float64) float64 {
	m := z[0]
	for _, v := range z {
		m = math.Max(m, v)
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// ArgMax returns the index of p's largest value (the first of ties).
func ArgMax(p []float64) int {
	best := 0
	for c := range p {
		if p[c] > p[best] {
			best = c
		}
	}
	return best
}

// Predictor evaluates a model's logits on every example of a data set, in
// batches of its evaluator's size, reusing its buffers.
type Predictor struct {
	// Eval computes the logits (NewLogitEvaluator gives one on a run's
	// engine).
	Eval   Evaluator
	logits []float64
	idx    []int
}

// Each calls f(i, z) for every example i of data, in order, with z its
// logits under theta (a view valid during the call).
func (p *Predictor) Each(theta []float64, data *datasets.Dataset, f func(i int, z []float64)) error {
	return p.EachOf(func(idx []int, out []float64) error { return Logits(p.Eval, theta, data, idx, out) }, data, f)
}

// EachOf is Each with the logits of a batch idx computed by logits (a
// float32 sample's, Float32Logits, say), in batches of the evaluator's
// size.
func (p *Predictor) EachOf(logits func(idx []int, out []float64) error, data *datasets.Dataset, f func(i int, z []float64)) error {
	k := data.Classes
	mb := p.Eval.MaxBatch()
	if len(p.logits) < mb*k {
		p.logits = make([]float64, mb*k)
	}
	for s := 0; s < data.N; s += mb {
		p.idx = p.idx[:0]
		for i := s; i < min(s+mb, data.N); i++ {
			p.idx = append(p.idx, i)
		}
		if err := logits(p.idx, p.logits); err != nil {
			return err
		}
		for r, i := range p.idx {
			f(i, p.logits[r*k:(r+1)*k])
		}
	}
	return nil
}

// Fit returns theta's mean log-likelihood (1/n) sum_i log p(y_i | x_i, theta)
// and accuracy on the n labelled examples of data: what a run reports of
// rung 1 on its validation set.
func (p *Predictor) Fit(theta []float64, data *datasets.Dataset) (logLik, acc float64, err error) {
	err = p.Each(theta, data, func(i int, z []float64) {
		logLik += z[data.Labels[i]] - LogSumExp(z)
		if ArgMax(z) == data.Labels[i] {
			acc++
		}
	})
	if err != nil {
		return 0, 0, err
	}
	return logLik / float64(data.N), acc / float64(data.N), nil
}

// predictorBatch returns the batch of validation and prediction evaluators
// of model: large for the BLAS plan of an MLP, smaller for a graph (a CNN's
// convolution buffers grow with the batch).
func predictorBatch(m nn.Model) int {
	if m.MLP != nil {
		return 500
	}
	return 100
}

// PredictorShards returns how many forward graphs a predictor of m splits
// each batch over: a graph model's batches go over the cores (up to
// MaxShards), an MLP's BLAS plan takes them whole (1). With more than one,
// each BLAS call should use one thread while the predictor runs.
func PredictorShards(m nn.Model) int {
	if n := min(runtime.GOMAXPROCS(0), MaxShards); m.MLP == nil && m.Logits && n > 1 {
		return n
	}
	return 1
}

// NewLogitEvaluator returns an evaluator of model's logits for validation and
// prediction on engine (a run's engine): a graph model's batches are split
// over PredictorShards forward graphs in parallel (its callers give BLAS one
// thread per call while it runs).
func NewLogitEvaluator(engine Engine, m nn.Model, dtype DType) (Evaluator, error) {
	if m.MLP != nil && engine == EngineGraph {
		// An MLP's predictions have always come from its BLAS plan's
		// arithmetic (now its compiled graph's), whatever engine its
		// gradients ran on: its runs evaluate as they did.
		engine = EnginePlan
	}
	if n := PredictorShards(m); n > 1 {
		return NewShardedForwardFor(engine, m, predictorBatch(m), dtype, n)
	}
	return NewPredictorFor(engine, m, predictorBatch(m), dtype)
}

// Logits runs ev's forward pass if it can report logits (a compile.Evaluator and a
// GraphEvaluator of a model with Logits can).
func Logits(ev Evaluator, theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	l, ok := ev.(interface {
		Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error
	})
	if !ok {
		return fmt.Errorf("logits: evaluator %T cannot report logits", ev)
	}
	return l.Logits(theta, data, idx, out)
}
