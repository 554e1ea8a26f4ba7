package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestAutoReplicasRefusedBeforePilot runs train --replicas auto with
// settings or an --out that the run refuses: each is refused with the
// message about them, and no pilot runs (chooseReplicas is replaced by
// one that fails the test).
func TestAutoReplicasRefusedBeforePilot(t *testing.T) {
	chooseReplicas = func(context.Context, runspec.Config, runspec.Setup) (runspec.Config, error) {
		t.Error("the pilot ran")
		return runspec.Config{}, context.Canceled
	}
	defer func() { chooseReplicas = defaultChooseReplicas }()
	existing := t.TempDir()
	if err := os.WriteFile(filepath.Join(existing, rundir.CheckpointFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"train", "--sampler", "ptsghmc", "--replicas", "auto", "--data", filepath.Join(t.TempDir(), "none"), "--arch", "16-8-10",
		"--steps", "100", "--burnin", "40", "--thin", "10", "--exchange", "5", "--quiet"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"existing run", []string{"--out", existing}, "already holds a run"},
		{"steps <= burnin", []string{"--out", t.TempDir(), "--steps", "40"}, "burnin must be in [0, steps)"},
		{"swap target without adaptive", []string{"--out", t.TempDir(), "--swap-target", "0.3"}, "swap_target needs ladder adaptive"},
		{"scheme first", []string{"--out", t.TempDir(), "--scheme", "first"}, "--replicas auto runs an adaptive-ladder pilot, which needs --scheme alternate and --exchange > 0"},
		{"exchange 0", []string{"--out", t.TempDir(), "--exchange", "0"}, "--replicas auto runs an adaptive-ladder pilot, which needs --scheme alternate and --exchange > 0"},
	} {
		_, stderr, code := run(t, append(append([]string{}, base...), c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", c.name, code, stderr, c.want)
		}
	}
}

// TestAutoReplicasArray refuses --replicas auto for array tasks, saying so
// (it said "replicas must be at least 1 (auto is resolved by ChooseReplicas
// ...)").
func TestAutoReplicasArray(t *testing.T) {
	out := t.TempDir()
	auto := []string{"--sampler", "ptsghmc", "--replicas", "auto", "--chains", "2", "--arch", "16-8-10", "--steps", "100", "--burnin", "40"}
	for _, args := range [][]string{
		append([]string{"train", "--out", out, "--chain", "1", "--quiet"}, auto...),
		append([]string{"slurm", "--out", out, "--script", "-"}, auto...),
	} {
		_, stderr, code := run(t, args...)
		if want := "--replicas auto is not available for array tasks (--chain, slurm): give --replicas N"; code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", args[0], code, stderr, want)
		}
	}
}
