package train

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// loadData reads the training data named by cfg and splits off the
// validation set, deterministically from the seed.
func loadData(cfg Config) (train, val *datasets.Dataset, err error) {
	tr, _, err := datasets.LoadMNIST(cfg.Data)
	if err != nil {
		return nil, nil, err
	}
	return splitData(cfg, tr)
}

// splitData keeps the classes of cfg.Classes (relabelled), then a random
// subset of cfg.TrainSize (and validation) examples, and splits off the
// validation set.
func splitData(cfg Config, tr *datasets.Dataset) (train, val *datasets.Dataset, err error) {
	if len(cfg.Classes) > 0 {
		if tr, _, err = SelectClasses(tr, cfg.Classes); err != nil {
			return nil, nil, err
		}
	}
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
