package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNegativeFlagsRefused gives negative values to flags whose 0 means
// "none" or "all": each is refused, naming the flag and the value (they
// were taken as 0: all cores, no limit, the run's own steps).
func TestNegativeFlagsRefused(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	newRun := []string{"train", "--out", filepath.Join(t.TempDir(), "run"), "--data", none, "--sampler", "ptsghmc", "--replicas", "3",
		"--arch", "16-8-10", "--steps", "100", "--burnin", "40", "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(newRun, "--workers", "-1"), "workers must be 0 (one per core) or more, got -1"},
		{append(newRun, "--time-limit", "-1m"), "--time-limit -1m0s: expected a positive duration, or 0 for none"},
		{[]string{"train", "--resume", none, "--steps", "-1"}, "--steps -1 with --resume " + none + ": expected the run's new total of steps, at least 1"},
		{[]string{"serve", "--run", none, "--read-timeout", "-1s"}, "--read-timeout -1s: expected a duration of 0 or more"},
		{[]string{"serve", "--run", none, "--write-timeout", "-2s"}, "--write-timeout -2s: expected a duration of 0 or more"},
		{[]string{"serve", "--run", none, "--shutdown-timeout", "-3s"}, "--shutdown-timeout -3s: expected a duration of 0 or more"},
		{[]string{"train", "--resume", none, "--steps", "0"}, "--steps 0 with --resume " + none + ": expected the run's new total of steps, at least 1"},
	} {
		_, stderr, code := run(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestCorrectionStep refuses a --step that is not finite (Inf printed a
// NaN row) or that would print more than maxCorrectionRows rows (1e-300
// looped for ever, in effect), naming it.
func TestCorrectionStep(t *testing.T) {
	for _, c := range []struct {
		step, want string
	}{
		{"0", "--step 0: expected a positive, finite spacing"},
		{"-1", "--step -1: expected a positive, finite spacing"},
		{"Inf", "--step +Inf: expected a positive, finite spacing"},
		{"NaN", "--step NaN: expected a positive, finite spacing"},
		{"1e-300", "--step 1e-300: expected at least"},
	} {
		out, stderr, code := run(t, "correction", "--step", c.step)
		if code == 0 || !strings.Contains(stderr, c.want) || out != "" {
			t.Errorf("--step %s: exit %d, %d bytes out, stderr %q; want %q", c.step, code, len(out), stderr, c.want)
		}
	}
}

// TestMixtureSteps names the flags and values mixture refuses (it said
// "need steps > burnin and thin > 0").
func TestMixtureSteps(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--steps", "100", "--burnin", "100"}, "--steps 100 must be more than --burnin 100"},
		{[]string{"--steps", "100", "--burnin", "10", "--thin", "0"}, "--thin 0: expected 1 or more"},
	} {
		_, stderr, code := run(t, append([]string{"mixture"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("mixture %q: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}
