// Package plugins shows how a program plugs its own pieces into a ptsghmc
// run without changing package train: a model (TinyModel, registered under
// a name of its own), a kernel with state of its own (PSGLD, whose adapted
// moment a checkpoint saves, so the run resumes bit for bit) and an
// exchange rule (ExactMetropolis). Setup gathers them into the
// runspec.Setup a run is created and resumed with; the run's config names
// them (Config.Model, Config.ReplicaKernel, Config.XTest).
package plugins

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Names the plug-ins are registered under in Setup.
const (
	ModelName    = "tiny"             // TinyModel
	KernelName   = "psgld"            // PSGLD
	ExchangeName = "metropolis-exact" // ExactMetropolis
)

// TinyModel builds a 16-8-3 ReLU MLP classifier with the Gaussian prior p
// (the precision scaled by each layer's fan-in when p.FanIn is set): the
// model a config names as ModelName.
func TinyModel(p nn.PriorConfig) (nn.Model, error) {
	spec := nn.Spec{Sizes: []int{16, 8, 3}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorDF: p.DF}
	for _, fanIn := range spec.Sizes[:len(spec.Sizes)-1] {
		prec := p.Precision
		if p.FanIn {
			prec *= float64(fanIn)
		}
		spec.PriorPrecision = append(spec.PriorPrecision, prec)
	}
	return spec.Model()
}

// PSGLD is preconditioned SGLD (Li et al. 2016) at temperature T: with g
// the stochastic gradient of U and an exponential moving average of its
// square,
//
//	V <- beta V + (1 - beta) g*g,   G = 1/(lambda + sqrt(V/(1 - beta^t)))
//	theta <- theta - (eps/2) G g/T + sqrt(eps G) N(0, I)
//
// (gradient-tempered; noise-tempered, TemperNoise, the noise has variance
// eps G T and the gradient is not divided by T). Li et al.'s correction
// term Gamma, which G's dependence on theta calls for, is left out, as in
// their experiments. The moment V and the step count t are the kernel's own
// state (PSGLDState in State.Extra), which its MarshalExtra and
// UnmarshalExtra save and restore, so a checkpointed run resumes exactly.
type PSGLD struct {
	StepSize  float64 // eps
	Decay     float64 // beta, in (0, 1)
	Lambda    float64 // lambda > 0: bounds G by 1/lambda
	Tempering sampler.Tempering
}

// PSGLDParams are PSGLD's settings: none beyond the learning rate (its
// decay and lambda are fixed here; a kernel with settings of its own gives
// them JSON names, the config-file names of the run settings it reads).
type PSGLDParams struct{}

// Validate returns nil: there is nothing to check.
func (PSGLDParams) Validate() error { return nil }

// Kernel returns PSGLD at the rate's step h = sqrt(eps/N).
func (PSGLDParams) Kernel(r sampler.Rate, t sampler.Tempering) sampler.Kernel {
	return PSGLD{StepSize: r.Step(1), Decay: 0.99, Lambda: 1, Tempering: t}
}

// PSGLDState is PSGLD's own state of one chain: the moment V and the
// number of steps it has averaged.
type PSGLDState struct {
	V     []float64
	Count uint64
}

// Name returns KernelName.
func (k PSGLD) Name() string { return KernelName }

// Init starts s's moment at zero.
func (k PSGLD) Init(s *sampler.State, rng *rand.Rand) {
	s.Extra = &PSGLDState{V: make([]float64, len(s.Theta))}
}

// Step performs one pSGLD update of s, adapting its moment.
func (k PSGLD) Step(s *sampler.State, pot sampler.Potential, mb sampler.Minibatch, hp sampler.Hyper, rng *rand.Rand) error {
	temp := hp.Temp
	if temp == 0 {
		temp = 1
	}
	if hp.StepSize != 0 {
		k.StepSize = hp.StepSize
	}
	m, ok := s.Extra.(*PSGLDState)
	switch {
	case !ok:
		return errors.New("psgld: the state holds no moment (neither Init nor UnmarshalExtra set it)")
	case len(m.V) != len(s.Theta) || pot.Dim() != len(s.Theta):
		return fmt.Errorf("psgld: a moment of dimension %d for a state of dimension %d and a potential of dimension %d", len(m.V), len(s.Theta), pot.Dim())
	}
	if len(s.Grad) != len(s.Theta) {
		s.Grad = make([]float64, len(s.Theta))
	}
	u, err := pot.Gradient(s.Theta, s.Grad, mb, rng)
	if err != nil {
		return err
	}
	s.U = u
	invT, noiseVar := 1/temp, k.StepSize
	if k.Tempering == sampler.TemperNoise {
		invT, noiseVar = 1, k.StepSize*temp
	}
	m.Count++
	bias := 1 - math.Pow(k.Decay, float64(m.Count))
	for i, g := range s.Grad {
		m.V[i] = k.Decay*m.V[i] + (1-k.Decay)*g*g
		G := 1 / (k.Lambda + math.Sqrt(m.V[i]/bias))
		s.Theta[i] += -0.5*k.StepSize*G*invT*g + math.Sqrt(noiseVar*G)*rng.NormFloat64()
		if math.IsNaN(s.Theta[i]) || math.IsInf(s.Theta[i], 0) {
			return sampler.ErrDiverged
		}
	}
	return nil
}

