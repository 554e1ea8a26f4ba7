package evaluate

import (
	"math"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
)

// The predictive distribution of one weight sample: a classifier's logits z
// give p(c | x, theta) = exp(z_c - logSumExp(z)). Validation during a run
// (predictor.fit) and the posterior-predictive ensemble (Ensemble.Add)
// share these functions.

// logSumExp returns log sum_c exp(z_c), computed stably from the largest z.
func logSumExp(z []float64) float64 {
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

// argmax returns the index of p's largest value (the first of ties).
func argmax(p []float64) int {
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
	Eval   autodiff.Evaluator
	logits []float64
	idx    []int
	wide   []float64 // a float32 sample widened (Ensemble.AddFloat32)
}

// each calls f(i, z) for every example i of data, in order, with z its
// logits under theta (a view valid during the call).
func (p *Predictor) each(theta []float64, data *datasets.Dataset, f func(i int, z []float64)) error {
	return p.eachOf(func(idx []int, out []float64) error { return autodiff.Logits(p.Eval, theta, data, idx, out) }, data, f)
}

// eachOf is each with the logits of a batch idx computed by logits.
func (p *Predictor) eachOf(logits func(idx []int, out []float64) error, data *datasets.Dataset, f func(i int, z []float64)) error {
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
	err = p.each(theta, data, func(i int, z []float64) {
		logLik += z[data.Labels[i]] - logSumExp(z)
		if argmax(z) == data.Labels[i] {
			acc++
		}
	})
	if err != nil {
		return 0, 0, err
	}
	return logLik / float64(data.N), acc / float64(data.N), nil
}
