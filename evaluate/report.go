package evaluate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Report is the evaluation of one or more runs' pooled samples on a test set.
type Report struct {
	Runs []string `json:"runs"`
	// Temperature is the posterior temperature T the runs sampled,
	// exp(-U/T) (omitted for T = 1; runs of different T are not pooled).
	Temperature float64   `json:"temperature,omitempty"`
	Ensemble    Metrics   `json:"ensemble"`           // all pooled samples
	Single      Metrics   `json:"single"`             // the last sample of the first run
	Baseline    *Metrics  `json:"baseline,omitempty"` // the sgd run given as baseline
	Curve       []CurvePt `json:"curve"`              // ensemble figures against the number of samples
	Dropped     int       `json:"dropped_records"`    // torn records at the ends of samples files (a crash mid-write), dropped
	Skipped     int       `json:"skipped_records"`    // corrupt records inside samples files, skipped (EvalOptions.SkipCorrupt)
	RHat        float64   `json:"rhat,omitempty"`     // split R-hat of the chains' held-out log-likelihood traces (several chains; else 0)
	ESS         float64   `json:"ess,omitempty"`      // bulk ESS of the same
	// HeldOut[c][s] is the mean log-likelihood of kept sample s of chain c
	// on the evaluation data: the trace R-hat and ESS are computed from.
	HeldOut   [][]float64           `json:"heldout_loglik"`
	Tempering []*diagnose.Tempering `json:"tempering,omitempty"` // per chain, for PT runs (from its checkpoint)
	// Chains is the state of every chain of the runs given, pooled or not
	// (a chain is pooled when it has samples at its last checkpoint; only
	// those samples and metrics are read).
	Chains    []rundir.ChainStatus `json:"chains"`
	Reliab    Reliab               `json:"reliability"`
	Traces    []RunTraces          `json:"-"`
	TestCount int                  `json:"test_examples"`
	// Split names the examples scored when they are not the test images
	// ("validation": the runs' held-out examples); empty for the test set.
	Split string `json:"split,omitempty"`
	// Window is EvalOptions.Window: the steps whose samples were kept. It
	// is embedded only so that its JSON keys, from_step and to_step (each
	// omitted when 0), stay in the report's own object; read it as
	// rep.Window (its promoted fields and methods are the Window's).
	rundir.Window

	// Health is each chain's dynamics verdict (from its checkpoint).
	Health []*diagnose.HealthReport `json:"health,omitempty"`

	// Classes are the classes the runs were trained on, in the order of
	// their outputs (Config.Classes; nil: all of the data's).
	Classes []int `json:"classes,omitempty"`
	// EnsembleInfo and BaselineInfo say how many networks and samples the
	// ensemble and the baseline average, and the wall-clock their runs took.
	EnsembleInfo PredictorInfo  `json:"ensemble_info"`
	BaselineInfo *PredictorInfo `json:"baseline_info,omitempty"`
	// BaselineReliab is the baseline's reliability diagram.
	BaselineReliab *Reliab `json:"baseline_reliability,omitempty"`
	// OOD is out-of-distribution detection: every set, predictor and score
	// (EvalOptions.OOD, BuiltinOOD; a run on a subset of classes adds its
	// held-out classes by itself).
	OOD []OODResult `json:"ood,omitempty"`
	// Selective is selective prediction on the test set by every predictor
	// and score.
	Selective []SelectiveResult `json:"selective,omitempty"`
	// Shift is accuracy, NLL, ECE and Brier under dataset shift
	// (EvalOptions.Shifts), per kind, level and predictor.
	Shift []ShiftResult `json:"shift,omitempty"`
	// PerClass is the accuracy and ECE of each class, for the ensemble and
	// the baseline.
	PerClass []ClassResult `json:"per_class,omitempty"`
	// Paired is, with a baseline, each figure of the ensemble minus the
	// baseline's with its paired bootstrap interval over the test examples
	// (and the OOD sets' images): accuracy, NLL, ECE and Brier, then the
	// AUROC of every score both have on every OOD set.
	Paired []PairedDiff `json:"paired,omitempty"`
}

