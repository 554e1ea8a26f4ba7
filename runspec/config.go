package runspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gopkg.in/yaml.v3"
)

// Config is a run's whole configuration. Every field has a command-line flag
// of the same name (in kebab case) and can be set from a JSON or YAML file;
// the config actually used is saved in the run directory.
type Config struct {
	Data       string `json:"data" yaml:"data"`                         // directory with the four IDX files
	TrainSize  int    `json:"train_size" yaml:"train_size"`             // use only the first n training examples (0: all)
	Validation int    `json:"validation" yaml:"validation"`             // held-out examples for the log-likelihood trace
	Arch       string `json:"arch" yaml:"arch"`                         // e.g. 784-400-400-10 (an MLP; ignored when Model is set)
	Model      string `json:"model,omitempty" yaml:"model,omitempty"`   // a registered model (nn.Models, e.g. lenet); empty: the MLP of Arch
	Shapes     string `json:"shapes,omitempty" yaml:"shapes,omitempty"` // recorded by a run: its model's parameter names and shapes
	// ModelSHA256 is recorded by a run whose model was read from a file
	// (Model FILE.onnx): the file's hex SHA-256, so that a resume or an
	// eval against a changed file is refused.
	ModelSHA256 string `json:"model_sha256,omitempty" yaml:"model_sha256,omitempty"`
	// Start is where a new run's chains start: "prior" (or empty: values
	// drawn at the model's initial scales, as every run did before it) or
	// "model" (the weights the model comes with, nn.Model.Weights: an
	// imported network's trained weights, a warm start).
	Start      string  `json:"start,omitempty" yaml:"start,omitempty"`
	Activation string  `json:"activation" yaml:"activation"` // relu, tanh, sigmoid
	Prior      float64 `json:"prior" yaml:"prior"`           // prior precision per weight, times fan-in when PriorFanIn
	PriorFanIn bool    `json:"prior_fan_in" yaml:"prior_fan_in"`
	PriorDF    float64 `json:"prior_df" yaml:"prior_df"` // Student-t prior's degrees of freedom (0: Gaussian prior)
	// NullSpaceScale widens the first layer's prior by this factor along
	// the directions the training inputs do not span: an MLP's dense
	// layer's, in input space; a CNN's first convolution's, in the space
	// of its patches (package nullspace: the samples disagree on inputs off
	// the data; 0: off).
	NullSpaceScale float64 `json:"null_space_scale,omitempty" yaml:"null_space_scale,omitempty"`
	// NullSpaceKeep is the fraction of the training inputs' (or patches')
	// second moment the data's span holds (0: nullspace.DefaultKeep).
	NullSpaceKeep float64 `json:"null_space_keep,omitempty" yaml:"null_space_keep,omitempty"`
	// NullSpaceSHA256 is the digest of the null-space prior the run
	// fitted (nullspace.Prior.Digest), recorded when it is created: a
	// resume that fits another is refused.
	NullSpaceSHA256 string `json:"null_space_sha256,omitempty" yaml:"null_space_sha256,omitempty"`
	// NullSpaceSkip, when positive, gives a ConvNet the skip branch
	// (nn.ConvNet.Skip): a dense weight from the raw image to the first
	// dense layer whose prior is the image-space null-space prior of
	// scale NullSpaceScale restricted to the directions off the span that
	// keeps this fraction of the training images' second moment (package
	// nullspace, Prior.SkipModel; in (0, 1); 0: no branch).
	NullSpaceSkip float64 `json:"null_space_skip,omitempty" yaml:"null_space_skip,omitempty"`
	// NullSpaceSkipSHA256 is the digest of the skip branch's image prior
	// (nullspace.Prior.Digest), recorded when the run is created: a
	// resume that fits another is refused.
	NullSpaceSkipSHA256 string `json:"null_space_skip_sha256,omitempty" yaml:"null_space_skip_sha256,omitempty"`
	// Temperature is the posterior temperature T: rung 1 samples the
	// tempered posterior exp(-U/T) (PT's ladder multiplies it; 0 or 1:
	// the Bayes posterior; absent in runs older than it).
	Temperature float64 `json:"temperature,omitempty" yaml:"temperature,omitempty"`
	// Tempering is how a temperature enters the kernels: "noise" (the
	// injected noise and thermostat target scale with T, the gradient does
	// not; the default) or "gradient" (the gradient is divided by T at the
	// same step). Runs that do not record it used "gradient" (PT's hot
	// rungs) and resume with it.
	Tempering string `json:"tempering,omitempty" yaml:"tempering,omitempty"`

	Sampler string `json:"sampler" yaml:"sampler"` // one of SamplerNames: ptsghmc or a minibatch kernel of sampler.Kernels
	// ReplicaKernel is the kernel every rung of ptsghmc steps, a minibatch
	// kernel of the run's registry (Setup.Kernels); "" is sgnht, the
	// PT-SGHMC of the paper.
	ReplicaKernel string `json:"replica_kernel,omitempty" yaml:"replica_kernel,omitempty"`
	Replicas      int    `json:"replicas" yaml:"replicas"` // PT rungs (0 at creation: auto, see ChooseReplicas)
	// MaxReplicas caps --replicas auto (0: DefaultMaxReplicas);
	// ReplicasChoice records what auto chose and why.
	MaxReplicas    int     `json:"max_replicas,omitempty" yaml:"max_replicas,omitempty"`
	ReplicasChoice string  `json:"replicas_choice,omitempty" yaml:"replicas_choice,omitempty"`
	TMax           float64 `json:"tmax" yaml:"tmax"`                       // top temperature
	Ladder         string  `json:"ladder" yaml:"ladder"`                   // geometric, linear, adaptive or a list 1,1.5,...
	SwapTarget     float64 `json:"swap_target" yaml:"swap_target"`         // adaptive ladder with a free top: Barker swap acceptance per pair (0: ends fixed)
	Chains         int     `json:"chains" yaml:"chains"`                   // independent chains in the run (each its own PT ladder when sampler is ptsghmc)
	Chain          int     `json:"chain,omitempty" yaml:"chain,omitempty"` // which chain a chain directory holds (1-based; 0: the whole run)
	Steps          int     `json:"steps" yaml:"steps"`                     // total steps of the run
	BurnIn         int     `json:"burnin" yaml:"burnin"`                   // steps before the first kept sample
	Thin           int     `json:"thin" yaml:"thin"`                       // keep a sample every thin steps
	Batch          int     `json:"batch" yaml:"batch"`                     // minibatch size
	LR             float64 `json:"lr" yaml:"lr"`                           // per-example learning rate eps: step h = sqrt(eps/N)
	// Friction and Inertia are kernel settings (sampler.SGNHTParams,
	// SGHMCParams, SGDParams declare them, with their defaults and help),
	// fields here so that config.json keeps its keys' order.
	Friction float64 `json:"friction" yaml:"friction"`                     // momentum decay per step alpha: diffusion A = alpha/h
	Inertia  float64 `json:"thermostat_inertia" yaml:"thermostat_inertia"` // SGNHT thermostat inertia Q (smaller adapts faster; 0: 1/A^2)
	// SGDWarmup runs the first this many steps as momentum SGD (the sgd
	// kernel at the same lr and friction), then starts the sampler from
	// the point reached with fresh momentum: burn-in by optimisation, so
	// K chains start in K SGD solutions' basins (0: off). A run whose
	// Steps equal SGDWarmup is the same starts with sampling off: it
	// keeps its final state, the SGD solution, alone.
	SGDWarmup int `json:"sgd_warmup,omitempty" yaml:"sgd_warmup,omitempty"`
	// WarmupBatch is the minibatch size of the SGD warm-up's steps (0:
	// Batch), so that sampling can take a larger batch than the optimiser
	// (a smaller share of gradient noise at a low temperature) without
	// slowing the warm-up. The gradients' evaluators hold the larger of
	// the two.
	WarmupBatch int `json:"warmup_batch,omitempty" yaml:"warmup_batch,omitempty"`
	// Precondition is the mass matrix each chain (each PT rung)
	// estimates during burn-in and then freezes: "none" (unit mass, the
	// default), "rmsprop" (diagonal, from the squared minibatch
	// gradients), "variance" (diagonal, from the positions' variances),
	// "dense" (M^-1 the positions' covariance, for models of up to a few
	// hundred parameters) or "lowrank" (the variances with the top
	// MassRank eigen-directions of their correlation, for large ones);
	// see adapt.Preconditioner. Runs that do not record it ran with none.
	Precondition string `json:"precondition,omitempty" yaml:"precondition,omitempty"`
	// MassRank is the low-rank mass's k (precondition lowrank; 0: its
	// default, adapt.DefaultMassRank). Runs that do not record it had
	// no low-rank mass.
	MassRank int `json:"mass_rank,omitempty" yaml:"mass_rank,omitempty"`
	// MassScale is how the preconditioner's mass is normalised: "widest"
	// (the default, and what runs that do not record it ran with: the
	// widest coordinates keep unit mass, the others are slowed to their
	// pace) or "stiffest" (the stiffest keep unit mass, the others are
	// sped up to their pace; the learning rate keeps its unit-mass
	// meaning). See adapt.MassScale.
	MassScale string `json:"mass_scale,omitempty" yaml:"mass_scale,omitempty"`
	// NoiseCorrection estimates each chain's gradient noise per
	// coordinate at the end of burn-in and from then on injects less noise
	// where the gradient brings more (driver.NoiseCorrection), so that
	// no coordinate runs hot or cold under the one thermostat (false in
	// runs older than it).
	NoiseCorrection bool `json:"noise_correction,omitempty" yaml:"noise_correction,omitempty"`
	// NoiseCeiling, with NoiseCorrection, is the most gradient noise per
	// step, as a fraction of the injected variance, that the correction
	// leaves a coordinate at the end of burn-in: a noisier coordinate's
	// mass is raised to bring its noise down to it (adapt.Noise.Ceiling),
	// since the correction cannot take out more noise than it injects.
	// New runs default to 0.25; 0 raises no mass (and is what runs older
	// than it ran with).
	NoiseCeiling float64 `json:"noise_ceiling,omitempty" yaml:"noise_ceiling,omitempty"`
	// NoiseTrack, with NoiseCorrection, goes on estimating the gradient
	// noise after burn-in and corrects the injected noise at the end of
	// every window of the burn-in estimate's length (adapt.Noise.Track:
	// an adaptation during sampling, of the injected noise only). New
	// runs default to true; false freezes the correction at the end of
	// burn-in (what runs older than it ran with).
	NoiseTrack bool `json:"noise_track,omitempty" yaml:"noise_track,omitempty"`

	Cycle     int     `json:"cycle" yaml:"cycle"`           // cyclical step size: steps per cosine cycle (0: constant)
	CycleKeep float64 `json:"cycle_keep" yaml:"cycle_keep"` // with cycle: keep samples only in this last fraction of each cycle
	Exchange  int     `json:"exchange" yaml:"exchange"`     // steps between exchange rounds
	XBatch    int     `json:"xbatch" yaml:"xbatch"`         // first exchange batch
	Scheme    string  `json:"scheme" yaml:"scheme"`         // alternate or first
	Corr      string  `json:"correction" yaml:"correction"` // nnls or hermite
	XMargin   float64 `json:"xmargin" yaml:"xmargin"`       // decisive early exchange decisions (0: off)
	// XTolerance: an exchange test stops early once the full-data test's
	// chance of the other decision is at most this per look (0: off; absent,
	// so off, in runs older than it). See tempering.Exchanger.Tolerance.
	XTolerance float64 `json:"xtolerance,omitempty" yaml:"xtolerance,omitempty"`
	XTest      string  `json:"exchange_test" yaml:"exchange_test"` // barker (corrected minibatch Barker test) or resghmc (approximate)
	XF         float64 `json:"resghmc_f" yaml:"resghmc_f"`         // resghmc: correction divisor F (1: penalty method)
	DType      string  `json:"dtype" yaml:"dtype"`                 // float32 or float64
	Engine     string  `json:"engine" yaml:"engine"`               // plan, compiled or graph (see Config.RunEngine)
	// MLPKernels records what an MLP run's compiled graph computes with:
	// "plan", the arithmetic of the MLP's hand-written BLAS plan, bit for
	// bit (every MLP run made since the compiled graph learned it, issue
	// 41). Absent in older runs: an MLP run recorded then on the compiled
	// engine keeps the generic kernels it ran on (Config.RunEngine).
	MLPKernels string `json:"mlp_kernels,omitempty" yaml:"mlp_kernels,omitempty"`
	Seed       uint64 `json:"seed" yaml:"seed"`
	// SplitSeed seeds the training subset and the validation split (0: the
	// Seed), so runs of different seeds can share one split: the members
	// of a deep ensemble, scored together on its validation set.
	SplitSeed uint64 `json:"split_seed,omitempty" yaml:"split_seed,omitempty"`
	Workers   int    `json:"workers" yaml:"workers"` // replicas stepped at once (0: cores)
	// GradShards splits each minibatch gradient (not an MLP's on engine
	// plan) over this many Gorgonia graphs run in parallel
	// (autodiff.ShardedEvaluator). 0 at creation: the cores each rung gets
	// for a graph model, 1 for an MLP; the value used is recorded, so a
	// resume computes the same sums.
	GradShards int `json:"grad_shards,omitempty" yaml:"grad_shards,omitempty"`
	// Arithmetic is what the run's matrix products compute with (see
	// arithmetic.go): asked at creation as "pinned" (also when empty: the
	// same bits on every machine) or "native" (the BLAS library's own
	// kernel and threads), recorded by the run as the arithmetic's ID
	// ("pinned-v1", "native openblas 0.3.21 Cooperlake x2"). Empty in a
	// recorded run: made before the field, on the native BLAS.
	Arithmetic string `json:"arithmetic,omitempty" yaml:"arithmetic,omitempty"`
	// ArithmeticChanges lists the steps from which a resumed run continued
	// on other arithmetic than it had (train --allow-arithmetic-change).
	ArithmeticChanges []ArithmeticChange `json:"arithmetic_changes,omitempty" yaml:"arithmetic_changes,omitempty"`
	CkptEvery         int                `json:"checkpoint_every" yaml:"checkpoint_every"`
	LogEvery          int                `json:"log_every" yaml:"log_every"`

	// NoiseTarget, when positive, makes the run noise-aware: during burn-in
	// the step shrinks until the gradient noise's share of the momentum's
	// diffusion is at most this (0: off; see docs/posterior-checks.md).
	NoiseTarget float64 `json:"noise_target,omitempty" yaml:"noise_target,omitempty"`
	// Classes, when set, trains on these classes of the data only: their
	// examples, with label Classes[j] relabelled j, so the model has
	// len(Classes) outputs (eval scores the test images of the other
	// classes as out-of-distribution). Empty: every class.
	Classes []int `json:"classes,omitempty" yaml:"classes,omitempty"`
	// DataFingerprint identifies the training examples the run was created
	// on (set by the run, not by the user; absent in runs older than it).
	DataFingerprint *Fingerprint `json:"data_fingerprint,omitempty" yaml:"data_fingerprint,omitempty"`
	// KernelSettings holds the settings of kernels whose settings are not
	// fields above (sampler.Setting: the kernel's Params declare them), by
	// config-file key; config.json writes them as top-level keys after the
	// fields (kernelsettings.go). The built-in kernels' settings are
	// fields (friction, thermostat_inertia), so it is empty for them.
	KernelSettings map[string]float64 `json:"-" yaml:",inline"`
}

