package diagnose

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestHealthAdviceCause checks that the verdict's advice names the cause
// and its fix: gradient noise (precondition, a larger batch or a smaller
// lr), integration error (a smaller lr or precondition, not the batch),
// and no preconditioning advice for a run that already preconditions.
func TestHealthAdviceCause(t *testing.T) {
	noise := health.HealthFigures{Kinetic: 1, Injected: 0.19, GradNoise: 1, Share: 0.84, Budget: 0.6, Friction: 0.9, Status: health.HealthFail}
	integ := health.HealthFigures{Kinetic: 1, Injected: 0.19, Integration: 0.09, IntMeasured: true, IntSDError: 0.22, Friction: 0.1, Budget: 0.14, Status: health.HealthFail}
	// issue 29's case at predictor sd 200, batch 20, lr 3e-5: both causes
	both := health.HealthFigures{Kinetic: 1, Injected: 0.19, GradNoise: 3.3, Share: 0.95, Integration: 4.2, IntMeasured: true, IntSDError: 1.29, Friction: 3, Budget: 3.8, Status: health.HealthFail}
	noiseInt := noise
	noiseInt.IntSDError, noiseInt.IntMeasured = 0.08, true
	// issue 43: sblrc-blr at full batch from the model's initial values,
	// burn-in 500: the chain still descending (TestStartupReported's window)
	startup := health.HealthFigures{Step: 750, Steps: 250, Dim: 6, Kinetic: 1.403, Injected: 0.19, GradNoise: -0.0096, Integration: -1.32, IntMeasured: true,
		Descent: 2.63, DescentTol: 0.0098, DescentMeasured: true, Friction: 5, Budget: 0.74, Status: health.HealthFail}
	// a cold window with the thermostat still falling from its overshoot:
	// (3.79 - (-log 0.9)) / (0.01 (1 - 0.5)) = 737 more steps
	settle := health.HealthFigures{Step: 1250, Steps: 250, Dim: 6, Kinetic: 0.5, Injected: 0.19, Friction: 3.79, XiGain: 0.01, Budget: 0.1, Status: health.HealthFail}
	// issue 43: a chain in its regime whose slow coordinate has not mixed
	unmixed := health.HealthFigures{Step: 100000, Steps: 500, Dim: 3, Kinetic: 1, Injected: 0.19, Friction: 0.1, Budget: 0.1,
		Mix: health.MixFigures{Draws: 75000, Points: 586, Stride: 128, Graded: true, ESS: 12, Coord: 1}}
	// issue 43: earnings at full batch with an underestimated mass, its
	// heating read as noise (share 85%): exact gradients have none
	unstable := noise
	unstable.Exact = true
	cfg := runspec.DefaultConfig()
	pre := cfg
	pre.Precondition = "rmsprop"
	warm := cfg
	warm.SGDWarmup = 30000
	own := warm
	own.WarmupBatch = 64
	for _, tc := range []struct {
		name     string
		fig      health.HealthFigures
		cfg      runspec.Config
		want     []string
		dontWant []string
	}{
		{"noise", noise, cfg, []string{"cause: gradient noise", "--precondition", "larger --batch", "smaller --lr"}, nil},
		{"integration", integ, cfg, []string{"cause: integration error", "--precondition", "smaller --lr (about 0.00227", "larger --batch will not help"}, []string{"larger --batch (about"}},
		{"integration and noise", both, cfg, []string{"cause: integration error", "gradient noise is also 95%", "larger --batch (about", "smaller --lr"}, []string{"will not help"}},
		{"noise and integration", noiseInt, cfg, []string{"cause: gradient noise (integration error also widens the sds by about 8%", "larger --batch"}, nil},
		{"noise, preconditioned", noise, pre, []string{"cause: gradient noise", "larger --batch"}, []string{"--precondition"}},
		{"noise after an SGD warm-up", noise, warm, []string{"larger --batch (about", "with --warmup-batch 128, so that the SGD warm-up keeps its batch"}, nil},
		{"noise, warm-up batch already set", noise, own, []string{"larger --batch (about"}, []string{"--warmup-batch"}},
		{"start-up transient", startup, cfg, []string{"cause: the start-up transient", "--burnin past step 750"}, []string{"gradient noise", "--batch"}},
		{"not mixed", unmixed, cfg, []string{"cause: not mixed", "coordinate 1 has about 12 effective draws in the 75000 steps", "at least 9 times longer", fmt.Sprintf("--steps about %d", cfg.BurnIn+625000), "--mass-scale stiffest"}, []string{"gradient noise", "integration"}},
		{"unstable full batch", unstable, cfg, []string{"cause: integration error (the step is unstable", "not gradient noise", "smaller --lr", "cannot help"}, []string{"cause: gradient noise", "larger --batch (about"}},
		{"thermostat settling", settle, cfg, []string{"cause: the thermostat", "start-up transient", "about 737 more steps", "--burnin of about 1987"}, []string{"gradient noise"}},
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

// TestExactGradientsNoNoise checks that figures with exact gradients (a
// full batch) never name gradient noise, in the cause or in the problems,
// whether the heating read as noise is beyond its share or beyond the
// budget, and that the same figures without Exact still do.
func TestExactGradientsNoNoise(t *testing.T) {
	share := health.HealthFigures{Kinetic: 1, Injected: 0.19, GradNoise: 1, Share: 0.84, Budget: 0.6, Friction: 0.9, Status: health.HealthFail}
	budget := health.HealthFigures{Kinetic: 1, Injected: 0.19, GradNoise: 2, Share: 0.91, Budget: 1.1, Friction: 3, Status: health.HealthFail}
	for name, f := range map[string]health.HealthFigures{"share": share, "budget": budget} {
		if c := f.Cause(); c != health.CauseNoise {
			t.Errorf("%s, minibatch: cause %q, want gradient noise", name, c)
		}
		f.Exact = true
		if c := f.Cause(); c != health.CauseIntegration {
			t.Errorf("%s, exact gradients: cause %q, want integration error", name, c)
		}
		p := strings.Join(f.Problems(), "; ")
		if strings.Contains(p, "gradient noise is") || strings.Contains(p, "+ gradient noise") || !strings.Contains(p, "exact gradients") {
			t.Errorf("%s, exact gradients: problems %q", name, p)
		}
	}
}

// TestHealthOfTemperature checks that each rung's health is labelled with
// the temperature it samples at, the posterior temperature times its
// ladder value, and not with the ladder value alone.
func TestHealthOfTemperature(t *testing.T) {
	cases := []struct {
		temperature float64 // Config.Temperature (0: 1)
		ladder      []float64
		want        []float64
	}{
		{0, []float64{1, 2}, []float64{1, 2}},
		{1, []float64{1}, []float64{1}},
		{0.3, []float64{1}, []float64{0.3}},
		{0.1, []float64{1, 1.5}, []float64{0.1, 0.15}},
	}
	for _, c := range cases {
		cfg := runspec.DefaultConfig()
		cfg.Temperature = c.temperature
		st := &tempering.PTState{Temps: c.ladder}
		st.Stats.Health = make([]health.Health, len(c.ladder))
		for j := range st.Stats.Health {
			st.Stats.Health[j].Windows = 1
		}
		h := HealthOf(st, cfg)
		if len(h.Rungs) != len(c.want) {
			t.Fatalf("T %v: %d rungs reported, want %d", c.temperature, len(h.Rungs), len(c.want))
		}
		for j, r := range h.Rungs {
			if math.Abs(r.Temp-c.want[j]) > 1e-12 {
				t.Errorf("T %v, ladder %v: rung %d labelled T=%v, want %v", c.temperature, c.ladder, j+1, r.Temp, c.want[j])
			}
		}
	}
}
