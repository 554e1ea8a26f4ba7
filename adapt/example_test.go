package adapt_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// ExampleMassFromPrecision turns per-coordinate curvature estimates (here
// the mean squared gradient of a stiff, a medium and a wide coordinate)
// into a diagonal mass: the widest keeps unit mass, the others are slowed
// to its pace.
func ExampleMassFromPrecision() {
	fmt.Println(adapt.MassFromPrecision([]float64{4e6, 2e4, 200}))
	// Output:
	// [20000 100 1]
}

// ExampleInjectionScale corrects the injected noise of three coordinates
// whose gradients bring 0, half and all of the injected variance per step.
func ExampleInjectionScale() {
	inj := sampler.InjectedVariance(1, 0.1) // friction 0.1 per step
	fmt.Printf("%.3f\n", adapt.InjectionScale([]float64{0, inj / 2, inj}, inj))
	// Output:
	// [1.000 0.707 0.000]
}

// ExampleMassFromPrecisionStiffest normalises the same estimates to the
// stiffest coordinate (MassScaleStiffest): it keeps unit mass, the others
// are sped up to its pace.
func ExampleMassFromPrecisionStiffest() {
	fmt.Println(adapt.MassFromPrecisionStiffest([]float64{4e6, 2e4, 200}))
	// Output:
	// [1 0.005 5e-05]
}