// MarshalExtra writes s's PSGLDState: the count, then V's length and its
// values' bits, little-endian.
func (k PSGLD) MarshalExtra(s *sampler.State) ([]byte, error) {
	m, ok := s.Extra.(*PSGLDState)
	if !ok {
		return nil, errors.New("psgld: the state holds no moment")
	}
	b := binary.LittleEndian.AppendUint64(nil, m.Count)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(m.V)))
	for _, v := range m.V {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

// UnmarshalExtra sets s's PSGLDState from bytes MarshalExtra wrote for a
// state of s's dimension.
func (k PSGLD) UnmarshalExtra(s *sampler.State, b []byte) error {
	if len(b) < 16 {
		return fmt.Errorf("psgld: %d bytes of state, need at least 16", len(b))
	}
	count, n := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	if n != uint64(len(s.Theta)) || uint64(len(b)) != 16+8*n {
		return fmt.Errorf("psgld: a moment of %d values in %d bytes, the state has dimension %d", n, len(b), len(s.Theta))
	}
	m := &PSGLDState{V: make([]float64, n), Count: count}
	for i := range m.V {
		m.V[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[16+8*i:]))
	}
	s.Extra = m
	return nil
}

// ExactMetropolis is the Metropolis exchange test on exact energies: it
// evaluates U at both configurations on the whole data set (for a small
// one) and swaps rungs j and k with probability min(1, exp(deltaE)),
//
//	deltaE = (1/T_j - 1/T_k) (U(theta_j) - U(theta_k)).
type ExactMetropolis struct {
	buf [2][]float64 // per-example terms of the two configurations
}

// Test decides the swap of thetaJ (at temperature tj) and thetaK (at tk)
// on the whole data set of tp, drawing the acceptance from rng.
func (x *ExactMetropolis) Test(tp sampler.TermPotential, thetaJ, thetaK []float64, tj, tk float64, rng *rand.Rand) (tempering.ExchangeResult, error) {
	n := tp.Size()
	if n <= 0 {
		return tempering.ExchangeResult{}, errors.New("exact Metropolis exchange: the potential has no finite data set")
	}
	for t := range x.buf {
		if len(x.buf[t]) < n {
			x.buf[t] = make([]float64, n)
		}
	}
	if err := tp.Terms([][]float64{thetaJ, thetaK}, 0, n, rng, [][]float64{x.buf[0][:n], x.buf[1][:n]}); err != nil {
		return tempering.ExchangeResult{}, fmt.Errorf("exact Metropolis exchange: %w", err)
	}
	d := 0.0
	for i := range n {
		d += x.buf[0][i] - x.buf[1][i]
	}
	dE := (1/tj - 1/tk) * d / float64(n)
	return tempering.ExchangeResult{Accepted: rng.Float64() < math.Exp(dE), DeltaE: dE, N: n, Exact: true,
		Prob: math.Min(1, math.Exp(dE)), ProbKnown: true}, nil
}

// Setup returns the runspec.Setup of a run that may name the plug-ins: the
// built-in kernels and exchange rules plus PSGLD and ExactMetropolis, a
// model registry holding TinyModel, and the training data data.
func Setup(data *datasets.Dataset) runspec.Setup {
	kernels := append(slices.Clone(sampler.Kernels), sampler.KernelInfo{
		Name: KernelName, Doc: "preconditioned SGLD with an adapted moment (Li et al. 2016)", Sampler: true, Minibatch: true,
		Params: func() sampler.Params { return &PSGLDParams{} }})
	exchanges := append(runspec.DefaultExchanges(), runspec.ExchangeRule{
		Name: ExchangeName, Doc: "Metropolis test on exact energies (small data sets)",
		New: func(runspec.Config) (tempering.ExchangeTest, error) { return &ExactMetropolis{}, nil }})
	return runspec.Setup{Models: runspec.ModelRegistry{ModelName: TinyModel}, Kernels: kernels, Exchanges: exchanges, Train: data}
}
