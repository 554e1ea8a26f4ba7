package train

import (
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// rateOf returns the learning rate of c on training data of n examples:
// sampler.Rate maps it to the kernels' step.
func rateOf(c runspec.Config, n int) sampler.Rate {
	return sampler.Rate{LR: c.LR, Examples: n}
}

// kernelFrom returns the per-replica dynamics the config names in the
// registry ks, for training data of n examples, at the configured learning
// rate (sampler.Rate.Params: the step h = sqrt(eps/n), the diffusion or
// friction alpha/h, SGLD's step 2 eps/n). A schedule changes the step
// through sampler.Hyper.StepSize, never by rebuilding the kernel.
func kernelFrom(c runspec.Config, ks []sampler.KernelInfo, n int) (sampler.Kernel, error) {
	k, err := c.Kernel(ks)
	if err != nil {
		return nil, err
	}
	p := rateOf(c, n).Params(1, c.Friction)
	p.Inertia, p.Tempering = c.Inertia, c.TemperingValue()
	return k.New(p), nil
}