// BaselineLabel names the baseline's row of the metrics table: "sgd
// baseline" or "sgd deep ensemble" for sgd runs, else "baseline" (never
// one of the labels scripts/check_readme.sh matches).
func (r *Report) BaselineLabel() string {
	if r.BaselineInfo != nil && r.BaselineInfo.Sampler == "sgd" {
		if r.BaselineInfo.Networks > 1 {
			return "sgd deep ensemble"
		}
		return "sgd baseline"
	}
	return "baseline"
}

// CurvePt is the ensemble's accuracy and NLL after its first Samples samples.
type CurvePt struct {
	Samples  int     `json:"samples"`
	Accuracy float64 `json:"accuracy"`
	NLL      float64 `json:"nll"`
}

// Reliab is a reliability diagram's data.
type Reliab struct {
	Count []int     `json:"count"`
	Conf  []float64 `json:"confidence"`
	Acc   []float64 `json:"accuracy"`
}

// RunTraces are a run's metrics traces.
type RunTraces struct {
	Dir   string
	Lines []rundir.MetricsLine
}

// runTempering returns the tempering figures of a PT run from the ladder
// and statistics of its last checkpoint, st (nil for single-chain samplers
// or a run without a checkpoint; a checkpoint older than window statistics
// has empty windows, rundir.DecodeCheckpoint).
func runTempering(dir string, st *tempering.PTState, cfg runspec.Config) (*diagnose.Tempering, error) {
	temps, err := cfg.Temps()
	if err != nil || len(temps) < 2 || st == nil {
		return nil, err
	}
	tp := diagnose.TemperingOf(st, cfg) // nil for statistics that do not match the ladder
	if tp != nil {
		tp.Run = dir
	}
	return tp, nil
}

// RunModel returns the config and model of a run directory for data,
// rebuilt from the config (an MLP's widths or the name of a model of
// s.Models)
// and checked against the parameter shapes the run recorded in its config
// and its samples header (if dir has a samples file; a run of several
// chains keeps them in its chain directories): samples are never scored with
// another model.
func RunModel(s runspec.Setup, dir string, data *datasets.Dataset) (runspec.Config, nn.Model, error) {
	cfg, err := rundir.ReadRunConfig(dir)
	if err != nil {
		return cfg, nn.Model{}, err
	}
	m, err := cfg.NNModel(s.Models, data)
	if err != nil {
		return cfg, m, fmt.Errorf("run %s: %w", dir, err)
	}
	path := filepath.Join(dir, rundir.SamplesFile)
	h, err := rundir.ReadSampleHeaderFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, m, nil
	}
	if err != nil {
		return cfg, m, fmt.Errorf("run %s: %w", dir, err)
	}
	if err := rundir.CheckSamplesModel(path, h, m); err != nil {
		return cfg, m, fmt.Errorf("run %s: %w", dir, err)
	}
	return cfg, m, nil
}

// Evaluate pools the samples of runs, made with the registries of s
// (runspec.DefaultSetup for runs of the process's models and kernels), and
// scores them on test; baseline, if not empty, is an sgd run scored
// alongside.
//
// A run directory of several chains stands for all of them. With more than
// one chain, R-hat and ESS are those of the held-out log-likelihood of each
// kept sample on test (so runs without a validation split get them too).
func Evaluate(s runspec.Setup, runs []string, baseline string, test *datasets.Dataset) (*Report, error) {
	return EvaluateWith(runs, baseline, test, EvalOptions{Setup: s})
}

