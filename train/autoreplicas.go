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
// loaded from cfg.Data when s has none).
func ChooseReplicas(ctx context.Context, cfg runspec.Config, s runspec.Setup) (runspec.Config, error) {
	if cfg.Replicas != 0 || cfg.Sampler != runspec.PTSGHMC {
		return resolveSingle(cfg), nil
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

func chooseReplicas(ctx context.Context, cfg runspec.Config, s runspec.Setup) (runspec.Config, error) {
	maxR := cfg.MaxReplicas
	if maxR == 0 {
		maxR = DefaultMaxReplicas
	}
	pilot := cfg
	pilot.Replicas, pilot.Ladder, pilot.Chains, pilot.Chain = PilotReplicas, "adaptive", 1, 0
	if cfg.Ladder != "adaptive" {
		pilot.SwapTarget = 0
	}
	pilot.Steps = max(cfg.BurnIn, 1) + 1
	pilot.Thin, pilot.CycleKeep = 1, 1 // its one step after burn-in keeps a sample (a new run must keep one); what it keeps is not read
	pilot.CkptEvery = pilot.Steps
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
