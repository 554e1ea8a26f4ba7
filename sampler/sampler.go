// Package sampler implements the kernels of stochastic-gradient MCMC on
// any differentiable stochastic potential: SGLD, SGHMC, SGNHT and HMC
// transitions of one chain (and SGD, the optimiser baseline), their State,
// the Potential they sample, the random Streams they draw from and the
// registry of kernels by name. The watch of a chain's dynamics is package
// health's.
//
// The package is organised after BlackJAX: each file holds one algorithm's
// update equations (the integrator) and its Kernel (one transition);
// package tempering drives ladders of them. States are plain data; all
// randomness comes from Streams passed in, so a run is reproducible bit
// for bit from its seed and can be checkpointed by saving states and
// streams.
//
// # The model contract
//
// A sampler sees a model only as a Potential: a stochastic estimate of
// U(theta) = -log p(theta | data) and its gradient (for a posterior, on the
// minibatch it is given). Exchange tests
// also need a TermPotential, U as a mean of per-example terms evaluated on a
// shared random batch. autodiff.Potential is both, for any nn.Model; the
// Mixture targets are both, for the paper's Gaussian mixtures.
//
// # Kernels
//
// A Kernel is one transition of one chain at a temperature T, targeting
// exp(-U/T). Its Step takes the chain's State, the Potential, the step's
// Minibatch and its Hyper (step size, temperature) as arguments, in the
// manner of BlackJAX; driver.Driver draws each rung's minibatch from its
// BatchOrder.
// The kernels: SGNHT (the default of runs), SGHMC, SGLD, HMC, and SGD, momentum
// SGD, which is an optimiser (the MAP baseline) rather than a sampler.
// Kernels is the registry of them by name, each with its own settings
// type (Params: SGNHTParams, ...; it validates itself, names the run
// settings it reads, and builds the kernel at a learning rate) and a
// one-line description; every list of sampler names derives from it. Frictional kernels (SGNHT, SGHMC) expose their step and
// friction, so their dynamics can be watched (package health) and their step
// shrunk by a noise-aware run. A kernel with state of its own (an adapted
// moment, a counter) is a StatefulKernel: it keeps it in State.Extra and
// says how to save it, so that a checkpoint resumes it.
//
// # Drivers
//
// A kernel steps one chain; what steps many is package tempering: its PT
// runs one replica of a Kernel per rung of a temperature ladder, draws
// each rung's Minibatch from its BatchOrder, exchanges configurations
// between rungs, tunes the ladder and the step during burn-in, and is the
// one loop that training runs and benchmarks drive. What PT reads of a
// kernel's chain is here: the State's kinetic temperature after a step
// (KineticAfterStep), the sums its preconditioner and noise correction
// estimate from (SumGradSq, SumNoise), and what each rung's health watch
// (package health) reads (Work, Kinetic). A single
// chain is PT with one rung, or a Kernel stepped by hand (see the
// examples).
package sampler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Potential is a differentiable stochastic potential energy U~(theta): the
// negative log target density, estimated with noise (for a posterior, on a
// minibatch).
type Potential interface {
	// Dim returns the dimension of theta.
	Dim() int
	// Gradient writes a stochastic estimate of grad U(theta) on the
	// minibatch mb into grad and returns an estimate of U(theta) from the
	// same evaluation. A potential without a data set ignores mb; one with
	// a data set draws its own minibatch when mb is empty. rng supplies any
	// other randomness (a synthetic target's gradient noise, that own draw).
	Gradient(theta, grad []float64, mb Minibatch, rng *rand.Rand) (float64, error)
}

// Minibatch is the data one step's gradient is estimated on: the positions
// of its examples in the data set, and the factor that scales their summed
// log-likelihood to the whole data set, N/len(Index). The zero Minibatch
// lets the potential choose (see Potential.Gradient). A chain's minibatches
// come from a BatchOrder.
type Minibatch struct {
	Index []int
	Scale float64
}

// BatchOrder chooses the minibatches of one chain, one per step:
// driver.Driver draws rung j's from tempering.PTState.Orders[j] with rung j's
// stream, before the rung's kernel draws its noise from the same stream
// (datasets.Batches is one: epochs of fresh random permutations).
type BatchOrder interface {
	// Next returns the next minibatch's example positions, a view valid
	// until the next call, drawing any randomness from rng.
	Next(rng *rand.Rand) []int
	// Examples returns the number of examples N the order draws from.
	Examples() int
}

// NextMinibatch returns the next minibatch of o with its scale N/|B|.
func NextMinibatch(o BatchOrder, rng *rand.Rand) Minibatch {
	idx := o.Next(rng)
	return Minibatch{Index: idx, Scale: float64(o.Examples()) / float64(len(idx))}
}

