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

// ExampleDenseMassOf turns the covariance of two coordinates of sds 1 and
// 100 and correlation 0.998 into a dense mass scaled to the stiffest
// direction: C C' = M^-1 = Sigma/lambda_min(Sigma), so every direction
// moves at the pace of the unit-mass chain's stiffest.
func ExampleDenseMassOf() {
	cov := []float64{1, 99.8, 99.8, 10000}
	m, err := adapt.DenseMassOf(cov, 2, 0, adapt.MassScaleStiffest)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("C = [%.4g 0; %.4g %.4g]\n", m.Chol[0], m.Chol[2], m.Chol[3])
	// Output:
	// C = [15.82 0; 1579 100]
}
