package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// HMC is Hamiltonian Monte Carlo (Neal 2011) at temperature T: fresh momentum
// p ~ N(0, I), Leapfrog steps of size h on H = U/T + p'p/2, and a Metropolis
// test on the change in H. On a noisy potential both the trajectory and the
// test use the noisy estimates, which is what the PT-SGHMC paper compares
// against.
type HMC struct {
	StepSize float64 // h
	Leapfrog int     // L
}

// HMCParams are the hmc kernel's settings. HMC is not offered to training
// runs (KernelInfo.Minibatch), so no run setting names its leapfrog steps.
type HMCParams struct {
	Leapfrog int `json:"leapfrog"` // L
}

// Validate checks L >= 1.
func (p HMCParams) Validate() error {
	if p.Leapfrog < 1 {
		return fmt.Errorf("leapfrog must be at least 1")
	}
	return nil
}

// Kernel returns HMC at the rate's step h with L leapfrog steps; HMC
// targets the temperature through its Metropolis test, t is not used.
func (p HMCParams) Kernel(r Rate, t Tempering) Kernel {
	return HMC{StepSize: r.Step(1), Leapfrog: p.Leapfrog}
}

// Name returns "hmc".
func (k HMC) Name() string { return "hmc" }

// Init marks the cached gradient stale.
func (k HMC) Init(s *State, rng *rand.Rand) { s.GradValid = false }

// Step performs one HMC transition at the step size and temperature of hp,
// every gradient of its trajectory on the minibatch mb (HMC's test assumes
// exact energies: on a minibatch it targets that minibatch's potential).
func (k HMC) Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error {
	if hp.StepSize != 0 {
		k.StepSize = hp.StepSize
	}
	temp := hp.temp()
	if err := checkDim(pot, s); err != nil {
		return err
	}
	if !s.GradValid {
		u, err := pot.Gradient(s.Theta, s.Grad, mb, rng)
		if err != nil {
			return err
		}
		s.U, s.GradValid = u, true
	}
	d := len(s.Theta)
	theta := append([]float64(nil), s.Theta...)
	grad := append([]float64(nil), s.Grad...)
	p := s.P
	k0 := 0.0
	for i := range p {
		p[i] = rng.NormFloat64()
		k0 += p[i] * p[i]
	}
	h, invT := k.StepSize, 1/temp
	var u float64
	for l := 0; l < max(1, k.Leapfrog); l++ {
		for i := 0; i < d; i++ {
			p[i] -= 0.5 * h * invT * grad[i]
			theta[i] += h * p[i]
		}
		var err error
		if u, err = pot.Gradient(theta, grad, mb, rng); err != nil {
			return err
		}
		for i := 0; i < d; i++ {
			p[i] -= 0.5 * h * invT * grad[i]
		}
	}
	k1 := 0.0
	for _, v := range p {
		k1 += v * v
	}
	logAccept := (s.U-u)*invT + 0.5*(k0-k1)
	s.Proposed++
	if math.IsNaN(logAccept) {
		return nil // reject a diverged trajectory
	}
	if logAccept >= 0 || rng.Float64() < math.Exp(logAccept) {
		copy(s.Theta, theta)
		copy(s.Grad, grad)
		s.U = u
		s.Accepted++
	}
	return nil
}
