package health_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// ExampleHealth watches a single SGNHT chain on a 100-dimensional Gaussian
// whose gradients carry noise: with little noise the window is ok; with
// noise of variance 400 per coordinate (h^2 Var = 4 per step, against
// 0.19 injected: a budget above 1) the thermostat has no level and the
// window fails.
func ExampleHealth() {
	for _, noise := range []float64{1, 400} {
		g := &sampler.Gaussian{Mean: make([]float64, 100), Var: make([]float64, 100), NoiseVar: noise}
		for i := range g.Var {
			g.Var[i] = 1
		}
		k := sampler.SGNHT{StepSize: 0.1, Diffusion: 1} // friction 0.1 per step, default inertia
		rng := sampler.NewStream(1, 0)
		s := sampler.NewState(make([]float64, 100))
		k.Init(s, rng.Rand)
		var hl health.Health
		hl.Start(s.KineticTemperature())
		for i := 1; i <= 20000; i++ {
			xi := s.Xi
			if err := k.Step(s, g, sampler.Minibatch{}, sampler.At(1), rng.Rand); err != nil {
				fmt.Println(err)
				return
			}
			hl.Observe(k, xi, s.KineticTemperature(), s.Kinetic, 100, i, 10000, i > 10000)
		}
		fmt.Printf("noise %g: %v, share %.2f, budget %.2f\n", noise, hl.Last.Status, hl.Last.Share, hl.Last.Budget)
	}
	// Output:
	// noise 1: ok, share 0.06, budget 0.10
	// noise 400: fail, share 0.95, budget 2.10
}

// ExampleHealth_ObserveStep drives one SGNHT chain by hand the way
// tempering.PT drives each rung: BeginStep before the kernel's step,
// KineticAfterStep after it (the kernel's own sum, no pass over p), and
// ObserveStep with the step's kick terms, which split the momentum's
// heating into integration error and gradient noise (exact gradients here:
// the gradient noise reads near 0).
func ExampleHealth_ObserveStep() {
	g := &sampler.Gaussian{Mean: make([]float64, 100), Var: make([]float64, 100)}
	for i := range g.Var {
		g.Var[i] = 1
	}
	k := sampler.SGNHT{StepSize: 0.5, Diffusion: 0.2}
	rng := sampler.NewStream(1, 0)
	s := sampler.NewState(make([]float64, 100))
	k.Init(s, rng.Rand)
	var hl health.Health
	hl.Start(s.KineticTemperature())
	for i := 1; i <= 20000; i++ {
		xi := s.Xi
		s.BeginStep()
		if err := k.Step(s, g, sampler.Minibatch{}, sampler.At(1), rng.Rand); err != nil {
			fmt.Println(err)
			return
		}
		hl.ObserveStep(k, xi, s.KineticAfterStep(), s.Kinetic, s.Work, len(s.P), i, 10000, i > 10000)
	}
	f := hl.Last
	fmt.Printf("integration %.3f (sds +%.1f%%), gradient noise %.3f, injected %.3f\n", f.Integration, 100*f.IntSDError, f.GradNoise, f.Injected)
	// Output:
	// integration 0.013 (sds +3.6%), gradient noise 0.001, injected 0.190
}
