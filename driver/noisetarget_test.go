package driver

import (
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestNoiseTargetStep runs one SGNHT rung on a Gaussian whose gradient
// noise is half the momentum's diffusion (h^2 Var = 0.2 per step against
// 0.19 injected). Without a noise target the share stays there; with
// NoiseTarget 0.05 the burn-in shrinks the step (Health.AdaptStep) and the
// rung then steps at the shrunk step (Health.Multiplier, the scaled kernel),
// so the windows after burn-in measure a share near the target.
func TestNoiseTargetStep(t *testing.T) {
	const d, burn, steps, window = 50, 10000, 13000, 1000
	g := &sampler.Gaussian{Mean: make([]float64, d), Var: make([]float64, d), NoiseVar: 20}
	for i := range g.Var {
		g.Var[i] = 1
	}
	for _, c := range []struct {
		target             float64
		minShare, maxShare float64
		maxScale           float64
	}{
		{target: 0, minShare: 0.3, maxShare: 1, maxScale: 1},
		{target: 0.05, minShare: 0, maxShare: 0.1, maxScale: 0.5},
	} {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: 0.1, Diffusion: 1}, Temps: []float64{1}, Workers: 1,
			BurnIn: burn, HealthWindow: window, NoiseTarget: c.target})
		st, err := pt.Init([][]float64{make([]float64, d)}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := pt.Run([]sampler.Potential{g}, nil, st, steps, nil); err != nil {
			t.Fatal(err)
		}
		hl := st.Stats.Health[0]
		share, scale := hl.Last.Share, hl.Multiplier()
		t.Logf("target %g: share %.3f after burn-in, step scale %.3f", c.target, share, scale)
		if share < c.minShare || share > c.maxShare || scale > c.maxScale {
			t.Errorf("target %g: share %.3f (want [%g, %g]), step scale %.3f (want <= %g)", c.target, share, c.minShare, c.maxShare, scale, c.maxScale)
		}
	}
}
