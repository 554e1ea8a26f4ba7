package driver

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestSwapsOffAblation runs the paper's gauss1d4 experiment twice on the
// same 10-rung ladder (T = 1..10) from the lowest-weight mode: as PT-SGHMC
// (exchanges every 2 steps) and with swaps off (Every = 0: the same rungs,
// each an independent tempered chain), which isolates what the swaps
// contribute. PT's rung 1 must recover every mode weight within 0.05 over
// 300,000 steps; without swaps rung 1 is an SGNHT chain at T = 1 and must
// miss (total variation at least 0.3 from the true weights), so the hot
// rungs alone do not carry the answer to rung 1.
func TestSwapsOffAblation(t *testing.T) {
	const steps, burn = 300000, 20000
	tv := map[int]float64{}
	for _, every := range []int{2, 0} {
		m := sampler.Gauss1D4()
		temps, _ := tempering.GeometricLadder(10, 10)
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: temps, Every: every, Workers: 1})
		if every > 0 {
			corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{})
			pt.PT.Exchange = &tempering.Exchanger{Batch: 16, Correction: corr}
		}
		st, err := pt.Init([][]float64{m.Start()}, 1)
		if err != nil {
			t.Fatal(err)
		}
		pots := make([]sampler.Potential, len(temps))
		for i := range pots {
			pots[i] = m
		}
		var xs [][]float64
		err = pt.Run(pots, m, st, steps, func(s *tempering.PTState) error {
			if s.Steps > burn && s.Steps%5 == 0 {
				xs = append(xs, append([]float64(nil), s.Rungs[0].Theta...))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		w := m.ModeWeights(xs)
		worst := 0.0
		for c := range w {
			tv[every] += 0.5 * math.Abs(w[c]-m.Weights[c])
			worst = math.Max(worst, math.Abs(w[c]-m.Weights[c]))
		}
		t.Logf("exchange every %d: rung-1 weights %.3f (true %v), total variation %.3f, largest error %.3f", every, w, m.Weights, tv[every], worst)
		if every > 0 && worst > 0.05 {
			t.Errorf("PT-SGHMC: a mode weight is off by %.3f (> 0.05)", worst)
		}
	}
	if tv[0] < 0.3 {
		t.Errorf("swaps off: rung 1's weights are within total variation %.3f of the truth: the ablation does not show what swaps contribute", tv[0])
	}
}