// DefaultConfig returns the defaults: the configuration `make run` trains.
//
// The default sampler is one SGNHT chain, chosen from the tempering verdict
// (README, Results): at equal wall-clock on Fashion-MNIST MLPs (784-100-10
// and 784-400-400-10, all 60,000 images) it had the best test NLL; exact PT
// with an adapted ladder did not communicate at these dimensions (no round
// trips, some pair near zero acceptance) and paid a full gradient per rung,
// and 4 pooled chains paid burn-in four times. PT-SGHMC is --sampler ptsghmc
// (4 rungs, geometric ladder T = 1..1.5; --ladder adaptive tunes it).
// The thermostat inertia is 0, SGNHT's default Q = 1/A^2: a thermostat that
// settles within a few momentum relaxation times (docs/posterior-checks.md;
// the former 0.01 relaxed over about 2,800 steps at these settings).
func DefaultConfig() Config {
	c := Config{
		Data: datasets.DefaultDir, Validation: 5000,
		Arch: "784-400-400-10", Activation: "relu", Prior: 0.03, PriorFanIn: true,
		Sampler: "sgnht", Replicas: 4, TMax: 1.5, Ladder: "geometric", Chains: 1,
		Steps: 60000, BurnIn: 10000, Thin: 250, Batch: 128,
		LR: 0.02, CycleKeep: 0.2, Exchange: 500, XBatch: 256, Scheme: "alternate", Corr: "nnls", XMargin: 50, XTolerance: 1e-8, XTest: "barker", XF: 1,
		DType: "float32", Engine: "plan", Arithmetic: "pinned", Seed: 1, CkptEvery: 1000, LogEvery: 200,
		Tempering: "noise", Precondition: "none", NoiseCeiling: 0.25, NoiseTrack: true,
	}
	// the kernels' own settings (friction 0.1, thermostat_inertia 0) at
	// their declared defaults; TestRunSettings checks the registry's
	// declarations, so this cannot fail
	_ = c.KernelDefaults(sampler.Kernels)
	return c
}

