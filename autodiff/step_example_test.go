package autodiff_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Example_kernelStep drives one SGNHT chain by hand, in the manner of
// BlackJAX: the loop owns the minibatch order and the step size, and each
// step passes the state, the minibatch and the step's settings to the
// kernel. The step size follows a cosine schedule (cyclical SG-MCMC, Zhang
// et al. 2020), and the small steps at each cycle's end keep samples; the
// posterior mean of Example_customModel's Bayesian linear regression comes
// out at its closed form.
func Example_kernelStep() {
	d := linearData(200, rand.New(rand.NewPCG(3, 4)))
	model, err := nn.NewModel("linear", linearModel)
	if err != nil {
		fmt.Println(err)
		return
	}
	ev, err := autodiff.NewModelEvaluator(model, 50, autodiff.Float64)
	if err != nil {
		fmt.Println(err)
		return
	}
	pot := &autodiff.Potential{Model: model, Data: d, Eval: ev} // no order of its own: the loop chooses
	stream := sampler.NewStream(7, 1)
	order, err := datasets.NewBatches(d.N, 50, stream.Rand)
	if err != nil {
		fmt.Println(err)
		return
	}
	h := math.Sqrt(0.002 / float64(d.N))
	k := sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h, Inertia: 0.01}
	s := sampler.NewState(make([]float64, model.NumParams()))
	k.Init(s, stream.Rand)
	const steps, cycle = 10000, 2000
	mean, n := make([]float64, len(s.Theta)), 0
	for t := 0; t < steps; t++ {
		mb := sampler.NextMinibatch(order, stream.Rand) // the data of this step
		f := (math.Cos(math.Pi*float64(t%cycle)/cycle) + 1) / 2
		hp := sampler.Hyper{StepSize: h * math.Sqrt(max(f, 0.05)), Temp: 1} // this step's size
		if err := k.Step(s, pot, mb, hp, stream.Rand); err != nil {
			fmt.Println(err)
			return
		}
		if t >= steps/5 && t%cycle >= cycle*4/5 { // the small steps of each cycle sample
			for i, v := range s.Theta {
				mean[i] += v
			}
			n++
		}
	}
	for i := range mean {
		mean[i] /= float64(n)
	}
	exact, _ := linearPosterior(d)
	fmt.Printf("cyclical SGNHT posterior mean (w, b): %.1f\n", mean)
	fmt.Printf("closed-form posterior mean:          %.1f\n", exact)
	// Output:
	// cyclical SGNHT posterior mean (w, b): [0.9 -1.9 0.5 0.3]
	// closed-form posterior mean:          [0.9 -1.9 0.5 0.3]
}
