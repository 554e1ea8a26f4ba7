package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// File names inside a run directory.
const (
	ConfigFile  = "config.json"
	SamplesFile = "samples"
	MetricsFile = "metrics.jsonl"
)

// ErrInterrupted is returned by Run.Train when its context is cancelled; the
// run was checkpointed first and can be resumed.
var ErrInterrupted = errors.New("interrupted; checkpoint written")

// Status is what a progress display shows after each step.
type Status struct {
	Step, Target int
	LogLik       float64   // rung-1 minibatch mean log-likelihood per example (at the last log step)
	SwapRate     []float64 // per pair acceptance so far
	Samples      int
	Logged       bool // a metrics line was written at this step
	// Warning, when not empty, is a health window's verdict that the
	// dynamics are leaving their regime (see Run.Health).
	Warning string
}

// MetricsLine is one line of metrics.jsonl. It holds no wall-clock times, so
// an interrupted and resumed run writes the same file as an uninterrupted one.
type MetricsLine struct {
	Step       int       `json:"step"`
	U          float64   `json:"u"`           // rung-1 minibatch potential
	LogLik     float64   `json:"loglik"`      // rung-1 minibatch mean log-likelihood per example
	ValLogLik  float64   `json:"val_loglik"`  // rung-1 mean log-likelihood on the validation set
	ValAcc     float64   `json:"val_acc"`     // rung-1 validation accuracy
	SwapRate   []float64 `json:"swap_rate"`   // per pair acceptance so far
	RoundTrips int       `json:"round_trips"` // replica round trips so far
	Xi         []float64 `json:"xi"`          // per rung thermostat
	Kinetic    []float64 `json:"kinetic"`     // per rung p'p/D
	Grown      int       `json:"grown"`       // exchanges that grew their batch
	Exact      int       `json:"exact"`       // exchanges on the whole data set
	Early      int       `json:"early"`       // exchanges decided early (Margin rule)
	Samples    int       `json:"samples"`
	// PT runs only: the ladder, the index process (Walker[r] is the label of
	// the replica at rung r) and the tempering figures of the window (after
	// burn-in; during burn-in, the current tuning round): see Tempering.
	Temps            []float64 `json:"temps,omitempty"`
	Walker           []int     `json:"walker,omitempty"`
	SwapAcceptance   []float64 `json:"swap_acceptance,omitempty"`
	Barrier          float64   `json:"barrier,omitempty"`
	LocalBarrier     []float64 `json:"local_barrier,omitempty"`
	RecommendedRungs int       `json:"recommended_rungs,omitempty"`
	WindowRoundTrips int       `json:"round_trips_window,omitempty"`
	// Each rung's dynamics: the last health window (see HealthMetrics).
	HealthMetrics
}

// Run is a sampling run of a Bayesian model, tied to its directory.
type Run struct {
	Dir   string
	Cfg   Config
	Model nn.Model
	Spec  nn.Spec           // the model's spec when it is an MLP (Model.MLP)
	Data  *datasets.Dataset // training data (validation split removed)
	Val   *datasets.Dataset

	pt      *sampler.PT
	state   *sampler.PTState
	pots    []*autodiff.Potential
	valEval autodiff.Evaluator
	samples *SampleWriter
	metrics *os.File
	mbytes  int64
	last    MetricsLine
	warned  []warnedAt // per rung: the last health window warned about
}

// loadData reads the training data named by cfg and splits off the
// validation set, deterministically from the seed.
func loadData(cfg Config) (train, val *datasets.Dataset, err error) {
	tr, _, err := datasets.LoadMNIST(cfg.Data)
	if err != nil {
		return nil, nil, err
	}
	return splitData(cfg, tr)
}

func splitData(cfg Config, tr *datasets.Dataset) (train, val *datasets.Dataset, err error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	if cfg.TrainSize > 0 && cfg.TrainSize+cfg.Validation < tr.N {
		idx := rng.Perm(tr.N)[:cfg.TrainSize+cfg.Validation]
		tr = tr.Subset(idx)
	}
	if cfg.Validation == 0 {
		return tr, nil, nil
	}
	if cfg.Validation >= tr.N {
		return nil, nil, fmt.Errorf("validation %d leaves no training data of %d examples", cfg.Validation, tr.N)
	}
	return tr.Split(cfg.Validation, rng)
}

