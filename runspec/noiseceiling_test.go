package runspec

import (
	"strings"
	"testing"
)

// TestNoiseCeilingNeedsDiagonalMass checks that the noise correction's
// ceiling, which raises a diagonal mass per coordinate, is refused with a
// dense or low-rank mass unless set to 0, and accepted with every diagonal
// preconditioner.
func TestNoiseCeilingNeedsDiagonalMass(t *testing.T) {
	for _, c := range []struct {
		precondition string
		ceiling      float64
		ok           bool
	}{
		{"none", 0.25, true},
		{"rmsprop", 0.25, true},
		{"variance", 0.25, true},
		{"dense", 0.25, false},
		{"lowrank", 0.25, false},
		{"dense", 0, true},
		{"lowrank", 0, true},
	} {
		cfg := DefaultConfig()
		cfg.Sampler, cfg.NoiseCorrection, cfg.Precondition, cfg.NoiseCeiling = "sgnht", true, c.precondition, c.ceiling
		err := cfg.Validate(DefaultSetup())
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "--noise-ceiling 0") {
			t.Errorf("precondition %s, ceiling %g: %v (want ok %v, naming --noise-ceiling 0)", c.precondition, c.ceiling, err, c.ok)
		}
	}
}
