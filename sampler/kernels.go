package sampler

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Params are the settings of one kernel of Kernels, a type of the kernel's
// own (SGNHTParams, SGHMCParams, SGLDParams, HMCParams, SGDParams). Its
// JSON field names are the run settings it reads, by their config-file
// names (a flag's name with _ for -): a run decodes its config into the
// kernel's Params, so a setting applies to a kernel exactly when its Params
// name it (Settings). The learning rate and how a temperature enters, which
// every run has, are Kernel's arguments instead.
type Params interface {
	// Validate returns an error naming the first setting out of range.
	Validate() error
	// Kernel returns the kernel these settings make at the learning rate r
	// (its step, Rate.Step or Rate.SGLDStep at s = 1), tempering a
	// temperature T != 1 by t.
	Kernel(r Rate, t Tempering) Kernel
}

// Settings returns the names of the run settings p reads (its JSON
// fields), sorted. A Params type names every field it reads: it has no
// omitempty fields.
func Settings(p Params) []string {
	b, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// NewParams returns the settings of kernel k decoded from settings, a JSON
// object of run settings by config-file name (a run's config.json): the
// fields k's Params name are read, the others ignored.
func (k KernelInfo) NewParams(settings []byte) (Params, error) {
	p := k.Params()
	if err := json.Unmarshal(settings, p); err != nil {
		return nil, fmt.Errorf("kernel %s settings: %w", k.Name, err)
	}
	return p, nil
}

// KernelInfo is a kernel's entry in the registry Kernels.
type KernelInfo struct {
	Name string // the kernel's Name(): what a run's sampler setting says
	Doc  string // one line for help texts
	// Sampler is false for an optimiser, whose chain converges to a mode
	// of U instead of sampling exp(-U/T) (SGD): a run keeps its final
	// state alone.
	Sampler bool
	// Minibatch reports whether the kernel is meant for minibatch
	// gradients. HMC's Metropolis test assumes exact energies (on noisy
	// ones it is the biased baseline of the PT-SGHMC paper), so a training
	// run does not offer it.
	Minibatch bool
	// Params returns the kernel's default settings (a new pointer, for a
	// run to decode its config over); its Kernel builds the kernel. Its
	// fields declare the kernel's run settings (Setting, RunSettings):
	// config-file key, flag, default and help text.
	Params func() Params
}

// Kernels is the registry of the single-chain kernels a run can name, in
// the order help texts list them. Every list of kernel names (a config's
// validation, a command's flag help) derives from it.
//
// Parallel tempering is not a kernel but a driver: driver.Driver steps a ladder of
// replicas of one kernel. The sampler name "ptsghmc" that runs and commands
// accept (runspec.PTSGHMC) is PT over replicas of the sgnht kernel, PT-SGHMC
// as in Luo, Zhang and Liu (2018); it is not listed here.
var Kernels = []KernelInfo{
	{Name: "sgnht", Doc: "stochastic gradient Nose-Hoover thermostat (Ding et al. 2014)", Sampler: true, Minibatch: true,
		Params: func() Params { return &SGNHTParams{Friction: DefaultFriction} }},
	{Name: "sghmc", Doc: "stochastic gradient HMC with a fixed friction (Chen et al. 2014)", Sampler: true, Minibatch: true,
		Params: func() Params { return &SGHMCParams{Friction: DefaultFriction} }},
	{Name: "sgld", Doc: "stochastic gradient Langevin dynamics (Welling and Teh 2011)", Sampler: true, Minibatch: true,
		Params: func() Params { return &SGLDParams{} }},
	{Name: "hmc", Doc: "Hamiltonian Monte Carlo with a Metropolis test (Neal 2011)", Sampler: true, Minibatch: false,
		Params: func() Params { return &HMCParams{} }},
	{Name: "sgd", Doc: "momentum SGD, not a sampler: the non-Bayesian MAP baseline", Sampler: false, Minibatch: true,
		Params: func() Params { return &SGDParams{Friction: DefaultFriction} }},
}

// DefaultFriction is the default momentum decay per step alpha of the
// kernels with momentum (sgnht, sghmc, sgd): train's --friction.
const DefaultFriction = 0.1

// LookupKernel returns the entry of Kernels named name.
func LookupKernel(name string) (KernelInfo, bool) {
	for _, k := range Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return KernelInfo{}, false
}

// validFriction checks a friction per step alpha, which must be in (0, 1).
func validFriction(alpha float64) error {
	if !(alpha > 0 && alpha < 1) {
		return fmt.Errorf("friction must be in (0, 1)")
	}
	return nil
}

// frictionAt returns the step h at the rate r and the diffusion or
// friction alpha/h of a friction per step alpha.
func frictionAt(r Rate, alpha float64) (h, a float64) {
	h = r.Step(1)
	return h, alpha / h
}

// checkFinite is the check of a non-negative finite setting.
func checkFinite(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
