package train

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/nullspace"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Run is one sampling chain of a Bayesian model (a PT ladder, or one
// kernel), tied to its directory. Its state, the sampler's PTState and each
// rung's minibatch order, is plain data that its checkpoints write down.
type Run struct {
	Dir string
	Cfg runspec.Config
	// Model is the model the chains sample: with a convolution's
	// null-space prior, the ConvNet whose first kernel is K' A, with a
	// skip branch, the ConvNet whose branch is s V V^T W' (its samples
	// are written as the plain model's, appendSample).
	Model nn.Model
	Spec  nn.Spec           // the model's spec when it is an MLP (Model.MLP)
	Data  *datasets.Dataset // training data (validation split removed)
	Val   *datasets.Dataset

	drv     *driver.Driver
	state   *tempering.PTState
	pots    []*autodiff.Potential
	batches []*datasets.Batches // rung j's minibatch order (state.Orders[j])
	val     *autodiff.Predictor // rung 1's fit to Val (nil without a validation set)
	samples *rundir.SampleWriter
	metrics *os.File
	mbytes  int64              // bytes of metrics written
	last    rundir.MetricsLine // the last metrics line written
	warned  []warnedAt         // per rung: the last health window warned about
	// threads is how many threads one BLAS call may use while the run
	// computes (0: the process's setting; see autodiff.WithBLASThreads).
	threads int
	lock    *rundir.Lock // the writer's lock of Dir, released by Close
	// null is the run's null-space prior (nil without one): Data and Val
	// hold its mapped inputs, and the samples are folded back to raw ones.
	null *nullspace.Prior
	// skip is the skip branch's image prior (nil without the branch):
	// the samples' branch is folded to W = s V V^T W'.
	skip *nullspace.Prior
	// optimiser is whether the run's kernel is an optimiser.
	optimiser bool
}

// New creates a run directory and initialises a run from cfg with the
// registries and training data of s (runspec.DefaultSetup: the process's
// registries, the data loaded from cfg.Data). It validates cfg and builds
// its model once. With overwrite false an existing run in dir is an error;
// with overwrite true its files and chain directories are removed. The run
// holds the directory's lock (rundir.Acquire) until Close: a run that
// another process writes is refused, and never overwritten.
func New(dir string, cfg runspec.Config, overwrite bool, s runspec.Setup) (*Run, error) {
	if err := validateNew(cfg, s); err != nil {
		return nil, err
	}
	if err := checkFree(dir, overwrite); err != nil {
		return nil, err
	}
	p, err := prepare(s, cfg) // before touching dir: bad data leaves no empty run behind
	if err != nil {
		return nil, err
	}
	locks, err := lockForCreate(dir, 1)
	if err != nil {
		return nil, err
	}
	defer locks.release(dir)
	if err := checkFree(dir, overwrite); err != nil { // again, under the lock
		locks.release()
		return nil, err
	}
	if err := clearRun(dir, 1, locks); err != nil {
		locks.release()
		return nil, err
	}
	return newRun(dir, cfg, p, locks[dir])
}

// checkFree reports an error when dir already holds a run (of one chain or
// several) and overwrite is false, and, with overwrite true, when dir holds
// files but no run (checkOverwritable).
func checkFree(dir string, overwrite bool) error {
	if overwrite {
		return checkOverwritable(dir)
	}
	if holdsRun(dir, rundir.CheckpointFile) { // any chain's, as array tasks start in any order
		return fmt.Errorf("run directory %s already holds a run: resume it with --resume, or pass --overwrite", dir)
	}
	return nil
}

// holdsRun reports whether dir, or one of its chain-* directories, holds
// one of the files.
func holdsRun(dir string, files ...string) bool {
	chains, _ := filepath.Glob(filepath.Join(dir, "chain-*"))
	for _, d := range append([]string{dir}, chains...) {
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				return true
			}
		}
	}
	return false
}

