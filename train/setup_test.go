package train

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestModelBuiltOncePerRun counts the builds of a registered model, given
// to the run through Setup.Models (nn.Models is left alone): creating a
// run, of one chain or of three, resuming it, and opening one chain task
// each build the model once.
func TestModelBuiltOncePerRun(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	builds := 0
	s := setupOf(data).WithModel("counted", func(p nn.PriorConfig) (nn.Model, error) {
		builds++
		mlp := smallConfig()
		mlp.Prior, mlp.PriorFanIn, mlp.PriorDF = p.Precision, p.FanIn, p.DF
		spec, err := mlp.Spec(16, 3)
		if err != nil {
			return nn.Model{}, err
		}
		return spec.Model()
	})
	cfg := smallConfig()
	cfg.Model, cfg.Arch, cfg.Sampler, cfg.Steps = "counted", "", "sgnht", 60
	for _, tc := range []struct {
		name   string
		chains int
		create func(dir string, cfg runspec.Config) (*Chains, error)
		reopen func(dir string, cfg runspec.Config) (*Chains, error)
	}{
		{"one chain", 1,
			func(dir string, cfg runspec.Config) (*Chains, error) { return NewChains(dir, cfg, false, s) },
			func(dir string, cfg runspec.Config) (*Chains, error) { return ResumeChains(dir, 0, s) }},
		{"three chains", 3,
			func(dir string, cfg runspec.Config) (*Chains, error) { return NewChains(dir, cfg, false, s) },
			func(dir string, cfg runspec.Config) (*Chains, error) { return ResumeChains(dir, 0, s) }},
		{"a chain task", 3,
			func(dir string, cfg runspec.Config) (*Chains, error) { return OpenChain(dir, cfg, 2, s) },
			func(dir string, cfg runspec.Config) (*Chains, error) { return OpenChain(dir, cfg, 2, s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			c := cfg
			c.Chains = tc.chains
			for _, step := range []struct {
				what string
				open func(dir string, cfg runspec.Config) (*Chains, error)
			}{{"create", tc.create}, {"resume", tc.reopen}} {
				builds = 0
				ch, err := step.open(dir, c)
				if err != nil {
					t.Fatalf("%s: %v", step.what, err)
				}
				if builds != 1 {
					t.Errorf("%s: the model was built %d times, want once", step.what, builds)
				}
				if step.what == "create" {
					interruptAll(t, ch, 30)
				} else if err := ch.Train(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				for _, r := range ch.Runs {
					if r.Model.Name != "counted" {
						t.Errorf("%s: a chain's model is %q", step.what, r.Model.Name)
					}
				}
				ch.Close()
			}
		})
	}
	if _, ok := nn.Models["counted"]; ok {
		t.Error("the process-wide registry nn.Models was changed")
	}
}
