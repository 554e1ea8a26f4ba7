package sampler

import (
	"math"
	"math/rand/v2"
)

// SGLD is stochastic gradient Langevin dynamics (Welling and Teh 2011) at
// temperature T:
//
//	theta <- theta - (eps/2) grad U~(theta)/T + sqrt(eps) N(0, I)
type SGLD struct {
	StepSize float64 // eps
}

// Name returns "sgld".
func (k SGLD) Name() string { return "sgld" }

// Init does nothing: SGLD has no auxiliary variables.
func (k SGLD) Init(s *State, rng *rand.Rand) {}

// Step performs one SGLD update.
func (k SGLD) Step(pot Potential, s *State, temp float64, rng *rand.Rand) error {
	if err := gradientAt(pot, s, rng); err != nil {
		return err
	}
	return finite(sgldUpdate(s.Theta, s.Grad, k.StepSize, 1/temp, rng))
}

// SGLDUpdate applies one SGLD update to theta in place.
func SGLDUpdate(theta, grad []float64, eps, invT float64, rng *rand.Rand) {
	sgldUpdate(theta, grad, eps, invT, rng)
}

// sgldUpdate is SGLDUpdate; it returns the sum of the new theta, which is
// not finite when any coordinate is not (the divergence check of every
// coordinate, at no extra pass).
func sgldUpdate(theta, grad []float64, eps, invT float64, rng *rand.Rand) float64 {
	noise := math.Sqrt(eps)
	ns := newNormalSource(rng)
	sum := 0.0
	var buf [normalChunk]float64
	for lo := 0; lo < len(theta); lo += normalChunk {
		hi := min(lo+normalChunk, len(theta))
		z := buf[:hi-lo]
		ns.fill(z)
		tc, gc := theta[lo:hi], grad[lo:hi]
		for i, zi := range z {
			tc[i] += -0.5*eps*invT*gc[i] + noise*zi
			sum += tc[i]
		}
	}
	return sum
}
