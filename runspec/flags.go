package runspec

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// BindFlags registers one flag per Config field on fs (ptsghmc train's
// and slurm's), with c's values as defaults; the kernels' own settings
// (friction, thermostat-inertia, and any a kernel of sampler.Kernels
// declares) are bound from their kernels' declarations
// (BindKernelSettings).
func (c *Config) BindFlags(fs *flag.FlagSet) error {
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
	fs.Float64Var(&c.NullSpaceScale, "null-space-prior", c.NullSpaceScale, "the first layer's prior this many times wider along the directions the training images do not span, so that samples disagree on images off the data: an MLP's in input space, a CNN's first convolution's (lenet, cnn3) in the space of its patches (docs/uncertainty.md; 0: off)")
	fs.Float64Var(&c.NullSpaceKeep, "null-space-keep", c.NullSpaceKeep, "with --null-space-prior: the fraction of the training images' (a CNN: their patches') second moment the span keeps (0: 0.999)")
	fs.Float64Var(&c.NullSpaceSkip, "null-space-skip", c.NullSpaceSkip, "with --null-space-prior S and a CNN (lenet, cnn3): add a skip branch, a dense weight from the raw image to the first dense layer, whose prior is S times the layer's along the image directions off the span keeping this fraction of the training images' second moment, e.g. 0.9999, and zero on the span (docs/uncertainty.md; 0: no branch)")
	fs.BoolVar(&c.PriorFanIn, "prior-fan-in", c.PriorFanIn, "scale each layer's prior precision by its fan-in")
	fs.StringVar(&c.Sampler, "sampler", c.Sampler, SamplerHelp(SamplerNames(sampler.Kernels)))
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
	fs.StringVar(&c.Precondition, "precondition", c.Precondition, "mass matrix estimated during burn-in, then frozen: none, rmsprop (diagonal, from squared minibatch gradients), variance (diagonal, from the positions' variances), dense (the positions' covariance: correlated parameters of models up to a few hundred parameters; costs 2 D^2 multiply-adds a step) or lowrank (the variances and the top --mass-rank correlated directions, for large models; 4 D k a step); heavier masses slow the stiff, noisy coordinates to the widest one's pace (docs/sampler.md, docs/posterior-checks.md)")
	fs.IntVar(&c.MassRank, "mass-rank", c.MassRank, "with --precondition lowrank, the number k of correlated directions the mass corrects (1 to 64; 0: 4)")
	fs.StringVar(&c.MassScale, "mass-scale", c.MassScale, "with --precondition, which coordinates keep unit mass: widest (the others are slowed to their pace; --lr must then grow, but the burn-in's first window runs unit mass at it) or stiffest (the others are sped up to their pace: --lr keeps its unit-mass meaning; on small regressions it mixes far faster at a step set for the stiffest coordinate, on networks it can diverge: docs/posterior-checks.md)")
	fs.BoolVar(&c.NoiseCorrection, "noise-correction", c.NoiseCorrection, "estimate the gradient noise per parameter at the end of burn-in and inject less noise where the gradient brings more (SGHMC's B-hat), so no parameter runs hot or cold under the one thermostat (ptsghmc, sgnht, sghmc)")
	fs.Float64Var(&c.NoiseCeiling, "noise-ceiling", c.NoiseCeiling, "with --noise-correction: the most gradient noise per step, as a fraction of the injected noise, that the correction leaves a parameter at the end of burn-in; a noisier parameter's mass is raised (its step shrinks) to bring its noise down to it, since the correction cannot take out more noise than it injects (0: none, the correction of older runs)")
	fs.BoolVar(&c.NoiseTrack, "noise-track", c.NoiseTrack, "with --noise-correction: go on estimating the gradient noise after burn-in and correct the injected noise at the end of every window of the burn-in estimate's length, so that the correction follows the noise as the chain settles (false: frozen at the end of burn-in, the correction of older runs)")
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

// classesFlag is the --classes list of a Config (FormatClasses,
// ParseClasses).
type classesFlag []int

func (c *classesFlag) String() string { return FormatClasses(*c) }
func (c *classesFlag) Set(v string) error {
	cl, err := ParseClasses(v)
	if err != nil {
		return err
	}
	*c = cl
	return nil
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

// SamplerHelp returns the help text of a --sampler flag offering names:
// one line each, with its description (SamplerDoc).
func SamplerHelp(names []string) string {
	var b strings.Builder
	b.WriteString("the sampler, one of:")
	for _, n := range names {
		fmt.Fprintf(&b, "\n  %-8s %s", n, SamplerDoc(n))
	}
	return b.String()
}
