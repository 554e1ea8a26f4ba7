package runspec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
