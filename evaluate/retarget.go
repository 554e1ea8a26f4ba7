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
	if err := checkEnsembleData(data, e.Model); err != nil {
		return nil, err
	}
	return e.sibling(data), nil
}
