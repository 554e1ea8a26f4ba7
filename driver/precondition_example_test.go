package driver

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// ExamplePT_precondition runs SGNHT with a diagonal mass estimated during
// burn-in on a Gaussian whose two coordinates have sds 100 apart; the
// masses are frozen at the end of the last estimation window.
func ExamplePT_precondition() {
	g := &sampler.Gaussian{Mean: []float64{0, 0}, Var: []float64{1e-4, 1}}
	pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.005, Diffusion: 20}, Temps: []float64{1}, Workers: 1,
		BurnIn: 20000, Precondition: adapt.PrecondVariance})
	st, err := pt.Init([][]float64{{0, 0}}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := pt.Run([]sampler.Potential{g}, nil, st, 20000, nil); err != nil {
		fmt.Println(err)
		return
	}
	m := st.Rungs[0].Mass
	fmt.Printf("mass ratio about 10^%.0f, windows ending at %v\n", math.Log10(m[0]/m[1]), adapt.MassWindowEnds(pt.BurnIn))
	// Output:
	// mass ratio about 10^4, windows ending at [2000 4000 8000 16000]
}
