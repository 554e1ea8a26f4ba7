package train

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// PTSGHMC is the sampler name of parallel tempering: PT-SGHMC (Luo, Zhang
// and Liu 2018), replicas of the sgnht kernel on a ladder of temperatures
// (Config.Replicas, TMax, Ladder) with minibatch exchange tests. It is a
// run's choice rather than a kernel of sampler.Kernels: the run drives
// sampler.PT with sgnht replicas. With one replica it is one sgnht chain.
// Every other sampler name is a kernel of the registry, run as one chain.
const PTSGHMC = "ptsghmc"

// ptDoc describes PTSGHMC in help texts.
const ptDoc = "parallel tempering of sgnht replicas with minibatch exchange tests (Luo et al. 2018)"

// SamplerNames returns the names a run's Config.Sampler may hold: PTSGHMC,
// then the minibatch kernels of sampler.Kernels in the registry's order.
func SamplerNames() []string {
	names := []string{PTSGHMC}
	for _, k := range sampler.Kernels {
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

// KernelOf returns the registry entry of the kernel the sampler named
// steps: sgnht for PTSGHMC, else the entry of that name.
func KernelOf(name string) (sampler.KernelInfo, bool) {
	if name == PTSGHMC {
		name = sampler.SGNHT{}.Name()
	}
	return sampler.LookupKernel(name)
}

// runKernel returns the registry entry of the kernel of a run's sampler,
// or an error naming the samplers a run accepts.
func runKernel(name string) (sampler.KernelInfo, error) {
	k, ok := KernelOf(name)
	if !ok || !k.Minibatch {
		return k, fmt.Errorf("sampler %q: expected one of %s", name, strings.Join(SamplerNames(), ", "))
	}
	return k, nil
}

// optimiser reports whether the config's kernel is an optimiser (sgd),
// whose run keeps its final state alone and has no burn-in.
func (c Config) optimiser() bool {
	k, err := runKernel(c.Sampler)
	return err == nil && !k.Sampler
}

// kernel returns the per-replica dynamics the config names, for training
// data of n examples, with the learning rate multiplied by scale: the step
// h = sqrt(eps/n) of the per-example learning rate eps, the diffusion (or
// friction) A = alpha/h of the momentum decay per step alpha, and SGLD's
// step 2 eps/n.
func (c Config) kernel(n int, scale float64) (sampler.Kernel, error) {
	k, err := runKernel(c.Sampler)
	if err != nil {
		return nil, err
	}
	h := math.Sqrt(scale * c.LR / float64(n))
	return k.New(sampler.KernelParams{StepSize: h, Diffusion: c.Friction / h, Inertia: c.Inertia,
		SGLDStep: 2 * scale * c.LR / float64(n), Tempering: c.TemperingValue()}), nil
}
