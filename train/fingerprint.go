package train

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// Fingerprint identifies a training set: its counts, shape and a SHA-256
// of its features (float32 bits) and labels. A run records the fingerprint
// of the examples it trains on (after the validation split) in its config
// and checkpoints, so a resume on other data is refused.
type Fingerprint struct {
	N       int    `json:"n" yaml:"n"`             // examples
	D       int    `json:"d" yaml:"d"`             // features per example
	Classes int    `json:"classes" yaml:"classes"` // label classes
	SHA256  string `json:"sha256" yaml:"sha256"`   // hex SHA-256 of the features and labels, in order
}

// DataFingerprint returns the fingerprint of d.
func DataFingerprint(d *datasets.Dataset) Fingerprint {
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	flush := func() {
		h.Write(buf)
		buf = buf[:0]
	}
	for _, v := range d.X {
		if len(buf)+4 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	for _, l := range d.Labels {
		if len(buf)+4 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(l))
	}
	for _, v := range d.Targets {
		if len(buf)+4 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	flush()
	return Fingerprint{N: d.N, D: d.D, Classes: d.Classes, SHA256: hex.EncodeToString(h.Sum(nil))}
}

// String returns the fingerprint as "N x D, C classes, sha256 abcdef012345".
func (f Fingerprint) String() string {
	sum := f.SHA256
	if len(sum) > 12 {
		sum = sum[:12]
	}
	return fmt.Sprintf("%d examples x %d features, %d classes, sha256 %s", f.N, f.D, f.Classes, sum)
}

// ErrOtherData is wrapped by the error about a run given training data
// other than its own.
var ErrOtherData = errors.New("not the data the run was trained on")

// checkFingerprint compares the fingerprint a run recorded (nil for runs
// older than fingerprints: nothing to check) with the data it is given.
func checkFingerprint(dir string, recorded *Fingerprint, dataName string, d *datasets.Dataset) error {
	if recorded == nil {
		return nil
	}
	got := DataFingerprint(d)
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
	tr, _, err := splitData(cfg, full)
	if err != nil {
		return fmt.Errorf("run %s on the training data of %s: %w", dir, dataName, err)
	}
	return checkFingerprint(dir, cfg.DataFingerprint, dataName, tr)
}