// EvalOptions are the options of EvaluateWith.
type EvalOptions struct {
	// Setup gives the registries the runs were made with: a named model is
	// rebuilt from Setup.Models, and whether a baseline is an optimiser
	// comes from Setup.Kernels (runspec.DefaultSetup; a Setup without its
	// registries is refused).
	Setup runspec.Setup
	// SkipCorrupt skips sample records that fail their checksum inside a
	// samples file (counted in Report.Skipped) instead of stopping with an
	// error wrapping ErrCorruptSamples.
	SkipCorrupt bool
	// Window is which samples are kept, as eval --from-step, --to-step and
	// --thin (the zero Window: every sample). A later Window.From is a longer
	// burn-in chosen after the run (for instance the first half of every
	// chain, the usual convention for MCMC output): earlier samples are
	// read and ignored, and a run with none left is an error. An earlier
	// Window.To scores the run as if it had stopped there, so one long run
	// gives the figures of every shorter budget; reading stops at the first
	// later sample. Window.Thin keeps every Thin-th sample of a chain in
	// the window: a smaller posterior, scored that many times faster. The
	// health and tempering reports still describe the whole run (they come
	// from its checkpoint).
	Window rundir.Window

	// OOD are sets of images scored as out-of-distribution against the
	// test set (Report.OOD), each of the test images' pixel count (and a
	// CNN's image shape, when Data.Image gives it). A run trained
	// on a subset of classes (Config.Classes) adds the test images of the
	// other classes as OODHeldOut by itself.
	OOD []OODSet
	// BuiltinOOD adds the sets of BuiltinOOD, made from the test images.
	BuiltinOOD bool
	// Shifts are the dataset shifts to score (Report.Shift): ShiftRotate,
	// ShiftNoise.
	Shifts []string
	// Baselines are further baseline runs, pooled with the baseline
	// argument of EvaluateWith into one predictor (Report.BaselineInfo says
	// how many networks and samples it averages).
	Baselines []string
	// Seed seeds the streams of the built-in sets and the noise shift (0: 1).
	Seed uint64
	// Progress, when not nil, is called after each weight sample is scored
	// (the runs' samples, then the baselines'), from the goroutine that
	// called EvaluateWith: eval prints its progress line from it.
	Progress func(EvalProgress)
}

// EvalProgress is EvaluateWith's progress after a weight sample
// (EvalOptions.Progress).
type EvalProgress struct {
	// Baseline is set while the baselines' samples are scored.
	Baseline bool
	// Done counts the samples scored so far, the runs' and then the
	// baselines'; Total is how many there will be, counted before the
	// pass from the samples files' intact records (rundir.CountInWindow; 0
	// when it could not be).
	Done, Total int
	// Images is the number of images each sample is scored on: the test
	// set's and those of the sets scored beside it. PassImages are the
	// images of the next sample scored so far: a compiled CNN's pass
	// reports them as it goes (Progress is called from within the pass,
	// still on EvaluateWith's goroutine), other passes do not.
	Images, PassImages int
	// MACs is the multiply-adds of one image's forward pass (0: not
	// known): 2 MACs Images Done over the time taken is the GFLOP rate.
	MACs int64
}

// evalSet is a data set scored beside the test set: an out-of-distribution
// set or a shifted copy of the test set.
type evalSet struct {
	name   string
	data   *datasets.Dataset
	shift  *shiftLevel // nil for an OOD set
	ens    *Ensemble   // the runs' pooled samples
	single []float64   // the first run's last sample
	base   *Ensemble   // the baselines
}

// EvaluateWith is Evaluate with options.
func EvaluateWith(runs []string, baseline string, test *datasets.Dataset, opt EvalOptions) (*Report, error) {
	if err := opt.Setup.Check(); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("evaluate: no runs")
	}
	pool, status, err := rundir.PoolDirs(runs)
	if err != nil {
		return nil, err
	}
	runs = runs[:0:0]
	for _, s := range pool {
		runs = append(runs, s.Dir)
	}
	var baselines []string
	if baseline != "" {
		baselines = append(baselines, baseline)
	}
	baselines = append(baselines, opt.Baselines...)
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	first, err := rundir.ReadRunConfig(runs[0])
	if err != nil {
		return nil, err
	}
	test, extras, err := evalSets(runs, baselines, first, test, opt)
	if err != nil {
		return nil, err
	}
	p := &pooling{rep: &Report{Runs: runs, TestCount: test.N, Chains: status, Window: opt.Window, Classes: first.Classes},
		test: test, opt: opt, extras: extras}
	if opt.Progress != nil {
		p.progress = &EvalProgress{Total: expectedSamples(pool, baselines, opt), Images: test.N}
		for _, x := range extras {
			p.progress.Images += x.data.N
		}
	}
	for ri, s := range pool {
		if err := p.addRun(ri, s); err != nil {
			return nil, err
		}
	}
	if err := p.summarise(); err != nil {
		return nil, err
	}
	rep, ens := p.rep, p.ens
	var base *Ensemble
	if len(baselines) > 0 {
		if base, err = scoreBaselines(rep, baselines, test, extras, opt, p.progress); err != nil {
			return nil, err
		}
		m := base.Metrics()
		rep.Baseline = &m
		r, err := Reliability(base.Probs(), test.Labels, test.Classes)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		rep.BaselineReliab = &r
	}
	uncertaintyTables(rep, test, ens, p.single, base, extras, opt.Seed)
	return rep, nil
}