// rangeCheck is one of Validate's checks of a setting's range or of a
// combination of settings: ok, or what is wrong.
type rangeCheck struct {
	ok   bool
	what string
}

// rangeChecks returns Validate's checks of the settings' ranges and
// combinations, in the order they are reported (opt: the kernel is an
// optimiser).
func (c Config) rangeChecks(opt bool) []rangeCheck {
	return []rangeCheck{
		{c.Steps > 0, "steps must be positive"},
		{c.BurnIn >= 0 && c.BurnIn < c.Steps || opt, "burnin must be in [0, steps)"},
		{c.Thin > 0, "thin must be positive"},
		{c.Batch > 0, "batch must be positive"},
		{c.GradShards >= 0 && c.GradShards <= c.Batch, "grad_shards must be 0 (one per core) to batch"},
		{c.LR > 0 && !math.IsInf(c.LR, 0), "lr must be positive"},
		{c.Prior >= 0, "prior must be non-negative"},
		{c.PriorDF >= 0 && !math.IsInf(c.PriorDF, 0), "prior_df must be non-negative (0: Gaussian prior)"},
		{c.NullSpaceScale >= 0 && !math.IsInf(c.NullSpaceScale, 0), "null_space_scale must be non-negative and finite (0: off)"},
		{c.NullSpaceKeep >= 0 && c.NullSpaceKeep < 1, "null_space_keep must be in (0, 1) (0: 0.999)"},
		{c.NoiseCeiling >= 0 && c.NoiseCeiling <= 1, "noise_ceiling must be in [0, 1] (0: no mass raised)"},
		{c.NullSpaceKeep == 0 || c.NullSpaceScale > 0, "null_space_keep needs null_space_scale"},
		{c.NullSpaceSkip >= 0 && c.NullSpaceSkip < 1, "null_space_skip must be in (0, 1): the fraction of the training images' second moment the span keeps, e.g. 0.9999 (0: no skip branch)"},
		{c.NullSpaceSkip == 0 || c.NullSpaceScale > 0, "null_space_skip needs null_space_scale: the branch's prior is s times the layer's off the span (--null-space-prior S, e.g. 10)"},
		{c.NullSpaceSkip == 0 || c.Model != "", "null_space_skip needs a CNN (--model lenet or cnn3): an MLP's first layer already reads the image, --null-space-prior alone widens it off the span"},
		{c.Temperature >= 0 && !math.IsInf(c.Temperature, 0), "temperature must be positive (0: 1, the Bayes posterior)"},
		{c.Tempering == "" || c.Tempering == "noise" || c.Tempering == "gradient", "tempering must be noise or gradient"},
		{validPrecondition(c.Precondition), "precondition must be none, rmsprop, variance, dense or lowrank"},
		{validMassScale(c.MassScale), "mass_scale must be widest or stiffest"},
		{c.MassScaleValue() == adapt.MassScaleWidest || c.PreconditionValue() != adapt.PrecondNone, "mass_scale needs a preconditioner (precondition rmsprop, variance, dense or lowrank)"},
		{c.MassRank >= 0 && c.MassRank <= sampler.MaxMassRank, fmt.Sprintf("mass_rank must be 1 to %d (0: %d)", sampler.MaxMassRank, adapt.DefaultMassRank)},
		{c.MassRank == 0 || c.PreconditionValue() == adapt.PrecondLowRank, "mass_rank needs precondition lowrank"},
		{!c.NoiseCorrection || c.Sampler == PTSGHMC || c.Sampler == "sgnht" || c.Sampler == "sghmc", "noise_correction needs a sampler with friction (ptsghmc, sgnht or sghmc)"},
		{!c.NoiseCorrection || c.NoiseTarget == 0 && c.Cycle == 0 && c.SGDWarmup == 0, "noise_correction needs a fixed step and kernel (no noise_target, cycle or sgd_warmup)"},
		{!c.NoiseCorrection || c.BurnIn >= 10, "noise_correction needs a burn-in of at least 10 steps to estimate the noise"},
		{!c.NoiseCorrection || c.NoiseCeiling == 0 || (c.PreconditionValue() != adapt.PrecondDense && c.PreconditionValue() != adapt.PrecondLowRank), "noise_ceiling raises a diagonal mass: with precondition dense or lowrank set noise_ceiling 0 (--noise-ceiling 0)"},
		{c.PosteriorTemperature() == 1 || !opt, "temperature does not apply to sgd, an optimiser (it samples nothing)"},
		{c.NoiseTarget >= 0 && c.NoiseTarget < 1, "noise_target must be in [0, 1) (0: off)"},
		{c.Start == "" || c.Start == StartPrior || c.Start == StartModel, "start must be prior or model"},
		{c.SGDWarmup >= 0, "sgd_warmup must be non-negative"},
		{c.WarmupBatch >= 0, "warmup_batch must be non-negative (0: batch)"},
		{c.WarmupBatch == 0 || c.SGDWarmup > 0, "warmup_batch needs sgd_warmup (it is the warm-up's minibatch size)"},
		{c.GradShards <= c.WarmupBatch || c.WarmupBatch == 0, "grad_shards must be 0 (one per core) to warmup_batch"},
		{c.PreconditionValue() == adapt.PrecondNone || !opt && c.SGDWarmup == 0, "precondition needs a sampler without sgd_warmup (sgd steps have no mass to estimate)"},
		{c.SGDWarmup == 0 || !opt, "sgd_warmup applies to samplers (sgd is already an optimiser)"},
		{c.SGDWarmup == 0 || c.BurnIn >= c.SGDWarmup || c.Steps == c.SGDWarmup, "burnin must be at least sgd_warmup (samples are kept after the warm-up)"},
		{c.SGDWarmup == 0 || c.Sampler != PTSGHMC || c.Replicas == 1, "sgd_warmup needs a single-chain sampler (one replica)"},
		{c.Cycle == 0 || c.Cycle >= 2, "cycle must be 0 (constant step size) or at least 2 steps"},
		{c.Cycle == 0 || c.CycleKeep > 0 && c.CycleKeep <= 1, "cycle_keep must be in (0, 1]"},
		{c.Replicas >= 1, "replicas must be at least 1 (auto is resolved by ChooseReplicas before a run is created)"},
		{c.MaxReplicas == 0 || c.MaxReplicas >= tempering.MinAutoRungs, "max_replicas must be 0 (16) or at least 3"},
		{c.Exchange >= 0, "exchange must be non-negative"},
		{c.XBatch >= 2, "xbatch must be at least 2"},
		{c.XMargin >= 0, "xmargin must be non-negative"},
		{c.XTolerance >= 0 && c.XTolerance < 1, "xtolerance must be in [0, 1)"},
		{c.Workers >= 0, fmt.Sprintf("workers must be 0 (one per core) or more, got %d", c.Workers)},
		{c.CkptEvery > 0, "checkpoint_every must be positive"},
		{c.LogEvery > 0, "log_every must be positive"},
		{c.Validation >= 0, "validation must be non-negative"},
		{c.TrainSize >= 0, "train_size must be non-negative"},
		{c.DType == "float32" || c.DType == "float64", "dtype must be float32 or float64"},
		{c.Engine == "plan" || c.Engine == "compiled" || c.Engine == "graph", "engine must be plan, compiled or graph"},
		{c.MLPKernels == "" || c.MLPKernels == MLPKernelsPlan, "mlp_kernels must be empty or plan"},
		{validArithmetic(c.Arithmetic), "arithmetic must be pinned or native"},
		{c.Corr == "nnls" || c.Corr == "hermite", "correction must be nnls or hermite"},
		{c.Scheme == "alternate" || c.Scheme == "first", "scheme must be alternate or first"},
		{c.Chains >= 1, "chains must be at least 1"},
		{c.Chain >= 0 && c.Chain <= c.Chains, "chain must be in [0, chains]"},
		{c.XTest != XTestResghmc || c.XF > 0, "resghmc_f must be positive"},
		{c.SwapTarget == 0 || c.Ladder == "adaptive", "swap_target needs ladder adaptive"},
	}
}

