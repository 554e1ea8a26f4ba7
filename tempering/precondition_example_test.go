package tempering_test

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// ExampleMassFromPrecision turns per-coordinate curvature estimates (here
// the mean squared gradient of a stiff, a medium and a wide coordinate)
// into a diagonal mass: the widest keeps unit mass, the others are slowed
// to its pace.
func ExampleMassFromPrecision() {
	fmt.Println(tempering.MassFromPrecision([]float64{4e6, 2e4, 200}))
	// Output:
	// [20000 100 1]
}

// ExampleInjectionScale corrects the injected noise of three coordinates
// whose gradients bring 0, half and all of the injected variance per step.
func ExampleInjectionScale() {
	inj := sampler.InjectedVariance(1, 0.1) // friction 0.1 per step
	fmt.Printf("%.3f\n", tempering.InjectionScale([]float64{0, inj / 2, inj}, inj))
	// Output:
	// [1.000 0.707 0.000]
}

// ExamplePT_precondition runs SGNHT with a diagonal mass estimated during
// burn-in on a Gaussian whose two coordinates have sds 100 apart; the
// masses are frozen at the end of the last estimation window.
func ExamplePT_precondition() {
	g := &sampler.Gaussian{Mean: []float64{0, 0}, Var: []float64{1e-4, 1}}
	pt := &tempering.PT{Kernel: sampler.SGNHT{StepSize: 0.005, Diffusion: 20}, Temps: []float64{1}, Workers: 1,
		BurnIn: 20000, Precondition: tempering.PrecondVariance}
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
	fmt.Printf("mass ratio about 10^%.0f, windows ending at %v\n", math.Log10(m[0]/m[1]), tempering.MassWindowEnds(pt.BurnIn))
	// Output:
	// mass ratio about 10^4, windows ending at [2000 4000 8000 16000]
}

// ExampleMassFromPrecisionStiffest normalises the same estimates to the
// stiffest coordinate (MassScaleStiffest): it keeps unit mass, the others
// are sped up to its pace.
func ExampleMassFromPrecisionStiffest() {
	fmt.Println(tempering.MassFromPrecisionStiffest([]float64{4e6, 2e4, 200}))
	// Output:
	// [1 0.005 5e-05]
}
