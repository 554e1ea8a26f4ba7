package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestSecondTrainRefused is issue 31's reproduction: while one train
// process writes a run directory, a second `train --out DIR --overwrite
// --seed 2` must be refused, naming the first one's pid and host, and
// leave its run alone; eval reads the run meanwhile. The first run then
// stops on SIGINT with its checkpoint and its own seed's samples.
func TestSecondTrainRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes")
	}
	data := writeData(t)
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"--sampler", "sgnht", "--data", data, "--arch", "16-8-10", "--validation", "0", "--batch", "32",
		"--steps", "1000000", "--burnin", "20", "--thin", "20", "--log-every", "50", "--checkpoint-every", "100", "--quiet"}
	cmd, stderr := child(t, append([]string{"train", "--out", dir}, args...)...)
	defer cmd.Process.Kill()
	// wait for the first checkpoint that covers samples: the child is in its loop
	var ck *rundir.Checkpoint
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := rundir.ReadCheckpoint(filepath.Join(dir, "checkpoint")); err == nil && c.Samples > 0 {
			ck = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first run wrote no samples in 60 s:\n%s", stderr)
		}
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d on host %s", cmd.Process.Pid, host)
	for _, second := range [][]string{
		append([]string{"train", "--out", dir, "--overwrite", "--seed", "2"}, args...),
		{"train", "--resume", dir, "--quiet"},
	} {
		_, errText, code := run(t, second...)
		if code != 1 || !strings.Contains(errText, holder) {
			t.Errorf("%s: exit %d, %q; want exit 1 naming %s", strings.Join(second[:3], " "), code, errText, holder)
		}
	}
	if _, errText, code := run(t, "eval", "--run", dir, "--data", data); code != 0 {
		t.Errorf("eval while the run trains: exit %d\n%s", code, errText)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitRequeue {
		t.Fatalf("the first run after SIGINT: %v, want exit %d\n%s", err, exitRequeue, stderr)
	}
	last, err := rundir.ReadCheckpoint(filepath.Join(dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if last.Config.Seed != 1 || last.Steps < ck.Steps || last.Samples < ck.Samples {
		t.Fatalf("the first run's checkpoint: seed %d, %d steps, %d samples; want seed 1 and at least %d steps, %d samples",
			last.Config.Seed, last.Steps, last.Samples, ck.Steps, ck.Samples)
	}
	n := 0
	if _, _, err := rundir.ReadSamples(filepath.Join(dir, rundir.SamplesFile), func(int, []float64) error { n++; return nil }); err != nil || n < last.Samples {
		t.Fatalf("the first run's samples: %d records (%v), its checkpoint covers %d", n, err, last.Samples)
	}

	// A writer killed by SIGKILL leaves its lock file behind, naming it;
	// the kernel released the lock, so the next resume takes it over.
	cmd, stderr = child(t, "train", "--resume", dir, "--quiet")
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := rundir.ReadCheckpoint(filepath.Join(dir, "checkpoint")); err == nil && c.Steps > last.Steps {
			last = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed run wrote no checkpoint in 60 s:\n%s", stderr)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if last, err = rundir.ReadCheckpoint(filepath.Join(dir, "checkpoint")); err != nil { // where the killed writer got to
		t.Fatal(err)
	}
	if out, errText, code := run(t, "train", "--resume", dir, "--quiet", "--steps", fmt.Sprint(last.Steps+200)); code != 0 || !strings.Contains(out, "trained") {
		t.Fatalf("resume after the writer was killed: exit %d\n%s%s", code, out, errText)
	}
}
