package sampler

import (
	"math/rand/v2"
)

// SGHMC is stochastic gradient HMC with friction (Chen et al. 2014), with
// unit mass and no gradient-noise estimate (B^ = 0):
//
//	p     <- exp(-C h) p - grad U~(theta) h/sqrt(T) + sqrt(2 (1 - exp(-C h))) N(0, I)
//	theta <- theta + p h sqrt(T)
//
// It is SGNHT with the thermostat held at the friction C, and tempered the
// same way (see SGNHT and Tempering).
type SGHMC struct {
	StepSize float64 // h
	Friction float64 // C
	// FrictionPerStep is alpha = C h, the friction per step the kernel
	// keeps when a transition's Hyper.StepSize moves its step to h': there
	// C = alpha/h'. 0 means C StepSize.
	FrictionPerStep float64
	Tempering       Tempering
}

// SGHMCParams are the sghmc kernel's settings.
type SGHMCParams struct {
	// Friction is alpha, the momentum's decay per step: the friction is
	// C = alpha/h at the rate's step h.
	Friction float64 `json:"friction" doc:"momentum decay per step alpha (diffusion A = alpha/h)"`
}

// Validate checks alpha in (0, 1).
func (p SGHMCParams) Validate() error { return validFriction(p.Friction) }

// Kernel returns SGHMC at the rate's step h with friction alpha/h, which it
// keeps at alpha per step when Hyper.StepSize moves its step.
func (p SGHMCParams) Kernel(r Rate, t Tempering) Kernel {
	h, c := frictionAt(r, p.Friction)
	return SGHMC{StepSize: h, Friction: c, FrictionPerStep: p.Friction, Tempering: t}
}

// Dynamics returns h and A = C.
func (k SGHMC) Dynamics() (h, a float64) { return k.StepSize, k.Friction }

// At returns the kernel stepping at h: friction alpha/h, the same friction
// and injected noise per step (see FrictionPerStep).
func (k SGHMC) At(h float64) Kernel { return k.at(h) }

// at returns the kernel that steps at h (0: k itself).
func (k SGHMC) at(h float64) SGHMC {
	if h == 0 || h == k.StepSize {
		return k
	}
	alpha := k.FrictionPerStep
	if alpha == 0 {
		alpha = k.Friction * k.StepSize
	}
	return SGHMC{StepSize: h, Friction: alpha / h, FrictionPerStep: alpha, Tempering: k.Tempering}
}

// Name returns "sghmc".
func (k SGHMC) Name() string { return "sghmc" }

// Init draws p ~ N(0, I).
func (k SGHMC) Init(s *State, rng *rand.Rand) {
	for i := range s.P {
		s.P[i] = rng.NormFloat64()
	}
	s.Xi = k.Friction
}

// Step performs one SGHMC update on the minibatch mb at the step size and
// temperature of hp.
func (k SGHMC) Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error {
	k = k.at(hp.StepSize)
	s.Xi = k.Friction
	// The mid-step kinetic temperature is not finite when any coordinate of
	// p is; theta moves by h p, so it stays finite with p (a restored state
	// is checked on resume).
	_, kin, after, err := sgnhtStep(pot, s, mb, k.Friction, k.StepSize, k.Friction, k.Tempering.coefficients(hp.temp()), 0, rng)
	if err != nil {
		return err
	}
	s.Kinetic, s.kinAfter, s.hasKinAfter = kin, after, true
	return finite(s.Kinetic)
}
