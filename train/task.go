package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// ErrConfigMismatch is wrapped by the error of a chain task whose settings
// disagree with those its run directory was started with.
var ErrConfigMismatch = errors.New("settings disagree with the run's config")

// OpenChain opens chain i (1-based) of the cfg.Chains-chain run in dir for
// a process that runs that chain alone, such as one task of a Slurm array
// job or of a Kubernetes Indexed Job. The chain is written into the same
// layout that NewChains writes in one process (dir/config.json for the run,
// dir/chain-i for the chain), with the same seed stream, so its samples and
// metrics equal those of chain i of the one-process run byte for byte.
//
// The run's config.json is created by the first task to get there
// (atomically: written to a temporary file and hard-linked into place, which
// fails when the name exists, on local file systems and NFS alike); every
// task compares its settings with it and is refused, with the fields named
// and an error wrapping ErrConfigMismatch, when they differ. A task writes
// nothing else outside its chain directory.
//
// When the chain directory holds a checkpoint the chain resumes from it
// (Chains.Resumed is set): the same call starts a chain and continues it
// after a preemption or requeue. A finished chain resumes with nothing
// left to do.
//
// s gives the registries and the training data (runspec.DefaultSetup: the
// process's registries, the data loaded from cfg.Data); the chain
// validates cfg and builds the model once.
func OpenChain(dir string, cfg runspec.Config, i int, s runspec.Setup) (*Chains, error) {
	if cfg.Chains < 2 {
		return nil, fmt.Errorf("chain %d: a chain task needs a run of at least 2 chains, got chains %d", i, cfg.Chains)
	}
	if i < 1 || i > cfg.Chains {
		return nil, fmt.Errorf("chain %d: not a chain of this run, whose chains are 1..%d", i, cfg.Chains)
	}
	cfg.Chain = 0
	if err := validateNew(cfg, s); err != nil {
		return nil, err
	}
	p, err := prepare(s, cfg)
	if err != nil {
		return nil, err
	}
	if cfg, err = taskConfig(dir, cfg, p, i, s); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if err := claimRunConfig(dir, cfg); err != nil {
		return nil, err
	}
	cd := rundir.ChainDir(dir, cfg.Chains, i)
	cc := cfg
	cc.Chain = i
	ckPath := filepath.Join(cd, rundir.CheckpointFile)
	c := &Chains{Dir: dir, Cfg: cfg, Only: i}
	// The chain's lock, before its files are read: a second task of the
	// same chain (a requeued task whose first copy still runs) is refused.
	lk, err := lockDir(cd)
	if err != nil {
		return nil, fmt.Errorf("chain %d: %w", i, err)
	}
	if _, err := os.Stat(ckPath); err == nil {
		ck, err := rundir.ReadCheckpoint(ckPath)
		if err != nil {
			lk.Release()
			return nil, fmt.Errorf("chain %d: %w", i, err)
		}
		if diff := configDiff(ck.Config, cc); len(diff) > 0 {
			lk.Release()
			return nil, fmt.Errorf("chain %d: checkpoint in %s was written with other settings: %s: %w", i, cd, strings.Join(diff, ", "), ErrConfigMismatch)
		}
		r, err := resume(cd, ck, p, 0, lk) // ck.Config equals cc, which is valid
		if err != nil {
			return nil, fmt.Errorf("chain %d: %w", i, err)
		}
		c.Runs, c.Resumed = []*Run{r}, true
		return c, nil
	}
	if _, err := os.Stat(ckPath + ".prev"); err == nil {
		lk.Release()
		return nil, fmt.Errorf("chain %d: %s has %s.prev but no %s: copy it over %s to resume from it, or remove the directory to start the chain again",
			i, cd, rundir.CheckpointFile, rundir.CheckpointFile, rundir.CheckpointFile)
	}
	// Files of an attempt that died before its first checkpoint are
	// replaced: newRun truncates samples and metrics.
	r, err := newRun(cd, cc, p, lk)
	if err != nil {
		return nil, fmt.Errorf("chain %d: %w", i, err)
	}
	c.Runs = []*Run{r}
	return c, nil
}

