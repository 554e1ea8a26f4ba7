package train

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// prepared is what creating or resuming a run computes once and shares
// among its chains: the training and validation data, and the model. An
// nn.Model is a description (its layout and a builder of graphs) that every
// evaluator builds its own graph from, so the rungs and the chains of a run
// share one.
type prepared struct {
	tr, val *datasets.Dataset
	model   nn.Model
	key     string                // modelKey of the config the model was built from
	reg     runspec.ModelRegistry // the registry it was built from
	setup   runspec.Setup         // the registries of kernels and exchange rules
}

// prepare loads (or splits) cfg's data and builds its model, checked
// against the data: the one model build of a run.
func prepare(s runspec.Setup, cfg runspec.Config) (*prepared, error) {
	var tr, val *datasets.Dataset
	var err error
	if s.Train != nil {
		tr, val, err = runspec.SplitData(cfg, s.Train)
	} else {
		tr, val, err = runspec.LoadData(cfg)
	}
	if err != nil {
		return nil, err
	}
	reg := s.ModelRegistry()
	model, err := cfg.NnModelIn(reg, tr.D, tr.Classes)
	if err != nil {
		return nil, fmt.Errorf("data %s: %w", cfg.Data, err)
	}
	return &prepared{tr: tr, val: val, model: model, key: runspec.ModelKey(cfg), reg: reg, setup: s}, nil
}

// modelFor returns the model of cfg: the prepared one when cfg describes
// the same model (the settings modelKey lists) and, if cfg records
// parameter shapes, the model has them; otherwise cfg's own, built (a chain
// whose checkpoint describes another model than the run's config).
func (p *prepared) modelFor(cfg runspec.Config) (nn.Model, error) {
	if runspec.ModelKey(cfg) != p.key {
		return cfg.NnModelIn(p.reg, p.tr.D, p.tr.Classes)
	}
	if cfg.Shapes != "" && cfg.Shapes != p.model.Layout.String() {
		return p.model, fmt.Errorf("model %s: the run recorded parameters %s, but the model now has %s: refusing to mix samples of different models", cfg.ModelName(), cfg.Shapes, p.model.Layout)
	}
	return p.model, nil
}