// New creates a run directory and initialises a run from cfg. With
// overwrite false an existing run in dir is an error.
func New(dir string, cfg Config, overwrite bool) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkFree(dir, overwrite); err != nil {
		return nil, err
	}
	tr, val, err := loadData(cfg) // before touching dir: bad data leaves no empty run behind
	if err != nil {
		return nil, err
	}
	if _, err := cfg.NNModel(tr.D, tr.Classes); err != nil {
		return nil, fmt.Errorf("data %s: %w", cfg.Data, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if err := clearRun(dir); err != nil {
		return nil, err
	}
	return newRun(dir, cfg, tr, val)
}

// checkFree reports an error when dir already holds a run (of one chain or
// several) and overwrite is false.
func checkFree(dir string, overwrite bool) error {
	if overwrite {
		return nil
	}
	chains, _ := filepath.Glob(filepath.Join(dir, "chain-*", checkpointName)) // any chain, as array tasks start in any order
	for _, f := range append([]string{filepath.Join(dir, checkpointName)}, chains...) {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("run directory %s already holds a run: resume it with --resume, or pass --overwrite", dir)
		}
	}
	return nil
}

// clearRun removes the files and chain directories of a run in dir.
func clearRun(dir string) error {
	for _, f := range []string{checkpointName, checkpointName + ".prev", checkpointName + ".tmp", SamplesFile, MetricsFile} {
		os.Remove(filepath.Join(dir, f))
	}
	chains, _ := filepath.Glob(filepath.Join(dir, "chain-*"))
	for _, c := range chains {
		if err := os.RemoveAll(c); err != nil {
			return fmt.Errorf("overwrite %s: %w", dir, err)
		}
	}
	return nil
}

// NewFromData is New with the data given (for tests and embedding).
func NewFromData(dir string, cfg Config, train *datasets.Dataset) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	tr, val, err := splitData(cfg, train)
	if err != nil {
		return nil, err
	}
	return newRun(dir, cfg, tr, val)
}

// recordIdentity returns cfg with what a run records of its identity: the
// fingerprint of its training data and its model's parameter shapes. Every
// path that writes a run's config (one chain, the chains of one process, a
// chain task) takes it from here, so their config.json files agree.
func recordIdentity(cfg Config, tr *datasets.Dataset) (Config, error) {
	model, err := cfg.NNModel(tr.D, tr.Classes)
	if err != nil {
		return cfg, fmt.Errorf("data %s: %w", cfg.Data, err)
	}
	fp := DataFingerprint(tr)
	cfg.DataFingerprint, cfg.Shapes = &fp, model.Layout.String()
	if cfg.GradShards == 0 && usesGraph(cfg, model) {
		cfg.GradShards = autoShards(cfg)
	}
	return cfg, nil
}

// usesGraph reports whether the run's gradients run on Gorgonia's graph
// (every model but an MLP on the BLAS plan).
func usesGraph(cfg Config, model nn.Model) bool {
	return model.MLP == nil || autodiff.Engine(cfg.Engine) == autodiff.EngineGraph
}

// autoShards returns how many graphs one gradient is split over when the
// config leaves it to the run: the cores each rung gets when every chain of
// the process steps its rungs in parallel (at least 1, at most 4: smaller
// shards gain little, docs/models.md).
func autoShards(cfg Config) int {
	cores := runtime.GOMAXPROCS(0)
	rungs := max(cfg.Replicas, 1)
	if cfg.Sampler != "ptsghmc" {
		rungs = 1
	}
	if cfg.Workers > 0 {
		rungs = min(rungs, cfg.Workers)
	}
	chains := max(cfg.Chains, 1)
	if cfg.Chain > 0 { // one chain of a job array: its own process
		chains = 1
	}
	return min(max(cores/(rungs*chains), 1), 4, cfg.Batch)
}

