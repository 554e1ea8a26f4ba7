package runspec

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// LoadData reads the training data named by cfg and splits off the
// validation set, deterministically from the seed.
func LoadData(cfg Config) (train, val *datasets.Dataset, err error) {
	tr, _, err := datasets.LoadMNIST(cfg.Data)
	if err != nil {
		return nil, nil, err
	}
	return SplitData(cfg, tr)
}

// SplitData keeps the classes of cfg.Classes (relabelled), then a random
// subset of cfg.TrainSize (and validation) examples, and splits off the
// validation set.
func SplitData(cfg Config, tr *datasets.Dataset) (train, val *datasets.Dataset, err error) {
	if len(cfg.Classes) > 0 {
		if tr, _, err = SelectClasses(tr, cfg.Classes); err != nil {
			return nil, nil, err
		}
	}
	rng := rand.New(rand.NewPCG(cfg.splitSeed(), 0x5eed))
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

// splitSeed returns the seed of the run's training subset and validation
// split: SplitSeed, or Seed when it is 0.
func (c Config) splitSeed() uint64 {
	if c.SplitSeed != 0 {
		return c.SplitSeed
	}
	return c.Seed
}

// ValidationSet returns the validation examples the run of cfg held out of
// full, its training file's data: what `eval --split validation` scores, so
// that configurations can be chosen without looking at the test set.
func ValidationSet(cfg Config, full *datasets.Dataset) (*datasets.Dataset, error) {
	if cfg.Validation == 0 {
		return nil, fmt.Errorf("the run holds out no validation examples (validation 0)")
	}
	_, val, err := SplitData(cfg, full)
	return val, err
}

// SameSplit returns an error naming the difference when runs a and b
// (configs read from dirA and dirB) did not hold out the same validation
// examples: the same data, training subset, validation size and split seed.
func SameSplit(dirA string, a Config, dirB string, b Config) error {
	ka := fmt.Sprintf("data %s, train_size %d, validation %d, split seed %d", a.Data, a.TrainSize, a.Validation, a.splitSeed())
	kb := fmt.Sprintf("data %s, train_size %d, validation %d, split seed %d", b.Data, b.TrainSize, b.Validation, b.splitSeed())
	if ka != kb {
		return fmt.Errorf("run %s held out (%s), run %s (%s): not the same validation set (give the runs one --split-seed)", dirA, ka, dirB, kb)
	}
	return nil
}
