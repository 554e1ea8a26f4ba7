package sampler

import "math"

// Rate is a run's learning rate: the one mapping from --lr to the step of
// a kernel of Kernels.
//
// A run's learning rate eps is per example (the step of gradient descent
// on the mean log-likelihood, as in SGD), and the potential U is the sum
// over the N training examples, so the kernels' step is
//
//	h = sqrt(eps/N)
//
// (SGNHT, SGHMC, SGD and HMC: the momentum form of SGD with learning rate
// h^2 = eps/N on U, Chen et al. 2014, section 3.3), the friction per step
// alpha (--friction, the momentum's decay per step) is the diffusion or
// friction A = alpha/h, and SGLD's step is 2 eps/N = 2 h^2 (Welling and
// Teh's eps on U). A schedule scales eps by s from step to step: Step,
// SGLDStep and StepOf at s, handed to the kernel as Hyper.StepSize.
type Rate struct {
	LR       float64 // eps: the learning rate per example (--lr)
	Examples int     // N: the training examples
}

// Step returns h = sqrt(s eps/N), the step of SGNHT, SGHMC, SGD and HMC at
// s times the rate.
func (r Rate) Step(s float64) float64 { return math.Sqrt(s * r.LR / float64(r.Examples)) }

// SGLDStep returns SGLD's step 2 s eps/N at s times the rate.
func (r Rate) SGLDStep(s float64) float64 { return 2 * s * r.LR / float64(r.Examples) }

// RateStepper is a kernel whose step is not h = sqrt(eps/N) in a rate's
// terms (SGLD).
type RateStepper interface {
	// RateStep returns the kernel's step at s times the rate r.
	RateStep(r Rate, s float64) float64
}

// StepOf returns kernel k's Hyper.StepSize at s times the rate: its
// RateStep when it has one, h = Step(s) otherwise.
func (r Rate) StepOf(k Kernel, s float64) float64 {
	if rs, ok := k.(RateStepper); ok {
		return rs.RateStep(r, s)
	}
	return r.Step(s)
}

// KernelAt returns kernel k as it steps at Hyper.StepSize h: a Frictional
// kernel's At(h) (its diffusion follows the step), k itself for any other
// kernel or for h = 0.
func KernelAt(k Kernel, h float64) Kernel {
	if fk, ok := k.(Frictional); ok && h != 0 {
		return fk.At(h)
	}
	return k
}
