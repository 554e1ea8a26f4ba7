package sampler_test

import (
	"fmt"

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
		var hl sampler.Health
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
