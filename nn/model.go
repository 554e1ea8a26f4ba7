package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Prior is a zero-mean prior on every value of one learnable: Gaussian with
// precision Precision, or, when DF > 0, Student-t with DF degrees of freedom
// and scale 1/sqrt(Precision).
type Prior struct {
	Precision float64
	DF        float64 // 0 for the Gaussian prior
}

// Validate reports whether the prior is proper enough to sample under.
func (p Prior) Validate() error {
	if !(p.Precision >= 0) || math.IsInf(p.Precision, 0) {
		return fmt.Errorf("prior precision %v must be finite and non-negative", p.Precision)
	}
	if !(p.DF >= 0) || math.IsInf(p.DF, 0) {
		return fmt.Errorf("prior degrees of freedom %v must be finite and non-negative (0: Gaussian)", p.DF)
	}
	return nil
}

// NegLogDensity returns -sum_i log p(w_i) up to its w-independent constant:
// lambda/2 sum w_i^2 for the Gaussian prior, (nu+1)/2 sum log(1 + lambda
// w_i^2/nu) for the Student-t prior (lambda = Precision, nu = DF).
func (p Prior) NegLogDensity(w []float64) float64 {
	ss := 0.0
	if nu := p.DF; nu > 0 {
		for _, v := range w {
			ss += math.Log1p(p.Precision * v * v / nu)
		}
		return 0.5 * (nu + 1) * ss
	}
	for _, v := range w {
		ss += v * v
	}
	return 0.5 * p.Precision * ss
}

// AddGrad adds the gradient of NegLogDensity at w to grad: lambda w for the
// Gaussian prior, (nu+1) lambda w / (nu + lambda w^2) for the Student-t one.
func (p Prior) AddGrad(w, grad []float64) {
	lam := p.Precision
	if nu := p.DF; nu > 0 {
		for i, v := range w {
			grad[i] += (nu + 1) * lam * v / (nu + lam*v*v)
		}
		return
	}
	for i, v := range w {
		grad[i] += lam * v
	}
}

// Param is one learnable's place in the flat parameter vector theta: its
// values, row-major in its Gorgonia shape, are theta[Offset:Offset+Size()].
type Param struct {
	Name   string
	Shape  []int
	Offset int
	Prior  Prior
	InitSD float64 // initial values are N(0, InitSD^2); 0 starts at zero
}

// Size returns the number of values of the learnable.
func (p Param) Size() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// Layout is the flat parameter layout of a model: its learnables in order,
// each after the previous one.
type Layout []Param

// NumParams returns the length of the flat parameter vector.
func (l Layout) NumParams() int {
	if len(l) == 0 {
		return 0
	}
	last := l[len(l)-1]
	return last.Offset + last.Size()
}

// NegLogPrior returns -log p(theta) up to its theta-independent constant:
// the sum over learnables of their priors' NegLogDensity.
func (l Layout) NegLogPrior(theta []float64) float64 {
	u := 0.0
	for _, p := range l {
		u += p.Prior.NegLogDensity(theta[p.Offset : p.Offset+p.Size()])
	}
	return u
}

// AddNegLogPriorGrad adds the gradient of NegLogPrior at theta to grad.
func (l Layout) AddNegLogPriorGrad(theta, grad []float64) {
	for _, p := range l {
		e := p.Offset + p.Size()
		p.Prior.AddGrad(theta[p.Offset:e], grad[p.Offset:e])
	}
}

// Init fills theta with initial values drawn from rng, learnable by
// learnable: N(0, InitSD^2), or zeros when InitSD is 0.
func (l Layout) Init(theta []float64, rng *rand.Rand) {
	for _, p := range l {
		w := theta[p.Offset : p.Offset+p.Size()]
		if p.InitSD == 0 {
			clear(w)
			continue
		}
		for i := range w {
			w[i] = p.InitSD * rng.NormFloat64()
		}
	}
}

