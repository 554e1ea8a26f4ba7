package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/cluster"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/onnx"
	"github.com/ptsghmc/ptsghmc/progress"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// ownBoolFlags are the boolean flags that train and slurm define beyond the
// config's: configArg must not take the argument after them as their value.
var ownBoolFlags = map[string]bool{"overwrite": true, "quiet": true, "allow-arithmetic-change": true}

// configArg returns the value of --config in args, if any, read before the
// flags are parsed (the file sets the other flags' defaults). It scans args
// as package flag does: a flag is an argument starting with '-', a flag
// that is not boolean takes the next argument as its value unless it is
// written name=value, and "--" or the first argument that is not a flag
// ends the flags. So "--out config --steps 100" gives no config file.
func configArg(args []string) string {
	probe := flag.NewFlagSet("", flag.ContinueOnError)
	probe.SetOutput(io.Discard)
	cfg := runspec.DefaultConfig()
	if err := cfg.BindFlags(probe); err != nil {
		return ""
	}
	isBool := func(name string) bool {
		if ownBoolFlags[name] {
			return true
		}
		f := probe.Lookup(name)
		if f == nil {
			return false
		}
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		return ok && b.IsBoolFlag()
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return ""
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		if name == "config" {
			if hasValue {
				return value
			}
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if !hasValue && !isBool(name) {
			i++ // the flag's value
		}
	}
	return ""
}

// configFlags returns the flag set of a command that takes a run's
// settings (train, slurm): train's defaults, overridden by the --config file
// in args if any, bound to flags that override both, and the --config flag.
func configFlags(name string, args []string, stderr io.Writer) (*flag.FlagSet, *runspec.Config, error) {
	cfg := runspec.DefaultConfig()
	if path := configArg(args); path != "" {
		if err := runspec.LoadConfigFile(path, &cfg); err != nil {
			return nil, nil, err
		}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := cfg.BindFlags(fs); err != nil {
		return nil, nil, err
	}
	fs.String("config", "", "JSON or YAML file of settings (flags given override it)")
	return fs, &cfg, nil
}

// checkSettings refuses the settings given (flags, or fields of the
// --config file other than the defaults) that do not apply to the run cfg
// describes and would change what it samples, and reports on stderr those
// that only change its speed, ignored (runspec.Config.CheckSettings). A
// tempered run without exchanges (--exchange 0) is said to be one.
func checkSettings(fs *flag.FlagSet, args []string, cfg runspec.Config, stderr io.Writer) error {
	set := map[string]bool{}
	if path := configArg(args); path != "" {
		var err error
		if set, err = runspec.SetInFile(path); err != nil {
			return err
		}
	}
	fs.Visit(func(f *flag.Flag) { set[strings.ReplaceAll(f.Name, "-", "_")] = true })
	ignored, err := cfg.CheckSettings(func(s string) bool { return set[s] })
	if err != nil {
		return err
	}
	for _, n := range ignored {
		fmt.Fprintf(stderr, "ptsghmc %s: ignored: %s\n", fs.Name(), n)
	}
	if cfg.Sampler == runspec.PTSGHMC && cfg.Replicas > 1 && cfg.Exchange == 0 {
		// the swaps-off ablation: allowed, but never silent
		fmt.Fprintf(stderr, "ptsghmc %s: exchange 0: the %d rungs never exchange (the swaps-off ablation): each is an independent tempered chain, and rung 1 a plain chain at T = 1 that costs %d times the gradients; --exchange N > 0 exchanges every N steps\n",
			fs.Name(), cfg.Replicas, cfg.Replicas)
	}
	return nil
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	tf, err := parseTrainFlags(args, stderr)
	if err != nil {
		return err
	}
	// Signals are caught from here on: a SIGTERM while the data loads
	// stops the run at its first step, with a checkpoint.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	sigCtx := ctx
	defer func() {
		// After a signal the run is shutting down: keep catching them, so
		// that a second Ctrl-C between the checkpoint and the process's
		// exit is not the default action (killed, exit status lost).
		if sigCtx.Err() == nil {
			stop()
		}
	}()

	ch, err := tf.openChains(ctx, stderr)
	if err != nil {
		return err
	}
	defer ch.Close()
	dest := printTrainStart(stderr, ch)
	if tf.timeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, tf.timeLimit)
		defer cancel()
	}
	start := time.Now()
	err = trainWithProgress(ctx, ch, tf.quiet, stderr)
	// The wall-clock goes to a file of its own (config.json and
	// metrics.jsonl hold no times, so reruns write them byte for byte).
	if terr := rundir.RecordTiming(dest, time.Since(start), ch.Steps()); terr != nil {
		fmt.Fprintf(stderr, "WARNING: %v\n", terr)
	}
	if errors.Is(err, train.ErrInterrupted) && sigCtx.Err() == nil && ctx.Err() != nil { // the time limit
		if ferr := ch.Finish(); ferr != nil {
			return ferr
		}
		fmt.Fprintf(stderr, "time limit %s reached: the run ends at step %d (resume with --steps to go on)\n", tf.timeLimit, ch.Steps())
		err = nil
	}
	if err == train.ErrInterrupted { // checkpoint written (a failed one is joined to it, and exits 1)
		again := "ptsghmc train --resume " + ch.Dir
		if ch.Only > 0 {
			again = "the same command"
		}
		fmt.Fprintf(stderr, "interrupted at step %d, checkpoint written; resume with: %s\n", ch.Steps(), again)
		return requeueError{err}
	}
	if err != nil {
		return err
	}
	printTrained(stdout, ch)
	return nil
}

