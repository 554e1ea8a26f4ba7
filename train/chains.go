package train

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// Chains is a run of Cfg.Chains independent chains of the configured
// sampler (PT included: each chain has its own ladder), stepped in parallel
// in one process. Chain i's random streams and initial weights depend only
// on the run's seed and i (chain 1 is the single-chain run of the same
// seed), and all chains share the training data and its validation split.
//
// A Chains from OpenChain holds one chain of a run whose other chains run
// elsewhere (array tasks): Only is its number and Runs its one Run.
type Chains struct {
	Dir  string
	Cfg  runspec.Config
	Runs []*Run // chain i+1 is Runs[i]; with Only > 0, Runs[0] is chain Only

	Only    int  // the one chain this process runs (OpenChain), or 0: all of them
	Resumed bool // OpenChain found the chain's checkpoint and resumed it

	lock *rundir.Lock // the top directory's lock when this process writes all of several chains
}

// NewChains creates the run directory of cfg.Chains chains with the
// registries and training data of s (runspec.DefaultSetup: the process's
// registries, the data loaded from cfg.Data). It validates cfg and builds
// its model once for the run: the chains share it. With overwrite false an
// existing run in dir is an error. The process holds the locks of the run
// directory and of every chain directory until Close (see rundir): a run
// another process writes is refused, and never overwritten.
func NewChains(dir string, cfg runspec.Config, overwrite bool, s runspec.Setup) (*Chains, error) {
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
	return newChains(dir, cfg, p, overwrite)
}

// newChains writes a new run of cfg.Chains chains, prepared as p, into
// dir, after taking the locks of dir and its chain directories and, with
// overwrite false, checking that dir holds no run.
func newChains(dir string, cfg runspec.Config, p *prepared, overwrite bool) (*Chains, error) {
	cfg.Chain = 0
	cfg, err := recordIdentity(cfg, p)
	if err != nil {
		return nil, err
	}
	locks, err := lockForCreate(dir, cfg.Chains)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Chains, error) {
		locks.release()
		return nil, err
	}
	if err := checkFree(dir, overwrite); err != nil {
		return fail(err)
	}
	if err := clearRun(dir, cfg.Chains, locks); err != nil {
		return fail(err)
	}
	keep := []string{dir}
	for i := 1; i <= cfg.Chains; i++ {
		keep = append(keep, rundir.ChainDir(dir, cfg.Chains, i))
	}
	locks.release(keep...) // chain directories of an earlier run, now removed
	if cfg.Chains > 1 {
		if err := rundir.WriteConfig(dir, cfg); err != nil {
			return fail(err)
		}
	}
	c := &Chains{Dir: dir, Cfg: cfg}
	if cfg.Chains > 1 {
		c.lock = locks[dir]
		delete(locks, dir)
	}
	for i := 1; i <= cfg.Chains; i++ {
		cc := cfg
		if cfg.Chains > 1 {
			cc.Chain = i
		}
		cd := rundir.ChainDir(dir, cfg.Chains, i)
		lk := locks[cd]
		delete(locks, cd) // newRun owns it now
		r, err := newRun(cd, cc, p, lk)
		if err != nil {
			c.Close()
			return fail(fmt.Errorf("chain %d: %w", i, err))
		}
		c.Runs = append(c.Runs, r)
	}
	return c, nil
}

// ResumeChains reopens the run in dir, every chain from its checkpoint,
// with the registries and training data of s (those the run was made
// with). steps > 0 replaces the run's target step count. The run's model
// is built once, from its config, and shared by its chains. A chain of
// several that never wrote a checkpoint (NewChains was killed before it)
// starts from scratch, as NewChains starts it.
func ResumeChains(dir string, steps int, s runspec.Setup) (*Chains, error) {
	cfg, err := rundir.ReadRunConfig(dir)
	if err != nil {
		return nil, err
	}
	if cfg.Chains <= 1 || cfg.Chain != 0 { // one chain, or one chain's directory
		r, err := Resume(dir, steps, s)
		if err != nil {
			return nil, err
		}
		return &Chains{Dir: dir, Cfg: r.Cfg, Runs: []*Run{r}}, nil
	}
	top, err := rundir.Acquire(dir) // before the data and the model: a refused writer does no work
	if err != nil {
		return nil, err
	}
	p, err := prepare(s, cfg)
	if err != nil {
		top.Release()
		return nil, err
	}
	return resumeChains(dir, cfg, p, steps, top)
}

