package driver

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestCoordWatchDriven checks that the driver feeds each rung's
// per-coordinate health watch after burn-in (StepHealth: ArmCoords after
// every phase's Before, ObserveCoords after the step), without the noise
// correction, with it (its Before clears the rungs' noise sums) and with
// a correction that Tracks the noise after burn-in (the watch then reads
// each step's noise from the correction's own sums, also when, as in
// Watched's order, the correction ends a window before the watch reads
// the step): on a
// 40-dimensional standard Gaussian whose first 20 coordinates' gradients
// carry noise of variance 12, the watch observes every step after burn-in
// and its noise estimate is about h^2 V = 0.12 per step in the noisy
// coordinates and 0 in the quiet ones. It fails when StepHealth arms the watch
// in its Before (NoiseCorrection's Before then clears the sums it armed:
// no noise measured).
func TestCoordWatchDriven(t *testing.T) {
	const d, half, h, burn, steps = 40, 20, 0.1, 4000, 10000
	nv := make([]float64, d)
	for i := 0; i < half; i++ {
		nv[i] = 12
	}
	pot := coordNoiseGauss{NoiseVar: nv}
	for _, v := range []struct{ correct, track, watchedLast bool }{{false, false, false}, {true, false, false}, {true, true, false}, {true, true, true}} {
		correct := v
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}, Temps: []float64{1}, Workers: 1, BurnIn: burn, HealthWindow: 1000,
			NoiseCorrection: v.correct, NoiseTrack: v.track})
		if v.watchedLast { // Watched's order: the correction's After before the watch's
			pt.Phases = Watched(&NoiseCorrection{Track: true})
		}
		st, err := pt.Init([][]float64{make([]float64, d)}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := pt.Run([]sampler.Potential{pot}, nil, st, steps, nil); err != nil {
			t.Fatal(err)
		}
		c := st.Stats.Health[0].Coords
		if c.Steps != steps-burn || c.Dim != d {
			t.Fatalf("correction %v: the watch observed %d steps of a %d-dimensional chain, want %d of %d", correct, c.Steps, c.Dim, steps-burn, d)
		}
		noisy, quiet := 0.0, 0.0 // the mean noise per step and coordinate
		for u := range c.N {
			v := (c.NoiseSum[u] + c.NoiseB[u]) / float64(c.Steps)
			if c.Last[u] < half {
				noisy += v / half
			} else if c.First[u] >= half {
				quiet += v / (d - half)
			}
		}
		if math.Abs(noisy-0.12) > 0.03 || math.Abs(quiet) > 0.015 {
			t.Errorf("correction %v: noise %.4f per step in the noisy coordinates, %.4f in the quiet ones, want 0.12 and 0", correct, noisy, quiet)
		}
		t.Logf("correction %v: %d units, noise per step %.4f (noisy), %.4f (quiet); %v", correct, len(c.N), noisy, quiet, st.Stats.Health[0].Last)
	}
}
