// Package nn describes Bayesian models as the rest of ptsghmc samples them.
//
// The model contract is Graph: a Gorgonia expression graph built by its user
// for a fixed batch, naming its input and target nodes, its learnables (whose
// shapes give the flat parameter Layout) with a prior each, and a
// per-example log-likelihood node. Model wraps a graph's Builder with its
// layout; Models is the registry of named models (LeNet and CNN3, Bayesian CNNs from
// Gorgonia's Conv2d, MaxPool2D and Rectify). Spec describes Bayesian
// multilayer perceptrons (architecture, likelihood, Gaussian or Student-t
// prior, flat layout, seeded initialisation); NewGraph builds one through the
// contract.
package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Activation is a hidden-layer nonlinearity.
type Activation int

// Supported activations.
const (
	ReLU Activation = iota
	Tanh
	Sigmoid
)

var activationNames = []string{"relu", "tanh", "sigmoid"}

// String returns the activation's name as ParseActivation accepts it.
func (a Activation) String() string {
	if a < 0 || int(a) >= len(activationNames) {
		return fmt.Sprintf("Activation(%d)", int(a))
	}
	return activationNames[a]
}

// ParseActivation returns the activation named s (relu, tanh or sigmoid).
func ParseActivation(s string) (Activation, error) {
	for i, n := range activationNames {
		if strings.EqualFold(s, n) {
			return Activation(i), nil
		}
	}
	return 0, fmt.Errorf("unknown activation %q: expected one of %s", s, strings.Join(activationNames, ", "))
}

// Likelihood is the observation model on the network's output.
type Likelihood int

// Supported likelihoods.
const (
	// Categorical is softmax classification: l(theta; x, y) = softmax(f(x))_y.
	Categorical Likelihood = iota
	// Gaussian is regression: l(theta; x, y) = N(y; f(x), NoiseSD^2 I).
	Gaussian
)

var likelihoodNames = []string{"categorical", "gaussian"}

// String returns the likelihood's name as ParseLikelihood accepts it.
func (l Likelihood) String() string {
	if l < 0 || int(l) >= len(likelihoodNames) {
		return fmt.Sprintf("Likelihood(%d)", int(l))
	}
	return likelihoodNames[l]
}

// ParseLikelihood returns the likelihood named s (categorical or gaussian).
func ParseLikelihood(s string) (Likelihood, error) {
	for i, n := range likelihoodNames {
		if strings.EqualFold(s, n) {
			return Likelihood(i), nil
		}
	}
	return 0, fmt.Errorf("unknown likelihood %q: expected one of %s", s, strings.Join(likelihoodNames, ", "))
}

// Spec describes a Bayesian MLP: layer widths from input to output, the
// hidden activation, the likelihood and a zero-mean prior on every weight and
// bias: Gaussian with precision PriorPrecision[l] for layer l, or, when
// PriorDF > 0, Student-t with PriorDF degrees of freedom and scale
// 1/sqrt(PriorPrecision[l]) (heavy-tailed; Fortuin et al. 2022 find such
// priors suit fully connected networks). As PriorDF grows the Student-t prior
// tends to the Gaussian one.
type Spec struct {
	Sizes          []int // widths, input first, output last; at least 2
	Activation     Activation
	Likelihood     Likelihood
	NoiseSD        float64   // Gaussian likelihood's standard deviation (regression only)
	PriorPrecision []float64 // one value per layer, or a single value for all
	PriorDF        float64   // Student-t degrees of freedom; 0 for the Gaussian prior
}

// ParseArch parses an architecture such as "784-400-400-10".
func ParseArch(s string) ([]int, error) {
	parts := strings.Split(s, "-")
	if len(parts) < 2 {
		return nil, fmt.Errorf("architecture %q: expected at least two widths joined by '-', like 784-400-10", s)
	}
	sizes := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("architecture %q: width %q is not a positive integer", s, p)
		}
		sizes[i] = n
	}
	return sizes, nil
}

// Arch returns the widths formatted as ParseArch reads them.
func (s Spec) Arch() string {
	p := make([]string, len(s.Sizes))
	for i, n := range s.Sizes {
		p[i] = strconv.Itoa(n)
	}
	return strings.Join(p, "-")
}