// checkOverwritable refuses to overwrite dir when it holds no run (no
// config file or checkpoint of its own or in a chain directory) but holds
// something: clearRun would remove its chain-* directories, whatever they
// hold. A directory that is absent or empty, lock files aside (those of a
// run's creation, lockForCreate), may be written.
func checkOverwritable(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // absent (or not a directory: creating the run says so)
	}
	if holdsRun(dir, rundir.ConfigFile, rundir.CheckpointFile) {
		return nil // a run: --overwrite replaces it
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.Name() == rundir.LockFile || e.IsDir() && strings.HasPrefix(e.Name(), "chain-") && onlyLock(p) {
			continue
		}
		return fmt.Errorf("--overwrite %s: the directory holds no run (no %s or %s) but %s: refusing to remove what it holds; give a new or empty --out", dir, rundir.ConfigFile, rundir.CheckpointFile, p)
	}
	return nil
}

// onlyLock reports whether the directory dir holds nothing but a lock file.
func onlyLock(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() != rundir.LockFile {
			return false
		}
	}
	return true
}

// clearRun removes the files and chain directories of a run in dir before
// a run of k chains is written there; the caller holds the locks of dir and
// of every chain directory it listed (lockForCreate). The directories
// chain-1..k of the new run are emptied but kept, with their lock files;
// other chain directories are removed. A chain directory made since the
// locks were taken (a chain task starting) is locked first, into locks: one
// another writer holds stops the clear before anything is removed.
func clearRun(dir string, k int, locks dirLocks) error {
	chains, _ := filepath.Glob(filepath.Join(dir, "chain-*"))
	for _, c := range chains {
		if st, err := os.Stat(c); err != nil || !st.IsDir() || locks[c] != nil {
			continue
		}
		l, err := rundir.Acquire(c)
		if err != nil {
			return fmt.Errorf("overwrite %s: %w", dir, err)
		}
		locks[c] = l
	}
	for _, f := range []string{rundir.CheckpointFile, rundir.CheckpointFile + ".prev", rundir.CheckpointFile + ".tmp", rundir.SamplesFile, rundir.MetricsFile, rundir.TimingFile} {
		os.Remove(filepath.Join(dir, f))
	}
	keep := map[string]bool{}
	for i := 1; i <= k; i++ {
		keep[rundir.ChainDir(dir, k, i)] = true
	}
	for _, c := range chains {
		var err error
		if keep[c] {
			err = clearChainDir(c)
		} else {
			err = os.RemoveAll(c)
		}
		if err != nil {
			return fmt.Errorf("overwrite %s: %w", dir, err)
		}
	}
	return nil
}

// recordIdentity returns cfg with what a run records of its identity: the
// fingerprint of its training data and its model's parameter shapes (of
// p's data and model, which the run was prepared with). Every path that
// writes a run's config (one chain, the chains of one process, a chain
// task) takes it from here, so their config.json files agree.
func recordIdentity(cfg runspec.Config, p *prepared) (runspec.Config, error) {
	model, err := p.modelFor(cfg)
	if err != nil {
		return cfg, err
	}
	fp := runspec.DataFingerprint(p.raw)
	cfg.DataFingerprint, cfg.Shapes = &fp, model.Layout.String()
	if !cfg.NoiseCorrection { // the correction's settings, recorded only with it
		cfg.NoiseCeiling, cfg.NoiseTrack = 0, false
	}
	if p.null != nil {
		cfg.NullSpaceSHA256 = p.null.Digest()
		if cfg.NullSpaceKeep == 0 { // config.json says which span was kept
			cfg.NullSpaceKeep = nullspace.DefaultKeep
		}
	}
	if p.skip != nil {
		cfg.NullSpaceSkipSHA256 = p.skip.Digest()
	}
	if model.SHA256 != "" {
		cfg.ModelSHA256 = model.SHA256
	}
	if model.MLP != nil {
		cfg.MLPKernels = runspec.MLPKernelsPlan
		if autodiff.Engine(cfg.Engine) == autodiff.EnginePlan {
			cfg.GradShards = 1 // engine plan computes an MLP's gradient in one piece
		}
	}
	if autodiff.Engine(cfg.Engine) == autodiff.EnginePlan {
		// A new run records that it runs compiled: runs of a graph model
		// made before the compiler recorded plan and keep the VM; an MLP's
		// recorded plan and now run on its compiled graph, which computes
		// what its BLAS plan computed.
		cfg.Engine = string(autodiff.EngineCompiled)
	}
	if cfg.GradShards == 0 && usesGraph(cfg, model) {
		cfg.GradShards = autoShards(cfg)
		if model.MLP != nil {
			// an MLP's gradient in one piece: its plan's sums, the same
			// samples as its runs on the plan (--grad-shards splits it)
			cfg.GradShards = 1
		}
	}
	mode := runspec.ArithmeticMode(cfg.Arithmetic, false)
	cfg.Arithmetic = runspec.ArithmeticID(mode, runThreads(cfg, model, cfg.Validation > 0))
	return cfg, nil
}

