package sampler

import "math/rand/v2"

// SGD is momentum SGD on the potential, with unit mass: SGHMC's update
// without the injected noise and without the temperature,
//
//	p     <- (1 - C h) p - grad U~(theta) h
//	theta <- theta + p h
//
// (in the learning rate eta = h^2 and momentum decay alpha = C h of Chen et
// al. 2014, section 3.3, this is SGD with momentum). SGD is not a sampler:
// its chain converges to a mode of U (for a posterior, the MAP estimate)
// instead of sampling exp(-U/T). It is the non-Bayesian baseline a run
// compares its posterior against.
//
// The friction is the Euler factor 1 - C h (with the learning rates of a
// run, C h < 1), and Init sets the momentum to zero.
type SGD struct {
	StepSize float64 // h
	Friction float64 // C
	// FrictionPerStep is alpha = C h, the momentum decay per step the
	// kernel keeps when a transition's Hyper.StepSize moves its step to h':
	// there C = alpha/h'. 0 means C StepSize.
	FrictionPerStep float64
}

// SGDParams are the sgd kernel's settings.
type SGDParams struct {
	// Friction is alpha, the momentum's decay per step: the friction is
	// C = alpha/h at the rate's step h.
	Friction float64 `json:"friction" doc:"momentum decay per step alpha (diffusion A = alpha/h)"`
}

// Validate checks alpha in (0, 1).
func (p SGDParams) Validate() error { return validFriction(p.Friction) }

// Kernel returns momentum SGD at the rate's step h with friction alpha/h,
// which it keeps at alpha per step when Hyper.StepSize moves its step. An
// optimiser samples nothing: t is not used.
func (p SGDParams) Kernel(r Rate, t Tempering) Kernel {
	h, c := frictionAt(r, p.Friction)
	return SGD{StepSize: h, Friction: c, FrictionPerStep: p.Friction}
}

// Name returns "sgd".
func (k SGD) Name() string { return "sgd" }

// Init sets p = 0.
func (k SGD) Init(s *State, rng *rand.Rand) { clear(s.P) }

// Step performs one momentum SGD update on the minibatch mb at the step
// size of hp (its friction per step, C h, kept); the temperature is
// ignored.
func (k SGD) Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error {
	if err := gradientAt(pot, s, mb, rng); err != nil {
		return err
	}
	if h := hp.StepSize; h != 0 && h != k.StepSize {
		alpha := k.FrictionPerStep
		if alpha == 0 {
			alpha = k.Friction * k.StepSize
		}
		k.Friction, k.StepSize = alpha/h, h
	}
	decay := 1 - k.Friction*k.StepSize
	kin := 0.0 // p'p: not finite when any coordinate of p is (checked in the same pass)
	for i := range s.P {
		s.P[i] = decay*s.P[i] - k.StepSize*s.Grad[i]
		s.Theta[i] += k.StepSize * s.P[i]
		kin += s.P[i] * s.P[i]
	}
	return finite(kin)
}
