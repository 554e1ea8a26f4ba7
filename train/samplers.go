package train

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// rateOf returns the learning rate of c on training data of n examples:
// sampler.Rate maps it to the kernels' step.
func rateOf(c runspec.Config, n int) sampler.Rate {
	return sampler.Rate{LR: c.LR, Examples: n}
}

// kernelFrom returns the per-replica dynamics the config names in the
// registry ks, for training data of n examples: the kernel's own settings
// (runspec.Config.KernelParams) at the configured learning rate (see
// sampler.Rate: the step h = sqrt(eps/n)). A schedule changes the step
// through sampler.Hyper.StepSize, never by rebuilding the kernel.
func kernelFrom(c runspec.Config, ks []sampler.KernelInfo, n int) (sampler.Kernel, error) {
	_, p, err := c.KernelParams(ks)
	if err != nil {
		return nil, err
	}
	return p.Kernel(rateOf(c, n), c.TemperingValue()), nil
}

// kernelKey returns what the kernel of c is built from, as a string: the
// sampler, the learning rate, the posterior tempering and the kernel's
// own settings ("" when they do not decode).
func kernelKey(c runspec.Config, ks []sampler.KernelInfo) string {
	_, p, err := c.KernelParams(ks)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %v %v %#v", c.Sampler, c.LR, c.TemperingValue(), p)
}

// warmupKernel returns the sgd kernel of the config's SGD warm-up, for
// training data of n examples, at the configured learning rate.
func warmupKernel(c runspec.Config, n int) (sampler.Kernel, error) {
	p, err := c.WarmupParams()
	if err != nil {
		return nil, err
	}
	return p.Kernel(rateOf(c, n), c.TemperingValue()), nil
}
