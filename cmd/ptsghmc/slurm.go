package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ptsghmc/ptsghmc/runspec"
)

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
func shellQuote(s string) string {
	if s != "" && regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
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
		j.CPUs, shellQuote(j.Binary), shellQuote(j.RunDir), j.Chains, quoteAll(j.TrainArgs))
	p("rc=$?")
	p("if [ \"$rc\" -eq %d ]; then", exitRequeue)
	p("  # stopped by --signal before the time limit, checkpoint written: run again later")
	p("  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"")
	p("fi")
	p("exit \"$rc\"")
	return b.String()
}

// runSlurm writes the array job script of a run.
func runSlurm(args []string, stdout, stderr io.Writer) error {
	fs, cfgp, err := configFlags("slurm", args, stderr)
	if err != nil {
		return err
	}
	out := fs.String("out", "", "run directory (required; shared by every node, e.g. on NFS)")
	script := fs.String("script", "", "write the script here (default: OUT/job.sbatch; - for standard output)")
	binary := fs.String("binary", "", "ptsghmc on the compute nodes (default: this executable)")
	cpus := fs.Int("cpus-per-task", 1, "cores per task (sbatch --cpus-per-task); PT replicas step in parallel on them")
	mem := fs.String("mem", "2G", "memory per task (sbatch --mem)")
	limit := fs.String("time", "4:00:00", "time limit of each run of a task (sbatch --time); a task near it checkpoints and requeues itself")
	lead := fs.Int("signal-lead", 120, "seconds before the time limit at which a task gets SIGTERM (sbatch --signal=TERM@N); must cover one step and a checkpoint")
	partition := fs.String("partition", "", "partition (sbatch --partition)")
	account := fs.String("account", "", "account (sbatch --account)")
	par := fs.Int("max-parallel", 0, "tasks running at once (sbatch --array=1-K%N; 0: no limit)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc slurm --out RUNDIR --chains K [train flags] [job flags]\n\nWrites a Slurm array job script that runs the K chains of a run as K array tasks\n(ptsghmc train --chain env), preemption-safe; submit it with sbatch. See docs/cluster.md.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := *cfgp
	if *out == "" {
		fmt.Fprintln(stderr, "slurm: --out is required")
		return errUsage
	}
	if cfg.Chains < 2 {
		return fmt.Errorf("--chains %d: an array job needs at least 2 chains", cfg.Chains)
	}
	if err := cfg.Validate(runspec.DefaultSetup()); err != nil {
		return err
	}
	if err := checkSettings(fs, args, cfg, stderr); err != nil {
		return err
	}
	if *cpus < 1 || *lead < 1 || *par < 0 {
		return fmt.Errorf("--cpus-per-task and --signal-lead must be positive, --max-parallel non-negative")
	}
	// the train flags: those given, except the ones the script sets
	names := map[string]bool{"config": true}
	probe := flag.NewFlagSet("", flag.ContinueOnError)
	if err := bindConfig(probe, new(runspec.Config)); err != nil {
		return err
	}
	probe.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	var targs []string
	fs.Visit(func(f *flag.Flag) {
		if !names[f.Name] || f.Name == "chains" {
			return
		}
		v := f.Value.String()
		if f.Name == "config" {
			if a, err := filepath.Abs(v); err == nil {
				v = a
			}
		}
		targs = append(targs, "--"+f.Name, v)
	})
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	rundir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	bin := *binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("--binary not given and this executable's path unknown: %w", err)
		}
	}
	job := SlurmJob{Binary: bin, RunDir: rundir, WorkDir: wd, Chains: cfg.Chains, MaxParallel: *par, TrainArgs: targs,
		CPUs: *cpus, Mem: *mem, Time: *limit, SignalLead: *lead, Partition: *partition, Account: *account,
		Name: "ptsghmc-" + filepath.Base(rundir), Command: "ptsghmc slurm " + quoteAll(args)}
	text := job.Script()
	if *script == "-" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	// Slurm does not create the directory of --output: a task whose log
	// directory is missing fails at once.
	if err := os.MkdirAll(filepath.Join(rundir, "logs"), 0o755); err != nil {
		return fmt.Errorf("log directory: %w", err)
	}
	path := *script
	if path == "" {
		path = filepath.Join(rundir, "job.sbatch")
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		return fmt.Errorf("write script: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d array tasks, one chain each, into %s (logs in %s)\nsubmit with: sbatch %s\npool while it runs: ptsghmc eval --run %s\n",
		path, cfg.Chains, rundir, filepath.Join(rundir, "logs"), path, rundir)
	return nil
}
