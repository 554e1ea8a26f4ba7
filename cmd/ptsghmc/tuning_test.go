package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestReplicasAuto runs `train --replicas auto` end to end: it says what it
// chose and why, config.json records the choice, --max-replicas caps it, and
// a bad value is refused.
func TestReplicasAuto(t *testing.T) {
	data := writeData(t)
	rd := filepath.Join(t.TempDir(), "run")
	_, stderr, code := run(t, "train", "--out", rd, "--data", data, "--arch", "16-8-10", "--validation", "50", "--batch", "32",
		"--sampler", "ptsghmc", "--replicas", "auto", "--max-replicas", "5", "--ladder", "adaptive", "--tmax", "10",
		"--exchange", "1", "--burnin", "100", "--steps", "120", "--thin", "10", "--quiet")
	if code != 0 {
		t.Fatalf("train --replicas auto: %s", stderr)
	}
	if !strings.Contains(stderr, "--replicas auto chose") || !strings.Contains(stderr, "pilot") {
		t.Errorf("train does not say what --replicas auto chose: %q", stderr)
	}
	b, err := os.ReadFile(filepath.Join(rd, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg runspec.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Replicas < 3 || cfg.Replicas > 5 || cfg.ReplicasChoice == "" {
		t.Errorf("config.json: replicas %d (cap 5), choice %q", cfg.Replicas, cfg.ReplicasChoice)
	}
	if _, stderr, code = run(t, "train", "--out", rd, "--replicas", "many", "--overwrite"); code == 0 || !strings.Contains(stderr, "auto") {
		t.Errorf("--replicas many: code %d, %q", code, stderr)
	}
}