// trainFlags are train's flags beyond the config's.
type trainFlags struct {
	fs         *flag.FlagSet
	args       []string
	cfg        runspec.Config
	steps      int // --steps when given (a resume's new length), else 0
	out        string
	resume     string
	overwrite  bool
	quiet      bool
	timeLimit  time.Duration
	allowArith bool
	chain      string
}

// parseTrainFlags parses train's flags: the config (checked against the
// sampler unless resuming) and the run's own.
func parseTrainFlags(args []string, stderr io.Writer) (*trainFlags, error) {
	fs, cfgp, err := configFlags("train", args, stderr)
	if err != nil {
		return nil, err
	}
	out := fs.String("out", "runs/default", "run directory")
	resume := fs.String("resume", "", "resume the run in this directory (with --steps: continue to that many steps in all)")
	overwrite := fs.Bool("overwrite", false, "replace an existing run in --out")
	quiet := fs.Bool("quiet", false, "no progress output")
	timeLimit := fs.Duration("time-limit", 0, "wall-clock budget (e.g. 20m): stop then and end the run at the step reached, as if --steps had said so (0: none)")
	allowArith := fs.Bool("allow-arithmetic-change", false, "with --resume or --chain: continue a run on other arithmetic than it recorded (another native BLAS kernel or thread count) and record the change, instead of refusing")
	chainArg := fs.String("chain", "", "run only this chain (1..K) of the --chains K run in --out, as one task of a job array; \"env\": the chain is $SLURM_ARRAY_TASK_ID (submit with --array=1-K) or $JOB_COMPLETION_INDEX+1 (Kubernetes Indexed Job). A chain with a checkpoint resumes from it, so the same command starts a task and continues it after a requeue (see docs/cluster.md)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: ptsghmc train [flags]\n\nSamples the posterior of a Bayesian MLP (--arch) or of a registered model (--model lenet); rung-1 samples go to OUT/samples, metrics to OUT/metrics.jsonl,\nthe whole state to OUT/checkpoint every --checkpoint-every steps and on SIGINT/SIGTERM, after which\ntrain exits with status %d (requeue me: rerun the same command to continue).\n\nflags:\n", exitRequeue)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	tf := &trainFlags{fs: fs, args: args, cfg: *cfgp, out: *out, resume: *resume, overwrite: *overwrite, quiet: *quiet,
		timeLimit: *timeLimit, allowArith: *allowArith, chain: *chainArg}
	archSet, stepsSet := false, false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "steps":
			tf.steps, stepsSet = tf.cfg.Steps, true
		case "arch":
			archSet = true
		}
	})
	if tf.timeLimit < 0 {
		return nil, fmt.Errorf("train: --time-limit %s: expected a positive duration, or 0 for none", tf.timeLimit)
	}
	if tf.resume != "" && stepsSet && tf.steps < 1 {
		return nil, fmt.Errorf("train: --steps %d with --resume %s: expected the run's new total of steps, at least 1 (leave --steps out to keep the run's)", tf.steps, tf.resume)
	}
	if tf.cfg.Model != "" {
		if archSet {
			return nil, fmt.Errorf("train: --model %s and --arch %s: give one (--arch describes an MLP)", tf.cfg.Model, tf.cfg.Arch)
		}
		tf.cfg.Arch = "" // not an MLP: keep config.json from naming one
		if onnx.IsModelPath(tf.cfg.Model) && tf.resume == "" {
			// eval, predict and serve find the file from any directory
			abs, err := filepath.Abs(tf.cfg.Model)
			if err != nil {
				return nil, fmt.Errorf("train: --model %s: %w", tf.cfg.Model, err)
			}
			tf.cfg.Model = abs
		}
	}
	if tf.resume == "" { // a resumed run keeps its config (checkResumeFlags)
		if err := checkSettings(fs, args, tf.cfg, stderr); err != nil {
			return nil, err
		}
	}
	return tf, nil
}

