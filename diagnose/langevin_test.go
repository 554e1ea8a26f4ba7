package diagnose

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// sgldHealth runs an SGLD chain of step eps on the Gaussian of curvatures
// curv, its gradient with independent noise of sd noiseSD, through the
// SGLD watch (windows of 1000 steps, burn-in 5000 of 30000 steps).
func sgldHealth(curv []float64, eps, noiseSD float64) health.Health {
	rng := rand.New(rand.NewPCG(3, 5))
	s := sampler.NewState(make([]float64, len(curv)))
	var hl health.Health
	for step := 1; step <= 30000; step++ {
		for k, h := range curv {
			s.Grad[k] = h*s.Theta[k] + noiseSD*rng.NormFloat64()
		}
		sampler.SGLDUpdate(s.Theta, s.Grad, eps, 1, rng)
		hl.ObserveLangevin(s, eps/2, eps, step, 1000, step > 5000)
	}
	return hl
}

// TestLangevinReport checks that the verdict of an SGLD chain names the
// SGLD watch's cause and fix: a smaller --lr (not the batch) for the
// discretisation, a larger --batch for the gradient noise, and ok at a
// small step.
func TestLangevinReport(t *testing.T) {
	cfg := runspec.DefaultConfig()
	for _, tc := range []struct {
		name           string
		hl             health.Health
		want, dontWant []string
	}{
		{"discretisation", sgldHealth([]float64{1, 100}, 0.01, 0), []string{"NOT A POSTERIOR (integration error)", "SGLD's discretisation", "smaller --lr (about", "a larger --batch will not help"}, []string{"larger --batch (about"}},
		{"gradient noise", sgldHealth([]float64{1, 10}, 0.01, 13), []string{"NOT A POSTERIOR (gradient noise)", "SGLD: no friction absorbs it", "larger --batch (about"}, nil},
		{"small step", sgldHealth([]float64{1, 2}, 0.005, 0), []string{"posterior check: ok (SGLD"}, []string{"WARNING", "NOT A POSTERIOR"}},
	} {
		st := &tempering.PTState{Temps: []float64{1}, Stats: tempering.PTStats{Health: []health.Health{tc.hl}}}
		rep := HealthOf(st, cfg)
		s := rep.String()
		if !rep.Watched || !rep.Langevin {
			t.Errorf("%s: watched %v, langevin %v, want both", tc.name, rep.Watched, rep.Langevin)
		}
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: report lacks %q:\n%s", tc.name, w, s)
			}
		}
		for _, w := range tc.dontWant {
			if strings.Contains(s, w) {
				t.Errorf("%s: report has %q:\n%s", tc.name, w, s)
			}
		}
	}
}
