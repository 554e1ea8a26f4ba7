package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettingsNotApplied: train refuses a setting given (by flag or in a
// --config file) that the sampler would not use and that changes the
// chain, before writing anything; it reports one that only changes speed
// or which states are kept, and trains; a setting not given is never
// mentioned.
func TestSettingsNotApplied(t *testing.T) {
	data := writeData(t)
	yaml := filepath.Join(t.TempDir(), "pt.yaml")
	if err := os.WriteFile(yaml, []byte("sampler: ptsghmc\nreplicas: 1\nladder: \"0.1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--data", data, "--arch", "16-8-10", "--validation", "0", "--batch", "32", "--steps", "40", "--burnin", "20", "--thin", "5", "--quiet"}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string // must contain
	}{
		{"issue: ptsghmc, 1 replica, ladder 0.1", []string{"--sampler", "ptsghmc", "--replicas", "1", "--ladder", "0.1"}, 1, `ladder "0.1" (ptsghmc with 1 replica is one sgnht chain at T = 1)`},
		{"the same in a config file", []string{"--config", yaml}, 1, `ladder "0.1"`},
		{"sgld with a friction", []string{"--sampler", "sgld", "--friction", "0.2"}, 1, "friction 0.2 (kernel sgld has no momentum)"},
		{"sgnht with workers: ignored", []string{"--sampler", "sgnht", "--workers", "2"}, 0, "ignored: workers 2"},
		{"ptsghmc defaults: nothing said", []string{"--sampler", "ptsghmc", "--replicas", "1"}, 0, ""},
		{"ptsghmc, exchange 0: said", []string{"--sampler", "ptsghmc", "--replicas", "3", "--exchange", "0"}, 0, "exchange 0: the 3 rungs never exchange"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			_, stderr, code := run(t, append(append([]string{"train", "--out", out}, common...), tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, want %d with %q in:\n%s", code, tc.code, tc.stderr, stderr)
			}
			if tc.stderr == "" && strings.Contains(stderr, "ignored") {
				t.Errorf("a default was reported:\n%s", stderr)
			}
			if _, err := os.Stat(out); tc.code != 0 && err == nil {
				t.Errorf("a refused run wrote %s", out)
			}
		})
	}
}
