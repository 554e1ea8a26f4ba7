package runspec

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Setup is what a run is built with besides its Config and its directory;
// nothing of it is saved in the run directory (a run that names a model,
// kernel or exchange rule of its own is resumed with the same Setup).
// DefaultSetup returns the process's registries; a caller with a model,
// kernel or exchange rule of its own starts from it and adds to its copies
// (WithModel), so that no process-wide registry changes. A Setup without
// its registries is refused (Check).
type Setup struct {
	// Models is the registry Config.Model names a model of. A run given
	// its own registry needs no change to the process-wide one: tests and
	// embedders pass theirs here.
	Models ModelRegistry
	// Kernels is the registry Config.Sampler (and, for ptsghmc,
	// Config.ReplicaKernel) names a kernel of. A kernel with state of its
	// own is a sampler.StatefulKernel, whose state the run's checkpoints
	// save.
	Kernels []sampler.KernelInfo
	// Exchanges is the registry Config.XTest names an exchange rule of.
	Exchanges []ExchangeRule
	// Train is the training data before the validation split (nil: loaded
	// from Config.Data).
	Train *datasets.Dataset
	// AllowArithmeticChange lets a resumed run continue on other arithmetic
	// than it recorded (another native BLAS kernel or thread count): the
	// change is recorded in its config instead of refused.
	AllowArithmeticChange bool
}

// DefaultSetup returns the setup of the process's registries: the models
// of nn.Models (a copy, which a caller may add to), the kernels of
// sampler.Kernels, the exchange rules of DefaultExchanges, and the
// training data loaded from Config.Data (Train nil).
func DefaultSetup() Setup {
	models := make(ModelRegistry, len(nn.Models))
	for name, build := range nn.Models {
		models[name] = build
	}
	return Setup{Models: models, Kernels: sampler.Kernels, Exchanges: DefaultExchanges()}
}

// WithModel returns s with the model registry extended by build under
// name (a copy: s's registry is unchanged).
func (s Setup) WithModel(name string, build func(nn.PriorConfig) (nn.Model, error)) Setup {
	models := make(ModelRegistry, len(s.Models)+1)
	for n, b := range s.Models {
		models[n] = b
	}
	models[name] = build
	s.Models = models
	return s
}

// WithTrain returns s with the training data given (before the
// validation split), instead of loading it from Config.Data.
func (s Setup) WithTrain(d *datasets.Dataset) Setup {
	s.Train = d
	return s
}

// Check reports an error when s lacks a registry: a Setup is made by
// DefaultSetup (or given every registry), never left to mean the
// process's registries by its zero value.
func (s Setup) Check() error {
	if s.Models == nil || s.Kernels == nil || s.Exchanges == nil {
		return fmt.Errorf("setup: no registry of models, kernels or exchange rules (models %v, kernels %v, exchange rules %v): start from runspec.DefaultSetup()",
			s.Models != nil, s.Kernels != nil, s.Exchanges != nil)
	}
	if _, err := sampler.RunSettings(s.Kernels); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	return nil
}

// ModelKey returns the settings of cfg that determine its model.
func ModelKey(c Config) string {
	k := fmt.Sprintf("%q %q %q %v %v %v %v", c.Model, c.Arch, c.Activation, c.Prior, c.PriorFanIn, c.PriorDF, c.Classes)
	if c.NullSpaceSkip > 0 { // the skip branch is a learnable of its own
		k += " skip"
	}
	return k
}
