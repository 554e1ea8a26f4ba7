package driver

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestMixingVerdict runs SGNHT with the variance mass on TestMassScaleStiffest's
// Gaussian (sds 100 apart) at the stiff coordinate's unit-mass step.
// Normalised to the widest coordinate the chain's dynamics are in their
// regime but it barely moves: its wide coordinate's sd is far (more than
// 15%) from the truth, and the verdict must fail it "not mixed" with an
// ESS below health.MinMixESS, where the dynamics alone call it ok (issue
// 43: unmixed kidiq chains called ok). Normalised to the stiffest, both
// sds within 5%, it must be ok. Without MixCoords (the public API's
// default) the same unmixed chain is not failed for its mixing, and its
// energy's ESS is still reported; but, a model of at most
// health.MaxCoordUnits coordinates, its coordinates are watched and the
// verdict is not ok: it warns that it could not check them (issue 60).
func TestMixingVerdict(t *testing.T) {
	g := &sampler.Gaussian{Mean: []float64{0, 0}, Var: []float64{1e-4, 1}}
	const h, steps, burn = 0.003, 30000, 10000
	for _, tc := range []struct {
		scale  adapt.MassScale
		coords bool
		want   health.HealthStatus
		cause  health.HealthCause
	}{
		{adapt.MassScaleWidest, true, health.HealthFail, health.CauseUnmixed},
		{adapt.MassScaleStiffest, true, health.HealthOK, health.CauseNone},
		{adapt.MassScaleWidest, false, health.HealthWarn, health.CauseUnchecked},
	} {
		pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}, Temps: []float64{1}, Workers: 1, BurnIn: burn,
			Precondition: adapt.PrecondVariance, MassScale: tc.scale, MixCoords: tc.coords, ExactGradients: true})
		st, v, _ := runFromOrigin(t, pt, g, steps, burn)
		hl := st.Stats.Health[0]
		status, fig := hl.Verdict()
		worst := 0.0
		for j := range v {
			worst = math.Max(worst, math.Abs(math.Sqrt(v[j]/g.Var[j])-1))
		}
		t.Logf("%v, coordinates graded %v: sds off by up to %.0f%%; dynamics %v; verdict %v (%q): %v", tc.scale, tc.coords, 100*worst, hl.Worst, status, fig.Cause(), fig.Mix)
		if status != tc.want || fig.Cause() != tc.cause {
			t.Errorf("%v, coordinates graded %v: verdict %v (%q), want %v (%q)", tc.scale, tc.coords, status, fig.Cause(), tc.want, tc.cause)
		}
		if hl.Worst != health.HealthOK {
			t.Errorf("%v: the dynamics' own verdict is %v, want ok (the test needs a chain in its regime)", tc.scale, hl.Worst)
		}
		switch {
		case tc.want == health.HealthFail && worst < 0.15:
			t.Errorf("%v: sds within %.0f%%: the chain is not the unmixed one this test needs", tc.scale, 100*worst)
		case tc.want == health.HealthOK && tc.coords && worst > 0.05:
			t.Errorf("%v: called ok with an sd %.0f%% off", tc.scale, 100*worst)
		}
		if fig.Mix.Draws != steps-burn || !(fig.Mix.EnergyESS > 0) {
			t.Errorf("%v: mixing figures %+v: want %d draws and the energy's ESS", tc.scale, fig.Mix, steps-burn)
		}
	}
}
