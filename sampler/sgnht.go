package sampler

import (
	"math"
	"math/rand/v2"
)

// SGNHT is the stochastic gradient Nose-Hoover thermostat (Ding et al. 2014)
// at temperature T, with unit mass:
//
//	p     <- exp(-xi h) p - grad U~(theta)/T h + sqrt(2 A h) N(0, I)
//	theta <- theta + p h
//	xi    <- xi + (p'p/D - 1) h / Q
//
// The thermostat xi grows when the kinetic temperature p'p/D exceeds 1 and so
// absorbs gradient noise of unknown size; A is the injected diffusion and Q
// the thermostat's inertia (Ding et al. use Q = 1; a smaller Q adapts
// faster, which large models with small steps need).
//
// The friction is integrated exactly, exp(-xi h), rather than by Ding et
// al.'s Euler factor 1 - xi h. The two agree to first order in h, but the
// Euler factor falls below -1 once xi h > 2 and the momentum then grows
// without bound: a thermostat that overshoots on a one-dimensional target
// (xi about 10 at h = 0.2) diverged that way within a million steps.
type SGNHT struct {
	StepSize  float64 // h
	Diffusion float64 // A; the thermostat starts at xi = A
	Inertia   float64 // Q; 0 means 1
}

// Name returns "sgnht".
func (k SGNHT) Name() string { return "sgnht" }

// Init draws p ~ N(0, I) and sets xi = A.
func (k SGNHT) Init(s *State, rng *rand.Rand) {
	for i := range s.P {
		s.P[i] = rng.NormFloat64()
	}
	s.Xi = k.Diffusion
}

// Step performs one SGNHT update.
func (k SGNHT) Step(pot Potential, s *State, temp float64, rng *rand.Rand) error {
	if err := gradientAt(pot, s, rng); err != nil {
		return err
	}
	q := k.Inertia
	if q == 0 {
		q = 1
	}
	s.Xi = SGNHTUpdate(s.Theta, s.P, s.Grad, s.Xi, k.StepSize, k.Diffusion, 1/temp, 1/q, rng)
	return finite(s.Xi)
}

// SGNHTUpdate applies one SGNHT update in place to theta and p given the
// gradient at theta, and returns the new thermostat, adapted at rate invQ
// (1/Q). With invQ = 0 the thermostat is held fixed (xi is then SGHMC's
// friction).
func SGNHTUpdate(theta, p, grad []float64, xi, h, a, invT, invQ float64, rng *rand.Rand) float64 {
	kin := momentumUpdate(theta, p, grad, xi, h, a, invT, rng)
	xi += invQ * h * (kin/float64(len(p)) - 1)
	return xi
}

// momentumUpdate is SGNHTUpdate's loop over the coordinates; it returns
// p'p after the update, which is not finite when any p_i is not (the
// divergence check of every coordinate, at no extra pass).
func momentumUpdate(theta, p, grad []float64, xi, h, a, invT float64, rng *rand.Rand) float64 {
	noise := math.Sqrt(2 * a * h)
	decay := math.Exp(-xi * h)
	kin := 0.0
	ns := newNormalSource(rng)
	for i := range p {
		pi := decay*p[i] - h*invT*grad[i] + noise*ns.norm()
		p[i] = pi
		theta[i] += h * pi
		kin += pi * pi
	}
	return kin
}
