package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestHealthVerdict runs SGNHT with a learning rate far too large for its
// batch (the Fashion-MNIST setting in miniature: lr 0.5, friction
// 0.01, batch 8): the run must refuse to call its samples a posterior, say
// to lower --lr or raise --batch, write the figures to metrics.jsonl, and
// warn while running. With --noise-target the burn-in shrinks the step.
func TestHealthVerdict(t *testing.T) {
	cfg := smallConfig()
	cfg.Sampler, cfg.LR, cfg.Friction, cfg.Batch = "sgnht", 0.5, 0.01, 8
	cfg.Steps, cfg.BurnIn, cfg.LogEvery = 600, 200, 20
	data := smallData(t)
	for _, target := range []float64{0, 0.05} {
		cfg.NoiseTarget = target
		dir := filepath.Join(t.TempDir(), "run")
		r, err := NewFromData(dir, cfg, data)
		if err != nil {
			t.Fatal(err)
		}
		warnings := 0
		if err := r.Train(context.Background(), func(s Status) {
			if s.Warning != "" {
				warnings++
			}
		}); err != nil {
			t.Fatal(err)
		}
		hr := r.Health()
		r.Close()
		t.Logf("noise target %g: %d warnings\n%s", target, warnings, hr)
		if target == 0 {
			if hr.Posterior || warnings == 0 {
				t.Fatalf("lr 0.5, batch 8: posterior %v, %d warnings: want the check to refuse and warn", hr.Posterior, warnings)
			}
			if !strings.Contains(hr.Advice, "--lr") || !strings.Contains(hr.Advice, "--batch") {
				t.Fatalf("advice %q names neither --lr nor --batch", hr.Advice)
			}
		} else if sc := hr.Rungs[0].StepScale; sc >= 0.5 {
			t.Fatalf("noise target %g: step scale %g, want the burn-in to shrink the step", target, sc)
		}
		b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		var last MetricsLine
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
			t.Fatal(err)
		}
		if len(last.Health) != 1 || len(last.NoiseShare) != 1 || last.NoiseShare[0] <= 0 {
			t.Fatalf("last metrics line carries no health figures: %s", lines[len(lines)-1])
		}
	}
}

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
	cfg := DefaultConfig()
	pre := cfg
	pre.Precondition = "rmsprop"
	for _, tc := range []struct {
		name     string
		fig      sampler.HealthFigures
		cfg      Config
		want     []string
		dontWant []string
	}{
		{"noise", noise, cfg, []string{"cause: gradient noise", "--precondition", "larger --batch", "smaller --lr"}, nil},
		{"integration", integ, cfg, []string{"cause: integration error", "--precondition", "smaller --lr (about 0.00227", "larger --batch will not help"}, []string{"larger --batch (about"}},
		{"integration and noise", both, cfg, []string{"cause: integration error", "gradient noise is also 95%", "larger --batch (about", "smaller --lr"}, []string{"will not help"}},
		{"noise and integration", noiseInt, cfg, []string{"cause: gradient noise (integration error also widens the sds by about 8%", "larger --batch"}, nil},
		{"noise, preconditioned", noise, pre, []string{"cause: gradient noise", "larger --batch"}, []string{"--precondition"}},
	} {
		got := healthAdvice(tc.fig, tc.cfg)
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
