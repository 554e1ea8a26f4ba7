package evaluate

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// On returns an empty ensemble of e's model on other data of the same
// features and classes, sharing e's evaluator and its buffers: the
// probabilities it accumulates are those an ensemble made for data by
// NewModelEnsembleOn would. The two must not be used at the same time
// (package predictive runs one on each request's images, one at a time).
func (e *Ensemble) On(data *datasets.Dataset) (*Ensemble, error) {
	if data.D != e.Data.D || data.Classes != e.Data.Classes {
		return nil, fmt.Errorf("ensemble: model %s takes %d features and %d classes, data has %d features and %d classes", e.Model.Name, e.Data.D, e.Data.Classes, data.D, data.Classes)
	}
	if data.N <= 0 || len(data.X) != data.N*data.D {
		return nil, fmt.Errorf("ensemble: %d examples of %d features need %d values, have %d", data.N, data.D, data.N*data.D, len(data.X))
	}
	return e.sibling(data), nil
}