// resumeChains reopens every chain of the run of several chains in dir,
// prepared as p, with the lock top of dir held (the Chains keeps it, or
// resumeChains releases it on error) and taking each chain directory's.
func resumeChains(dir string, cfg runspec.Config, p *prepared, steps int, top *rundir.Lock) (*Chains, error) {
	c := &Chains{Dir: dir, Cfg: cfg, lock: top}
	var resumed []*runspec.Config // each run's checkpoint's config (nil: started afresh)
	for i := 1; i <= cfg.Chains; i++ {
		cd := rundir.ChainDir(dir, cfg.Chains, i)
		// NewChains makes every chain's directory before config.json: a
		// missing one was removed since, not a killed start to redo
		if _, err := os.Stat(cd); err != nil {
			c.Close()
			return nil, fmt.Errorf("chain %d: %w (a run's chain directories are made with it: restore %s to resume)", i, err, cd)
		}
		lk, err := rundir.Acquire(cd)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("chain %d: %w", i, err)
		}
		ckPath := filepath.Join(cd, rundir.CheckpointFile)
		if neverCheckpointed(ckPath) {
			// NewChains was killed before this chain's first checkpoint:
			// the chain starts as NewChains starts it, unless it holds
			// samples (its checkpoints removed since: not a killed start)
			if err := holdsNoSample(filepath.Join(cd, rundir.SamplesFile)); err != nil {
				lk.Release()
				c.Close()
				return nil, fmt.Errorf("chain %d: %w", i, err)
			}
			r, err := startChain(cd, cfg, i, p, steps, lk)
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("chain %d: %w", i, err)
			}
			c.Runs = append(c.Runs, r)
			resumed = append(resumed, nil)
			continue
		}
		ck, err := rundir.ReadCheckpoint(ckPath)
		if err != nil {
			lk.Release()
			c.Close()
			return nil, fmt.Errorf("chain %d: %w", i, err)
		}
		if ck.Config.Chain != i || ck.Config.Seed != cfg.Seed || ck.Config.Chains != cfg.Chains {
			lk.Release()
			c.Close()
			return nil, fmt.Errorf("chain %d: checkpoint in %s is of chain %d of %d with seed %d, the run's config says %d chains with seed %d: %w",
				i, cd, ck.Config.Chain, ck.Config.Chains, ck.Config.Seed, cfg.Chains, cfg.Seed, rundir.ErrCheckpoint)
		}
		if err := checkpointConfigValid(cd, ck.Config, p.setup); err != nil {
			lk.Release()
			c.Close()
			return nil, fmt.Errorf("chain %d: %w", i, err)
		}
		r, err := resume(cd, ck, p, steps, lk)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("chain %d: %w", i, err)
		}
		c.Runs = append(c.Runs, r)
		resumed = append(resumed, &ck.Config)
	}
	// every chain is open: the new target is committed to each
	for i, r := range c.Runs {
		if resumed[i] == nil { // started afresh: its files say so already
			continue
		}
		if err := r.commitResume(*resumed[i]); err != nil {
			c.Close()
			return nil, fmt.Errorf("chain %d: %w", i+1, err)
		}
	}
	// the furthest chain's target, as Finish records it: a new --steps, or
	// the chains' checkpoints' when config.json holds another (a Finish
	// killed before its chains' checkpoints)
	c.Cfg.Steps = 0
	for _, r := range c.Runs {
		c.Cfg.Steps = max(c.Cfg.Steps, r.Cfg.Steps)
	}
	if c.Cfg.Steps != cfg.Steps {
		if err := rundir.WriteConfig(dir, c.Cfg); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// neverCheckpointed reports whether the chain whose checkpoint is ckPath
// has never written one: neither it nor the previous one (checkpoint.prev)
// exists. Its samples then hold no sample: the first is appended after the
// first checkpoint.
func neverCheckpointed(ckPath string) bool {
	for _, p := range []string{ckPath, ckPath + ".prev"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// holdsNoSample returns an error when the samples file at path, of a
// chain without a checkpoint, holds more than its header: a chain's first
// checkpoint is written before its first step, so such samples mean its
// checkpoints were removed, and starting it afresh would truncate them.
// A missing file, or one whose header a killed start cut short, holds
// none; a header that is whole but corrupt is an error.
func holdsNoSample(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("samples: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("samples %s: %w", path, err)
	}
	_, n, err := rundir.ReadSampleHeader(f)
	if errors.Is(err, rundir.ErrTruncatedHeader) {
		return nil // the killed start's header, cut short: nothing after it
	}
	if err != nil {
		return fmt.Errorf("samples %s: %w, and the chain has no checkpoint: restore its checkpoints to resume, or start again with --overwrite", path, err)
	}
	if st.Size() > int64(n) {
		return fmt.Errorf("%s holds %d bytes of samples but the chain has no checkpoint (neither %s nor %s.prev): its checkpoints were removed; restore them to resume, or start again with --overwrite", path, st.Size()-int64(n), rundir.CheckpointFile, rundir.CheckpointFile)
	}
	return nil
}

// startChain starts chain i of the run of cfg (its config.json's) in its
// directory cd from scratch, as newChains starts it (the same seed stream
// and config, so its files equal those of the run NewChains would have
// written), with the target steps when steps > 0. The caller holds cd's
// lock lk, which the run keeps (or startChain releases on error). The
// arithmetic of this process must be the run's, unless the setup allows a
// change (then the chain's config records its own, as a chain task's).
func startChain(cd string, cfg runspec.Config, i int, p *prepared, steps int, lk *rundir.Lock) (*Run, error) {
	cc := cfg
	cc.Chain = i
	if steps > 0 {
		cc.Steps = steps
	}
	now, err := recordIdentity(cc, p)
	if err == nil {
		_, err = taskArithmetic(cd, cfg, now, p.setup.AllowArithmeticChange)
	}
	if err != nil {
		lk.Release()
		return nil, err
	}
	cc.Arithmetic = now.Arithmetic // the run's, or (allowed) this process's own, as a chain task records it
	return newRun(cd, cc, p, lk)   // truncates the files of the killed start
}

// Train runs every chain to the configured number of steps, in parallel
// goroutines (each BLAS call then uses one thread, until Train returns),
// each keeping its samples and checkpointing as Run.Train does; progress, if not nil, is called
// after every step of every chain, from one goroutine at a time. When ctx
// is cancelled, or a chain fails, every other chain checkpoints and stops
// (the failed one keeps its last periodic checkpoint); the error is the
// failure, or ErrInterrupted.
func (c *Chains) Train(ctx context.Context, progress func(chain int, s Status)) error {
	if len(c.Runs) == 1 {
		chain := max(c.Only, 1)
		var p func(Status)
		if progress != nil {
			p = func(s Status) { progress(chain, s) }
		}
		if c.Only == 0 {
			return c.Runs[0].Train(ctx, p)
		}
		defer autodiff.WithBLASThreads(1)() // one BLAS thread, as when it runs beside the others
		return c.Runs[0].train(ctx, p)
	}
	defer autodiff.WithBLASThreads(1)()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	errs := make([]error, len(c.Runs))
	var wg sync.WaitGroup
	for i, r := range c.Runs {
		wg.Add(1)
		go func(i int, r *Run) {
			defer wg.Done()
			var p func(Status)
			if progress != nil {
				p = func(s Status) {
					mu.Lock()
					progress(i+1, s)
					mu.Unlock()
				}
			}
			if err := r.train(ctx, p); err != nil {
				if err != ErrInterrupted { // a failure, or an interruption whose checkpoint failed
					err = fmt.Errorf("chain %d: %w", i+1, err)
					cancel()
				}
				errs[i] = err
			}
		}(i, r)
	}
	wg.Wait()
	var failed []error
	interrupted := false
	for _, err := range errs {
		switch {
		case err == nil:
		case err == ErrInterrupted:
			interrupted = true
		default:
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return errors.Join(failed...)
	}
	if interrupted {
		return ErrInterrupted
	}
	return nil
}

// Finish ends every chain at the step it reached (see Run.Finish) and
// records the furthest in the run's config. BLAS calls use one thread, as
// in Train, when the process runs several chains or one of an array.
func (c *Chains) Finish() error {
	if len(c.Runs) > 1 || c.Only > 0 {
		defer autodiff.WithBLASThreads(1)()
	}
	for i, r := range c.Runs {
		if err := r.Finish(); err != nil {
			return fmt.Errorf("chain %d: %w", i+1, err)
		}
	}
	if c.Only > 0 { // the run's config is not this process's to change
		return nil
	}
	if len(c.Runs) == 1 {
		c.Cfg = c.Runs[0].Cfg
		return nil
	}
	c.Cfg.Steps = 0
	for _, r := range c.Runs {
		c.Cfg.Steps = max(c.Cfg.Steps, r.Cfg.Steps)
	}
	return rundir.WriteConfig(c.Dir, c.Cfg)
}

// Steps returns the steps done by the chain that is furthest behind.
func (c *Chains) Steps() int {
	n := c.Runs[0].Steps()
	for _, r := range c.Runs {
		n = min(n, r.Steps())
	}
	return n
}

// Close closes every chain's files and releases the run's locks.
func (c *Chains) Close() error {
	var errs []error
	for _, r := range c.Runs {
		errs = append(errs, r.Close())
	}
	errs = append(errs, c.lock.Release())
	return errors.Join(errs...)
}