// Validate reports whether the spec describes a network that can be built.
func (s Spec) Validate() error {
	if len(s.Sizes) < 2 {
		return fmt.Errorf("spec: %d layer widths, need at least input and output", len(s.Sizes))
	}
	for _, n := range s.Sizes {
		if n <= 0 {
			return fmt.Errorf("spec: widths %v must be positive", s.Sizes)
		}
	}
	if s.Activation < ReLU || s.Activation > Sigmoid {
		return fmt.Errorf("spec: unknown activation %d", s.Activation)
	}
	switch s.Likelihood {
	case Categorical:
		if s.Sizes[len(s.Sizes)-1] < 2 {
			return fmt.Errorf("spec: categorical likelihood needs at least 2 outputs, have %d", s.Sizes[len(s.Sizes)-1])
		}
	case Gaussian:
		if !(s.NoiseSD > 0) {
			return fmt.Errorf("spec: Gaussian likelihood needs NoiseSD > 0, have %v", s.NoiseSD)
		}
	default:
		return fmt.Errorf("spec: unknown likelihood %d", s.Likelihood)
	}
	if n := len(s.PriorPrecision); n != 1 && n != s.NumLayers() {
		return fmt.Errorf("spec: %d prior precisions for %d layers: give one, or one per layer", n, s.NumLayers())
	}
	for _, p := range s.PriorPrecision {
		if !(p >= 0) || math.IsInf(p, 0) {
			return fmt.Errorf("spec: prior precision %v must be finite and non-negative", p)
		}
	}
	if !(s.PriorDF >= 0) || math.IsInf(s.PriorDF, 0) {
		return fmt.Errorf("spec: prior degrees of freedom %v must be finite and non-negative (0: Gaussian prior)", s.PriorDF)
	}
	return nil
}

// NumLayers returns the number of weight layers.
func (s Spec) NumLayers() int { return len(s.Sizes) - 1 }

// Precision returns layer l's prior precision.
func (s Spec) Precision(l int) float64 {
	if len(s.PriorPrecision) == 1 {
		return s.PriorPrecision[0]
	}
	return s.PriorPrecision[l]
}

// Layer locates one layer's parameters in the flat parameter vector: the
// In x Out weight matrix W (row-major, so a layer computes x W + b) starts at
// W, the Out biases at B.
type Layer struct {
	In, Out int
	W, B    int
}

// Layers returns the flat layout of the parameters: for each layer its
// weights then its biases.
func (s Spec) Layers() []Layer {
	ls := make([]Layer, s.NumLayers())
	off := 0
	for l := range ls {
		in, out := s.Sizes[l], s.Sizes[l+1]
		ls[l] = Layer{In: in, Out: out, W: off, B: off + in*out}
		off += in*out + out
	}
	return ls
}

// NumParams returns the length of the flat parameter vector.
func (s Spec) NumParams() int {
	n := 0
	for l := 0; l < s.NumLayers(); l++ {
		n += s.Sizes[l]*s.Sizes[l+1] + s.Sizes[l+1]
	}
	return n
}

// Init fills theta with initial weights from rng: He initialisation
// (sd sqrt(2/in)) for ReLU networks, Xavier (sd sqrt(2/(in+out))) otherwise;
// biases are zero.
func (s Spec) Init(theta []float64, rng *rand.Rand) {
	for _, l := range s.Layers() {
		sd := math.Sqrt(2 / float64(l.In+l.Out))
		if s.Activation == ReLU {
			sd = math.Sqrt(2 / float64(l.In))
		}
		for i := l.W; i < l.B; i++ {
			theta[i] = sd * rng.NormFloat64()
		}
		for i := l.B; i < l.B+l.Out; i++ {
			theta[i] = 0
		}
	}
}

// NegLogPrior returns -log p(theta) up to its theta-independent normalising
// constant. For the Gaussian prior that is the sum over layers of
// lambda_l/2 times the layer's squared weights and biases (lambda_l =
// PriorPrecision[l]); for the Student-t prior with nu = PriorDF it is the sum
// of (nu+1)/2 log(1 + lambda_l w^2 / nu) over every weight and bias w.
func (s Spec) NegLogPrior(theta []float64) float64 {
	u := 0.0
	for li, l := range s.Layers() {
		u += s.layerPrior(li).NegLogDensity(theta[l.W : l.B+l.Out])
	}
	return u
}

// AddNegLogPriorGrad adds the gradient of NegLogPrior at theta to grad:
// lambda_l w for the Gaussian prior, (nu+1) lambda_l w / (nu + lambda_l w^2)
// for the Student-t prior.
func (s Spec) AddNegLogPriorGrad(theta, grad []float64) {
	for li, l := range s.Layers() {
		s.layerPrior(li).AddGrad(theta[l.W:l.B+l.Out], grad[l.W:l.B+l.Out])
	}
}

// layerPrior returns the prior of layer l's weights and biases.
func (s Spec) layerPrior(l int) Prior { return Prior{Precision: s.Precision(l), DF: s.PriorDF} }

// GaussianLogNorm returns the constant part of one example's Gaussian
// log-likelihood, -out/2 log(2 pi NoiseSD^2).
func (s Spec) GaussianLogNorm() float64 {
	out := float64(s.Sizes[len(s.Sizes)-1])
	return -0.5 * out * math.Log(2*math.Pi*s.NoiseSD*s.NoiseSD)
}
