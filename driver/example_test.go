package driver

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Example samples the paper's 1-d mixture with PT-SGHMC from its
// lowest-weight mode and reports how often rung 1 visits each mode.
func Example() {
	target := sampler.Gauss1D4()
	temps, _ := tempering.GeometricLadder(10, 10)
	corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	pt := testDriver(testPT{
		Kernel:   sampler.SGNHT{StepSize: 0.2, Diffusion: 1},
		Temps:    temps,
		Every:    2,
		Exchange: &tempering.Exchanger{Batch: 16, Correction: corr},
	})
	state, _ := pt.Init([][]float64{target.Start()}, 1)
	pots := make([]sampler.Potential, len(temps))
	for i := range pots {
		pots[i] = target
	}
	visits := make([]int, 4)
	n := 0
	_ = pt.Run(pots, target, state, 200000, func(s *tempering.PTState) error {
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
	fmt.Printf("%.2f\n", tempering.DeltaE(10, 4, 1, 2)) // cold rung at U=10, hot at U=4
	fmt.Printf("%.2f\n", tempering.DeltaE(4, 10, 1, 2))
	// Output:
	// 3.00
	// -3.00
}

// ExampleLadderAdaptation tempers a 50-dimensional standard Gaussian from
// T = 1 to 10 with 8 rungs, starting from a linear ladder: tuning rounds
// during burn-in move the rungs to equal communication barrier (for this
// target, a geometric ladder), and the barrier estimated after burn-in says
// how many rungs the range needs.
func ExampleLadderAdaptation() {
	g := sampler.StdGaussian{D: 50}
	temps, _ := tempering.LinearLadder(8, 10)
	corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	pt := testDriver(testPT{
		Kernel:   sampler.SGNHT{StepSize: 0.1, Diffusion: 1},
		Temps:    temps,
		Every:    1,
		Exchange: &tempering.Exchanger{Batch: 2, Correction: corr},
		BurnIn:   8190, // tuning rounds of 2, 4, ..., 4096 exchange rounds
		Adapt:    &tempering.LadderAdaptation{},
		Workers:  1,
	})
	state, _ := pt.Init([][]float64{make([]float64, 50)}, 1)
	pots := make([]sampler.Potential, len(temps))
	for i := range pots {
		pots[i] = g
	}
	if err := pt.Run(pots, g, state, 30000, nil); err != nil {
		fmt.Println(err)
		return
	}
	reject := make([]float64, len(temps)-1)
	for p := range reject {
		reject[p] = state.Stats.WindowRejection(p)
	}
	b, _ := tempering.NewBarrier(state.Temps, reject)
	fmt.Printf("tuning rounds: %d, converged: %v\n", len(state.Tuning.Rounds), state.Tuning.Converged)
	fmt.Printf("ladder: %.1f\n", state.Temps)
	fmt.Printf("barrier between 5 and 7 (exact sqrt(50/2pi) ln 10 = 6.5): %v\n", b.Global() > 5 && b.Global() < 7)
	fmt.Printf("recommended rungs: %d\n", tempering.RecommendedRungs(b.Global()))
	// Output:
	// tuning rounds: 17, converged: true
	// ladder: [1.0 1.4 1.9 2.7 3.7 5.2 7.2 10.0]
	// barrier between 5 and 7 (exact sqrt(50/2pi) ln 10 = 6.5): true
	// recommended rungs: 11
}

// ExampleBarrier estimates a ladder's communication barrier from its pairs'
// rejection rates and places the same number of rungs at equal barrier:
// the rungs move to where rejections were, here the hot end.
func ExampleBarrier() {
	temps := []float64{1, 2, 4, 8}
	reject := []float64{0.1, 0.3, 0.8} // the hot end is hard to cross
	b, _ := tempering.NewBarrier(temps, reject)
	ladder, _ := b.EqualBarrierLadder(4)
	fmt.Printf("Lambda %.1f, recommended rungs %d\n", b.Global(), tempering.RecommendedRungs(b.Global()))
	fmt.Printf("equal-barrier ladder %.2f\n", ladder)
	// Output:
	// Lambda 1.2, recommended rungs 3
	// equal-barrier ladder [1.00 4.00 5.72 8.00]
}

// ExamplePTState_Snapshot saves a PT run's state as plain data halfway
// (what a checkpoint holds), restores it into a fresh state and steps on:
// the run continues exactly as without the break.
func ExamplePTState_Snapshot() {
	m, _ := sampler.Target("gauss1d4")
	pots := []sampler.Potential{m, m}
	run := func(breakAt int) float64 {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: []float64{1, 2}, Workers: 1})
		st, _ := pt.Init([][]float64{m.Start()}, 5)
		for i := 0; i < 100; i++ {
			if i == breakAt {
				snap, _ := st.Snapshot(pt.Kernel) // plain data: rungs, streams, statistics, ladder
				st, _ = pt.Restore(snap, m.Dim())
			}
			pt.Step(pots, m, st)
		}
		return st.Rungs[0].Theta[0]
	}
	fmt.Println(run(-1) == run(50))
	// Output: true
}