// taskConfig returns the settings chain task i runs with: cfg with its
// identity recorded (recordIdentity), and as the run's first task recorded
// them in dir's config.json when there is one: the gradient shards, an
// older run's engine, the MLP kernels and the arithmetic (taskArithmetic).
func taskConfig(dir string, cfg runspec.Config, p *prepared, i int, s runspec.Setup) (runspec.Config, error) {
	var err error
	have, haveErr := rundir.ReadRunConfig(dir)
	if haveErr == nil && cfg.GradShards == 0 {
		// the first task chose the shards on its node; later tasks, maybe
		// on nodes with other core counts, keep them
		cfg.GradShards = have.GradShards
	}
	asked := cfg.Engine
	if cfg, err = recordIdentity(cfg, p); err != nil {
		return cfg, err
	}
	if haveErr == nil && have.Engine == asked {
		// a run made before the graph compiler (or an MLP's on the plan)
		// keeps its engine, and its shards (none recorded on the plan)
		cfg.Engine, cfg.GradShards = have.Engine, have.GradShards
	}
	if haveErr == nil {
		cfg.MLPKernels = have.MLPKernels // as the first task recorded it (absent in older runs)
	}
	if haveErr == nil {
		if cfg, err = taskArithmetic(dir, have, cfg, s.AllowArithmeticChange); err != nil {
			return cfg, fmt.Errorf("chain %d: %w", i, err)
		}
	}
	return cfg, nil
}

// taskArithmetic checks a chain task's arithmetic, recorded in cfg, against
// the run's, recorded in have by the first task: a task on another node
// whose arithmetic differs is refused, unless allow, and then runs on its
// own arithmetic, recorded in its chain's config (eval reports the mix);
// the run's config keeps the first task's.
func taskArithmetic(dir string, have, cfg runspec.Config, allow bool) (runspec.Config, error) {
	if have.Arithmetic == cfg.Arithmetic || have.Arithmetic == "" {
		return cfg, nil
	}
	if !allow {
		return cfg, fmt.Errorf("%w (the run's chains would be computed with two arithmetics)", runspec.ArithmeticDiffers(dir, 0, have.Arithmetic, cfg.Arithmetic))
	}
	return cfg, nil
}

// claimRunConfig writes cfg as dir's run config unless one exists, and
// otherwise checks that the existing one has the same settings. Concurrent
// callers are safe: exactly one link succeeds.
func claimRunConfig(dir string, cfg runspec.Config) error {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("run config: %w", err)
	}
	tmp, err := rundir.WriteTemp(dir, append(b, '\n'))
	if err != nil {
		return fmt.Errorf("run config: %w", err)
	}
	path := filepath.Join(dir, rundir.ConfigFile)
	err = os.Link(tmp, path)
	os.Remove(tmp)
	if err == nil {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("run config: %w", err)
	}
	have, err := rundir.ReadRunConfig(dir)
	if err != nil {
		return err
	}
	if have.Chain != 0 || have.Chains != cfg.Chains && have.Chains <= 1 {
		return fmt.Errorf("%s holds a single-chain run (or one chain of a run), not a run of %d chains: %w", dir, cfg.Chains, ErrConfigMismatch)
	}
	if diff := configDiff(have, cfg); len(diff) > 0 {
		return fmt.Errorf("run %s was started with other settings: %s: %w", dir, strings.Join(diff, ", "), ErrConfigMismatch)
	}
	return nil
}

// configDiff lists the settings (by their config-file names) in which
// want, the saved config, and got, a task's, differ, as
// "name saved (this task: value)"; the chain number is not compared.
func configDiff(want, got runspec.Config) []string {
	want.Chain, got.Chain = 0, 0
	// The arithmetic is checked on its own (checkTaskArithmetic, resume).
	want.Arithmetic, got.Arithmetic = "", ""
	want.ArithmeticChanges, got.ArithmeticChanges = nil, nil
	// a run saved before the preconditioner existed ran with none
	for _, c := range []*runspec.Config{&want, &got} {
		if c.Precondition == "" {
			c.Precondition = "none"
		}
		if c.MassScale == "" { // and before the mass scale, with widest
			c.MassScale = "widest"
		}
	}
	w, g := runspec.FieldsOf(want), runspec.FieldsOf(got)
	// Settings a config file omits when zero are compared too when only one
	// side has them: a run saved before xtolerance existed ran without it,
	// and a task with it set differs.
	var keys []string
	for k := range w {
		keys = append(keys, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	// What a run records of its identity (the data's fingerprint, the
	// model's shapes) follows from the settings: it is named only when no
	// setting differs (the data changed on disk, say), and not at all when
	// the saved run predates recording it.
	derived := map[string]bool{"data_fingerprint": true, "shapes": true}
	unset := func(v json.RawMessage) string {
		if v == nil {
			return "unset"
		}
		return string(v)
	}
	var out, identity []string
	for _, k := range keys {
		if _, saved := w[k]; derived[k] && !saved {
			continue
		}
		if !bytes.Equal(w[k], g[k]) {
			d := fmt.Sprintf("%s %s (this task: %s)", k, unset(w[k]), unset(g[k]))
			if derived[k] {
				identity = append(identity, d)
			} else {
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 {
		return identity
	}
	return out
}