// errAutoArray refuses --replicas auto for a run of array tasks, whose
// chains would each run a pilot and might choose different rungs.
var errAutoArray = errors.New("--replicas auto is not available for array tasks (--chain, slurm): give --replicas N")

// chooseReplicas resolves --replicas auto (a variable for the tests, which
// check that no pilot runs when the run would be refused).
var chooseReplicas = defaultChooseReplicas

var defaultChooseReplicas = train.ChooseReplicas

// openChains opens the chains the flags name: one chain of a job array
// (--chain), a resumed run (--resume) or a new run in --out.
func (tf *trainFlags) openChains(ctx context.Context, stderr io.Writer) (*train.Chains, error) {
	cfg := tf.cfg
	setup := runspec.DefaultSetup()
	setup.AllowArithmeticChange = tf.allowArith
	switch {
	case tf.chain != "":
		if tf.resume != "" || tf.overwrite {
			return nil, fmt.Errorf("--chain resumes its chain when it has a checkpoint: drop --resume and --overwrite (remove the run directory to start again)")
		}
		if cfg.Replicas == 0 {
			return nil, errAutoArray
		}
		if tf.timeLimit > 0 {
			return nil, fmt.Errorf("--time-limit ends a run for good; with --chain let the scheduler's time limit send SIGTERM (sbatch --signal, docs/cluster.md) and requeue the task")
		}
		i, from, err := cluster.ChainIndex(tf.chain, cfg.Chains, os.Getenv)
		if err != nil {
			return nil, err
		}
		ch, err := train.OpenChain(tf.out, cfg, i, setup)
		if err != nil {
			return nil, err
		}
		verb := "starting"
		if ch.Resumed {
			verb = fmt.Sprintf("resuming from its checkpoint at step %d", ch.Steps())
		}
		fmt.Fprintf(stderr, "ptsghmc train: chain %d of %d (%s): %s\n", i, cfg.Chains, from, verb)
		return ch, nil
	case tf.resume != "":
		if err := checkResumeFlags(tf.fs, tf.args, tf.resume); err != nil {
			return nil, err
		}
		return train.ResumeChains(tf.resume, tf.steps, setup)
	}
	if cfg.Replicas == 0 {
		// what would refuse the run after the pilot refuses it before
		if err := train.CheckAutoReplicas(tf.out, cfg, tf.overwrite, setup); err != nil {
			return nil, err
		}
		var err error
		if cfg, err = chooseReplicas(ctx, cfg, setup); err != nil {
			return nil, err
		}
		if cfg.ReplicasChoice != "" {
			fmt.Fprintf(stderr, "ptsghmc train: --replicas auto chose %s\n", cfg.ReplicasChoice)
		}
	}
	return train.NewChains(tf.out, cfg, tf.overwrite, setup)
}

