// Package evalargs checks an evaluation's arguments against a model: the
// one check every evaluator of the minibatch potential (the BLAS plan, the
// VM's graph, the compiled graph, the sharded evaluator) runs first.
package evalargs

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// Check returns an error naming the first argument of an evaluation of m
// that does not fit it: theta's length, the gradient and log-likelihood
// buffers', the number of examples idx (1 to maxBatch), and the data's
// features, kind of target (class labels or regression targets) and outputs.
func Check(m nn.Model, maxBatch int, theta []float64, data *datasets.Dataset, idx []int, grad, loglik []float64) error {
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
	}
	return CheckExamples(m, maxBatch, data, idx)
}

// CheckExamples is the part of Check about the examples alone: their
// number idx (1 to maxBatch), and the data's features, kind of target and
// outputs (an evaluation on weights loaded before it).
func CheckExamples(m nn.Model, maxBatch int, data *datasets.Dataset, idx []int) error {
	switch {
	case len(idx) == 0 || len(idx) > maxBatch:
		return fmt.Errorf("eval: %d examples, expected 1 to %d", len(idx), maxBatch)
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
