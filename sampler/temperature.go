package sampler

import (
	"fmt"
	"math"
)

// Tempering is how a kernel targets the tempered density exp(-U/T) at a
// temperature T != 1 (a PT rung, or a run's posterior temperature).
//
// The two forms are one family: in exact arithmetic the noise-tempered
// chain at step h is the gradient-tempered chain at step sqrt(T) h with
// the same friction and injected noise per step (SGLD: step eps against
// eps T). They differ in what a step size means. The stability of the
// integrator and the gradient noise's share of the momentum's diffusion
// depend on the step through h^2 times the curvature (and the gradient
// variance) of U/T under TemperGradient, and of U under TemperNoise: a
// step that is stable and quiet at T = 1 stays so at any T when the
// noise is tempered, while dividing the gradient by T = 0.1 at the same
// step multiplies the gradient noise's share by about 1/T^2 = 100 and the
// curvature by 10. docs/sampler.md derives this.
type Tempering int

const (
	// TemperNoise tempers through the noise: the injected noise's variance
	// and the thermostat's target kinetic energy are T times their
	// untempered values and the gradient is unscaled (BlackJAX's
	// sgmcmc diffusions). The zero value, and the default of runs.
	TemperNoise Tempering = iota
	// TemperGradient tempers through the gradient, grad U/T at an
	// unchanged step and noise: what PT-SGHMC rungs did before the choice
	// existed (runs that do not record a tempering resume with it).
	TemperGradient
)

// String returns "noise" or "gradient".
func (t Tempering) String() string {
	switch t {
	case TemperNoise:
		return "noise"
	case TemperGradient:
		return "gradient"
	}
	return fmt.Sprintf("Tempering(%d)", int(t))
}

// ParseTempering returns the Tempering named "noise" or "gradient".
func ParseTempering(name string) (Tempering, error) {
	switch name {
	case "noise":
		return TemperNoise, nil
	case "gradient":
		return TemperGradient, nil
	}
	return 0, fmt.Errorf("tempering %q: expected noise or gradient", name)
}

// temperCoef holds the factors a temperature puts on a momentum kernel's
// step: the gradient's coefficient is grad h and the position moves by
// pos h p (p the momentum in units where its kinetic temperature is 1).
type temperCoef struct{ grad, pos float64 }

// coefficients returns the step factors at temperature temp:
// (1/sqrt(T), sqrt(T)) for TemperNoise, (1/T, 1) for TemperGradient.
// With the momentum m = sqrt(T) p of unit mass, TemperNoise's update
//
//	m' = exp(-xi h) m - h grad U + sqrt(T) sqrt(2 (1 - exp(-A h))) N(0, I),  theta' = theta + h m'
//
// is p' = exp(-xi h) p - (h/sqrt(T)) grad U + sqrt(2 (1 - exp(-A h))) N(0, I),
// theta' = theta + h sqrt(T) p', whose thermostat holds |p|^2/D at 1 as at
// T = 1. Both factors are exactly 1 at T = 1.
func (t Tempering) coefficients(temp float64) temperCoef {
	if t == TemperGradient {
		return temperCoef{grad: 1 / temp, pos: 1}
	}
	if temp == 1 {
		return temperCoef{grad: 1, pos: 1}
	}
	r := math.Sqrt(temp)
	return temperCoef{grad: 1 / r, pos: r}
}
