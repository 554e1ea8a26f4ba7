package autodiff_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// Example evaluates a Bayesian MLP's minibatch potential and gradient with
// both engines: the BLAS plan and Gorgonia's VM agree.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	data := datasets.TwoGaussians(100, 4, 3, rng)
	spec := nn.Spec{Sizes: []int{4, 8, 2}, Activation: nn.Tanh, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7}
	scale := float64(data.N) / float64(len(idx)) // N/|S|
	for _, engine := range []autodiff.Engine{autodiff.EnginePlan, autodiff.EngineGraph} {
		ev, _ := autodiff.New(engine, spec, 8, autodiff.Float64)
		grad := make([]float64, len(theta))
		u, _ := ev.Eval(theta, data, idx, scale, grad, nil)
		fmt.Printf("%s: U~ = %.6f, dU~/dtheta_0 = %.6f\n", engine, u, grad[0])
	}
	// Output:
	// plan: U~ = 70.309010, dU~/dtheta_0 = 0.998223
	// graph: U~ = 70.309010, dU~/dtheta_0 = 0.998223
}

// ExamplePlan_EvalStream hands the plan's gradient to a consumer in chunks
// instead of writing it whole: what the SGNHT and SGHMC kernels do with an
// MLP (sampler.StreamingPotential). The chunks, of at most 256 within a
// layer (1,500 and 602 parameters here), cover every parameter in order and
// hold Eval's values.
func ExamplePlan_EvalStream() {
	rng := rand.New(rand.NewPCG(1, 2))
	data := datasets.TwoGaussians(100, 4, 3, rng)
	spec := nn.Spec{Sizes: []int{4, 300, 2}, Activation: nn.Tanh, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7}
	plan, err := autodifftest.NewPlan(spec, 8, autodiff.Float64)
	if err != nil {
		fmt.Println(err)
		return
	}
	grad := make([]float64, len(theta))
	u, _ := plan.Eval(theta, data, idx, 12.5, grad, nil)
	chunks, same := 0, true
	us, _ := plan.EvalStream(theta, data, idx, 12.5, func(lo int, g []float64) {
		chunks++
		for i, v := range g {
			same = same && v == grad[lo+i]
		}
	})
	fmt.Printf("%d parameters in %d chunks; U~ and gradient the same as Eval's: %v\n", len(theta), chunks, same && us == u)
	// Output:
	// 2102 parameters in 9 chunks; U~ and gradient the same as Eval's: true
}