// printTrainStart prints what the chains will train and returns the
// directory the run's files go to (a chain's own directory for one task of
// a job array).
func printTrainStart(stderr io.Writer, ch *train.Chains) string {
	c, run := ch.Cfg, ch.Runs[0]
	chains := ladderText(run) // one chain's rungs ("1 chain" without PT)
	if c.Chains > 1 {
		n := fmt.Sprintf("%d chains", c.Chains)
		if ch.Only > 0 {
			n = fmt.Sprintf("chain %d of %d", ch.Only, c.Chains)
		}
		if len(run.State().Temps) == 1 {
			chains = n // not "1 chain, 2 chains"
		} else {
			chains += ", " + n
		}
	}
	dest := ch.Dir
	if ch.Only > 0 {
		dest = run.Dir
	}
	tempered := ""
	if l := c.TemperatureLabel(); l != "" {
		tempered = " (" + l + ")"
	}
	fmt.Fprintf(stderr, "ptsghmc train: %s%s %s on %d examples (%d validation), %d parameters, %s; step %d of %d -> %s\n",
		c.Sampler, tempered, c.ModelName(), run.Data.N, c.Validation, run.Model.NumParams(), chains, ch.Steps(), c.Steps, dest)
	if d := run.Model.Description; d != "" {
		fmt.Fprintf(stderr, "ptsghmc train: model %s: %s\n", c.ModelName(), d)
	}
	printNullSpace(stderr, run)
	if c.NoiseCorrection && !c.CorrectsNoise(run.Data.N) {
		fmt.Fprintf(stderr, "ptsghmc train: no noise correction: the batch is the whole training set, so the gradients are exact and carry no noise to correct\n")
	}
	if c.Start == runspec.StartModel && ch.Steps() == 0 {
		fmt.Fprintf(stderr, "ptsghmc train: the chains start from the model's own weights (--start model)\n")
	}
	fmt.Fprintf(stderr, "ptsghmc train: arithmetic %s\n", arithmeticLine(run.Cfg.Arithmetic))
	return dest
}

// printNullSpace says what the run's null-space prior and skip branch
// widen, if it has them.
func printNullSpace(stderr io.Writer, run *train.Run) {
	if np := run.NullSpace(); np != nil && np.Patch != nil {
		g := np.Patch
		fmt.Fprintf(stderr, "ptsghmc train: null-space prior: the first convolution's prior %gx wider along the %d of %d patch directions (%dx%dx%d) the training images' patches leave out\n", np.Scale, np.D-np.K, np.D, g.KH, g.KW, g.Channels)
	} else if np != nil {
		fmt.Fprintf(stderr, "ptsghmc train: null-space prior: the first layer's prior %gx wider along the %d of %d input directions the training images leave out\n", np.Scale, np.D-np.K, np.D)
	}
	if sp := run.NullSpaceSkip(); sp != nil {
		fmt.Fprintf(stderr, "ptsghmc train: null-space skip: a branch from the image to the first dense layer, zero on the training images' span, its prior %gx a dense layer's along the %d of %d image directions they leave out\n", sp.Scale, sp.D-sp.K, sp.D)
	}
}