// String returns the names and shapes, like "W0:784x400,b0:400": what a run
// records to recognise its model.
func (l Layout) String() string {
	parts := make([]string, len(l))
	for i, p := range l {
		dims := make([]string, len(p.Shape))
		for j, d := range p.Shape {
			dims[j] = strconv.Itoa(d)
		}
		parts[i] = p.Name + ":" + strings.Join(dims, "x")
	}
	return strings.Join(parts, ",")
}

// Graph is the model contract: a Bayesian model built by its user as a
// Gorgonia expression graph for a fixed batch of Batch examples.
//
// Data enter through Input and Target. Row r of Input receives example r's
// D features in row-major order, so Input may have any shape [Batch, ...]
// whose trailing dimensions multiply to D ([Batch, D] for an MLP,
// [Batch, 1, 28, 28] for a CNN on 28x28 images). Target is [Batch, K]: the
// one-hot label for a classification data set of K classes (OneHot), or the
// K regression targets. Batches smaller than Batch are padded; the evaluator
// masks the padding rows out of the potential.
//
// The model's parameters are the Learnables, in the order of the flat
// parameter vector (see Layout); each has a prior (Priors[i]) and an initial
// scale (InitSD[i]). LogLik is the [Batch] vector of per-example
// log-likelihoods log l(theta; x_r, y_r). The evaluator builds the minibatch
// potential on top (BlackJAX's split of logprior and loglikelihood):
//
//	U~(theta) = -log p(theta) - scale * sum_r mask_r LogLik_r
//
// and differentiates it with Gorgonia's Grad. Logits, optional, is the
// [Batch, K] class scores whose softmax is the predictive distribution of a
// classifier (eval and predict need it).
type Graph struct {
	G          *G.ExprGraph
	Batch      int
	DType      tensor.Dtype
	Input      *G.Node
	Target     *G.Node
	OneHot     bool // Target holds one-hot labels (classification); false: regression targets
	Learnables G.Nodes
	Priors     []Prior
	InitSD     []float64
	LogLik     *G.Node
	Logits     *G.Node
}

// Validate checks the graph against the contract.
func (g *Graph) Validate() error {
	switch {
	case g == nil || g.G == nil:
		return fmt.Errorf("model graph: no expression graph")
	case g.Batch <= 0:
		return fmt.Errorf("model graph: batch %d must be positive", g.Batch)
	case g.DType != tensor.Float32 && g.DType != tensor.Float64:
		return fmt.Errorf("model graph: dtype %v: expected float32 or float64", g.DType)
	case g.Input == nil || g.Target == nil || g.LogLik == nil:
		return fmt.Errorf("model graph: Input, Target and LogLik are required")
	case len(g.Learnables) == 0:
		return fmt.Errorf("model graph: no learnables")
	case len(g.Priors) != len(g.Learnables) || len(g.InitSD) != len(g.Learnables):
		return fmt.Errorf("model graph: %d learnables, %d priors, %d initial scales: need one of each per learnable", len(g.Learnables), len(g.Priors), len(g.InitSD))
	}
	if s := g.Input.Shape(); len(s) < 2 || s[0] != g.Batch {
		return fmt.Errorf("model graph: input shape %v: expected [%d, ...]", s, g.Batch)
	}
	if s := g.Target.Shape(); len(s) != 2 || s[0] != g.Batch {
		return fmt.Errorf("model graph: target shape %v: expected [%d, K]", s, g.Batch)
	}
	if s := g.LogLik.Shape(); s.TotalSize() != g.Batch || len(s) != 1 {
		return fmt.Errorf("model graph: log-likelihood shape %v: expected [%d]", s, g.Batch)
	}
	if g.Logits != nil {
		if !g.OneHot {
			return fmt.Errorf("model graph: logits need one-hot targets (a classifier)")
		}
		if s := g.Logits.Shape(); len(s) != 2 || s[0] != g.Batch || s[1] != g.Target.Shape()[1] {
			return fmt.Errorf("model graph: logits shape %v: expected [%d, %d] like the target", s, g.Batch, g.Target.Shape()[1])
		}
	}
	names := map[string]bool{}
	for i, n := range g.Learnables {
		if n == nil {
			return fmt.Errorf("model graph: learnable %d is nil", i)
		}
		if names[n.Name()] {
			return fmt.Errorf("model graph: two learnables named %q", n.Name())
		}
		names[n.Name()] = true
		if err := g.Priors[i].Validate(); err != nil {
			return fmt.Errorf("model graph: learnable %s: %w", n.Name(), err)
		}
		if !(g.InitSD[i] >= 0) || math.IsInf(g.InitSD[i], 0) {
			return fmt.Errorf("model graph: learnable %s: initial scale %v must be finite and non-negative", n.Name(), g.InitSD[i])
		}
	}
	return nil
}

