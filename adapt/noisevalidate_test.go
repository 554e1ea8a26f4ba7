package adapt

import (
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestNoiseValidateCeiling checks that the correction's ceiling, which
// raises a diagonal mass per coordinate, is refused with a dense or
// low-rank mass and accepted with the diagonal ones or at 0.
func TestNoiseValidateCeiling(t *testing.T) {
	k := sampler.SGNHT{}
	for _, c := range []struct {
		p       Preconditioner
		ceiling float64
		ok      bool
	}{
		{PrecondNone, 0.25, true},
		{PrecondRMSprop, 0.25, true},
		{PrecondVariance, 0.25, true},
		{PrecondDense, 0.25, false},
		{PrecondLowRank, 0.25, false},
		{PrecondDense, 0, true},
		{PrecondLowRank, 0, true},
	} {
		n := Noise{Correct: true, BurnIn: 10000, Precondition: c.p, Ceiling: c.ceiling}
		if err := n.Validate(k, 0); (err == nil) != c.ok {
			t.Errorf("precondition %s, ceiling %g: %v, want ok %v", c.p, c.ceiling, err, c.ok)
		}
	}
}
