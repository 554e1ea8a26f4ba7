// Package cluster writes the job scripts that run a ptsghmc run's chains
// on a cluster scheduler: a Slurm array job, one task per chain, that
// checkpoints and requeues itself before its time limit (docs/cluster.md).
package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ExitRequeue is train's exit status after SIGINT or SIGTERM once every
// chain's checkpoint is written: the task is to run again (the job script
// requeues itself on it; EX_TEMPFAIL of sysexits.h).
const ExitRequeue = 75

// Environment variables that number the tasks of an array job.
const (
	EnvSlurmTask = "SLURM_ARRAY_TASK_ID"  // Slurm: the task's index as --array gave it
	EnvK8sIndex  = "JOB_COMPLETION_INDEX" // Kubernetes Indexed Job: 0..completions-1
)

// ChainIndex returns the chain a --chain value names in a run of k chains,
// and where it came from. "env" reads SLURM_ARRAY_TASK_ID (used as is: the
// array is --array=1-K) or else JOB_COMPLETION_INDEX (0-based: chain is
// index+1).
func ChainIndex(arg string, k int, getenv func(string) string) (int, string, error) {
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
	if v := strings.TrimSpace(getenv(EnvSlurmTask)); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", fmt.Errorf("--chain env: %s=%q is not a number", EnvSlurmTask, v)
		}
		return check(i, fmt.Sprintf("%s=%s", EnvSlurmTask, v), fmt.Sprintf(": submit the array with --array=1-%d", k))
	}
	if v := strings.TrimSpace(getenv(EnvK8sIndex)); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", fmt.Errorf("--chain env: %s=%q is not a number", EnvK8sIndex, v)
		}
		return check(i+1, fmt.Sprintf("%s=%s", EnvK8sIndex, v), fmt.Sprintf(": the Indexed Job needs completions: %d", k))
	}
	return 0, "", fmt.Errorf("--chain env: neither %s (Slurm array task) nor %s (Kubernetes Indexed Job) is set", EnvSlurmTask, EnvK8sIndex)
}

// plainWord matches the words a shell reads as they are.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

// SlurmJob is what an array job script for a run needs.
type SlurmJob struct {
	Binary      string   // absolute path of ptsghmc on the compute nodes
	RunDir      string   // the run directory (absolute)
	WorkDir     string   // the job's working directory (relative paths in TrainArgs are relative to it)
	Chains      int      // array tasks 1..Chains
	MaxParallel int      // tasks running at once (0: no limit)
	TrainArgs   []string // the run's settings as train flags, without --out, --chains and --chain
	CPUs        int      // cores per task
	Mem         string   // memory per task, as sbatch --mem reads it (e.g. 2G)
	Time        string   // time limit per run of a task, as sbatch --time reads it
	SignalLead  int      // seconds before the time limit at which the task gets SIGTERM
	Partition   string   // optional
	Account     string   // optional
	Name        string   // job name
	Command     string   // the command line that wrote the script (a comment)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteAll quotes each of args (ShellQuote) and joins them with spaces.
func QuoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// Script returns the sbatch script: one array task per chain, each running
// `ptsghmc train --chain env` into the shared run directory, requeued on
// preemption (--requeue) and, near its time limit, by itself: --signal
// sends SIGTERM to the task SignalLead seconds before the limit, train
// checkpoints and exits 75, and the script requeues the task, whose same
// command then resumes the chain.
func (j SlurmJob) Script() string {
	var b bytes.Buffer
	p := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	p("#!/bin/bash")
	p("# Slurm array job of the ptsghmc run %s: array task i runs chain i of %d.", j.RunDir, j.Chains)
	p("# Written by: %s", j.Command)
	p("# Submit it with sbatch; docs/cluster.md explains every line.")
	p("#SBATCH --job-name=%s", j.Name)
	if j.MaxParallel > 0 {
		p("#SBATCH --array=1-%d%%%d", j.Chains, j.MaxParallel)
	} else {
		p("#SBATCH --array=1-%d", j.Chains)
	}
	p("#SBATCH --ntasks=1")
	p("#SBATCH --cpus-per-task=%d", j.CPUs)
	p("#SBATCH --mem=%s", j.Mem)
	p("#SBATCH --time=%s", j.Time)
	if j.Partition != "" {
		p("#SBATCH --partition=%s", j.Partition)
	}
	if j.Account != "" {
		p("#SBATCH --account=%s", j.Account)
	}
	p("#SBATCH --chdir=%s", j.WorkDir)
	p("#SBATCH --output=%s", filepath.Join(j.RunDir, "logs", "chain-%a.out"))
	p("#SBATCH --open-mode=append")
	p("# Preemption (PreemptMode=REQUEUE) and `scontrol requeue` send SIGTERM, wait KillWait")
	p("# (slurm.conf; GraceTime for preemption), then SIGKILL, and requeue the task themselves;")
	p("# --requeue allows it. The task checkpoints on SIGTERM and resumes when it starts again.")
	p("#SBATCH --requeue")
	p("# SIGTERM to the task %d s before the time limit: it checkpoints and exits 75.", j.SignalLead)
	p("#SBATCH --signal=TERM@%d", j.SignalLead)
	p("")
	p("echo \"$(date -u +%%FT%%TZ) task ${SLURM_ARRAY_TASK_ID} (job ${SLURM_JOB_ID}, restart ${SLURM_RESTART_COUNT:-0}) on $(hostname)\"")
	p("srun --ntasks=1 --cpus-per-task=%d %s train --out %s --chains %d --chain env %s",
		j.CPUs, ShellQuote(j.Binary), ShellQuote(j.RunDir), j.Chains, QuoteAll(j.TrainArgs))
	p("rc=$?")
	p("if [ \"$rc\" -eq %d ]; then", ExitRequeue)
	p("  # stopped by --signal before the time limit, checkpoint written: run again later")
	p("  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"")
	p("fi")
	p("exit \"$rc\"")
	return b.String()
}

// WriteScript writes the job's Script to path (default: RunDir/job.sbatch)
// and creates RunDir/logs, the directory of the tasks' logs (Slurm does
// not create the directory of --output: a task whose log directory is
// missing fails at once). It returns the script's path.
func (j SlurmJob) WriteScript(path string) (string, error) {
	if err := os.MkdirAll(filepath.Join(j.RunDir, "logs"), 0o755); err != nil {
		return "", fmt.Errorf("log directory: %w", err)
	}
	if path == "" {
		path = filepath.Join(j.RunDir, "job.sbatch")
	}
	if err := os.WriteFile(path, []byte(j.Script()), 0o755); err != nil {
		return "", fmt.Errorf("write script: %w", err)
	}
	return path, nil
}
