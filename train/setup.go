package train

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Setup is what a run is built with besides its Config and its directory;
// nothing of it is saved in the run directory (a run that names a model,
// kernel or exchange rule of its own is resumed with the same Setup). The
// zero Setup loads the training data from Config.Data, builds named models
// from nn.Models, kernels from sampler.Kernels and exchange tests from
// DefaultExchanges.
type Setup struct {
	// Models is the registry Config.Model names a model of (nil:
	// nn.Models). A run given its own registry needs no change to the
	// process-wide one: tests and embedders pass theirs here.
	Models ModelRegistry
	// Kernels is the registry Config.Sampler (and, for ptsghmc,
	// Config.ReplicaKernel) names a kernel of (nil: sampler.Kernels).
	// A kernel with state of its own is a sampler.StatefulKernel, whose
	// state the run's checkpoints save.
	Kernels []sampler.KernelInfo
	// Exchanges is the registry Config.XTest names an exchange rule of
	// (nil: DefaultExchanges()).
	Exchanges []ExchangeRule
	// Train is the training data before the validation split (nil: loaded
	// from Config.Data).
	Train *datasets.Dataset
}

// models returns the setup's model registry.
func (s Setup) models() ModelRegistry {
	if s.Models == nil {
		return nn.Models
	}
	return s.Models
}

// exchanges returns the setup's exchange rules.
func (s Setup) exchanges() []ExchangeRule {
	if s.Exchanges == nil {
		return DefaultExchanges()
	}
	return s.Exchanges
}

// prepared is what creating or resuming a run computes once and shares
// among its chains: the training and validation data, and the model. An
// nn.Model is a description (its layout and a builder of graphs) that every
// evaluator builds its own graph from, so the rungs and the chains of a run
// share one.
type prepared struct {
	tr, val *datasets.Dataset
	model   nn.Model
	key     string        // modelKey of the config the model was built from
	reg     ModelRegistry // the registry it was built from
	setup   Setup         // the registries of kernels and exchange rules
}

// prepare loads (or splits) cfg's data and builds its model, checked
// against the data: the one model build of a run.
func (s Setup) prepare(cfg Config) (*prepared, error) {
	var tr, val *datasets.Dataset
	var err error
	if s.Train != nil {
		tr, val, err = splitData(cfg, s.Train)
	} else {
		tr, val, err = loadData(cfg)
	}
	if err != nil {
		return nil, err
	}
	reg := s.models()
	model, err := cfg.nnModelIn(reg, tr.D, tr.Classes)
	if err != nil {
		return nil, fmt.Errorf("data %s: %w", cfg.Data, err)
	}
	return &prepared{tr: tr, val: val, model: model, key: modelKey(cfg), reg: reg, setup: s}, nil
}

// modelFor returns the model of cfg: the prepared one when cfg describes
// the same model (the settings modelKey lists) and, if cfg records
// parameter shapes, the model has them; otherwise cfg's own, built (a chain
// whose checkpoint describes another model than the run's config).
func (p *prepared) modelFor(cfg Config) (nn.Model, error) {
	if modelKey(cfg) != p.key {
		return cfg.nnModelIn(p.reg, p.tr.D, p.tr.Classes)
	}
	if cfg.Shapes != "" && cfg.Shapes != p.model.Layout.String() {
		return p.model, fmt.Errorf("model %s: the run recorded parameters %s, but the model now has %s: refusing to mix samples of different models", cfg.ModelName(), cfg.Shapes, p.model.Layout)
	}
	return p.model, nil
}

// modelKey returns the settings of cfg that determine its model.
func modelKey(c Config) string {
	return fmt.Sprintf("%q %q %q %v %v %v %v", c.Model, c.Arch, c.Activation, c.Prior, c.PriorFanIn, c.PriorDF, c.Classes)
}

// PT returns the sampler a run of cfg drives on training data of n
// examples, with the setup's registries: the kernel (at the first step's
// learning rate), the posterior temperature and ladder, the health watch,
// the preconditioner and noise correction, and with more than one rung the
// exchange rule, its pairing and the ladder's adaptation. Runs build their
// sampler here, and so does ptsghmc bench, so both step the same sampler.
func (s Setup) PT(cfg Config, n int) (*sampler.PT, error) {
	temps, err := cfg.Temps()
	if err != nil {
		return nil, err
	}
	kernel, err := cfg.kernelFrom(s.Kernels, n, cfg.stepScale(1))
	if err != nil {
		return nil, err
	}
	pt := &sampler.PT{Kernel: kernel, Temperature: cfg.PosteriorTemperature(), Temps: temps, Workers: cfg.Workers, BurnIn: cfg.BurnIn,
		NoiseTarget: cfg.NoiseTarget, HealthWindow: healthWindow(cfg), Precondition: cfg.PreconditionValue(),
		NoiseCorrection: cfg.NoiseCorrection}
	if len(temps) > 1 {
		pt.Every = cfg.Exchange
		pt.Scheme = sampler.Scheme(cfg.Scheme)
		rule, ok := lookupExchange(s.exchanges(), cfg.XTest)
		if !ok {
			return nil, fmt.Errorf("exchange_test %q: expected one of %s", cfg.XTest, strings.Join(exchangeNames(s.exchanges()), ", "))
		}
		if pt.Exchange, err = rule.New(cfg); err != nil {
			return nil, fmt.Errorf("exchange_test %s: %w", rule.Name, err)
		}
		if cfg.Ladder == "adaptive" {
			pt.Adapt = &sampler.LadderAdaptation{SwapTarget: cfg.SwapTarget}
		}
	}
	return pt, nil
}
