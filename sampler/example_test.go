package sampler_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// Example samples the paper's 1-d mixture with PT-SGHMC from its
// lowest-weight mode and reports how often rung 1 visits each mode.
func Example() {
	target := sampler.Gauss1D4()
	temps, _ := sampler.GeometricLadder(10, 10)
	corr, _ := sampler.NewCorrection(1, sampler.CorrectionOptions{})
	pt := &sampler.PT{
		Kernel:   sampler.SGNHT{StepSize: 0.2, Diffusion: 1},
		Temps:    temps,
		Every:    2,
		Exchange: &sampler.Exchanger{Batch: 16, Correction: corr},
	}
	state, _ := pt.Init([][]float64{target.Start()}, 1)
	pots := make([]sampler.Potential, len(temps))
	for i := range pots {
		pots[i] = target
	}
	visits := make([]int, 4)
	n := 0
	_ = pt.Run(pots, target, state, 200000, func(s *sampler.PTState) error {
		if s.Steps > 10000 && s.Steps%10 == 0 {
			x := s.Rungs[0].Theta[0]
			switch {
			case x < -6:
				visits[0]++
			case x < 0:
				visits[1]++
			case x < 6:
				visits[2]++
			default:
				visits[3]++
			}
			n++
		}
		return nil
	})
	for m, v := range visits {
		fmt.Printf("mode %d: weight %.1f (true %.1f)\n", m, float64(v)/float64(n), target.Weights[m])
	}
	// Output:
	// mode 0: weight 0.1 (true 0.1)
	// mode 1: weight 0.2 (true 0.2)
	// mode 2: weight 0.3 (true 0.3)
	// mode 3: weight 0.4 (true 0.4)
}

// ExampleDeltaE shows the exchange's log acceptance ratio: a cold rung
// holding the higher energy favours the swap.
func ExampleDeltaE() {
	fmt.Printf("%.2f\n", sampler.DeltaE(10, 4, 1, 2)) // cold rung at U=10, hot at U=4
	fmt.Printf("%.2f\n", sampler.DeltaE(4, 10, 1, 2))
	// Output:
	// 3.00
	// -3.00
}
