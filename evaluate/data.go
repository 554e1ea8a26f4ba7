package evaluate

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// LoadRunsData loads the data runs are scored on: the MNIST-style data in
// dir, or when dir is empty in the data directory the first run recorded.
// It returns the training and test sets and the directory they are from.
func LoadRunsData(runs []string, dir string) (full, test *datasets.Dataset, from string, err error) {
	if len(runs) == 0 {
		return nil, nil, "", fmt.Errorf("evaluate: no run")
	}
	if dir == "" {
		cfg, err := rundir.ReadRunConfig(runs[0])
		if err != nil {
			return nil, nil, "", err
		}
		dir = cfg.Data
	}
	full, test, err = datasets.LoadMNIST(dir)
	if err != nil {
		return nil, nil, "", err
	}
	return full, test, dir, nil
}

// CheckRunsData checks that every run of dirs recorded full, the training
// set of the data directory dir, as the one it was trained on
// (rundir.CheckRunData: a test set belongs with its training set). A
// multi-chain run's own config records the fingerprint its chains share,
// so chains missing or still starting are no obstacle.
func CheckRunsData(dirs []string, dir string, full *datasets.Dataset) error {
	for _, d := range dirs {
		if err := rundir.CheckRunData(d, dir, full); err != nil {
			return err
		}
	}
	return nil
}

// ValidationSet returns the validation examples the runs dirs held out of
// full, refusing runs that did not hold out the same ones
// (runspec.SameSplit).
func ValidationSet(dirs []string, full *datasets.Dataset) (*datasets.Dataset, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("evaluate: no run")
	}
	first, err := rundir.ReadRunConfig(dirs[0])
	if err != nil {
		return nil, err
	}
	for _, d := range dirs[1:] {
		c, err := rundir.ReadRunConfig(d)
		if err != nil {
			return nil, err
		}
		if err := runspec.SameSplit(dirs[0], first, d, c); err != nil {
			return nil, err
		}
	}
	val, err := runspec.ValidationSet(first, full)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dirs[0], err)
	}
	return val, nil
}