// evalSets checks that the runs and baselines trained on the classes of
// the first run (its config first) and returns the test set to score them
// on and the sets scored beside it. A run on a subset of classes is
// scored on the test images of those classes; the others are its near
// out-of-distribution set. Then come the OOD sets of opt and the shifted
// copies of the test set.
func evalSets(runs, baselines []string, first runspec.Config, test *datasets.Dataset, opt EvalOptions) (*datasets.Dataset, []*evalSet, error) {
	for _, d := range append(runs[1:len(runs):len(runs)], baselines...) {
		c, err := rundir.ReadRunConfig(d)
		if err != nil {
			return nil, nil, err
		}
		if err := runspec.CheckSameClasses(runs[0], first.Classes, d, c.Classes); err != nil {
			return nil, nil, err
		}
	}
	var extras []*evalSet
	// A test set of as many classes as the run's is taken as selected
	// already (the runs' validation split, eval --split validation).
	if len(first.Classes) > 0 && test.Classes > len(first.Classes) {
		var held *datasets.Dataset
		var err error
		if test, held, err = runspec.SelectClasses(test, first.Classes); err != nil {
			return nil, nil, fmt.Errorf("run %s: test set: %w", runs[0], err)
		}
		if held != nil {
			extras = append(extras, &evalSet{name: OODHeldOut, data: held})
		}
	}
	sets := opt.OOD
	if opt.BuiltinOOD {
		sets = append(sets[:len(sets):len(sets)], BuiltinOOD(test, opt.Seed)...)
	}
	for _, s := range sets {
		d, err := asOOD(s, test.D, test.Classes)
		if err != nil {
			return nil, nil, err
		}
		extras = append(extras, &evalSet{name: s.Name, data: d})
	}
	levels, err := shiftLevels(opt.Shifts, test, opt.Seed)
	if err != nil {
		return nil, nil, err
	}
	for i := range levels {
		extras = append(extras, &evalSet{name: levels[i].name(), data: levels[i].data, shift: &levels[i]})
	}
	return test, extras, nil
}

// pooling is EvaluateWith's pass over the pooled runs: the report it
// fills, the ensemble of every kept sample (on the test set and on each
// extra set), and the first run's model, temperature and last sample.
type pooling struct {
	rep        *Report
	test       *datasets.Dataset
	opt        EvalOptions
	extras     []*evalSet
	ens        *Ensemble
	firstModel nn.Model
	firstT     float64
	single     []float64     // the first run's last sample's probabilities on test
	progress   *EvalProgress // reported after each sample (nil: opt.Progress is)
}

// expectedSamples estimates how many samples EvaluateWith will score: those
// of the pooled chains in opt.Window, and the baselines' (an optimiser's
// final weights, a sampler's every sample). It returns 0 if a file cannot
// be read for the estimate (the pass itself then reports the error).
func expectedSamples(pool []rundir.ChainStatus, baselines []string, opt EvalOptions) int {
	total := 0
	for _, s := range pool {
		n, err := rundir.CountInWindow(s, opt.Window)
		if err != nil {
			return 0
		}
		total += n
	}
	dirs, err := rundir.RunDirs(baselines)
	if err != nil {
		return 0
	}
	for _, dir := range dirs {
		cfg, err := rundir.ReadRunConfig(dir)
		if err != nil {
			return 0
		}
		if cfg.Optimiser(opt.Setup.Kernels) {
			total++
			continue
		}
		n, err := rundir.CountInWindow(rundir.ChainStatus{Dir: dir, Samples: -1}, rundir.Window{})
		if err != nil {
			return 0
		}
		total += n
	}
	return total
}

