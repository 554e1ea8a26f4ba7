//go:build long

package tempering

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestMixtureModesSeedsLong repeats the mixture experiment over several
// seeds, both exchange schemes and both correction tables (make test-long).
func TestMixtureModesSeedsLong(t *testing.T) {
	for _, name := range []string{"gauss1d4", "gauss2d5"} {
		for _, scheme := range []Scheme{SchemeAlternate, SchemeToFirst} {
			for _, method := range []CorrectionMethod{CorrectionNNLS, CorrectionHermite} {
				for seed := uint64(2); seed <= 4; seed++ {
					m, _ := sampler.Target(name)
					temps, _ := GeometricLadder(10, 10)
					corr, _ := NewCorrection(1, CorrectionOptions{Method: method})
					pt := &PT{Kernel: sampler.SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: temps, Every: 2, Scheme: scheme,
						Exchange: &Exchanger{Batch: 16, Correction: corr}, Workers: 1}
					st, _ := pt.Init([][]float64{m.Start()}, seed)
					pots := make([]sampler.Potential, len(temps))
					for i := range pots {
						pots[i] = m
					}
					var xs [][]float64
					if err := pt.Run(pots, m, st, 3000000, func(s *PTState) error {
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
