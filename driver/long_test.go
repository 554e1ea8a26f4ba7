//go:build long

package driver

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestMixtureModesSeedsLong repeats the mixture experiment over several
// seeds, both exchange schemes and both correction tables (make test-long).
func TestMixtureModesSeedsLong(t *testing.T) {
	for _, name := range []string{"gauss1d4", "gauss2d5"} {
		for _, scheme := range []tempering.Scheme{tempering.SchemeAlternate, tempering.SchemeToFirst} {
			for _, method := range []tempering.CorrectionMethod{tempering.CorrectionNNLS, tempering.CorrectionHermite} {
				for seed := uint64(2); seed <= 4; seed++ {
					m, _ := sampler.Target(name)
					temps, _ := tempering.GeometricLadder(10, 10)
					corr, _ := tempering.NewCorrection(1, tempering.CorrectionOptions{Method: method})
					pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: temps, Every: 2, Scheme: scheme,
						Exchange: &tempering.Exchanger{Batch: 16, Correction: corr}, Workers: 1})
					st, _ := pt.Init([][]float64{m.Start()}, seed)
					pots := make([]sampler.Potential, len(temps))
					for i := range pots {
						pots[i] = m
					}
					var xs [][]float64
					if err := pt.Run(pots, m, st, 3000000, func(s *tempering.PTState) error {
						if s.Steps > 20000 && s.Steps%5 == 0 {
							xs = append(xs, append([]float64(nil), s.Rungs[0].Theta...))
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					w := modeWeights(m, xs)
					worst := 0.0
					for c := range w {
						worst = math.Max(worst, math.Abs(w[c]-m.Weights[c]))
					}
					t.Logf("%s %s %s seed %d: weights %.3f, worst error %.3f", name, scheme, method, seed, w, worst)
					if worst > 0.03 {
						t.Errorf("%s %s %s seed %d: worst mode-weight error %.3f > 0.03", name, scheme, method, seed, worst)
					}
				}
			}
		}
	}
}