// Layout returns the flat layout of the learnables: each one's name, shape
// and offset, with its prior and initial scale.
func (g *Graph) Layout() Layout {
	l := make(Layout, len(g.Learnables))
	off := 0
	for i, n := range g.Learnables {
		l[i] = Param{Name: n.Name(), Shape: append([]int(nil), n.Shape()...), Offset: off, Prior: g.Priors[i], InitSD: g.InitSD[i]}
		off += l[i].Size()
	}
	return l
}

// InputSize returns the features one example has (the product of Input's
// dimensions after the batch).
func (g *Graph) InputSize() int { return g.Input.Shape().TotalSize() / g.Batch }

// Outputs returns K, the number of classes or regression targets.
func (g *Graph) Outputs() int { return g.Target.Shape()[1] }

// Builder builds a fresh graph of a model for batches of batch examples in
// dtype (tensor.Float32 or tensor.Float64). Evaluators call it once each, so
// every goroutine has its own graph.
type Builder func(batch int, dtype tensor.Dtype) (*Graph, error)

// Model is a model as the rest of the framework sees it, without a graph:
// its name, how to build its graph, its parameter layout and data sizes.
type Model struct {
	Name    string
	Build   Builder
	Layout  Layout
	Inputs  int  // features per example
	Outputs int  // classes or regression targets per example
	OneHot  bool // a classifier: targets are one-hot labels
	Logits  bool // the graph reports logits (a classifier that eval and predict can score)
	// MLP, when not nil, says the model is this MLP: its graph then compiles
	// to the arithmetic of its BLAS plan (autodifftest.Plan), which evaluators
	// may also build.
	MLP *Spec
	// Conv, when not nil, says the model is this ConvNet (ConvNet.Model
	// sets it): a model whose first layer is a convolution, which a
	// first-layer prior can rebuild reparametrised (ConvNet.FirstMap).
	Conv *ConvNet
	// Weights, when not nil, are parameter values the model comes with, in
	// the layout's order: an imported network's trained weights, where
	// train --start model starts its chains.
	Weights []float64
	// SHA256 is the hex digest of the file the model was read from (empty
	// for a model built in Go); a run records it and refuses a changed file.
	SHA256 string
	// Description, when not empty, says in words what the model is (an
	// imported network: what was read and what was changed).
	Description string
}

// graphBuilds serialises the building of graphs: Gorgonia numbers the
// groups of some ops (Rectify, average pooling) with an unsynchronised
// package counter (internal/encoding.NewGroup), so graphs built on several
// goroutines at once race on it. The numbers name groups for drawing a
// graph; they change nothing a graph computes.
var graphBuilds sync.Mutex

// serialised returns build holding graphBuilds while it runs.
func serialised(build Builder) Builder {
	return func(batch int, dtype tensor.Dtype) (*Graph, error) {
		graphBuilds.Lock()
		defer graphBuilds.Unlock()
		return build(batch, dtype)
	}
}

