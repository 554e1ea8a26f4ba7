package train

import (
	"context"
	"fmt"
	"os"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// PilotReplicas is the number of rungs of the pilot run that --replicas auto
// measures the barrier with.
const PilotReplicas = 4

// DefaultMaxReplicas caps --replicas auto when MaxReplicas is 0.
const DefaultMaxReplicas = 16

// ChooseReplicas resolves Replicas = 0 (--replicas auto) of a PT-SGHMC
// config: a pilot run of PilotReplicas rungs, in a scratch directory that
// is removed afterwards, tunes an adaptive ladder over the
// config's burn-in (its swap target, or fixed ends from 1 to TMax) and
// measures the communication barrier Lambda from its last stationary
// round; the run then gets the rungs that barrier needs
// (tempering.RungsFor: Lambda/r(A) + 1 with a swap target A, else about
// 2 Lambda; at most MaxReplicas). The returned config records the choice
// and why in ReplicasChoice, and config.json then holds the chosen
// Replicas, so a resume uses it. The pilot costs PilotReplicas x BurnIn
// gradient steps. Other configs are returned unchanged (auto means 1 rung
// for single-chain samplers).
//
// The pilot runs with the registries and training data of s (the data
// loaded from cfg.Data when s has none). Before it, the final run's config
// and the pilot's are validated (checkAutoConfig); CheckAutoReplicas also
// checks the run directory.
func ChooseReplicas(ctx context.Context, cfg runspec.Config, s runspec.Setup) (runspec.Config, error) {
	if cfg.Replicas != 0 || cfg.Sampler != runspec.PTSGHMC {
		return resolveSingle(cfg), nil
	}
	if err := checkAutoConfig(cfg, s); err != nil { // before the data and the pilot
		return cfg, err
	}
	if s.Train == nil {
		tr, _, err := datasets.LoadMNIST(cfg.Data)
		if err != nil {
			return cfg, fmt.Errorf("replicas auto: %w", err)
		}
		s = s.WithTrain(tr)
	}
	return chooseReplicas(ctx, cfg, s)
}

func resolveSingle(cfg runspec.Config) runspec.Config {
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	return cfg
}

// CheckAutoReplicas checks, before ChooseReplicas runs its pilot, what
// would refuse the run of cfg (Replicas 0, --replicas auto) in dir once the
// pilot is done, so that no pilot is trained for nothing: the config of the
// final run, that of the pilot (checkAutoConfig) and, as NewChains checks
// it, that dir holds no run (with overwrite false) or holds one or nothing
// (with overwrite true). Configs without a pilot (a sampler other than
// ptsghmc, or Replicas given) are left to NewChains.
func CheckAutoReplicas(dir string, cfg runspec.Config, overwrite bool, s runspec.Setup) error {
	if cfg.Replicas != 0 || cfg.Sampler != runspec.PTSGHMC {
		return nil
	}
	if err := checkAutoConfig(cfg, s); err != nil {
		return err
	}
	return checkFree(dir, overwrite)
}

// checkAutoConfig validates a config of --replicas auto before its pilot:
// the final run's (with PilotReplicas standing for the rungs to be chosen,
// at least tempering.MinAutoRungs: no check depends on how many) and the
// pilot's, whose adaptive ladder the user did not ask for, so that its
// needs are said in terms of --replicas auto.
func checkAutoConfig(cfg runspec.Config, s runspec.Setup) error {
	final := cfg
	final.Replicas = PilotReplicas
	if err := validateNew(final, s); err != nil { // as NewChains validates it
		return err
	}
	pilot := pilotConfig(cfg)
	if pilot.Scheme != "alternate" || pilot.Exchange <= 0 {
		return fmt.Errorf("--replicas auto runs an adaptive-ladder pilot, which needs --scheme alternate and --exchange > 0 (got --scheme %s, --exchange %d): give --replicas N instead", pilot.Scheme, pilot.Exchange)
	}
	if err := pilot.Validate(s); err != nil {
		return fmt.Errorf("--replicas auto runs a pilot of %d rungs on an adaptive ladder over the --burnin %d steps, which this config does not allow (give --replicas N instead): %w", PilotReplicas, cfg.BurnIn, err)
	}
	return nil
}

// pilotConfig returns the config of the pilot run of cfg (--replicas auto):
// PilotReplicas rungs of one chain on an adaptive ladder, over cfg's
// burn-in and one step more.
func pilotConfig(cfg runspec.Config) runspec.Config {
	pilot := cfg
	pilot.Replicas, pilot.Ladder, pilot.Chains, pilot.Chain = PilotReplicas, "adaptive", 1, 0
	if cfg.Ladder != "adaptive" {
		pilot.SwapTarget = 0
	}
	pilot.Steps = max(cfg.BurnIn, 1) + 1
	pilot.Thin, pilot.CycleKeep = 1, 1 // its one step after burn-in keeps a sample (a new run must keep one); what it keeps is not read
	pilot.CkptEvery = pilot.Steps
	return pilot
}

func chooseReplicas(ctx context.Context, cfg runspec.Config, s runspec.Setup) (runspec.Config, error) {
	maxR := cfg.MaxReplicas
	if maxR == 0 {
		maxR = DefaultMaxReplicas
	}
	pilot := pilotConfig(cfg)
	scratch, err := os.MkdirTemp("", "ptsghmc-pilot-")
	if err != nil {
		return cfg, fmt.Errorf("replicas auto: pilot run directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	r, err := New(scratch, pilot, true, s)
	if err != nil {
		return cfg, fmt.Errorf("replicas auto: pilot run: %w", err)
	}
	defer r.Close()
	if err := r.Train(ctx, nil); err != nil {
		return cfg, fmt.Errorf("replicas auto: pilot run: %w", err)
	}
	lambda, ok := r.State().TunedBarrier()
	if !ok {
		return cfg, fmt.Errorf("replicas auto: the pilot's %d tuning rounds over a burn-in of %d steps were all spoiled by a transient or failed: no barrier to choose the rungs from (lengthen --burnin or give --replicas)", len(r.State().Tuning.Rounds), cfg.BurnIn)
	}
	target := 0.0
	if cfg.Ladder == "adaptive" {
		target = cfg.SwapTarget
	}
	n, why, err := tempering.RungsFor(lambda, target, maxR)
	if err != nil {
		return cfg, fmt.Errorf("replicas auto: %w", err)
	}
	cfg.Replicas = n
	cfg.ReplicasChoice = fmt.Sprintf("%s; measured by a pilot of %d rungs tuned over %d steps", why, PilotReplicas, cfg.BurnIn)
	return cfg, nil
}
