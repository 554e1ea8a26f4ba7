package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestChooseReplicas resolves --replicas auto on the small synthetic task:
// the pilot's barrier gives a rung count in [3, max_replicas], recorded with
// its reason in the config that the run writes, so that a resume keeps it;
// a cap below the choice wins, and single-chain samplers get 1.
func TestChooseReplicas(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	base := smallConfig()
	base.Replicas, base.Ladder, base.TMax, base.Exchange, base.BurnIn, base.Steps = 0, "adaptive", 10, 1, 200, 220
	cfg, err := ChooseReplicas(context.Background(), base, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rungs: %s", cfg.Replicas, cfg.ReplicasChoice)
	if cfg.Replicas < 3 || cfg.Replicas > DefaultMaxReplicas || !strings.Contains(cfg.ReplicasChoice, "pilot") {
		t.Fatalf("chose %d rungs (%q)", cfg.Replicas, cfg.ReplicasChoice)
	}
	dir := filepath.Join(t.TempDir(), "run")
	r, err := New(dir, cfg, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	interruptAt(t, r, 50)
	r2, err := Resume(dir, 0, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r2.State().Temps); got != cfg.Replicas || r2.Cfg.ReplicasChoice != cfg.ReplicasChoice {
		t.Errorf("resumed with %d rungs (%q), chose %d", got, r2.Cfg.ReplicasChoice, cfg.Replicas)
	}
	r2.Close()
	capped := base
	capped.MaxReplicas = 3
	if c, err := ChooseReplicas(context.Background(), capped, setupOf(data)); err != nil || c.Replicas > 3 {
		t.Errorf("max_replicas 3: chose %d (%v)", c.Replicas, err)
	}
	single := base
	single.Sampler = "sgnht"
	if c, _ := ChooseReplicas(context.Background(), single, setupOf(data)); c.Replicas != 1 {
		t.Errorf("sgnht with replicas auto: %d rungs, want 1", c.Replicas)
	}
}

// TestSwapsOffLadder runs the swaps-off ablation through a run: --exchange
// 0 with an explicit ladder steps the same rungs at the listed
// temperatures and never tries a swap.
func TestSwapsOffLadder(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.Replicas, cfg.Ladder, cfg.Exchange = 3, "1,1.5,2.25", 0
	r, err := New(filepath.Join(t.TempDir(), "run"), cfg, true, setupOf(smallData(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	st := r.State()
	if len(st.Temps) != 3 || st.Temps[1] != 1.5 || st.Temps[2] != 2.25 {
		t.Errorf("ladder %v, want 1, 1.5, 2.25", st.Temps)
	}
	for p, n := range st.Stats.Proposed {
		if n != 0 {
			t.Errorf("pair %d tried %d swaps with --exchange 0", p+1, n)
		}
	}
	if st.Rungs[1].Theta[0] == st.Rungs[0].Theta[0] {
		t.Error("rungs 1 and 2 did not move apart")
	}
}

// TestAutoReplicasRefusedBeforePilot gives ChooseReplicas configs that the
// final run, or the pilot's adaptive ladder, refuses: each is refused
// before the pilot starts (the context is cancelled, so a pilot that ran
// would end "interrupted"), in words about --replicas auto for the
// pilot's own needs.
func TestAutoReplicasRefusedBeforePilot(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	base := smallConfig()
	base.Replicas = 0
	for _, c := range []struct {
		name string
		edit func(*runspec.Config)
		want string
	}{
		{"steps <= burnin", func(c *runspec.Config) { c.Steps = c.BurnIn }, "burnin must be in [0, steps)"},
		{"no sample kept", func(c *runspec.Config) { c.Thin = 1000 }, "no step keeps a sample"},
		{"swap target without adaptive", func(c *runspec.Config) { c.SwapTarget = 0.3 }, "swap_target needs ladder adaptive"},
		{"scheme first", func(c *runspec.Config) { c.Scheme = "first" }, "--replicas auto runs an adaptive-ladder pilot, which needs --scheme alternate and --exchange > 0 (got --scheme first, --exchange 5)"},
		{"exchange 0", func(c *runspec.Config) { c.Exchange = 0 }, "--replicas auto runs an adaptive-ladder pilot, which needs --scheme alternate and --exchange > 0 (got --scheme alternate, --exchange 0)"},
		{"burnin below 2 exchanges", func(c *runspec.Config) { c.Exchange = 30 }, "--replicas auto runs a pilot of 4 rungs on an adaptive ladder over the --burnin 40 steps"},
	} {
		cfg := base
		c.edit(&cfg)
		_, err := ChooseReplicas(ctx, cfg, setupOf(data))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "pilot run") {
			t.Errorf("%s: got %v, want %q before any pilot run", c.name, err, c.want)
		}
	}
}