func newRun(dir string, cfg Config, tr, val *datasets.Dataset) (*Run, error) {
	cfg, err := recordIdentity(cfg, tr)
	if err != nil {
		return nil, err
	}
	r, err := build(dir, cfg, tr, val)
	if err != nil {
		return nil, err
	}
	if err := writeConfig(dir, r.Cfg); err != nil {
		return nil, err
	}
	theta := make([]float64, r.Model.NumParams())
	r.Model.Layout.Init(theta, rand.New(rand.NewPCG(cfg.chainSeed(), 0x1417)))
	if r.state, err = r.pt.Init([][]float64{theta}, cfg.chainSeed()); err != nil {
		return nil, err
	}
	if err := r.makeBatches(nil); err != nil {
		return nil, err
	}
	if r.samples, err = CreateSamples(filepath.Join(dir, SamplesFile), SampleHeader{Arch: samplesModel(r.Model), Params: r.Model.NumParams(), DType: "float32"}); err != nil {
		return nil, err
	}
	if r.metrics, err = os.Create(filepath.Join(dir, MetricsFile)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := r.checkpoint(); err != nil {
		return nil, err
	}
	return r, nil
}

// build sets up everything but the sampler state.
func build(dir string, cfg Config, tr, val *datasets.Dataset) (*Run, error) {
	model, err := cfg.NNModel(tr.D, tr.Classes)
	if err != nil {
		return nil, err
	}
	temps, err := cfg.Temps()
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, Cfg: cfg, Model: model, Data: tr, Val: val}
	if model.MLP != nil {
		r.Spec = *model.MLP
	}
	kernel, err := cfg.kernel(tr.N, cfg.stepScale(1))
	if err != nil {
		return nil, err
	}
	r.pt = &sampler.PT{Kernel: kernel, Temps: temps, Workers: cfg.Workers, BurnIn: cfg.BurnIn,
		NoiseTarget: cfg.NoiseTarget, HealthWindow: healthWindow(cfg)}
	if len(temps) > 1 {
		r.pt.Every = cfg.Exchange
		r.pt.Scheme = sampler.Scheme(cfg.Scheme)
		if cfg.XTest == "resghmc" {
			r.pt.Exchange = &sampler.BiasCorrectedExchange{Batch: cfg.XBatch, F: cfg.XF}
		} else {
			corr, err := sampler.NewCorrection(1, sampler.CorrectionOptions{Method: sampler.CorrectionMethod(cfg.Corr)})
			if err != nil {
				return nil, err
			}
			r.pt.Exchange = &sampler.Exchanger{Batch: cfg.XBatch, Correction: corr, Margin: cfg.XMargin}
		}
		if cfg.Ladder == "adaptive" {
			r.pt.Adapt = &sampler.LadderAdaptation{SwapTarget: cfg.SwapTarget}
		}
	}
	// Replicas step in parallel goroutines; each BLAS call then uses one
	// thread, or the cores are oversubscribed.
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if len(temps) > 1 && workers > 1 {
		autodiff.SetBLASThreads(1)
	}
	shards := 1
	if usesGraph(cfg, model) {
		shards = max(cfg.GradShards, 1) // runs older than the field: 1
	}
	if shards > 1 {
		autodiff.SetBLASThreads(1)
	}
	for range temps {
		var ev autodiff.Evaluator
		var err error
		if shards > 1 {
			ev, err = autodiff.NewShardedEvaluator(model, cfg.Batch, cfg.DTypeValue(), shards)
		} else {
			ev, err = autodiff.NewFor(autodiff.Engine(cfg.Engine), model, cfg.Batch, cfg.DTypeValue())
		}
		if err != nil {
			return nil, err
		}
		r.pots = append(r.pots, &autodiff.Potential{Model: model, Data: tr, Eval: ev})
	}
	if len(temps) > 1 {
		// Exchange tests evaluate the two configurations in parallel, on
		// large batches (they may need the whole data set).
		if err := r.pots[0].ParallelTerms(2, termBatch(model), cfg.DTypeValue()); err != nil {
			return nil, err
		}
	}
	if val != nil {
		if r.valEval, err = newPredictor(model, cfg.DTypeValue()); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// makeBatches gives each rung's potential its batch stream: restored ones,
// or new ones shuffled by the rung's stream.
func (r *Run) makeBatches(saved []datasets.Batches) error {
	for j, p := range r.pots {
		if saved != nil {
			b := saved[j]
			p.Batches = &b
			continue
		}
		b, err := datasets.NewBatches(r.Data.N, r.Cfg.Batch, r.state.Streams[j].Rand)
		if err != nil {
			return err
		}
		p.Batches = b
	}
	return nil
}

// Resume reopens the run in dir from its checkpoint. steps > 0 replaces the
// run's target step count.
func Resume(dir string, steps int) (*Run, error) {
	c, err := ReadCheckpoint(filepath.Join(dir, checkpointName))
	if err != nil {
		if errors.Is(err, ErrCheckpoint) {
			if _, e := os.Stat(filepath.Join(dir, checkpointName+".prev")); e == nil {
				err = fmt.Errorf("%w (the previous checkpoint is kept as %s; copy it over %s to resume from it)", err, checkpointName+".prev", checkpointName)
			}
		}
		return nil, err
	}
	tr, val, err := loadData(c.Config)
	if err != nil {
		return nil, err
	}
	return resume(dir, c, tr, val, steps)
}

// ResumeFromData is Resume with the training data given.
func ResumeFromData(dir string, train *datasets.Dataset, steps int) (*Run, error) {
	c, err := ReadCheckpoint(filepath.Join(dir, checkpointName))
	if err != nil {
		return nil, err
	}
	tr, val, err := splitData(c.Config, train)
	if err != nil {
		return nil, err
	}
	return resume(dir, c, tr, val, steps)
}

func resume(dir string, c *Checkpoint, tr, val *datasets.Dataset, steps int) (*Run, error) {
	cfg := c.Config
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint in %s: %w: %w", dir, err, ErrCheckpoint)
	}
	if steps > 0 {
		if steps < c.Steps {
			return nil, fmt.Errorf("run %s has already done %d steps; --steps %d would go back", dir, c.Steps, steps)
		}
		cfg.Steps = steps
	}
	r, err := build(dir, cfg, tr, val)
	if err != nil {
		return nil, err
	}
	if err := checkFingerprint(dir, c.Config.DataFingerprint, cfg.Data, tr); err != nil {
		return nil, err
	}
	st, err := c.restore(cfg, r.pt, r.Model.NumParams(), tr.N)
	if err != nil {
		return nil, fmt.Errorf("checkpoint in %s: %w", dir, err)
	}
	r.state = st
	if err := r.makeBatches(c.Batches); err != nil {
		return nil, err
	}
	if r.samples, err = openSamplesAt(filepath.Join(dir, SamplesFile), c.Samples, r.Model.NumParams()); err != nil {
		return nil, fmt.Errorf("resume %s (model %s): %w", dir, cfg.ModelName(), err)
	}
	if err := checkSamplesModel(r.samples.path, r.samples.h, r.Model); err != nil {
		r.samples.Close()
		return nil, err
	}
	mpath := filepath.Join(dir, MetricsFile)
	if r.metrics, err = os.OpenFile(mpath, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := r.metrics.Truncate(c.Metrics); err != nil {
		return nil, fmt.Errorf("metrics: truncate %s: %w", mpath, err)
	}
	if _, err := r.metrics.Seek(c.Metrics, 0); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	r.mbytes = c.Metrics
	if cfg.Steps != c.Config.Steps {
		if err := writeConfig(dir, cfg); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// followSchedule sets the replicas' kernel to the learning rate of the next
// step under a cyclical schedule (nothing to do without one). Each
// thermostat is rescaled with it: the Nose-Hoover xi settles near
// A = alpha/h, so xi*h, the friction per step, is what must carry over when
// h changes by sqrt(next/prev). Both rates derive from the step counter, so
// a resumed run continues exactly.
func (r *Run) followSchedule() error {
	if r.Cfg.Cycle == 0 {
		return nil
	}
	steps := r.state.Steps
	prev, next := r.Cfg.stepScale(max(steps, 1)), r.Cfg.stepScale(steps+1)
	f := math.Sqrt(prev / next)
	for _, s := range r.state.Rungs {
		s.Xi *= f
	}
	k, err := r.Cfg.kernel(r.Data.N, next)
	if err != nil {
		return err
	}
	r.pt.Kernel = k
	return nil
}

// Steps returns the steps done so far.
func (r *Run) Steps() int { return r.state.Steps }

// State returns the sampler state (read-only use).
func (r *Run) State() *sampler.PTState { return r.state }

// checkpoint writes the whole state.
func (r *Run) checkpoint() error {
	if err := r.samples.Sync(); err != nil {
		return fmt.Errorf("samples: sync: %w", err)
	}
	if err := r.metrics.Sync(); err != nil {
		return fmt.Errorf("metrics: sync: %w", err)
	}
	c := &Checkpoint{Config: r.Cfg, Steps: r.state.Steps, Rounds: r.state.Rounds, Stats: r.state.Stats,
		Temps: r.state.Temps, Tuning: r.state.Tuning, Samples: r.samples.Count, Metrics: r.mbytes}
	for _, s := range r.state.Rungs {
		c.Rungs = append(c.Rungs, RungState{Theta: s.Theta, P: s.P, Xi: s.Xi, U: s.U})
	}
	for _, s := range r.state.Streams {
		b, err := s.MarshalBinary()
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		c.Streams = append(c.Streams, b)
	}
	for _, p := range r.pots {
		c.Batches = append(c.Batches, *p.Batches)
	}
	return WriteCheckpoint(r.Dir, c)
}

// Close closes the run's files.
func (r *Run) Close() error {
	err1 := r.samples.Close()
	err2 := r.metrics.Close()
	return errors.Join(err1, err2)
}

func (r *Run) swapRates() []float64 {
	s := r.state.Stats
	out := make([]float64, len(s.Proposed))
	for p := range out {
		if s.Proposed[p] > 0 {
			out[p] = s.AcceptanceRate(p)
		}
	}
	return out
}

// validate returns rung 1's mean validation log-likelihood and accuracy.
func (r *Run) validate(theta []float64) (float64, float64, error) {
	if r.Val == nil {
		return 0, 0, nil
	}
	logits := make([]float64, r.valEval.MaxBatch()*r.Val.Classes)
	ll, acc := 0.0, 0.0
	idx := make([]int, 0, r.valEval.MaxBatch())
	for s := 0; s < r.Val.N; s += r.valEval.MaxBatch() {
		idx = idx[:0]
		for i := s; i < min(s+r.valEval.MaxBatch(), r.Val.N); i++ {
			idx = append(idx, i)
		}
		if err := autodiff.Logits(r.valEval, theta, r.Val, idx, logits); err != nil {
			return 0, 0, err
		}
		for k, i := range idx {
			z := logits[k*r.Val.Classes : (k+1)*r.Val.Classes]
			lse, best := logSumExp(z), 0
			for c := range z {
				if z[c] > z[best] {
					best = c
				}
			}
			ll += z[r.Val.Labels[i]] - lse
			if best == r.Val.Labels[i] {
				acc++
			}
		}
	}
	return ll / float64(r.Val.N), acc / float64(r.Val.N), nil
}

func logSumExp(z []float64) float64 {
	m := z[0]
	for _, v := range z {
		m = math.Max(m, v)
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

func (r *Run) logMetrics() error {
	s := r.state
	rung := s.Rungs[0]
	m := MetricsLine{Step: s.Steps, U: rung.U, SwapRate: r.swapRates(), RoundTrips: s.Stats.RoundTrips,
		Grown: s.Stats.Grown, Exact: s.Stats.Exact, Early: s.Stats.Early, Samples: r.samples.Count}
	m.LogLik = (r.Model.Layout.NegLogPrior(rung.Theta) - rung.U) / float64(r.Data.N)
	var err error
	if m.ValLogLik, m.ValAcc, err = r.validate(rung.Theta); err != nil {
		return err
	}
	for _, q := range s.Rungs {
		m.Xi = append(m.Xi, q.Xi)
		m.Kinetic = append(m.Kinetic, q.KineticTemperature())
	}
	m.HealthMetrics = healthMetrics(s)
	if tp := r.Tempering(); tp != nil {
		m.Temps, m.Walker = tp.Temps, append([]int(nil), s.Stats.Walker...)
		if tp.Complete {
			m.SwapAcceptance, m.Barrier, m.LocalBarrier = tp.SwapAcceptance, tp.Barrier, tp.LocalBarrier
			m.RecommendedRungs, m.WindowRoundTrips = tp.RecommendedRungs, tp.RoundTrips
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	b = append(b, '\n')
	if _, err := r.metrics.Write(b); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	r.mbytes += int64(len(b))
	r.last = m
	return nil
}

// Train runs until the configured number of steps, keeping rung-1 samples,
// logging metrics and checkpointing; progress, if not nil, is called after
// every step. When ctx is cancelled it checkpoints and returns
// ErrInterrupted.
func (r *Run) Train(ctx context.Context, progress func(Status)) error {
	pots := make([]sampler.Potential, len(r.pots))
	for j, p := range r.pots {
		pots[j] = p
	}
	cfg := r.Cfg
	for r.state.Steps < cfg.Steps {
		if err := ctx.Err(); err != nil {
			if cerr := r.checkpoint(); cerr != nil {
				return errors.Join(ErrInterrupted, cerr)
			}
			return ErrInterrupted
		}
		if err := r.followSchedule(); err != nil {
			return err
		}
		if err := r.pt.Step(pots, r.pots[0], r.state); err != nil {
			return err
		}
		step := r.state.Steps
		if cfg.keepSample(step) {
			if err := r.samples.Append(step, r.state.Rungs[0].Theta); err != nil {
				return err
			}
		}
		logged := step%cfg.LogEvery == 0 || step == cfg.Steps
		if logged {
			if err := r.logMetrics(); err != nil {
				return err
			}
		}
		if step%cfg.CkptEvery == 0 || step == cfg.Steps {
			if err := r.checkpoint(); err != nil {
				return err
			}
		}
		if progress != nil {
			progress(Status{Step: step, Target: cfg.Steps, LogLik: r.last.LogLik, SwapRate: r.swapRates(), Samples: r.samples.Count, Logged: logged, Warning: r.healthWarning()})
		}
	}
	return nil
}

// Finish ends the run at its current step, as if its configured steps had
// been the steps done (for a wall-clock budget): the target is saved in
// config.json and the checkpoint, sgd keeps its final weights, and a final
// metrics line is written. A resume with more --steps continues it (with
// that extra metrics line, and for sgd that extra sample, which an
// uninterrupted run would not have).
func (r *Run) Finish() error {
	step := r.state.Steps
	if step >= r.Cfg.Steps {
		return nil
	}
	r.Cfg.Steps = step
	if r.Cfg.optimiser() && step > 0 {
		if err := r.samples.Append(step, r.state.Rungs[0].Theta); err != nil {
			return err
		}
	}
	if step%r.Cfg.LogEvery != 0 { // Train logged this step otherwise
		if err := r.logMetrics(); err != nil {
			return err
		}
	}
	if err := writeConfig(r.Dir, r.Cfg); err != nil {
		return err
	}
	return r.checkpoint()
}

// Tempering returns the run's tempering figures (nil for a single chain).
func (r *Run) Tempering() *Tempering { return TemperingOf(r.state, r.Cfg) }

// LastMetrics returns the last metrics line written.
func (r *Run) LastMetrics() MetricsLine { return r.last }
