package sampler_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// ExampleKernelInfo_NewParams builds a kernel of the registry from a run's
// settings: the kernel's own settings type reads the settings it names
// (sgnht: friction and thermostat_inertia) and ignores the others, checks
// them, and makes the kernel at the run's learning rate.
func ExampleKernelInfo_NewParams() {
	info, _ := sampler.LookupKernel("sgnht")
	p, err := info.NewParams([]byte(`{"lr": 0.02, "friction": 0.1, "thermostat_inertia": 0, "ladder": "geometric"}`))
	if err != nil {
		panic(err)
	}
	if err := p.Validate(); err != nil {
		panic(err)
	}
	k := p.Kernel(sampler.Rate{LR: 0.02, Examples: 50000}, sampler.TemperNoise).(sampler.SGNHT)
	fmt.Println(sampler.Settings(p))
	fmt.Printf("h %.3g, A %.4g, alpha %g\n", k.StepSize, k.Diffusion, k.FrictionPerStep)
	// Output:
	// [friction thermostat_inertia]
	// h 0.000632, A 158.1, alpha 0.1
}