// runThreads returns how many threads one BLAS call of a run of cfg uses
// while it trains (0: the library's default): one when its rungs, chains,
// gradient shards or validation shards run in parallel goroutines, or they
// would oversubscribe the cores. Native BLAS rounds differently with other
// threads, so the run's arithmetic records it.
func runThreads(cfg runspec.Config, model nn.Model, validation bool) int {
	temps, _ := cfg.Temps()
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	shards := 1
	if usesGraph(cfg, model) {
		shards = max(cfg.GradShards, 1) // runs older than the field: 1
	}
	switch {
	case len(temps) > 1 && workers > 1, shards > 1, cfg.Chains > 1,
		validation && autodiff.PredictorShards(model) > 1:
		return 1
	}
	return 0
}

// usesGraph reports whether the run's gradients run on a graph (compiled
// or on the VM): every engine but an MLP's BLAS plan.
func usesGraph(cfg runspec.Config, model nn.Model) bool {
	return cfg.RunEngine(model) != autodiff.EnginePlan
}

// ReferenceCores is the core count the pinned arithmetic's automatic
// gradient shards assume on every machine (autoShards): the two cores the
// README's figures were measured on.
const ReferenceCores = 2

// notices receives what train says once (a model running on the VM).
var notices io.Writer = os.Stderr

// unsupportedSaid remembers the models whose unsupported op train has
// reported, so that it says so once per process.
var unsupportedSaid sync.Map

// sayUnsupported reports, once per model, that the graph compiler cannot
// compile model and the run uses Gorgonia's VM.
func sayUnsupported(engine autodiff.Engine, model nn.Model) {
	if engine != autodiff.EngineCompiled {
		return
	}
	if err := compile.Check(model); compile.IsUnsupported(err) {
		if _, said := unsupportedSaid.LoadOrStore(model.Name, true); !said {
			fmt.Fprintf(notices, "ptsghmc: %v; running it on Gorgonia's VM (slower)\n", err)
		}
	}
}

// autoShards returns how many graphs one gradient is split over when the
// config leaves it to the run: the cores each rung gets when every chain of
// the process steps its rungs in parallel (at least 1, at most autodiff.MaxShards).
// The shards change the gradient's sums, so in the pinned arithmetic, whose
// runs are the same on every machine, the cores counted are ReferenceCores,
// not the machine's (--grad-shards sets more).
func autoShards(cfg runspec.Config) int {
	cores := runtime.GOMAXPROCS(0)
	if runspec.ArithmeticMode(cfg.Arithmetic, false) == autodiff.ArithmeticPinned {
		cores = ReferenceCores
	}
	rungs := max(cfg.Replicas, 1)
	if cfg.Sampler != runspec.PTSGHMC {
		rungs = 1
	}
	if cfg.Workers > 0 {
		rungs = min(rungs, cfg.Workers)
	}
	chains := max(cfg.Chains, 1)
	if cfg.Chain > 0 { // one chain of a job array: its own process
		chains = 1
	}
	n := cfg.Batch
	if cfg.WarmupBatch > 0 {
		n = min(n, cfg.WarmupBatch) // a shard per example at most, in the warm-up too
	}
	return min(max(cores/(rungs*chains), 1), autodiff.MaxShards, n)
}

