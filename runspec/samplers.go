package runspec

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// PTSGHMC is the sampler name of parallel tempering: PT-SGHMC (Luo, Zhang
// and Liu 2018), replicas of the sgnht kernel on a ladder of temperatures
// (Config.Replicas, TMax, Ladder) with minibatch exchange tests. It is a
// run's choice rather than a kernel of sampler.Kernels: the run drives
// a driver.Driver of sgnht replicas. With one replica it is one sgnht chain.
// Every other sampler name is a kernel of the registry, run as one chain.
const PTSGHMC = "ptsghmc"

// ptDoc describes PTSGHMC in help texts.
const ptDoc = "parallel tempering of sgnht replicas with minibatch exchange tests (Luo et al. 2018)"

// SamplerNames returns the names a run's Config.Sampler may hold with the
// kernel registry ks: PTSGHMC, then the minibatch kernels of ks in the
// registry's order.
func SamplerNames(ks []sampler.KernelInfo) []string {
	names := []string{PTSGHMC}
	for _, k := range ks {
		if k.Minibatch {
			names = append(names, k.Name)
		}
	}
	return names
}

// SamplerDoc returns a one-line description of the sampler named (PTSGHMC
// or a kernel of sampler.Kernels), "" for an unknown name.
func SamplerDoc(name string) string {
	if name == PTSGHMC {
		return ptDoc
	}
	k, _ := sampler.LookupKernel(name)
	return k.Doc
}

// KernelOf returns the entry of sampler.Kernels of the kernel the sampler
// named steps: sgnht for PTSGHMC, else the entry of that name.
func KernelOf(name string) (sampler.KernelInfo, bool) {
	if name == PTSGHMC {
		name = sampler.SGNHT{}.Name()
	}
	return lookupKernel(sampler.Kernels, name)
}

// lookupKernel returns the entry of ks named name.
func lookupKernel(ks []sampler.KernelInfo, name string) (sampler.KernelInfo, bool) {
	for _, k := range ks {
		if k.Name == name {
			return k, true
		}
	}
	return sampler.KernelInfo{}, false
}

// Kernel returns the entry of the registry ks of the kernel the config's
// sampler steps: for PTSGHMC its ReplicaKernel (sgnht when empty), else
// the sampler's own, or an error naming the samplers a run accepts.
func (c Config) Kernel(ks []sampler.KernelInfo) (sampler.KernelInfo, error) {
	name := c.Sampler
	if name == PTSGHMC {
		name = sampler.SGNHT{}.Name()
		if c.ReplicaKernel != "" {
			name = c.ReplicaKernel
		}
	}
	k, ok := lookupKernel(ks, name)
	if !ok || !k.Minibatch {
		if c.Sampler == PTSGHMC {
			return k, fmt.Errorf("replica_kernel %q: expected a minibatch kernel of %s", name, strings.Join(SamplerNames(ks)[1:], ", "))
		}
		return k, fmt.Errorf("sampler %q: expected one of %s", name, strings.Join(SamplerNames(ks), ", "))
	}
	return k, nil
}

// KernelParams returns the entry of the registry ks of the config's
// kernel (see Kernel) and its settings: the kernel's own Params, read from
// the config's fields of the names it gives them (sampler.Settings).
func (c Config) KernelParams(ks []sampler.KernelInfo) (sampler.KernelInfo, sampler.Params, error) {
	k, err := c.Kernel(ks)
	if err != nil {
		return k, nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return k, nil, fmt.Errorf("config: %w", err)
	}
	p, err := k.NewParams(b)
	return k, p, err
}

// WarmupParams returns the settings of the sgd kernel (of sampler.Kernels)
// that steps the config's SGD warm-up (SGDWarmup): its own friction.
func (c Config) WarmupParams() (sampler.Params, error) {
	c.Sampler, c.ReplicaKernel = sampler.SGD{}.Name(), ""
	_, p, err := c.KernelParams(sampler.Kernels)
	return p, err
}

// Optimiser reports whether the config's kernel (of the registry ks) is an
// optimiser (sgd), whose run keeps its final state alone and has no
// burn-in.
func (c Config) Optimiser(ks []sampler.KernelInfo) bool {
	k, err := c.Kernel(ks)
	return err == nil && !k.Sampler
}
