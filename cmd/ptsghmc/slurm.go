package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/cluster"
	"github.com/ptsghmc/ptsghmc/runspec"
)

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
	if cfg.Replicas == 0 {
		return errAutoArray
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
	targs, err := slurmTrainArgs(fs)
	if err != nil {
		return err
	}
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
	job := cluster.SlurmJob{Binary: bin, RunDir: rundir, WorkDir: wd, Chains: cfg.Chains, MaxParallel: *par, TrainArgs: targs,
		CPUs: *cpus, Mem: *mem, Time: *limit, SignalLead: *lead, Partition: *partition, Account: *account,
		Name: "ptsghmc-" + filepath.Base(rundir), Command: "ptsghmc slurm " + cluster.QuoteAll(args)}
	if *script == "-" {
		_, err := io.WriteString(stdout, job.Script())
		return err
	}
	path, err := job.WriteScript(*script)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d array tasks, one chain each, into %s (logs in %s)\nsubmit with: sbatch %s\npool while it runs: ptsghmc eval --run %s\n",
		path, cfg.Chains, rundir, filepath.Join(rundir, "logs"), path, rundir)
	return nil
}

// slurmTrainArgs returns the train flags given to slurm (fs), as the
// tasks' arguments: all but --chains, which the script sets, and the job
// flags; --config made absolute.
func slurmTrainArgs(fs *flag.FlagSet) ([]string, error) {
	names := map[string]bool{"config": true}
	probe := flag.NewFlagSet("", flag.ContinueOnError)
	if err := new(runspec.Config).BindFlags(probe); err != nil {
		return nil, err
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
	return targs, nil
}
