package predictive

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// Options are the options of LoadWith.
type Options struct {
	// Window is which samples are kept, as eval --from-step, --to-step
	// and --thin (the zero Window: every sample).
	Window rundir.Window
	// SkipCorrupt skips sample records that fail their checksum inside a
	// samples file (counted in Posterior.Skipped) instead of refusing the
	// run with an error wrapping rundir.ErrCorruptSamples.
	SkipCorrupt bool
	// AllowWriting reads runs a train still writes, up to their last
	// checkpoint, as eval does. Without it a run directory (or chain
	// directory) whose lock is held is refused with an error wrapping
	// rundir.ErrLocked: a server should not load a posterior that is
	// still growing.
	AllowWriting bool
}

// Posterior is the pooled samples of one or more runs, held in memory in
// their stored precision, and the ensemble that evaluates them on new
// images. Its methods are safe for concurrent use; ensemble passes run
// one at a time.
type Posterior struct {
	// Runs are the chain directories pooled, in order.
	Runs []string
	// Config is the first run's configuration.
	Config runspec.Config
	// Model is the runs' model (every run has the same).
	Model nn.Model
	// Temperature is the posterior temperature T the runs sampled
	// exp(-U/T) at (1: the Bayes posterior).
	Temperature float64
	// Steps are the steps the pooled samples were taken at, in order.
	Steps []int
	// Chains are the states of every chain of the runs, pooled or not.
	Chains []rundir.ChainStatus
	// Dropped counts torn records at the ends of samples files (a crash
	// mid-write) that were dropped, Skipped the corrupt records skipped
	// (Options.SkipCorrupt).
	Dropped, Skipped int
	// Window is Options.Window: the steps whose samples were kept.
	Window rundir.Window

	mu      sync.Mutex
	base    *evaluate.Ensemble // on a one-image template; Predict runs its On(images)
	weights []weights          // the samples, in their stored precision
	abstain *Abstention
}

// Load is LoadWith with no options: every sample of runs, refusing runs a
// train still writes and corrupt records.
func Load(runs ...string) (*Posterior, error) {
	return LoadWith(runspec.DefaultSetup(), Options{}, runs...)
}

// LoadWith reads the pooled samples of runs (each a run directory; a run
// of several chains stands for those of its chains with samples at their
// last checkpoint, as eval pools them) into memory. It refuses a run whose
// checkpoint fails its checksum, whose samples hold another model, or (without
// Options.AllowWriting) that a train still writes, with an error naming the
// directory; runs of different models or temperatures are not pooled. A
// run's model is rebuilt from the registry of setup (runspec.DefaultSetup
// for the process's models).
func LoadWith(setup runspec.Setup, opt Options, runs ...string) (*Posterior, error) {
	if err := setup.Check(); err != nil {
		return nil, fmt.Errorf("predictive: %w", err)
	}
	if len(runs) == 0 {
		return nil, errors.New("predictive: no runs")
	}
	pool, all, err := rundir.PoolDirs(runs)
	if err != nil {
		return nil, err
	}
	if err := checkReadable(runs, all, opt.AllowWriting); err != nil {
		return nil, err
	}
	p := &Posterior{Chains: all, Window: opt.Window}
	for _, s := range pool {
		p.Runs = append(p.Runs, s.Dir)
	}
	if p.Config, err = rundir.ReadRunConfig(p.Runs[0]); err != nil {
		return nil, err
	}
	if p.Model, err = p.Config.BuildModel(setup.Models); err != nil {
		return nil, fmt.Errorf("run %s: %w", p.Runs[0], err)
	}
	if !p.Model.Logits {
		return nil, fmt.Errorf("run %s: model %s reports no class logits: nothing to predict", p.Runs[0], p.Model.Name)
	}
	p.Temperature = p.Config.PosteriorTemperature()
	template := &datasets.Dataset{N: 1, D: p.Model.Inputs, X: make([]float32, p.Model.Inputs), Classes: p.Model.Outputs, Labels: []int{0}}
	for i, s := range pool {
		if err := p.readRun(setup, i, s, template, opt); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkReadable refuses chains whose checkpoint is unreadable (corrupt:
// checkpoints are written atomically, so never torn) and, unless
// allowWriting, directories a writer holds.
func checkReadable(runs []string, all []rundir.ChainStatus, allowWriting bool) error {
	for _, s := range all {
		if s.Note != "" {
			return fmt.Errorf("run %s is corrupt: %s", s.Dir, s.Note)
		}
	}
	if allowWriting {
		return nil
	}
	dirs := append([]string(nil), runs...)
	for _, s := range all {
		dirs = append(dirs, s.Dir)
	}
	for _, d := range dirs {
		if err := rundir.CheckNoWriter(d); err != nil {
			return fmt.Errorf("refusing a posterior still being written: %w", err)
		}
	}
	return nil
}

// readRun reads the samples of pooled chain i into p, checking its model
// and temperature against the first run's.
func (p *Posterior) readRun(setup runspec.Setup, i int, s rundir.ChainStatus, template *datasets.Dataset, opt Options) error {
	cfg, model, err := evaluate.RunModel(setup, s.Dir, template)
	if err != nil {
		return err
	}
	if i == 0 {
		if p.base, err = evaluate.NewModelEnsembleOn(cfg.RunEngine(model), model, template); err != nil {
			return err
		}
		p.Model = model
	} else if rundir.SamplesModel(model) != rundir.SamplesModel(p.Model) {
		return fmt.Errorf("run %s has model %s (%s), run %s has %s (%s): cannot pool", s.Dir, model.Name, model.Layout, p.Runs[0], p.Model.Name, p.Model.Layout)
	} else if t := cfg.PosteriorTemperature(); t != p.Temperature {
		return fmt.Errorf("run %s sampled at temperature %g, run %s at %g: cannot pool posteriors of different temperatures", s.Dir, t, p.Runs[0], p.Temperature)
	} else if err := runspec.CheckSameClasses(p.Runs[0], p.Config.Classes, s.Dir, cfg.Classes); err != nil {
		return err
	}
	path := filepath.Join(s.Dir, rundir.SamplesFile)
	h, err := rundir.ReadSampleHeaderFile(path)
	if err != nil {
		return err
	}
	f32 := h.DType == "float32"
	cs, err := rundir.ScanChain(s, opt.Window, opt.SkipCorrupt, func(step int, theta []float64) error {
		if err := rundir.CheckFinite(path, step, theta, model.Layout); err != nil {
			return err
		}
		p.keep(step, theta, f32)
		return nil
	})
	p.Dropped += cs.Dropped
	p.Skipped += cs.Skipped
	return err
}

// weights is one sample's parameters in the precision its file stored.
type weights struct {
	f32 []float32
	f64 []float64
}

// keep stores a sample, as float32 when its file held float32 (exactly:
// the values were float32).
func (p *Posterior) keep(step int, theta []float64, f32 bool) {
	p.Steps = append(p.Steps, step)
	if f32 {
		w := make([]float32, len(theta))
		for i, v := range theta {
			w[i] = float32(v)
		}
		p.weights = append(p.weights, weights{f32: w})
		return
	}
	p.weights = append(p.weights, weights{f64: append([]float64(nil), theta...)})
}

// Samples returns the number of pooled samples.
func (p *Posterior) Samples() int { return len(p.Steps) }

// Label returns the class label of output c: the data's label when the
// runs were trained on a subset of classes (runspec.Config.Classes), else c.
func (p *Posterior) Label(c int) int {
	if c < len(p.Config.Classes) {
		return p.Config.Classes[c]
	}
	return c
}