// Hyper are the settings of one transition that a schedule or an adapter
// may change from step to step; the zero value runs the kernel as built,
// at T = 1.
type Hyper struct {
	// StepSize is the step size of this transition in the kernel's own
	// units (h of SGNHT, SGHMC, SGD and HMC; eps of SGLD); 0 means the
	// kernel's StepSize. It is the one channel through which a step size
	// changes from step to step: a learning-rate schedule (Rate.StepOf)
	// and the health watch's noise-aware shrink both set it, and the
	// kernel is never rebuilt. SGNHT, SGHMC and SGD keep their friction
	// per step (FrictionPerStep) when the step changes: at h' they are
	// their At(h').
	StepSize float64
	// Temp is the temperature T of the target exp(-U/T); 0 means 1.
	Temp float64
}

// temp returns T, 1 for the zero value.
func (hp Hyper) temp() float64 {
	if hp.Temp == 0 {
		return 1
	}
	return hp.Temp
}

// At returns the Hyper of a transition at temperature t and the kernel's
// own step size.
func At(t float64) Hyper { return Hyper{Temp: t} }

// StreamingPotential is a potential that can hand its stochastic gradient to
// the kernel's update chunk by chunk instead of writing it whole: the update
// then uses each chunk while it is in cache, and the gradient vector is
// never stored or read back (autodiff.Potential over an MLP's BLAS plan
// with a Gaussian prior). SGNHT and SGHMC use it when CanStream is true;
// the results are the same, bit for bit, as through Gradient.
type StreamingPotential interface {
	Potential
	// CanStream reports whether GradientStream is available.
	CanStream() bool
	// GradientStream evaluates the stochastic gradient at theta on mb, as
	// Gradient would with the same minibatch and rng (given a minibatch,
	// mb.Index not nil, it draws nothing from rng: the step then draws its
	// noise ahead, NoiseAhead), calls consume on consecutive
	// chunks of it that cover [0, Dim()) in order, and returns the estimate
	// of U(theta). consume may change theta[lo:lo+len(g)]: the potential
	// must have read that range before the call and not read it after.
	GradientStream(theta []float64, mb Minibatch, rng *rand.Rand, consume func(lo int, g []float64)) (float64, error)
}

// streamingAt returns pot as a StreamingPotential when it can stream.
func streamingAt(pot Potential) (StreamingPotential, bool) {
	sp, ok := pot.(StreamingPotential)
	return sp, ok && sp.CanStream()
}

// TermPotential is a potential that can be written as the mean of
// per-example terms, U(theta) = mean_i u_i(theta), and evaluated on a shared
// random set of examples for several thetas: what an exchange test needs to
// estimate the noise of an energy difference.
type TermPotential interface {
	// Terms writes u_i(thetas[t]) for the examples at positions from..to-1
	// of a shared random order into out[t][:to-from]. A call with from = 0
	// draws a new order; a call with from > 0 continues the previous call's
	// order, so a growing batch never repeats an example and earlier terms
	// need not be recomputed. When to >= Size() > 0 the batch is the whole
	// data set and the mean is exact.
	Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error
	// Size returns the number of examples, or 0 when it is unbounded.
	Size() int
}

// State is one chain's state: position, momentum and Nose-Hoover
// thermostat, with the last energy estimate. Grad is scratch space.
//
// With a diagonal mass matrix M = diag(Mass) (SetMass; nil is unit mass)
// P holds the momentum in units of its own sd, q = M^-1/2 p, so that
// kinetic temperatures (q'q/D) and thermostats read as with unit mass; the
// kernels' updates say how the mass enters. A dense or low-rank mass
// (SetMassMatrix; MassMatrix says how it enters) leaves Mass nil.
type State struct {
	Theta []float64
	P     []float64
	Xi    float64
	U     float64 // last estimate of U(Theta)
	// Mass is the diagonal of the mass matrix (nil: unit mass). Set it with
	// SetMass, which also sets the factors the kernels use.
	Mass []float64
	// InjScale multiplies the injected noise's sd per coordinate in SGNHT
	// and SGHMC (nil: 1): sqrt(1 - B_i/inj) after a gradient-noise
	// correction (driver.NoiseCorrection), so that injected and gradient noise
	// add up to the same diffusion in every coordinate.
	InjScale []float64
	// Work holds the last step's kick terms, from which health.Health separates
	// integration error from gradient noise (see StepWork).
	Work StepWork `json:"-"`
	// Kinetic is the last step's kinetic temperature of the mid-step
	// momentum, |p_before + p_after|^2/(4D), which SGNHT holds at 1 (0
	// before a step, and for kernels without momentum).
	Kinetic float64 `json:"-"`

	Grad []float64 `json:"-"`
	// HMC bookkeeping: whether Grad and U hold values at Theta, and
	// acceptance counts.
	GradValid bool
	Accepted  int
	Proposed  int
	// Extra is the state a StatefulKernel keeps of its own (nil for the
	// kernels of Kernels): the kernel sets and reads it, and its
	// MarshalExtra and UnmarshalExtra write it down and read it back.
	Extra any `json:"-"`

	// kinAfter is p'p/D after the last step when the kernel summed it in
	// its update loop (hasKinAfter), saving the driver a pass over p.
	kinAfter    float64
	hasKinAfter bool

	stepper *sgnhtStepper // the streamed update's, reused
	ahead   *noiseJob     // its noise drawn ahead, reused
	consume func(lo int, g []float64)

	invSqrtMass []float64 // M^-1/2, nil for unit mass
	// factor is a non-diagonal mass (SetMassMatrix), nil otherwise;
	// kickBuf and velBuf are its kick's and velocity's scratch.
	factor          MassMatrix
	kickBuf, velBuf []float64
	// keepGrad turns streaming off (KeepGrad)
	keepGrad bool
	// gradSq, when not nil, accumulates each step's squared stochastic
	// gradient per coordinate (the rmsprop preconditioner's sums).
	gradSq []float64
	// noiseAcc, when not nil, accumulates each step's per-coordinate
	// gradient-noise estimate (the noise correction's sums).
	noiseAcc []float64
	// kickOut, when not nil, receives each step's kick per coordinate
	// (SaveKick).
	kickOut []float64
}

