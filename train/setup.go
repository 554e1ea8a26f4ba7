package train

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/nullspace"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// prepared is what creating or resuming a run computes once and shares
// among its chains: the training and validation data, the model, and the
// kernel with its schedule. An nn.Model is a description (its layout and
// a builder of graphs) that every evaluator builds its own graph from, and
// a kernel and its schedule are values (the schedule changes only the
// state it is given), so the rungs and the chains of a run share one.
type prepared struct {
	tr, val *datasets.Dataset
	// raw is the training data as read (tr before a null-space prior maps
	// its inputs, tr itself without one): what the run's fingerprint is of.
	raw   *datasets.Dataset
	null  *nullspace.Prior // the fitted null-space prior, or nil
	skip  *nullspace.Prior // the skip branch's image prior (Config.NullSpaceSkip), or nil
	model nn.Model
	key   string                // runspec.ModelKey of the config the model was built from
	reg   runspec.ModelRegistry // the registry it was built from
	setup runspec.Setup         // the registries of kernels and exchange rules
	sched *runSchedule          // the config's kernel at its learning rate, and its schedule
	skey  string                // scheduleKey of the config they were built from
}

// prepare loads (or splits) cfg's data and builds its model, checked
// against the data: the one model build of a run.
func prepare(s runspec.Setup, cfg runspec.Config) (*prepared, error) {
	var tr, val *datasets.Dataset
	var err error
	if s.Train != nil {
		tr, val, err = runspec.SplitData(cfg, s.Train)
	} else {
		tr, val, err = runspec.LoadData(cfg)
	}
	if err != nil {
		return nil, err
	}
	reg := s.Models
	model, err := cfg.BuildModel(reg)
	if err != nil {
		return nil, err
	}
	if err := cfg.ModelFits(model, tr); err != nil {
		return nil, fmt.Errorf("data %s: %w", cfg.Data, err)
	}
	k, err := kernelFrom(cfg, s.Kernels, tr.N)
	if err != nil {
		return nil, err
	}
	sched, err := newSchedule(cfg, k, tr.N)
	if err != nil {
		return nil, err
	}
	p := &prepared{tr: tr, val: val, raw: tr, model: model, key: runspec.ModelKey(cfg), reg: reg, setup: s,
		sched: sched, skey: scheduleKey(cfg, s.Kernels)}
	if cfg.NullSpaceScale > 0 || cfg.NullSpaceSkip > 0 {
		// The fits' products (gonum's, through the process's BLAS) in the
		// pinned arithmetic whatever the run's (build installs that): their
		// digests are recorded, and a prior must not depend on what the
		// process ran before (train's processes start pinned).
		if err := autodiff.UseArithmetic(autodiff.ArithmeticPinned); err != nil {
			return nil, err
		}
	}
	if cfg.NullSpaceScale > 0 {
		if err := p.fitNullSpace(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.NullSpaceSkip > 0 {
		if err := p.fitSkip(cfg); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// scheduleFor returns the kernel and schedule of cfg: the prepared ones
// when cfg's settings of them are those they were built from, otherwise
// cfg's own, built.
func (p *prepared) scheduleFor(cfg runspec.Config) (*runSchedule, error) {
	if scheduleKey(cfg, p.setup.Kernels) == p.skey {
		return p.sched, nil
	}
	k, err := kernelFrom(cfg, p.setup.Kernels, p.tr.N)
	if err != nil {
		return nil, err
	}
	return newSchedule(cfg, k, p.tr.N)
}

// fitNullSpace fits cfg's null-space prior to the training inputs
// (nullspace.FitModel). For a dense first layer it maps copies of the
// training and validation inputs (nullspace.Prior.Inputs): the chains
// sample the first layer w' of the mapped inputs. For a ConvNet it
// rebuilds the model with its first kernel K' A (nullspace.Prior.Model):
// the chains sample K' on the raw images. Either way the samples the run
// writes are folded back (Run.appendSample). A run that recorded another
// prior's digest is refused, naming both.
func (p *prepared) fitNullSpace(cfg runspec.Config) error {
	keep := cfg.NullSpaceKeep
	if keep == 0 {
		keep = nullspace.DefaultKeep
	}
	// the model's check first: the fit is the costly part
	if err := nullspace.CheckModel(p.model, p.tr.D); err != nil {
		return err
	}
	prior, err := nullspace.FitModel(p.model, p.tr, keep, cfg.NullSpaceScale)
	if err != nil {
		return fmt.Errorf("data %s: %w", cfg.Data, err)
	}
	if d := prior.Digest(); cfg.NullSpaceSHA256 != "" && d != cfg.NullSpaceSHA256 {
		return p.priorMismatch(cfg, "null-space prior", cfg.NullSpaceSHA256, d)
	}
	if prior.Patch != nil {
		if p.model, err = prior.Model(p.model); err != nil {
			return err
		}
		p.null = prior
		return nil
	}
	mapped := func(d *datasets.Dataset) (*datasets.Dataset, error) {
		if d == nil {
			return nil, nil
		}
		c := *d
		c.X = append([]float32(nil), d.X...)
		return &c, prior.Inputs(&c)
	}
	if p.tr, err = mapped(p.tr); err != nil {
		return err
	}
	if p.val, err = mapped(p.val); err != nil {
		return err
	}
	p.null = prior
	return nil
}

// fitSkip fits the skip branch's image prior to the training images
// (nullspace.Fit at cfg's NullSpaceSkip, scale NullSpaceScale) and rebuilds
// the model with the branch mapped (nullspace.Prior.SkipModel): the chains
// sample W' and the samples are written as W = s V V^T W'
// (Run.appendSample). The images are the raw ones: a ConvNet's first
// prior maps its kernel, not them. A run that recorded another prior's
// digest is refused, naming both.
func (p *prepared) fitSkip(cfg runspec.Config) error {
	if err := nullspace.CheckSkip(p.model, p.tr.D); err != nil { // before the fit, the costly part
		return err
	}
	prior, err := nullspace.Fit(p.raw, cfg.NullSpaceSkip, cfg.NullSpaceScale)
	if err != nil {
		return fmt.Errorf("data %s: null-space skip: %w", cfg.Data, err)
	}
	if prior.K >= prior.D {
		return fmt.Errorf("data %s: null-space skip: at keep %v the training images span all %d directions and the branch would be zero: lower --null-space-skip (e.g. 0.999)", cfg.Data, cfg.NullSpaceSkip, prior.D)
	}
	if d := prior.Digest(); cfg.NullSpaceSkipSHA256 != "" && d != cfg.NullSpaceSkipSHA256 {
		return p.priorMismatch(cfg, "null-space skip", cfg.NullSpaceSkipSHA256, d)
	}
	if p.model, err = prior.SkipModel(p.model); err != nil {
		return err
	}
	p.skip = prior
	return nil
}

// priorMismatch is the refusal of a run whose recorded prior digest (what:
// "null-space prior" or "null-space skip") is not the fit's now: the
// training data changed, or, when their fingerprint is the run's, the fit
// did (another version of gonum's eigensolver).
func (p *prepared) priorMismatch(cfg runspec.Config, what, recorded, now string) error {
	if fp := cfg.DataFingerprint; fp != nil && *fp == runspec.DataFingerprint(p.raw) {
		return fmt.Errorf("%s: the run recorded sha256 %s, its training data (unchanged: %s) now give %s: the fit's arithmetic differs (another version of gonum's eigensolver?); refusing to mix samples of different priors", what, recorded, fp, now)
	}
	return fmt.Errorf("%s: the run recorded sha256 %s, the training data now give %s (not the run's data?): refusing to mix samples of different priors", what, recorded, now)
}

// mapped returns m as the run's chains sample it: its first kernel mapped
// under a convolution's null-space prior, its skip branch under the
// branch's prior (m itself without either).
func (p *prepared) mapped(m nn.Model) (nn.Model, error) {
	var err error
	if p.null != nil {
		if m, err = p.null.Model(m); err != nil { // a dense layer's prior maps the inputs: m itself
			return m, err
		}
	}
	if p.skip != nil {
		return p.skip.SkipModel(m)
	}
	return m, nil
}

// modelFor returns the model of cfg: the prepared one when cfg describes
// the same model (the settings runspec.ModelKey lists) and, if cfg records
// parameter shapes, the model has them; otherwise cfg's own, built (a chain
// whose checkpoint describes another model than the run's config).
func (p *prepared) modelFor(cfg runspec.Config) (nn.Model, error) {
	if runspec.ModelKey(cfg) != p.key {
		m, err := cfg.NNModel(p.reg, p.tr)
		if err != nil {
			return m, err
		}
		return p.mapped(m) // the run's priors map every model it samples
	}
	if cfg.Shapes != "" && cfg.Shapes != p.model.Layout.String() {
		return p.model, fmt.Errorf("model %s: the run recorded parameters %s, but the model now has %s: refusing to mix samples of different models", cfg.ModelName(), cfg.Shapes, p.model.Layout)
	}
	return p.model, nil
}

// NewDriver returns the driver of a run of cfg on training data of n
// examples, with the registries of s: the kernel (at the configured
// learning rate) and the run's schedule (runSchedule: each step's step
// size, posterior temperature and, under an SGD warm-up, kernel), the
// ladder, with more than one rung the exchange rule and its pairing, and
// the phases: the ladder's adaptation, the health watch, the
// preconditioner, the noise correction and the window's restart at the
// end of burn-in. Runs build their driver here, and so does ptsghmc
// bench, so both step the same sampler.
func NewDriver(s runspec.Setup, cfg runspec.Config, n int) (*driver.Driver, error) {
	k, err := kernelFrom(cfg, s.Kernels, n)
	if err != nil {
		return nil, err
	}
	sched, err := newSchedule(cfg, k, n)
	if err != nil {
		return nil, err
	}
	return newDriver(s, cfg, sched)
}

// newDriver is NewDriver with the run's kernel and schedule built.
func newDriver(s runspec.Setup, cfg runspec.Config, sched *runSchedule) (*driver.Driver, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	temps, err := cfg.Temps()
	if err != nil {
		return nil, err
	}
	n := sched.n
	pt := &tempering.PT{Temps: temps, Record: tempering.StandardRecorders()} // every figure the metrics and reports read
	var tune []driver.Phase
	if len(temps) > 1 {
		pt.Every = cfg.Exchange
		pt.Scheme = tempering.Scheme(cfg.Scheme)
		rule, ok := runspec.LookupExchange(s.Exchanges, cfg.XTest)
		if !ok {
			return nil, fmt.Errorf("exchange_test %q: expected one of %s", cfg.XTest, strings.Join(runspec.ExchangeNames(s.Exchanges), ", "))
		}
		if pt.Exchange, err = rule.New(cfg); err != nil {
			return nil, fmt.Errorf("exchange_test %s: %w", rule.Name, err)
		}
		if cfg.Ladder == "adaptive" {
			tune = append(tune, &driver.LadderTuning{Adapt: &tempering.LadderAdaptation{SwapTarget: cfg.SwapTarget}})
		}
	}
	return &driver.Driver{Kernel: sched.kernel, Schedule: sched, PT: pt, Workers: cfg.Workers, BurnIn: cfg.BurnIn,
		Phases: append(tune, runPhases(cfg, n)...)}, nil
}

// runPhases returns the burn-in phases of a run of cfg on n examples
// after the ladder's tuning, in their order: the health watch (with the
// noise-aware step), the preconditioner, the noise correction and the
// window's restart at the end of burn-in.
func runPhases(cfg runspec.Config, n int) []driver.Phase {
	ps := []driver.Phase{&driver.StepHealth{Window: healthWindow(cfg), NoiseTarget: cfg.NoiseTarget, ExactGradients: cfg.Batch >= n}}
	if p, sc := cfg.PreconditionValue(), cfg.MassScaleValue(); p != adapt.PrecondNone || sc != adapt.MassScaleWidest {
		ps = append(ps, &driver.Mass{Precondition: p, Scale: sc, Rank: cfg.MassRank})
	}
	if cfg.CorrectsNoise(n) {
		ps = append(ps, &driver.NoiseCorrection{Precondition: cfg.PreconditionValue(), Ceiling: cfg.NoiseCeiling, Track: cfg.NoiseTrack})
	}
	return append(ps, driver.WindowRestart{})
}