// trainWithProgress trains the chains to their end or ctx's, reporting
// chain 1's figures and every chain's steps on stderr (unless quiet).
func trainWithProgress(ctx context.Context, ch *train.Chains, quiet bool, stderr io.Writer) error {
	c := ch.Cfg
	pr := progress.NewTrain(stderr, ch.Steps()*len(ch.Runs), c.Steps*len(ch.Runs), quiet)
	done := make([]int, len(ch.Runs))
	for i, r := range ch.Runs {
		done[i] = r.Steps()
	}
	err := ch.Train(ctx, func(i int, s train.Status) {
		if ch.Only > 0 {
			i = 1
		}
		done[i-1] = s.Step
		if i != 1 { // chain 1's figures are shown; every chain's steps count
			last := pr.Last()
			s.LogLik, s.SwapRate, s.Samples = last.LogLik, last.SwapRate, last.Samples
		}
		if s.Unhealthy != nil {
			s.Warning += "\n  what to change: " + diagnose.HealthAdvice(*s.Unhealthy, ch.Runs[i-1].Cfg)
		}
		if s.Warning != "" && len(ch.Runs) > 1 {
			s.Warning = fmt.Sprintf("chain %d: %s", i, s.Warning)
		}
		s.Step, s.Target = 0, c.Steps*len(ch.Runs)
		for _, d := range done {
			s.Step += d
		}
		pr.Update(s)
	})
	pr.Finish()
	return err
}

// printTrained prints each trained chain's summary: its samples, the last
// state's validation fit, the tempering figures, the preconditioning and
// the health verdict.
func printTrained(stdout io.Writer, ch *train.Chains) {
	c := ch.Cfg
	for i, r := range ch.Runs {
		m := r.LastMetrics()
		if m.Step == 0 { // resumed a finished run: nothing was done
			fmt.Fprintf(stdout, "%s: already finished at step %d\n", r.Dir, r.Steps())
			continue
		}
		name := r.Dir
		if len(ch.Runs) > 1 {
			name = fmt.Sprintf("%s (chain %d)", r.Dir, i+1)
		} else if ch.Only > 0 {
			name = fmt.Sprintf("%s (chain %d of %d)", r.Dir, ch.Only, c.Chains)
		}
		fmt.Fprintf(stdout, "trained %d steps: %d samples kept in %s", r.Steps(), m.Samples, name)
		if l := c.TemperatureLabel(); l != "" {
			fmt.Fprintf(stdout, " (%s)", l)
		}
		if r.Val != nil {
			fmt.Fprintf(stdout, "; validation accuracy of the last rung-1 state %.4f, log-likelihood %.4f", m.ValAcc, m.ValLogLik)
		}
		fmt.Fprintln(stdout)
		if tp := diagnose.TemperingOf(r.State(), r.Cfg); tp != nil {
			printTempering(stdout, tp)
		}
		if p := r.Preconditioning(); p != "" {
			fmt.Fprintln(stdout, p)
		}
		fmt.Fprintln(stdout, diagnose.HealthOf(r.State(), r.Cfg))
	}
}

func ladderText(run *train.Run) string {
	t := run.State().Temps
	if len(t) == 1 {
		return "1 chain"
	}
	kind := run.Cfg.Ladder
	if run.Cfg.Ladder == "adaptive" && run.Cfg.SwapTarget > 0 {
		kind = fmt.Sprintf("adaptive, free top at swap acceptance %.2g", run.Cfg.SwapTarget)
	}
	return fmt.Sprintf("%d rungs T=%.4g..%.4g (%s)", len(t), t[0], t[len(t)-1], kind)
}

// printTempering prints what a PT ladder did after burn-in, and in words
// what to change when it does not pay for itself (diagnose.Tempering.String).
func printTempering(w io.Writer, tp *diagnose.Tempering) { fmt.Fprint(w, tp) }

// arithmeticLine says what a run's recorded arithmetic id is and what runs it
// here.
func arithmeticLine(id string) string {
	a := autodiff.CurrentArithmetic()
	if a.ID() == id {
		return a.String()
	}
	return id + " (here: " + a.String() + ")"
}
