package sampler

import (
	"math"
	"testing"
)

// TestNoiseAheadBitIdentical runs PT with and without NoiseAhead from one
// seed and wants the same positions, momenta and thermostats bit for bit,
// for each kernel that draws noise, on a target large enough for the helper
// to start (the variates must be the same ones, in the same order).
func TestNoiseAheadBitIdentical(t *testing.T) {
	const d = aheadMin + 4321 // not a multiple of any chunk
	for _, tc := range []struct {
		name   string
		kernel Kernel
	}{
		{"sgnht", SGNHT{StepSize: 0.05, Diffusion: 1}},
		{"sghmc", SGHMC{StepSize: 0.05, Friction: 1}},
		{"sgld", SGLD{StepSize: 0.01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(ahead bool) *PTState {
				pt := &PT{Kernel: tc.kernel, Temps: []float64{1, 2}, Every: 3, NoiseAhead: ahead,
					Exchange: &Exchanger{Batch: 1, Correction: testCorrection(t)}}
				start := make([]float64, d)
				for i := range start {
					start[i] = math.Sin(float64(i))
				}
				st, err := pt.Init([][]float64{start}, 7)
				if err != nil {
					t.Fatal(err)
				}
				g := StdGaussian{D: d}
				if err := pt.Run([]Potential{g, g}, g, st, 7, nil); err != nil {
					t.Fatal(err)
				}
				return st
			}
			plain, ahead := run(false), run(true)
			if ahead.Rungs[0].ahead == nil {
				t.Fatal("NoiseAhead did not start a helper")
			}
			for j := range plain.Rungs {
				a, b := plain.Rungs[j], ahead.Rungs[j]
				if a.Xi != b.Xi {
					t.Fatalf("rung %d: xi %v without the helper, %v with it", j, a.Xi, b.Xi)
				}
				for i := range a.Theta {
					if a.Theta[i] != b.Theta[i] || (len(a.P) > 0 && a.P[i] != b.P[i]) {
						t.Fatalf("rung %d, coordinate %d: theta %v / %v, differs with the helper", j, i, a.Theta[i], b.Theta[i])
					}
				}
			}
		})
	}
}

func testCorrection(t *testing.T) *Correction {
	t.Helper()
	c, err := NewCorrection(1, CorrectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