// NewModel builds name's graph once (batch 1, float64) to check it against
// the contract and learn its layout. The model's Build builds one graph at
// a time in the process, so evaluators may be built on several goroutines.
func NewModel(name string, build Builder) (Model, error) {
	if build == nil {
		return Model{}, fmt.Errorf("model %s: no builder", name)
	}
	build = serialised(build)
	g, err := build(1, tensor.Float64)
	if err != nil {
		return Model{}, fmt.Errorf("model %s: %w", name, err)
	}
	if err := g.Validate(); err != nil {
		return Model{}, fmt.Errorf("model %s: %w", name, err)
	}
	if g.Batch != 1 || g.DType != tensor.Float64 {
		return Model{}, fmt.Errorf("model %s: builder asked for batch 1 float64 built batch %d %v", name, g.Batch, g.DType)
	}
	return Model{Name: name, Build: build, Layout: g.Layout(), Inputs: g.InputSize(), Outputs: g.Outputs(), OneHot: g.OneHot, Logits: g.Logits != nil}, nil
}

// NumParams returns the length of the model's flat parameter vector.
func (m Model) NumParams() int { return m.Layout.NumParams() }

// PriorConfig is the prior a registered model is built with: every weight
// and bias has a zero-mean prior of precision Precision, multiplied by its
// layer's fan-in when FanIn is set; DF > 0 makes it Student-t. Classes,
// when positive, is the number of classes the model's output layer
// predicts (a run on a subset of the data's classes); 0 keeps the model's
// own.
type PriorConfig struct {
	Precision float64
	FanIn     bool
	DF        float64
	Classes   int
}

// Prior returns the prior of a layer with fan-in fanIn.
func (c PriorConfig) Prior(fanIn int) Prior {
	p := c.Precision
	if c.FanIn {
		p *= float64(fanIn)
	}
	return Prior{Precision: p, DF: c.DF}
}

// Models is the registry of named models that train, eval and predict can
// rebuild from a run's config: each entry returns the model with the given
// prior. MLPs are not listed: they are named by their widths (784-400-10).
// Register a model of your own by adding it before creating or reading runs.
var Models = map[string]func(PriorConfig) (Model, error){
	"lenet": func(p PriorConfig) (Model, error) {
		c := LeNet(p)
		if p.Classes > 0 {
			c.Classes = p.Classes
		}
		return c.Model("lenet")
	},
	"cnn3": func(p PriorConfig) (Model, error) {
		c := CNN3(p)
		if p.Classes > 0 {
			c.Classes = p.Classes
		}
		return c.Model("cnn3")
	},
}

// ModelNames returns the registered names, sorted.
func ModelNames() []string {
	var names []string
	for n := range Models {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CategoricalLogLik returns the [Batch] log-likelihoods log softmax(z_r)_{y_r}
// of logits z ([Batch, K]) under one-hot targets y ([Batch, K]).
func CategoricalLogLik(logits, onehot *G.Node) (*G.Node, error) {
	lsm, err := G.LogSoftMax(logits, 1)
	if err != nil {
		return nil, err
	}
	p, err := G.HadamardProd(lsm, onehot)
	if err != nil {
		return nil, err
	}
	return G.Sum(p, 1)
}

// GaussianLogLik returns the [Batch] log-likelihoods log N(y_r; f_r, sd^2 I)
// of predictions f ([Batch, K]) for targets y ([Batch, K]).
func GaussianLogLik(f, y *G.Node, sd float64) (*G.Node, error) {
	k := float64(y.Shape()[1])
	d, err := G.Sub(y, f)
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(d)
	if err != nil {
		return nil, err
	}
	ss, err := G.Sum(sq, 1)
	if err != nil {
		return nil, err
	}
	ll, err := G.Mul(constant(y.Dtype(), -0.5/(sd*sd)), ss)
	if err != nil {
		return nil, err
	}
	return G.Add(ll, constant(y.Dtype(), -0.5*k*math.Log(2*math.Pi*sd*sd)))
}

// constant returns a scalar constant of dtype dt.
func constant(dt tensor.Dtype, v float64) *G.Node {
	if dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}
