package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestResumeToMoreStepsIsTheLongerRun trains a run to 40 steps, and a run of
// the same flags to 20 steps resumed with --steps 40: at a constant step size
// nothing is computed from --steps, so the two have the same samples byte for
// byte, every chain. docs/experiments.md extends finished runs this way (a
// budget curve past a run's end, a verdict at a larger budget) instead of
// training them again.
func TestResumeToMoreStepsIsTheLongerRun(t *testing.T) {
	data := writeData(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"mlp sgnht", []string{"--arch", "16-8-10", "--sampler", "sgnht", "--noise-correction"}},
		{"cnn two chains", []string{"--model", "cmd-test-cnn", "--chains", "2", "--temperature", "0.1"}},
		{"ptsghmc", []string{"--arch", "16-8-10", "--sampler", "ptsghmc", "--replicas", "3", "--exchange", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			common := append([]string{"--data", data, "--validation", "0", "--batch", "32", "--burnin", "10", "--thin", "5", "--seed", "4", "--quiet"}, tc.args...)
			whole, part := filepath.Join(t.TempDir(), "whole"), filepath.Join(t.TempDir(), "part")
			if _, stderr, code := run(t, append([]string{"train", "--out", whole, "--steps", "40"}, common...)...); code != 0 {
				t.Fatalf("train 40: %s", stderr)
			}
			if _, stderr, code := run(t, append([]string{"train", "--out", part, "--steps", "20"}, common...)...); code != 0 {
				t.Fatalf("train 20: %s", stderr)
			}
			if _, stderr, code := run(t, "train", "--resume", part, "--steps", "40", "--quiet"); code != 0 {
				t.Fatalf("resume to 40: %s", stderr)
			}
			n := 0
			err := filepath.WalkDir(whole, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.Name() != rundir.SamplesFile {
					return err
				}
				rel, _ := filepath.Rel(whole, p)
				a, _ := os.ReadFile(p)
				b, err := os.ReadFile(filepath.Join(part, rel))
				if err != nil {
					return err
				}
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s: %d bytes in the 40-step run, %d in the run resumed to 40: not the same", rel, len(a), len(b))
				}
				n++
				return nil
			})
			if err != nil || n == 0 {
				t.Fatalf("comparing samples: %v (%d files)", err, n)
			}
		})
	}
}
