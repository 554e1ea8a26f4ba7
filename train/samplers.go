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

// scheduleKey returns what the kernel and the schedule of c are built
// from, as a string: the sampler, the learning rate, the posterior
// tempering and temperature, the kernel's own settings, the cyclical
// schedule, the SGD warm-up and the batch sizes ("" when the settings do
// not decode).
func scheduleKey(c runspec.Config, ks []sampler.KernelInfo) string {
	_, p, err := c.KernelParams(ks)
	if err != nil {
		return ""
	}
	w, _ := c.WarmupParams()
	return fmt.Sprintf("%s %v %v %v %#v %v %v %#v %v %v", c.Sampler, c.LR, c.TemperingValue(), c.PosteriorTemperature(), p,
		c.Cycle, c.SGDWarmup, w, c.WarmupBatch, c.Batch)
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
