package rundir

import (
	"errors"
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// ErrOtherData is wrapped by the error about a run given training data
// other than its own.
var ErrOtherData = errors.New("not the data the run was trained on")

// CheckFingerprint compares the fingerprint a run recorded (nil for runs
// older than fingerprints: nothing to check) with the data it is given.
func CheckFingerprint(dir string, recorded *runspec.Fingerprint, dataName string, d *datasets.Dataset) error {
	if recorded == nil {
		return nil
	}
	got := runspec.DataFingerprint(d)
	if got != *recorded {
		return fmt.Errorf("run %s was trained on %s; the training data from %s is %s: %w", dir, recorded, dataName, got, ErrOtherData)
	}
	return nil
}

// CheckRunData reports an error when the run in dir recorded a training-data
// fingerprint and full, the training set of a data directory (before the
// run's subset and validation split, which are redone here), is not that
// data: evaluating a run against a data directory other than its own. Runs
// older than fingerprints pass.
func CheckRunData(dir, dataName string, full *datasets.Dataset) error {
	cfg, err := ReadRunConfig(dir)
	if err != nil {
		return err
	}
	if cfg.DataFingerprint == nil {
		return nil
	}
	tr, _, err := runspec.SplitData(cfg, full)
	if err != nil {
		return fmt.Errorf("run %s on the training data of %s: %w", dir, dataName, err)
	}
	return CheckFingerprint(dir, cfg.DataFingerprint, dataName, tr)
}
