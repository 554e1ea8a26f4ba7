package runspec

import (
	"fmt"

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
	// AllowArithmeticChange lets a resumed run continue on other arithmetic
	// than it recorded (another native BLAS kernel or thread count): the
	// change is recorded in its config instead of refused.
	AllowArithmeticChange bool
}

// ModelRegistry returns the setup's model registry.
func (s Setup) ModelRegistry() ModelRegistry {
	if s.Models == nil {
		return nn.Models
	}
	return s.Models
}

// ExchangeRules returns the setup's exchange rules.
func (s Setup) ExchangeRules() []ExchangeRule {
	if s.Exchanges == nil {
		return DefaultExchanges()
	}
	return s.Exchanges
}

// ModelKey returns the settings of cfg that determine its model.
func ModelKey(c Config) string {
	return fmt.Sprintf("%q %q %q %v %v %v %v", c.Model, c.Arch, c.Activation, c.Prior, c.PriorFanIn, c.PriorDF, c.Classes)
}