// report reports one more sample scored, by the runs or (baseline) the
// baselines, through opt.Progress.
func (pr *EvalProgress) report(opt EvalOptions, e *Ensemble, baseline bool) {
	if pr == nil {
		return
	}
	pr.Done++
	pr.PassImages = 0
	pr.Baseline = baseline
	pr.MACs = e.forwardMACs()
	opt.Progress(*pr)
}

// partial returns the function a pooled pass reports the images it has
// done with, which reports them through opt.Progress (nil when pr is).
func (pr *EvalProgress) partial(opt EvalOptions, e *Ensemble, baseline bool) func(done int) {
	if pr == nil {
		return nil
	}
	return func(done int) {
		pr.PassImages = done
		pr.Baseline = baseline
		pr.MACs = e.forwardMACs()
		opt.Progress(*pr)
	}
}

// addRun pools run ri of status s: its model checked against the first
// run's, its samples added to the ensembles, its held-out trace, metrics,
// tempering figures and health added to the report.
func (p *pooling) addRun(ri int, s rundir.ChainStatus) error {
	dir, rep := s.Dir, p.rep
	cfg, model, err := RunModel(p.opt.Setup, dir, p.test)
	if err != nil {
		return err
	}
	if err := checkExtraImages(model, p.extras); err != nil {
		return fmt.Errorf("run %s: %w", dir, err)
	}
	if err := p.pool(ri, dir, cfg, model); err != nil {
		return err
	}
	trace, err := p.scan(ri, s)
	if err != nil {
		return err
	}
	rep.HeldOut = append(rep.HeldOut, trace)
	lines, err := rundir.ReadMetricsUpTo(dir, s.MetricsBytes)
	if err != nil {
		return err
	}
	rep.Traces = append(rep.Traces, RunTraces{Dir: dir, Lines: lines})
	tp, err := runTempering(dir, s.Stats, cfg)
	if err != nil {
		return err
	}
	if tp != nil {
		rep.Tempering = append(rep.Tempering, tp)
	}
	hr, err := diagnose.RunHealth(dir, s.Stats, cfg)
	if err != nil {
		return err
	}
	if hr != nil {
		rep.Health = append(rep.Health, hr)
	}
	return nil
}

// pool checks that run ri (in dir, of config cfg and model) can be pooled
// with the first: the same posterior temperature and model. The first
// run's model makes the ensembles.
func (p *pooling) pool(ri int, dir string, cfg runspec.Config, model nn.Model) error {
	runs := p.rep.Runs
	if t := cfg.PosteriorTemperature(); ri == 0 {
		p.firstT = t
		if t != 1 {
			p.rep.Temperature = t
		}
	} else if t != p.firstT {
		return fmt.Errorf("run %s sampled at temperature %g, run %s at %g: cannot pool posteriors of different temperatures", dir, t, runs[0], p.firstT)
	}
	if ri > 0 {
		if rundir.SamplesModel(model) != rundir.SamplesModel(p.firstModel) {
			return fmt.Errorf("run %s has model %s (%s), run %s has %s (%s): cannot pool", dir, model.Name, model.Layout, runs[0], p.firstModel.Name, p.firstModel.Layout)
		}
		return nil
	}
	p.firstModel = model
	var err error
	if p.ens, err = NewModelEnsembleOn(cfg.RunEngine(model), model, p.test); err != nil {
		return err
	}
	for _, x := range p.extras {
		x.ens = p.ens.sibling(x.data)
	}
	return nil
}

