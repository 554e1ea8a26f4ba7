package sampler

import (
	"math"
	"math/rand/v2"
)

// SGLD is stochastic gradient Langevin dynamics (Welling and Teh 2011) at
// temperature T, noise-tempered (TemperNoise, the zero Tempering):
//
//	theta <- theta - (eps/2) grad U~(theta) + sqrt(eps T) N(0, I)
//
// or gradient-tempered (TemperGradient), the same chain at step eps/T:
//
//	theta <- theta - (eps/2) grad U~(theta)/T + sqrt(eps) N(0, I)
type SGLD struct {
	StepSize  float64 // eps
	Tempering Tempering
}

// SGLDParams are the sgld kernel's settings: none beyond the learning
// rate (SGLD has no momentum, so no friction).
type SGLDParams struct{}

// Validate returns nil: SGLD has no settings to check.
func (SGLDParams) Validate() error { return nil }

// Kernel returns SGLD at the rate's step 2 eps/N (Rate.SGLDStep).
func (SGLDParams) Kernel(r Rate, t Tempering) Kernel {
	return SGLD{StepSize: r.SGLDStep(1), Tempering: t}
}

// Name returns "sgld".
func (k SGLD) Name() string { return "sgld" }

// RateStep returns SGLD's step at s times the learning rate r: eps' =
// 2 s eps/N (Rate.SGLDStep).
func (k SGLD) RateStep(r Rate, s float64) float64 { return r.SGLDStep(s) }

// Init does nothing: SGLD has no auxiliary variables.
func (k SGLD) Init(s *State, rng *rand.Rand) {}

// Step performs one SGLD update on the minibatch mb at the step size (eps)
// and temperature of hp.
func (k SGLD) Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error {
	if hp.StepSize != 0 {
		k.StepSize = hp.StepSize
	}
	if err := gradientAt(pot, s, mb, rng); err != nil {
		return err
	}
	temp := hp.temp()
	invT, noiseVar := 1/temp, k.StepSize
	if k.Tempering == TemperNoise {
		invT, noiseVar = 1, k.StepSize*temp
	}
	if s.gradSq != nil {
		for i, g := range s.Grad {
			s.gradSq[i] += g * g
		}
	}
	if s.factor != nil {
		return finite(sgldUpdateFactored(s, k.StepSize, invT, noiseVar, rng))
	}
	if s.invSqrtMass != nil {
		return finite(sgldUpdateMass(s.Theta, s.Grad, s.invSqrtMass, k.StepSize, invT, noiseVar, rng))
	}
	return finite(sgldUpdate(s.Theta, s.Grad, k.StepSize, invT, noiseVar, rng))
}

// sgldUpdateMass is sgldUpdate preconditioned by the mass M = diag(m),
// r = m^-1/2 (pSGLD's update with its preconditioner G = M^-1 held fixed,
// so that Li et al.'s correction term Gamma vanishes):
//
//	theta <- theta - (eps/2) M^-1 grad U~(theta)/T + sqrt(noiseVar) M^-1/2 N(0, I)
func sgldUpdateMass(theta, grad, r []float64, eps, invT, noiseVar float64, rng *rand.Rand) float64 {
	noise := math.Sqrt(noiseVar)
	ns := newNormalSource(rng)
	sum := 0.0
	var buf [normalChunk]float64
	for lo := 0; lo < len(theta); lo += normalChunk {
		hi := min(lo+normalChunk, len(theta))
		z := buf[:hi-lo]
		ns.fill(z)
		tc, gc, rc := theta[lo:hi], grad[lo:hi], r[lo:hi]
		for i, zi := range z {
			tc[i] += rc[i] * (-0.5*eps*invT*gc[i]*rc[i] + noise*zi)
			sum += tc[i]
		}
	}
	return sum
}

// sgldUpdateFactored is sgldUpdateMass with the state's non-diagonal mass
// (MassMatrix, M^-1 = C C'), the gradient in s.Grad:
//
//	theta <- theta + C (-(eps/2) C' grad U~(theta)/T + sqrt(noiseVar) N(0, I))
//
// which is theta - (eps/2) M^-1 grad U~/T + sqrt(noiseVar) N(0, M^-1). It
// returns the sum of the new theta.
func sgldUpdateFactored(s *State, eps, invT, noiseVar float64, rng *rand.Rand) float64 {
	kick, vel := s.factorScratch()
	s.factor.Kick(kick, s.Grad)
	noise := math.Sqrt(noiseVar)
	ns := newNormalSource(rng)
	var buf [normalChunk]float64
	for lo := 0; lo < len(kick); lo += normalChunk {
		hi := min(lo+normalChunk, len(kick))
		z := buf[:hi-lo]
		ns.fill(z)
		for c, zi := range z {
			kick[lo+c] = -0.5*eps*invT*kick[lo+c] + noise*zi
		}
	}
	s.factor.Velocity(vel, kick)
	sum := 0.0
	for i, v := range vel {
		s.Theta[i] += v
		sum += s.Theta[i]
	}
	return sum
}

// SGLDUpdate applies one SGLD update to theta in place.
// The temperature enters as in TemperGradient (gradient scaled by invT).
func SGLDUpdate(theta, grad []float64, eps, invT float64, rng *rand.Rand) {
	sgldUpdate(theta, grad, eps, invT, eps, rng)
}

// sgldUpdate is SGLDUpdate with injected noise of variance noiseVar; it
// returns the sum of the new theta, which is not finite when any
// coordinate is not (the divergence check of every coordinate, at no extra
// pass).
func sgldUpdate(theta, grad []float64, eps, invT, noiseVar float64, rng *rand.Rand) float64 {
	noise := math.Sqrt(noiseVar)
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

// Scales returns the drift's scale c and the injected noise's variance v
// of a step at hp, in the mass's metric: the step is
//
//	theta <- theta - c M^-1 grad U~(theta) + sqrt(v) M^-1/2 N(0, I)
//
// with c = eps/2 and v = eps T noise-tempered, c = eps/(2T) and v = eps
// gradient-tempered (eps is hp's step, or the kernel's when hp has none).
// It is what Step uses; health's SGLD watch reads it.
func (k SGLD) Scales(hp Hyper) (drift, noiseVar float64) {
	if hp.StepSize != 0 {
		k.StepSize = hp.StepSize
	}
	temp := hp.temp()
	invT, noiseVar := 1/temp, k.StepSize
	if k.Tempering == TemperNoise {
		invT, noiseVar = 1, k.StepSize*temp
	}
	return 0.5 * k.StepSize * invT, noiseVar
}
