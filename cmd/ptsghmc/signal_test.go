package main

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestHelperProcess is the ptsghmc command run as a child process by the
// signal tests (it does nothing in a normal test run).
func TestHelperProcess(t *testing.T) {
	args := os.Getenv("PTSGHMC_HELPER_ARGS")
	if args == "" {
		t.Skip("run as a child process by TestSignalsDuringCheckpoint")
	}
	os.Exit(mainCode(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// child starts the ptsghmc command with args in a child process.
func child(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "PTSGHMC_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// TestSignalsDuringCheckpoint interrupts a training child that writes a
// checkpoint after every step with SIGINT (twice, 2 ms apart) or SIGTERM
// at random moments, so the signals land during checkpoint writes. Each
// time the child must exit by itself (not be killed by the signal), leave
// a checkpoint that reads back, and resume; the finished run's samples and
// metrics must equal an uninterrupted run's byte for byte.
func TestSignalsDuringCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes")
	}
	data := writeData(t)
	args := []string{"--sampler", "sgnht", "--data", data, "--arch", "16-8-10", "--validation", "0", "--batch", "32",
		"--steps", "300", "--burnin", "20", "--thin", "5", "--log-every", "5", "--checkpoint-every", "1", "--quiet"}
	ref := filepath.Join(t.TempDir(), "ref")
	if _, stderr, code := run(t, append([]string{"train", "--out", ref}, args...)...); code != 0 {
		t.Fatalf("reference run: %s", stderr)
	}
	rng := rand.New(rand.NewPCG(15, 1))
	for _, sig := range []struct {
		name  string
		sends []syscall.Signal
	}{{"SIGINT twice", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}}, {"SIGTERM", []syscall.Signal{syscall.SIGTERM}}} {
		t.Run(sig.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			cmd, stderr := child(t, append([]string{"train", "--out", dir}, args...)...)
			interrupts := 0
			for {
				// wait until the child is in its training loop (its metrics
				// file grows: signal handling is installed), then a random
				// moment; a signal during setup, before there is anything to
				// save, ends the process by default
				size := func() int64 {
					st, err := os.Stat(filepath.Join(dir, rundir.MetricsFile))
					if err != nil {
						return -1
					}
					return st.Size()
				}
				start := size()
				for deadline := time.Now().Add(60 * time.Second); size() <= max(start, 0) && time.Now().Before(deadline); {
					time.Sleep(2 * time.Millisecond)
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				for i, s := range sig.sends {
					if i > 0 {
						time.Sleep(2 * time.Millisecond)
					}
					cmd.Process.Signal(s)
				}
				err := cmd.Wait()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
						t.Fatalf("the child was killed by %v instead of checkpointing\n%s", st.Signal(), stderr)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if _, err := rundir.ReadCheckpoint(filepath.Join(dir, "checkpoint")); err != nil {
					t.Fatalf("after %s: %v\n%s", sig.name, err, stderr)
				}
				if cmd.ProcessState.ExitCode() == 0 {
					break // finished before the signal arrived
				}
				interrupts++
				if !strings.Contains(stderr.String(), "--resume") && !strings.Contains(stderr.String(), "resume") {
					t.Fatalf("interrupted child does not say how to resume:\n%s", stderr)
				}
				if interrupts >= 4 {
					if _, stderr, code := run(t, "train", "--resume", dir, "--quiet"); code != 0 {
						t.Fatalf("resume: %s", stderr)
					}
					break
				}
				cmd, stderr = child(t, "train", "--resume", dir, "--quiet")
			}
			t.Logf("%d interrupts", interrupts)
			if interrupts == 0 {
				t.Fatal("no signal arrived before the run ended: the test did not test")
			}
			for _, f := range []string{rundir.SamplesFile, rundir.MetricsFile} {
				a, _ := os.ReadFile(filepath.Join(ref, f))
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from the uninterrupted run's (%d vs %d bytes)", f, len(b), len(a))
				}
			}
		})
	}
}