// validateKernel checks the settings of the config's kernel in the
// registry ks, and of the SGD warm-up's sgd kernel when there is one, by
// the kernels' own Params.
func (c Config) validateKernel(ks []sampler.KernelInfo) error {
	_, p, err := c.KernelParams(ks)
	if err == nil {
		err = p.Validate()
	}
	if err == nil && c.SGDWarmup > 0 {
		if p, err = c.WarmupParams(); err == nil {
			err = p.Validate()
		}
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// LoadConfigFile reads a JSON (.json) or YAML (.yaml, .yml) file over c:
// fields the file names replace c's, others stay. Unknown fields are errors.
func LoadConfigFile(path string, c *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := ParseConfig(b, strings.ToLower(filepath.Ext(path)), c); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// ParseConfig reads a JSON (ext ".json") or YAML (".yaml", ".yml") config
// over c, refusing unknown fields and fields of the wrong type.
func ParseConfig(b []byte, ext string, c *Config) error {
	switch ext {
	case ".json", ".yaml", ".yml":
		if err := checkKeys(b, ext); err != nil {
			return err
		}
	}
	switch ext {
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		return dec.Decode(c)
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		return dec.Decode(c)
	}
	return fmt.Errorf("unknown extension %q: expected .json, .yaml or .yml", ext)
}

// Validate checks the configuration against the registries of s, naming
// the first bad field: a named model must be in s.Models, a kernel in
// s.Kernels and the exchange test in s.Exchanges.
func (c Config) Validate(s Setup) error {
	if err := s.Check(); err != nil {
		return err
	}
	if err := c.validateModel(s.Models); err != nil {
		return err
	}
	if _, err := nn.ParseActivation(c.Activation); err != nil {
		return fmt.Errorf("activation: %w", err)
	}
	if c.ReplicaKernel != "" && c.Sampler != PTSGHMC {
		return fmt.Errorf("config: replica_kernel %q needs sampler %s (sampler %s is its own kernel)", c.ReplicaKernel, PTSGHMC, c.Sampler)
	}
	if _, err := c.Kernel(s.Kernels); err != nil {
		return err
	}
	if _, ok := LookupExchange(s.Exchanges, c.XTest); !ok {
		return fmt.Errorf("config: exchange_test %q: expected one of %s", c.XTest, strings.Join(ExchangeNames(s.Exchanges), ", "))
	}
	for _, ch := range c.rangeChecks(c.Optimiser(s.Kernels)) {
		if !ch.ok {
			return fmt.Errorf("config: %s", ch.what)
		}
	}
	if err := c.validateKernel(s.Kernels); err != nil {
		return err
	}
	if len(c.Classes) > 0 {
		if _, err := ParseClasses(FormatClasses(c.Classes)); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	if c.Sampler == PTSGHMC && c.Replicas > 1 {
		if _, err := c.Temps(); err != nil {
			return err
		}
	}
	if c.Ladder == "adaptive" && c.Sampler == PTSGHMC && c.Replicas > 1 {
		if c.Replicas < 3 {
			return fmt.Errorf("config: ladder adaptive needs at least 3 replicas (2 have no interior rung to place)")
		}
		if c.Scheme != "alternate" {
			return fmt.Errorf("config: ladder adaptive needs scheme alternate (the barrier adds up adjacent pairs)")
		}
		if c.Exchange == 0 || c.BurnIn < 2*c.Exchange {
			return fmt.Errorf("config: ladder adaptive tunes during burn-in in rounds of 2, 4, 8, ... exchange rounds: burnin %d must be at least 2 x exchange (%d)", c.BurnIn, c.Exchange)
		}
		if c.SwapTarget != 0 && c.XTest != "" && c.XTest != XTestBarker {
			return fmt.Errorf("config: swap_target is a Barker test's acceptance; with exchange_test %s keep the ladder's ends fixed (swap_target 0)", c.XTest)
		}
		if c.SwapTarget != 0 {
			if _, err := tempering.BarkerToMetropolisRejection(c.SwapTarget); err != nil {
				return fmt.Errorf("config: swap_target: %w", err)
			}
		}
	}
	return nil
}

// PosteriorTemperature returns the temperature T of the posterior the run
// samples, exp(-U/T): Temperature, or 1 when it is 0.
func (c Config) PosteriorTemperature() float64 {
	if c.Temperature == 0 {
		return 1
	}
	return c.Temperature
}

// validPrecondition reports whether name is a preconditioner ("" is none).
func validPrecondition(name string) bool {
	_, err := adapt.ParsePreconditioner(name)
	return err == nil
}

// validMassScale reports whether name is a mass scale ("" is widest).
func validMassScale(name string) bool {
	_, err := adapt.ParseMassScale(name)
	return err == nil
}

// MassScaleValue returns the run's mass scale (widest for runs that do
// not record one; an invalid name, which Validate refuses, is widest).
func (c Config) MassScaleValue() adapt.MassScale {
	s, _ := adapt.ParseMassScale(c.MassScale)
	return s
}

// CorrectsNoise reports whether a run of c on n training examples
// corrects its gradient noise (driver.NoiseCorrection): with
// noise_correction, unless its gradients are exact (a batch of all n
// examples) and its correction has a ceiling or tracks (this version's;
// runs recorded without either corrected full batches too). With exact
// gradients there is no gradient noise: what the correction would
// estimate is the integration error, and its ceiling would slow the stiff
// coordinates for it.
func (c Config) CorrectsNoise(n int) bool {
	if !c.NoiseCorrection {
		return false
	}
	return c.Batch < n || c.NoiseCeiling == 0 && !c.NoiseTrack
}

// PreconditionValue returns the run's preconditioner (none for runs that
// do not record one; an invalid name, which Validate refuses, is none).
func (c Config) PreconditionValue() adapt.Preconditioner {
	p, _ := adapt.ParsePreconditioner(c.Precondition)
	return p
}

// TemperingValue returns how temperatures enter the kernels: the recorded
// Tempering, or sampler.TemperGradient for runs that predate the setting.
func (c Config) TemperingValue() sampler.Tempering {
	t, err := sampler.ParseTempering(c.Tempering)
	if err != nil {
		return sampler.TemperGradient
	}
	return t
}

// TemperatureLabel returns "" for the Bayes posterior and "tempered
// posterior, T = 0.1" otherwise: every output of a tempered run says so.
func (c Config) TemperatureLabel() string {
	if c.PosteriorTemperature() == 1 {
		return ""
	}
	return fmt.Sprintf("tempered posterior, T = %g", c.PosteriorTemperature())
}

// ChainSeed returns the seed of this directory's chain: the run's seed for
// chain 1 (and a single-chain run), and a value mixed from the run's seed
// and the chain number otherwise, so a chain's streams depend on nothing
// else.
func (c Config) ChainSeed() uint64 {
	if c.Chain <= 1 {
		return c.Seed
	}
	z := c.Seed + uint64(c.Chain)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Spec returns the network spec the config describes for data with the
// given number of features and classes.
func (c Config) Spec(features, classes int) (nn.Spec, error) {
	sizes, err := nn.ParseArch(c.Arch)
	if err != nil {
		return nn.Spec{}, err
	}
	if sizes[0] != features {
		return nn.Spec{}, fmt.Errorf("arch %s takes %d inputs, data has %d features", c.Arch, sizes[0], features)
	}
	if sizes[len(sizes)-1] != classes {
		return nn.Spec{}, fmt.Errorf("arch %s has %d outputs, data has %d classes", c.Arch, sizes[len(sizes)-1], classes)
	}
	act, _ := nn.ParseActivation(c.Activation)
	spec := nn.Spec{Sizes: sizes, Activation: act, Likelihood: nn.Categorical, PriorDF: c.PriorDF}
	for l := 0; l < len(sizes)-1; l++ {
		p := c.Prior
		if c.PriorFanIn {
			p *= float64(sizes[l])
		}
		spec.PriorPrecision = append(spec.PriorPrecision, p)
	}
	return spec, spec.Validate()
}

// Temps returns the (initial) temperature ladder; an adaptive ladder
// starts geometric.
func (c Config) Temps() ([]float64, error) {
	if c.Sampler != PTSGHMC || c.Replicas == 1 {
		return []float64{1}, nil
	}
	if c.Ladder == "adaptive" {
		return tempering.GeometricLadder(c.Replicas, c.TMax)
	}
	return tempering.Ladder(c.Ladder, c.Replicas, c.TMax)
}

// checkLadderLength refuses a listed ladder whose length is not the
// replicas': the run would step as many rungs as the list has and record
// another count. It is checked for new runs (CheckSettings); a run that
// recorded such a pair before the check still resumes with its list.
func (c Config) checkLadderLength() error {
	if c.Sampler != PTSGHMC || c.Replicas <= 1 {
		return nil
	}
	switch c.Ladder {
	case "geometric", "linear", "adaptive", "":
		return nil
	}
	t, err := tempering.Ladder(c.Ladder, c.Replicas, c.TMax)
	if err == nil && len(t) != c.Replicas {
		return fmt.Errorf("config: ladder %q lists %d temperatures for %d replicas: give --replicas %d, or list %d temperatures", c.Ladder, len(t), c.Replicas, len(t), c.Replicas)
	}
	return err
}

// DTypeValue returns the evaluator dtype.
func (c Config) DTypeValue() autodiff.DType { return autodiff.DType(c.DType) }

// StepBatch returns the minibatch size of the step after step steps (steps
// 1..SGDWarmup are the warm-up's, of WarmupBatch when set; the others of
// Batch), at most n, the number of training examples.
func (c Config) StepBatch(steps, n int) int {
	if c.WarmupBatch > 0 && steps < c.SGDWarmup {
		return min(c.WarmupBatch, n)
	}
	return min(c.Batch, n)
}

// EvalBatch returns the largest minibatch the run's gradients take: the
// size their evaluators are built for.
func (c Config) EvalBatch() int { return max(c.Batch, c.WarmupBatch) }
