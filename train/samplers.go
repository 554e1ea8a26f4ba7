package train

import (
	"math"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// kernel returns the per-replica dynamics the config names (in
// sampler.Kernels), for training data of n examples, with the learning
// rate multiplied by scale: see kernelFrom.
func kernel(c runspec.Config, n int, scale float64) (sampler.Kernel, error) {
	return kernelFrom(c, nil, n, scale)
}

// kernelFrom returns the per-replica dynamics the config names in the
// registry ks (nil: sampler.Kernels), for training data of n examples, with
// the learning rate multiplied by scale: the step h = sqrt(eps/n) of the
// per-example learning rate eps, the diffusion (or friction) A = alpha/h of
// the momentum decay per step alpha, and SGLD's step 2 eps/n.
func kernelFrom(c runspec.Config, ks []sampler.KernelInfo, n int, scale float64) (sampler.Kernel, error) {
	k, err := c.KernelIn(ks)
	if err != nil {
		return nil, err
	}
	h := math.Sqrt(scale * c.LR / float64(n))
	return k.New(sampler.KernelParams{StepSize: h, Diffusion: c.Friction / h, Inertia: c.Inertia,
		SGLDStep: 2 * scale * c.LR / float64(n), Tempering: c.TemperingValue()}), nil
}
