package driver

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestMassScaleStiffest runs SGNHT and SGLD with the variance mass on a
// Gaussian whose two coordinates have sds 100 apart, at a step the stiff
// coordinate allows with unit mass (omega h = 0.3), which the burn-in's
// first window runs at. Normalised to the widest coordinate (the
// default) the mass slows the stiff one to the wide one's pace and the
// chain barely moves (omega h = 0.003 in both); normalised to the
// stiffest the wide coordinate is sped up to the stiff one's pace: its
// ESS over the same steps is many times larger, and both variances are
// right within 5%.
func TestMassScaleStiffest(t *testing.T) {
	g := &sampler.Gaussian{Mean: []float64{0, 0}, Var: []float64{1e-4, 1}}
	const h, steps, burn = 0.003, 100000, 10000
	for _, k := range []sampler.Kernel{sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}, sampler.SGLD{StepSize: 2 * h * h}} {
		ess := map[adapt.MassScale]float64{}
		for _, scale := range []adapt.MassScale{adapt.MassScaleWidest, adapt.MassScaleStiffest} {
			pt := testDriver(testPT{Kernel: k, Temps: []float64{1}, Workers: 1, BurnIn: burn,
				Precondition: adapt.PrecondVariance, MassScale: scale})
			st, v, wide := runFromOrigin(t, pt, g, steps, burn)
			ess[scale] = diagnose.BulkESS([][]float64{wide})
			t.Logf("%s, %v: mass %.3g, variances / exact %.3f %.3f, wide coordinate's ESS %.0f", k.Name(), scale, st.Rungs[0].Mass, v[0]/g.Var[0], v[1]/g.Var[1], ess[scale])
			if scale == adapt.MassScaleStiffest {
				for j := range v {
					if r := math.Sqrt(v[j] / g.Var[j]); math.Abs(r-1) > 0.05 {
						t.Errorf("%s, %v: coordinate %d sd / exact %.3f", k.Name(), scale, j, r)
					}
				}
			}
		}
		if ess[adapt.MassScaleStiffest] < 20*ess[adapt.MassScaleWidest] {
			t.Errorf("%s: the stiffest scale's ESS %.0f is not 20 times the widest's %.0f", k.Name(), ess[adapt.MassScaleStiffest], ess[adapt.MassScaleWidest])
		}
	}
	if _, err := (testDriver(testPT{Kernel: sampler.SGLD{StepSize: 1}, Temps: []float64{1}, MassScale: adapt.MassScaleStiffest})).Init([][]float64{{0}}, 1); err == nil {
		t.Error("a mass scale without a preconditioner was accepted")
	}
}

// TestMassFloor checks MassFromPrecisionStiffestFloor: a floor above an
// estimate makes that coordinate heavier (at most unit mass) without
// moving the reference or any other coordinate, a floor below changes
// nothing (bit for bit), and NaN or +Inf floors (a coordinate that never
// moved) give at most unit mass.
func TestMassFloor(t *testing.T) {
	v := []float64{1e-6, 1e-3, 1}
	base := adapt.MassFromPrecisionStiffest(v)
	for _, tc := range []struct {
		name  string
		floor []float64
		want  []float64
	}{
		{"none", nil, base},
		{"below", []float64{1e-7, 1e-4, 0.5}, base},
		{"raises the light one", []float64{4e-5, 0, 0}, []float64{4e-5, 1e-3, 1}},
		{"capped at unit mass", []float64{math.Inf(1), 2, math.NaN()}, []float64{1, 1, 1}},
	} {
		got := adapt.MassFromPrecisionStiffestFloor(v, tc.floor)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: mass %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

// runFromOrigin runs pt's one rung from the origin of g's plane for steps
// steps and returns its state, each coordinate's mean square after burn-in
// (g's mean is 0: its variance) and the draws of the second coordinate.
func runFromOrigin(t *testing.T, pt *Driver, g *sampler.Gaussian, steps, burn int) (*tempering.PTState, []float64, []float64) {
	t.Helper()
	st, err := pt.Init([][]float64{{0, 0}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var second []float64
	v := make([]float64, 2)
	err = pt.Run([]sampler.Potential{g}, nil, st, steps, func(s *tempering.PTState) error {
		if s.Steps > burn {
			x := s.Rungs[0].Theta
			second = append(second, x[1])
			for j := range v {
				v[j] += x[j] * x[j] / float64(steps-burn)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, v, second
}