// scan adds the checkpointed samples of run ri (status s) in opt.Window to
// the ensembles and the report's curve, and returns the run's
// held-out trace: the mean log-likelihood on test of each kept sample.
func (p *pooling) scan(ri int, s rundir.ChainStatus) ([]float64, error) {
	rep, ens, opt := p.rep, p.ens, p.opt
	var trace []float64
	spath := filepath.Join(s.Dir, rundir.SamplesFile)
	all := []*Ensemble{ens}
	for _, x := range p.extras {
		all = append(all, x.ens)
	}
	cs, err := rundir.ScanChain(s, opt.Window, opt.SkipCorrupt, func(step int, theta []float64) error {
		if err := rundir.CheckFinite(spath, step, theta, ens.Model.Layout); err != nil {
			return err
		}
		if err := addAll(theta, p.progress.partial(opt, ens, false), all); err != nil {
			return fmt.Errorf("%s: %w", spath, err)
		}
		if ri == 0 {
			for _, x := range p.extras {
				x.single = append(x.single[:0], x.ens.Last...)
			}
		}
		trace = append(trace, ens.lastMeanLogLik())
		if ri == 0 {
			p.single = append(p.single[:0], ens.Last...)
		}
		m := ens.Metrics()
		rep.Curve = append(rep.Curve, CurvePt{Samples: ens.Count, Accuracy: m.Accuracy, NLL: m.NLL})
		p.progress.report(opt, ens, false)
		return nil
	})
	rep.Dropped += cs.Dropped
	rep.Skipped += cs.Skipped
	if err != nil {
		return nil, err
	}
	return trace, nil
}

// lastMeanLogLik returns the mean over e's examples of the last sample's
// log-likelihood of their labels, from its log-softmax (LastLogLik): not
// floored where a label's probability underflows.
func (e *Ensemble) lastMeanLogLik() float64 {
	ll := 0.0
	for i := range e.Data.Labels {
		ll += e.LastLogLik[i]
	}
	return ll / float64(e.Data.N)
}

// summarise fills the report's figures of the pooled ensemble: its
// metrics, the first run's last sample's, the reliability diagram, R-hat
// and ESS across runs, and what the predictor averages.
func (p *pooling) summarise() error {
	rep, ens, test := p.rep, p.ens, p.test
	rep.Ensemble = ens.Metrics()
	var err error
	if rep.Single, err = Score(p.single, test.Labels, test.Classes); err != nil {
		return fmt.Errorf("single sample: %w", err)
	}
	rep.Single.Samples = 1
	if rep.Reliab, err = Reliability(ens.Probs(), test.Labels, test.Classes); err != nil {
		return err
	}
	if len(rep.Runs) > 1 {
		rep.RHat, rep.ESS = diagnose.SplitRHat(rep.HeldOut), diagnose.BulkESS(rep.HeldOut)
		if math.IsNaN(rep.RHat) {
			rep.RHat, rep.ESS = 0, 0 // chains too short
		}
	}
	rep.EnsembleInfo, err = predictorInfo(rep.Runs, ens.Count)
	return err
}

// sibling returns an empty ensemble of e's model on another data set of
// the same shape and classes, sharing e's predictor (used one at a time).
func (e *Ensemble) sibling(data *datasets.Dataset) *Ensemble {
	k := data.Classes
	return &Ensemble{Data: data, Model: e.Model, Spec: e.Spec, Sum: make([]float64, data.N*k), Ent: make([]float64, data.N),
		Last: make([]float64, data.N*k), LastLogLik: make([]float64, data.N), LogLik: make([]float64, data.N), pred: e.pred, pool: e.pool, threads: e.threads}
}