// newRun writes a new run of cfg, prepared as p, into dir, whose lock lk
// the caller holds: the run keeps it (Close releases it), or newRun
// releases it on error.
func newRun(dir string, cfg runspec.Config, p *prepared, lk *rundir.Lock) (_ *Run, err error) {
	defer func() {
		if err != nil {
			lk.Release()
		}
	}()
	cfg, err = recordIdentity(cfg, p)
	if err != nil {
		return nil, err
	}
	r, err := build(dir, cfg, p)
	if err != nil {
		return nil, err
	}
	r.lock = lk
	if err := rundir.WriteConfig(dir, r.Cfg); err != nil {
		return nil, err
	}
	theta := make([]float64, r.Model.NumParams())
	if cfg.Start == runspec.StartModel { // a warm start from the model's own weights
		copy(theta, r.Model.Weights)
	} else {
		r.Model.Layout.Init(theta, rand.New(rand.NewPCG(cfg.ChainSeed(), 0x1417)))
	}
	if r.state, err = r.drv.Init([][]float64{theta}, cfg.ChainSeed()); err != nil {
		return nil, err
	}
	batches, err := newBatches(r.Data.N, cfg.StepBatch(0, r.Data.N), r.state.Streams[:len(r.pots)])
	if err != nil {
		return nil, err
	}
	r.setBatches(batches)
	if r.samples, err = rundir.CreateSamples(filepath.Join(dir, rundir.SamplesFile), rundir.SampleHeader{Arch: rundir.SamplesModel(r.Model), Params: r.Model.NumParams(), DType: "float32"}); err != nil {
		return nil, err
	}
	if r.metrics, err = rundir.CreateMetrics(filepath.Join(dir, rundir.MetricsFile)); err != nil {
		r.samples.Close()
		return nil, err
	}
	if err := r.checkpoint(); err != nil {
		r.samples.Close()
		r.metrics.Close()
		return nil, err
	}
	return r, nil
}

// NullSpace returns the run's null-space prior (Config.NullSpaceScale), or
// nil without one.
func (r *Run) NullSpace() *nullspace.Prior { return r.null }

// NullSpaceSkip returns the image prior of the run's skip branch
// (Config.NullSpaceSkip), or nil without the branch.
func (r *Run) NullSpaceSkip() *nullspace.Prior { return r.skip }

// build sets up everything but the sampler state, with p's data and model
// (the model is shared by every rung, and every chain, of the run: each
// evaluator builds its own graph from it).
func build(dir string, cfg runspec.Config, p *prepared) (*Run, error) {
	tr, val := p.tr, p.val
	model, err := p.modelFor(cfg)
	if err != nil {
		return nil, err
	}
	// The arithmetic before any evaluator takes its products.
	// cfg is a run's record here: recordIdentity's, or a checkpoint's.
	if err := autodiff.UseArithmetic(runspec.ArithmeticMode(cfg.Arithmetic, true)); err != nil {
		return nil, err
	}
	temps, err := cfg.Temps()
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, Cfg: cfg, Model: model, Data: tr, Val: val, null: p.null, skip: p.skip}
	if model.MLP != nil {
		r.Spec = *model.MLP
	}
	info, err := cfg.Kernel(p.setup.Kernels)
	if err != nil {
		return nil, err
	}
	r.optimiser = !info.Sampler
	sched, err := p.scheduleFor(cfg)
	if err != nil {
		return nil, err
	}
	if r.drv, err = newDriver(p.setup, cfg, sched); err != nil {
		return nil, err
	}
	r.threads = runThreads(cfg, model, val != nil)
	shards := 1
	if usesGraph(cfg, model) {
		shards = max(cfg.GradShards, 1) // runs older than the field: 1
	}
	engine := cfg.RunEngine(model)
	sayUnsupported(engine, model)
	for range temps {
		var ev autodiff.Evaluator
		var err error
		if shards > 1 {
			ev, err = autodiff.NewShardedFor(engine, model, cfg.EvalBatch(), cfg.DTypeValue(), shards)
		} else {
			ev, err = autodiff.NewFor(engine, model, cfg.EvalBatch(), cfg.DTypeValue())
		}
		if err != nil {
			return nil, err
		}
		r.pots = append(r.pots, &autodiff.Potential{Model: model, Data: tr, Eval: ev})
	}
	if len(temps) > 1 {
		// Exchange tests evaluate the two configurations in parallel, on
		// large batches (they may need the whole data set).
		if err := r.pots[0].ParallelTermsOn(engine, 2, termBatch(model), cfg.DTypeValue()); err != nil {
			return nil, err
		}
	}
	if val != nil {
		ev, err := autodiff.NewLogitEvaluator(engine, model, cfg.DTypeValue())
		if err != nil {
			return nil, err
		}
		r.val = &autodiff.Predictor{Eval: ev}
	}
	return r, nil
}