// StepWork are sums over coordinates of one momentum kernel step, with k
// the kick, the momentum change the gradient causes (h M^-1/2 grad U~/T in
// the units of State.P, for the temperature's factors see Tempering), q the
// momentum before the step and q' after it:
//
//	Before = q'k, After = q''k, Kick = k'k.
//
// From two successive steps, (Before_{t+1} - After_t - Kick_t)/2 is the
// energy error of step t's deterministic part (kick and drift) with the
// change of U estimated by the trapezoid rule from the gradients at both
// ends (IntegrationError). Valid is false before a kernel has set them.
type StepWork struct {
	Before, After, Kick float64
	Valid               bool
}

// MoveStep rescales the thermostat of a chain whose step moves from h to
// h', given as any pair h, h' in that ratio, so that the friction per step
// xi h stays: xi' = xi h/h'. It is the one place a driver changes xi with
// the step (a schedule's cycle, MoveStep(sqrt(s/s'), 1); a noise-aware
// shrink by g, MoveStep(1, g)); with one argument 1 the result is xi times
// or over the other, rounded once.
func (s *State) MoveStep(h, hNext float64) { s.Xi = s.Xi * h / hNext }

// SetMass sets the diagonal mass matrix M = diag(m) of the momentum (nil:
// unit mass), copying m, in place of any mass set before (SetMassMatrix's
// too). Every value must be positive and finite. The
// momentum P is in units of its sd and does not change. SGNHT, SGHMC and
// SGLD use the mass; HMC and SGD ignore it. driver.Mass
// estimates and sets it during burn-in.
func (s *State) SetMass(m []float64) error {
	if m == nil {
		s.Mass, s.invSqrtMass, s.factor = nil, nil, nil
		return nil
	}
	if len(m) != len(s.Theta) {
		return fmt.Errorf("mass of dimension %d for a state of dimension %d", len(m), len(s.Theta))
	}
	r := make([]float64, len(m))
	for i, v := range m {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("mass %d is %v: it must be positive and finite", i, v)
		}
		r[i] = 1 / math.Sqrt(v)
	}
	s.Mass, s.invSqrtMass, s.factor = append([]float64(nil), m...), r, nil
	return nil
}

// NewState returns a state at a copy of theta with zero momentum.
func NewState(theta []float64) *State {
	d := len(theta)
	return &State{Theta: append([]float64(nil), theta...), P: make([]float64, d), Grad: make([]float64, d)}
}

// kineticAfterStep returns p'p/D, from the kernel's update loop when it
// summed it there (the same sum in the same order), else by a pass over p.
func (s *State) kineticAfterStep() float64 {
	if s.hasKinAfter {
		return s.kinAfter
	}
	return s.KineticTemperature()
}

// BeginStep forgets the kinetic temperature the last step's kernel summed
// in its update loop, so that KineticAfterStep after the next step reads
// that step's (a kernel that does not sum it leaves KineticAfterStep to a
// pass over p). A driver calls it before each kernel step.
func (s *State) BeginStep() { s.hasKinAfter = false }

// KineticAfterStep returns p'p/D after the last step: the sum the kernel
// made in its update loop when it made one since BeginStep (the same sum
// in the same order), else KineticTemperature's pass over p.
func (s *State) KineticAfterStep() float64 { return s.kineticAfterStep() }

