package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestPreconditionConfig checks the precondition setting: validation, the
// default recorded in config.json, old configs resuming as none, and a
// run whose chains end burn-in with frozen, non-trivial masses.
func TestPreconditionConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mod  func(*runspec.Config)
		ok   bool
	}{
		{"none", func(c *runspec.Config) { c.Precondition = "none" }, true},
		{"unset", func(c *runspec.Config) { c.Precondition = "" }, true},
		{"rmsprop", func(c *runspec.Config) { c.Precondition = "rmsprop" }, true},
		{"variance sgld", func(c *runspec.Config) { c.Precondition, c.Sampler = "variance", "sgld" }, true},
		{"dense", func(c *runspec.Config) { c.Precondition = "dense" }, true},
		{"lowrank", func(c *runspec.Config) { c.Precondition, c.MassRank = "lowrank", 3 }, true},
		{"mass rank without lowrank", func(c *runspec.Config) { c.Precondition, c.MassRank = "dense", 3 }, false},
		{"mass rank too large", func(c *runspec.Config) { c.Precondition, c.MassRank = "lowrank", 65 }, false},
		{"unknown", func(c *runspec.Config) { c.Precondition = "adam" }, false},
		{"sgd", func(c *runspec.Config) { c.Precondition, c.Sampler = "rmsprop", "sgd" }, false},
		{"sgd warm-up", func(c *runspec.Config) { c.Precondition, c.Sampler, c.SGDWarmup = "rmsprop", "sgnht", 20 }, false},
	} {
		c := smallConfig()
		tc.mod(&c)
		if err := c.Validate(runspec.DefaultSetup()); (err == nil) != tc.ok {
			t.Errorf("%s: validate error %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	var old runspec.Config
	if err := json.Unmarshal([]byte(`{"sampler":"sgnht"}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.PreconditionValue() != adapt.PrecondNone {
		t.Errorf("a config without precondition: %v, want none", old.PreconditionValue())
	}
	if d := configDiff(runspec.Config{Precondition: ""}, runspec.Config{Precondition: "none"}); len(d) != 0 {
		t.Errorf("a saved run without precondition differs from a task with none: %v", d)
	}

	cfg := smallConfig()
	cfg.Precondition = "rmsprop"
	dir := filepath.Join(t.TempDir(), "run")
	r, err := New(dir, cfg, true, setupOf(smallData(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	st := r.State()
	summary := r.Preconditioning()
	r.Close()
	t.Logf("%s", summary)
	if !strings.HasPrefix(summary, "preconditioner rmsprop (masses frozen from step 32):") || strings.Count(summary, "rung ") != 3 {
		t.Errorf("summary %q", summary)
	}
	for j, s := range st.Rungs {
		lo, hi := s.Mass[0], s.Mass[0]
		for _, m := range s.Mass {
			lo, hi = min(lo, m), max(hi, m)
		}
		t.Logf("rung %d: masses %.3g to %.3g", j+1, lo, hi)
		if lo != 1 || hi <= 1 {
			t.Errorf("rung %d: masses %.3g to %.3g, want the lightest 1 and others heavier", j+1, lo, hi)
		}
	}
	for j, e := range st.Mass {
		if e.Count != 0 || e.SumSq != nil {
			t.Errorf("rung %d: estimate still running after burn-in (%d steps)", j+1, e.Count)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"precondition": "rmsprop"`) {
		t.Errorf("config.json does not record the preconditioner:\n%s", b)
	}
}
