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
		{"integration", integ, cfg, []string{"cause: integration error", "--precondition", "smaller --lr (about 0.00136"}, []string{"larger --batch (about"}},
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