// scoreBaselines pools the baseline runs (each a run directory or a run of
// several chains) into one ensemble on test and on each extra set, and
// records what it averages in rep.BaselineInfo. An sgd run contributes its
// final weights; a sampler's run every kept sample.
func scoreBaselines(rep *Report, baselines []string, test *datasets.Dataset, extras []*evalSet, opt EvalOptions, progress *EvalProgress) (*Ensemble, error) {
	dirs, err := rundir.RunDirs(baselines)
	if err != nil {
		return nil, err
	}
	var be *Ensemble
	var first nn.Model
	for bi, dir := range dirs {
		cfg, model, err := RunModel(opt.Setup, dir, test)
		if err != nil {
			return nil, err
		}
		if err := checkExtraImages(model, extras); err != nil {
			return nil, fmt.Errorf("baseline %s: %w", dir, err)
		}
		if bi == 0 {
			first = model
			if be, err = NewModelEnsembleOn(cfg.RunEngine(model), model, test); err != nil {
				return nil, err
			}
			for _, x := range extras {
				x.base = be.sibling(x.data)
			}
		} else if rundir.SamplesModel(model) != rundir.SamplesModel(first) {
			return nil, fmt.Errorf("baseline %s has model %s (%s), baseline %s has %s (%s): cannot pool", dir, model.Name, model.Layout, dirs[0], first.Name, first.Layout)
		}
		all := []*Ensemble{be}
		for _, x := range extras {
			all = append(all, x.base)
		}
		add := func(theta []float64) error {
			if err := addAll(theta, progress.partial(opt, be, true), all); err != nil {
				return err
			}
			progress.report(opt, be, true)
			return nil
		}
		final := cfg.Optimiser(opt.Setup.Kernels)
		var last []float64
		n := 0
		spath := filepath.Join(dir, rundir.SamplesFile)
		bs, err := rundir.ScanSamples(spath, opt.SkipCorrupt, func(step int, theta []float64) error {
			if err := rundir.CheckFinite(spath, step, theta, model.Layout); err != nil {
				return err
			}
			n++
			if final { // an optimiser's prediction is its final weights alone
				last = append(last[:0], theta...)
				return nil
			}
			return add(theta)
		})
		if err != nil {
			return nil, err
		}
		rep.Skipped += len(bs.Corrupt)
		if n == 0 {
			return nil, fmt.Errorf("baseline %s has no saved weights (unfinished?)", dir)
		}
		if final {
			if err := add(last); err != nil {
				return nil, fmt.Errorf("%s: %w", spath, err)
			}
		}
	}
	info, err := predictorInfo(dirs, be.Count)
	if err != nil {
		return nil, err
	}
	info.Runs = baselines
	rep.BaselineInfo = &info
	return be, nil
}

// uncertaintyTables fills rep's OOD, selective-prediction, shift and
// per-class tables from the predictors' probabilities, and with a baseline
// the paired comparison (its resamples seeded by seed).
func uncertaintyTables(rep *Report, test *datasets.Dataset, ens *Ensemble, single []float64, base *Ensemble, extras []*evalSet, seed uint64) {
	k := test.Classes
	preds := []predictorScores{
		{Name: PredEnsemble, Probs: ens.Probs(), Ens: ens, Test: ens.Scores()},
		{Name: PredSingle, Probs: single, Test: scoresOf(single, nil, k)},
	}
	if base != nil {
		preds = append(preds, predictorScores{Name: PredBaseline, Probs: base.Probs(), Ens: base, Test: base.Scores()})
	}
	var oodNames []string
	for _, x := range extras {
		if x.shift != nil {
			continue
		}
		oodNames = append(oodNames, x.name)
		preds[0].Others = append(preds[0].Others, x.ens.Scores())
		preds[1].Others = append(preds[1].Others, scoresOf(x.single, nil, k))
		if base != nil {
			preds[2].Others = append(preds[2].Others, x.base.Scores())
		}
	}
	rep.OOD = oodResults(oodNames, preds)
	if base != nil {
		rep.Paired = pairedDiffs(preds[0], preds[2], rep.Ensemble, *rep.Baseline, test.Labels, k, oodNames, seed)
	}
	rep.Selective = selectiveResults(test.Labels, k, preds)
	for _, x := range extras {
		if x.shift == nil {
			continue
		}
		rep.Shift = append(rep.Shift, shiftResult(x.shift, PredEnsemble, x.ens.Metrics()))
		if base != nil {
			rep.Shift = append(rep.Shift, shiftResult(x.shift, PredBaseline, x.base.Metrics()))
		}
	}
	rep.PerClass = perClass(PredEnsemble, preds[0].Probs, test.Labels, k, rep.Classes)
	if base != nil {
		rep.PerClass = append(rep.PerClass, perClass(PredBaseline, preds[2].Probs, test.Labels, k, rep.Classes)...)
	}
}
