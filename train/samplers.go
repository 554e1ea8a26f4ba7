package train

import (
	"math"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// kernelFrom returns the per-replica dynamics the config names in the
// registry ks, for training data of n examples, with
// the learning rate multiplied by scale: the step h = sqrt(eps/n) of the
// per-example learning rate eps, the diffusion (or friction) A = alpha/h of
// the momentum decay per step alpha, and SGLD's step 2 eps/n.
func kernelFrom(c runspec.Config, ks []sampler.KernelInfo, n int, scale float64) (sampler.Kernel, error) {
	k, err := c.Kernel(ks)
	if err != nil {
		return nil, err
	}
	h := math.Sqrt(scale * c.LR / float64(n))
	return k.New(sampler.KernelParams{StepSize: h, Diffusion: c.Friction / h, Inertia: c.Inertia,
		SGLDStep: 2 * scale * c.LR / float64(n), Tempering: c.TemperingValue()}), nil
}
