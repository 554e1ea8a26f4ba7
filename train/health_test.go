package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestHealthVerdict runs SGNHT with a learning rate far too large for its
// batch (the Fashion-MNIST setting in miniature: lr 0.5, friction
// 0.01, batch 8): the run must refuse to call its samples a posterior, say
// to lower --lr or raise --batch, write the figures to metrics.jsonl, and
// warn while running. With --noise-target the burn-in shrinks the step.
func TestHealthVerdict(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.Sampler, cfg.LR, cfg.Friction, cfg.Batch = "sgnht", 0.5, 0.01, 8
	cfg.Steps, cfg.BurnIn, cfg.LogEvery = 600, 200, 20
	data := smallData(t)
	for _, target := range []float64{0, 0.05} {
		cfg.NoiseTarget = target
		dir := filepath.Join(t.TempDir(), "run")
		r, err := New(dir, cfg, true, setupOf(data))
		if err != nil {
			t.Fatal(err)
		}
		warnings, unhealthy := 0, 0
		if err := r.Train(context.Background(), func(s Status) {
			if s.Warning != "" {
				warnings++
			}
			if s.Unhealthy != nil {
				if s.Warning == "" || s.Unhealthy.Status == health.HealthOK {
					t.Errorf("step %d: Unhealthy %v with warning %q: want rung 1's bad window beside a warning", s.Step, s.Unhealthy.Status, s.Warning)
				}
				unhealthy++
			}
		}); err != nil {
			t.Fatal(err)
		}
		hr := diagnose.HealthOf(r.State(), r.Cfg)
		r.Close()
		t.Logf("noise target %g: %d warnings\n%s", target, warnings, hr)
		if target == 0 {
			if hr.Posterior || warnings == 0 || unhealthy == 0 {
				t.Fatalf("lr 0.5, batch 8: posterior %v, %d warnings (%d with rung 1's figures): want the check to refuse and warn", hr.Posterior, warnings, unhealthy)
			}
			if !strings.Contains(hr.Advice, "--lr") || !strings.Contains(hr.Advice, "--batch") {
				t.Fatalf("advice %q names neither --lr nor --batch", hr.Advice)
			}
		} else if sc := hr.Rungs[0].StepScale; sc >= 0.5 {
			t.Fatalf("noise target %g: step scale %g, want the burn-in to shrink the step", target, sc)
		}
		b, err := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		var last rundir.MetricsLine
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
			t.Fatal(err)
		}
		if len(last.Health) != 1 || len(last.NoiseShare) != 1 || last.NoiseShare[0] <= 0 {
			t.Fatalf("last metrics line carries no health figures: %s", lines[len(lines)-1])
		}
	}
}
