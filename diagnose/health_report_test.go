package diagnose

import (
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestHealthAdviceCause checks that the verdict's advice names the cause
// and its fix: gradient noise (precondition, a larger batch or a smaller
// lr), integration error (a smaller lr or precondition, not the batch),
// and no preconditioning advice for a run that already preconditions.
func TestHealthAdviceCause(t *testing.T) {
	noise := sampler.HealthFigures{Kinetic: 1, Injected: 0.19, GradNoise: 1, Share: 0.84, Budget: 0.6, Friction: 0.9, Status: sampler.HealthFail}
	integ := sampler.HealthFigures{Kinetic: 1, Injected: 0.19, Integration: 0.09, IntMeasured: true, IntSDError: 0.22, Friction: 0.1, Budget: 0.14, Status: sampler.HealthFail}
	// issue 29's case at predictor sd 200, batch 20, lr 3e-5: both causes
	both := sampler.HealthFigures{Kinetic: 1, Injected: 0.19, GradNoise: 3.3, Share: 0.95, Integration: 4.2, IntMeasured: true, IntSDError: 1.29, Friction: 3, Budget: 3.8, Status: sampler.HealthFail}
	noiseInt := noise
	noiseInt.IntSDError, noiseInt.IntMeasured = 0.08, true
	cfg := runspec.DefaultConfig()
	pre := cfg
	pre.Precondition = "rmsprop"
	for _, tc := range []struct {
		name     string
		fig      sampler.HealthFigures
		cfg      runspec.Config
		want     []string
		dontWant []string
	}{
		{"noise", noise, cfg, []string{"cause: gradient noise", "--precondition", "larger --batch", "smaller --lr"}, nil},
		{"integration", integ, cfg, []string{"cause: integration error", "--precondition", "smaller --lr (about 0.00227", "larger --batch will not help"}, []string{"larger --batch (about"}},
		{"integration and noise", both, cfg, []string{"cause: integration error", "gradient noise is also 95%", "larger --batch (about", "smaller --lr"}, []string{"will not help"}},
		{"noise and integration", noiseInt, cfg, []string{"cause: gradient noise (integration error also widens the sds by about 8%", "larger --batch"}, nil},
		{"noise, preconditioned", noise, pre, []string{"cause: gradient noise", "larger --batch"}, []string{"--precondition"}},
	} {
		got := HealthAdvice(tc.fig, tc.cfg)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: advice %q lacks %q", tc.name, got, w)
			}
		}
		for _, w := range tc.dontWant {
			if strings.Contains(got, w) {
				t.Errorf("%s: advice %q has %q", tc.name, got, w)
			}
		}
	}
}