// Resume reopens the run in dir from its checkpoint, with the registries
// and training data of s (those the run was made with). steps > 0 replaces
// the run's target step count. The run holds the directory's lock until
// Close: a run that another process writes is refused.
func Resume(dir string, steps int, s runspec.Setup) (*Run, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	lk, err := rundir.Acquire(dir)
	if err != nil {
		return nil, err
	}
	c, err := rundir.ReadCheckpoint(filepath.Join(dir, rundir.CheckpointFile))
	if err != nil {
		lk.Release()
		if errors.Is(err, rundir.ErrCheckpoint) {
			if _, e := os.Stat(filepath.Join(dir, rundir.CheckpointFile+".prev")); e == nil {
				err = fmt.Errorf("%w (the previous checkpoint is kept as %s; copy it over %s to resume from it)", err, rundir.CheckpointFile+".prev", rundir.CheckpointFile)
			}
		}
		return nil, err
	}
	if err := checkpointConfigValid(dir, c.Config, s); err != nil {
		lk.Release()
		return nil, err
	}
	p, err := prepare(s, c.Config)
	if err != nil {
		lk.Release()
		return nil, err
	}
	r, err := resume(dir, c, p, steps, lk)
	if err != nil {
		return nil, err
	}
	if err := r.commitResume(c.Config); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// checkpointConfigValid validates the config of the checkpoint in dir,
// naming the checkpoint and wrapping ErrCheckpoint. A run that Finish
// ended inside its burn-in (a --time-limit, or a resume's --steps short of
// it) recorded no more steps than its burn-in, which a new run's settings
// refuse: it is validated as the run a resume with more --steps continues
// (steps past the burn-in).
func checkpointConfigValid(dir string, cfg runspec.Config, s runspec.Setup) error {
	cfg.Steps = max(cfg.Steps, cfg.BurnIn+1)
	// runs made before negative workers were refused ran them on every
	// core, as they resume (driver.Driver.Workers)
	cfg.Workers = max(cfg.Workers, 0)
	if err := cfg.Validate(s); err != nil {
		return fmt.Errorf("checkpoint in %s: %w: %w", dir, err, rundir.ErrCheckpoint)
	}
	return nil
}

// resume reopens the run in dir from its checkpoint c, whose config the
// caller validated (checkpointConfigValid), with p's data and model; the
// caller holds dir's lock lk, which the run keeps (Close releases it), or
// resume releases on error.
func resume(dir string, c *rundir.Checkpoint, p *prepared, steps int, lk *rundir.Lock) (_ *Run, err error) {
	defer func() {
		if err != nil {
			lk.Release()
		}
	}()
	cfg := c.Config
	tr := p.tr
	if steps > 0 {
		if steps < c.Steps {
			return nil, fmt.Errorf("run %s has already done %d steps; --steps %d would go back", dir, c.Steps, steps)
		}
		cfg.Steps = steps
	}
	r, err := build(dir, cfg, p)
	if err != nil {
		return nil, err
	}
	r.lock = lk
	if err := r.continueArithmetic(c.Steps, p.setup.AllowArithmeticChange); err != nil {
		return nil, err
	}
	if err := rundir.CheckFingerprint(dir, c.Config.DataFingerprint, cfg.Data, p.raw); err != nil {
		return nil, err
	}
	st, err := restore(c, cfg, r.drv, r.Model.NumParams(), tr.N)
	if err != nil {
		return nil, fmt.Errorf("checkpoint in %s: %w", dir, err)
	}
	r.state = st
	r.setBatches(restoreBatches(c.Batches))
	if r.samples, err = rundir.ReopenSamples(filepath.Join(dir, rundir.SamplesFile), c.Samples, r.Model.NumParams()); err != nil {
		return nil, fmt.Errorf("resume %s (model %s): %w", dir, cfg.ModelName(), err)
	}
	if err := rundir.CheckSamplesModel(r.samples.Path(), r.samples.Header(), r.Model); err != nil {
		r.samples.Close()
		return nil, err
	}
	if r.metrics, err = rundir.OpenMetricsAt(filepath.Join(dir, rundir.MetricsFile), c.Metrics); err != nil {
		r.samples.Close()
		return nil, err
	}
	r.mbytes = c.Metrics
	return r, nil
}

// commitResume records a resumed run's target (a new --steps) and
// arithmetic, where they differ from those of the checkpoint it resumed
// (ck), or from config.json's: first in a checkpoint, then in config.json.
// In that order a kill in between leaves what the user asked for (the
// next resume takes the checkpoint's target), and a --steps of the steps
// done, with no step left to checkpoint, is kept. A run of several chains
// commits once every chain is open (ResumeChains), so that a chain that
// fails to open leaves every chain's checkpoint as it was. config.json
// records the checkpoint's own target where it holds another (a Finish
// killed after saving config.json and before its checkpoint).
func (r *Run) commitResume(ck runspec.Config) error {
	if r.Cfg.Steps != ck.Steps || r.Cfg.Arithmetic != ck.Arithmetic {
		if err := r.checkpoint(); err != nil {
			return err
		}
	}
	saved, rerr := rundir.ReadRunConfig(r.Dir)
	if rerr != nil || saved.Steps != r.Cfg.Steps || saved.Arithmetic != r.Cfg.Arithmetic {
		return rundir.WriteConfig(r.Dir, r.Cfg)
	}
	return nil
}

// continueArithmetic checks that the resumed run r, at step, computes with
// the arithmetic it recorded. When it does not, it refuses, unless allow,
// and then records the change in r.Cfg. A run made before runs recorded
// their arithmetic continues on the native BLAS, as it ran, and records it.
func (r *Run) continueArithmetic(step int, allow bool) error {
	have := r.Cfg.Arithmetic
	now := runspec.ArithmeticID(runspec.ArithmeticMode(have, true), runThreads(r.Cfg, r.Model, r.Cfg.Validation > 0))
	if have == now {
		return nil
	}
	if have != "" && !allow {
		return runspec.ArithmeticDiffers(r.Dir, step, have, now)
	}
	from := have
	if from == "" {
		from = runspec.Unrecorded
	}
	r.Cfg.ArithmeticChanges = append(r.Cfg.ArithmeticChanges, runspec.ArithmeticChange{Step: step, From: from, To: now})
	r.Cfg.Arithmetic = now
	return nil
}

// Steps returns the steps done so far.
func (r *Run) Steps() int { return r.state.Steps }

// State returns the sampler state (read-only use).
func (r *Run) State() *tempering.PTState { return r.state }

// Close closes the run's files and releases its directory's lock.
func (r *Run) Close() error {
	err1 := r.samples.Close()
	err2 := r.metrics.Close()
	return errors.Join(err1, err2, r.lock.Release())
}

// LastMetrics returns the last metrics line written.
func (r *Run) LastMetrics() rundir.MetricsLine { return r.last }
