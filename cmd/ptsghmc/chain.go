package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// exitRequeue is train's exit status after SIGINT or SIGTERM once every
// chain's checkpoint is written: 75, EX_TEMPFAIL of sysexits.h ("temporary
// failure; the user is invited to retry"). It differs from 0 (done), 1
// (failed, including a checkpoint that could not be written), 2 (bad
// usage) and 143 (killed by SIGTERM before the handler ran), so a batch
// script, Slurm's RequeueExit=75 or a Kubernetes podFailurePolicy can tell
// "rerun me, I will resume" from a failure. See docs/cluster.md.
const exitRequeue = 75

// requeueError wraps train.ErrInterrupted: the run stopped on a signal with
// its checkpoint written; mainCode exits with exitRequeue.
type requeueError struct{ err error }

func (e requeueError) Error() string { return e.err.Error() }
func (e requeueError) Unwrap() error { return e.err }

// Environment variables that number the tasks of an array job.
const (
	envSlurmTask = "SLURM_ARRAY_TASK_ID"  // Slurm: the task's index as --array gave it
	envK8sIndex  = "JOB_COMPLETION_INDEX" // Kubernetes Indexed Job: 0..completions-1
)

// chainIndex returns the chain a --chain value names in a run of k chains,
// and where it came from. "env" reads SLURM_ARRAY_TASK_ID (used as is: the
// array is --array=1-K) or else JOB_COMPLETION_INDEX (0-based: chain is
// index+1).
func chainIndex(arg string, k int, getenv func(string) string) (int, string, error) {
	check := func(i int, from, hint string) (int, string, error) {
		if i < 1 || i > k {
			return 0, "", fmt.Errorf("--chain: %s gives chain %d, but the run's chains are 1..%d (--chains %d)%s", from, i, k, k, hint)
		}
		return i, from, nil
	}
	if arg != "env" {
		i, err := strconv.Atoi(arg)
		if err != nil {
			return 0, "", fmt.Errorf("--chain %q: expected a chain number 1..%d or env", arg, k)
		}
		return check(i, "--chain "+arg, "")
	}
	if v := strings.TrimSpace(getenv(envSlurmTask)); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", fmt.Errorf("--chain env: %s=%q is not a number", envSlurmTask, v)
		}
		return check(i, fmt.Sprintf("%s=%s", envSlurmTask, v), fmt.Sprintf(": submit the array with --array=1-%d", k))
	}
	if v := strings.TrimSpace(getenv(envK8sIndex)); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", fmt.Errorf("--chain env: %s=%q is not a number", envK8sIndex, v)
		}
		return check(i+1, fmt.Sprintf("%s=%s", envK8sIndex, v), fmt.Sprintf(": the Indexed Job needs completions: %d", k))
	}
	return 0, "", fmt.Errorf("--chain env: neither %s (Slurm array task) nor %s (Kubernetes Indexed Job) is set", envSlurmTask, envK8sIndex)
}

// printChains prints the state of every chain eval found, when there is
// more than one or one is not finished, and a table header's blank line.
func printChains(w io.Writer, chains []rundir.ChainStatus) {
	if len(chains) == 1 && chains[0].State == rundir.ChainFinished {
		return
	}
	count := map[string]int{}
	for _, c := range chains {
		count[c.State]++
	}
	fmt.Fprintf(w, "chains: %d finished, %d running, %d missing (pooled: the samples each chain's last checkpoint vouches for)\n",
		count[rundir.ChainFinished], count[rundir.ChainRunning], count[rundir.ChainMissing])
	for _, c := range chains {
		switch c.State {
		case rundir.ChainMissing:
			note := "no checkpoint yet"
			if c.Note != "" {
				note = c.Note
			}
			fmt.Fprintf(w, "  chain %d  %-8s  %s (%s)\n", c.Chain, c.State, c.Dir, note)
		default:
			fmt.Fprintf(w, "  chain %d  %-8s  step %d of %d, %d samples  %s\n", c.Chain, c.State, c.Steps, c.Target, c.Samples, c.Dir)
		}
	}
	fmt.Fprintln(w)
}
