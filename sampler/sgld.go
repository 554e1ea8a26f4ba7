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
	SGLDUpdate(s.Theta, s.Grad, k.StepSize, 1/temp, rng)
	return finite(s.Theta[0])
}

// SGLDUpdate applies one SGLD update to theta in place.
func SGLDUpdate(theta, grad []float64, eps, invT float64, rng *rand.Rand) {
	noise := math.Sqrt(eps)
	ns := newNormalSource(rng)
	for i := range theta {
		theta[i] += -0.5*eps*invT*grad[i] + noise*ns.norm()
	}
}