// KeepGrad makes each step of an SGNHT or SGHMC kernel evaluate the whole
// stochastic gradient into Grad before its update, even on a potential
// that could stream it (StreamingPotential), so that a driver can read the
// step's gradient in Grad after it (a dense mass's estimate from
// gradients, adapt.Mass). The update is the same, bit for bit. SGLD and
// a non-diagonal mass always do.
func (s *State) KeepGrad(on bool) { s.keepGrad = on }

// SumGradSq makes each step of an SGNHT, SGHMC or SGLD kernel add its
// squared stochastic gradient per coordinate to sums (the rmsprop
// preconditioner's window sums; nil: no sums). The state keeps sums, not
// a copy; sums must have the state's dimension.
func (s *State) SumGradSq(sums []float64) { s.gradSq = sums }

// SumNoise makes each step of an SGNHT or SGHMC kernel add its
// per-coordinate estimate of the gradient noise that entered the momentum
// to sums (the noise correction's window sums; nil: no sums). The state
// keeps sums, not a copy; sums must have the state's dimension.
func (s *State) SumNoise(sums []float64) { s.noiseAcc = sums }

// NoiseSums returns the sums SumNoise last set (nil: none), for a watch
// that reads the noise of a step from sums another phase keeps.
func (s *State) NoiseSums() []float64 { return s.noiseAcc }

// SaveKick makes each step of an SGNHT or SGHMC kernel write its kick per
// coordinate, k_i = h M^-1/2 grad_i U~ (the temperature's factor
// included, the momentum change the gradient causes, in the units of P),
// into k (nil: not written), for a health watch's energy error by
// direction (health.CoordWatch). The update is the same arithmetic (in
// scalar code). k must have the state's dimension.
func (s *State) SaveKick(k []float64) { s.kickOut = k }

// KineticTemperature returns p'p/D, which the thermostat drives to 1.
func (s *State) KineticTemperature() float64 {
	k := 0.0
	for _, v := range s.P {
		k += v * v
	}
	return k / float64(len(s.P))
}

// Kernel is one transition of a single-chain sampler targeting
// exp(-U(theta)/T). A step is state in, state out, in the manner of
// BlackJAX: it takes the chain's state, the potential, the minibatch and
// the step's settings (step size, temperature) as arguments and advances
// the state in place (positions and momenta are large; a step allocates
// nothing). A kernel's own state beyond State's fields lives in
// State.Extra (StatefulKernel).
type Kernel interface {
	// Init sets the auxiliary variables (momentum, thermostat) of s.
	Init(s *State, rng *rand.Rand)
	// Step advances s by one transition, with the gradient of pot
	// estimated on mb, at the step size and temperature of hp.
	Step(s *State, pot Potential, mb Minibatch, hp Hyper, rng *rand.Rand) error
	// Name returns the sampler's name.
	Name() string
}

// Stream is a seeded, serialisable random stream (PCG).
type Stream struct {
	src *rand.PCG
	*rand.Rand
}

// NewStream returns stream id of the family seeded by seed; different ids
// give independent streams.
func NewStream(seed, id uint64) *Stream {
	src := rand.NewPCG(seed, id*0x9E3779B97F4A7C15+0xDA942042E4DD58B5)
	return &Stream{src: src, Rand: rand.New(src)}
}

// MarshalBinary returns the stream's state.
func (s *Stream) MarshalBinary() ([]byte, error) { return s.src.MarshalBinary() }

// UnmarshalBinary restores a state returned by MarshalBinary.
func (s *Stream) UnmarshalBinary(b []byte) error {
	if s.src == nil {
		s.src = rand.NewPCG(0, 0)
		s.Rand = rand.New(s.src)
	}
	if err := s.src.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("restore random stream: %w", err)
	}
	return nil
}

// checkDim reports a dimension mismatch between a state and a potential.
func checkDim(pot Potential, s *State) error {
	if len(s.Theta) != pot.Dim() || len(s.P) != pot.Dim() {
		return fmt.Errorf("state has dimension %d (momentum %d), potential %d", len(s.Theta), len(s.P), pot.Dim())
	}
	if len(s.Grad) != pot.Dim() {
		s.Grad = make([]float64, pot.Dim())
	}
	return nil
}

// gradientAt checks s against pot, evaluates the stochastic gradient at
// s.Theta on mb into s.Grad and records the energy estimate in s.U.
func gradientAt(pot Potential, s *State, mb Minibatch, rng *rand.Rand) error {
	if err := checkDim(pot, s); err != nil {
		return err
	}
	u, err := pot.Gradient(s.Theta, s.Grad, mb, rng)
	if err != nil {
		return err
	}
	s.U = u
	return nil
}

// finite reports ErrDiverged when v is not finite.
func finite(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ErrDiverged
	}
	return nil
}

// ErrDiverged is returned when a state becomes non-finite.
var ErrDiverged = errors.New("sampler diverged: non-finite position, momentum or thermostat (step size too large?)")
