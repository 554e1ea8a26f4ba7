package refcheck

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ScaleKind names a prior on the noise sd sigma of a regression.
type ScaleKind int

// Priors on sigma (all restricted to sigma > 0, as Stan's <lower=0>).
const (
	// ScaleFlat is Stan's default: no prior statement, a flat density on
	// sigma > 0.
	ScaleFlat ScaleKind = iota
	// ScaleHalfCauchy is cauchy(0, Scale) on sigma > 0.
	ScaleHalfCauchy
	// ScaleHalfStudentT is student_t(DF, 0, Scale) on sigma > 0.
	ScaleHalfStudentT
	// ScaleHalfNormal is normal(0, Scale) on sigma > 0.
	ScaleHalfNormal
)

// ScalePrior is a prior on sigma.
type ScalePrior struct {
	Kind  ScaleKind
	DF    float64 // ScaleHalfStudentT's degrees of freedom
	Scale float64
}

// StudentT is a Student-t prior of DF degrees of freedom at Loc with scale
// Scale; a zero DF means none (flat).
type StudentT struct {
	DF, Loc, Scale float64
}

// Regression describes a Gaussian linear regression with an unknown noise
// sd as posteriordb's Stan programs write it,
//
//	y ~ normal(a + X w, sigma),
//
// sampled as theta = (a, w, log sigma) when InterceptFirst (Stan's
// beta[1], beta[2..], as in the ARM models), (w, a, log sigma) (brms's
// b, Intercept), or (w, log sigma) with NoIntercept (a = 0).
type Regression struct {
	Name           string
	N              int // examples: the per-example share of the prior terms below is 1/N
	Inputs         int // columns of X (without the intercept)
	InterceptFirst bool
	NoIntercept    bool
	SlopePrior     nn.Prior // the prior of w (zero-mean Gaussian or Student-t; precision 0 is flat)
	InterceptPrior StudentT // the prior of a (DF 0: flat)
	Sigma          ScalePrior
}

// Model returns the regression as an nn.Model: a Gorgonia graph whose
// per-example log-likelihood is
//
//	LogLik_r = log N(y_r; a + x_r'w, exp(2 s)) + (1/N) [log p(a) + log p(sigma) + s]
//
// with s = log sigma. The model contract's priors are zero-mean Gaussian
// or Student-t per learnable (nn.Prior); w's prior is one of them, but a
// Student-t prior centred away from zero (brms's intercept), a prior on
// sigma and the Jacobian of s = log sigma are not, so they enter the
// log-likelihood, a 1/N share in each example: the potential's minibatch
// estimate scales the sum over a batch by N/|B|, so these terms reach U~
// whole and without noise, on every minibatch.
func (r Regression) Model() (nn.Model, error) {
	if r.N <= 0 || r.Inputs <= 0 {
		return nn.Model{}, fmt.Errorf("regression %s: %d examples of %d inputs: both must be positive", r.Name, r.N, r.Inputs)
	}
	return nn.NewModel(r.Name, r.build)
}

// build is the model's nn.Builder.
func (r Regression) build(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(batch, r.Inputs), G.WithName("x"))
	y := G.NewMatrix(g, dt, G.WithShape(batch, 1), G.WithName("y"))
	w := G.NewMatrix(g, dt, G.WithShape(r.Inputs, 1), G.WithName("w"))
	var a *G.Node
	if !r.NoIntercept {
		a = G.NewVector(g, dt, G.WithShape(1), G.WithName("a"))
	}
	s := G.NewVector(g, dt, G.WithShape(1), G.WithName("log_sigma"))
	ll, err := r.logLik(x, y, w, a, s)
	if err != nil {
		return nil, fmt.Errorf("regression %s: %w", r.Name, err)
	}
	flat := nn.Prior{}
	learn, priors := G.Nodes{w, a, s}, []nn.Prior{r.SlopePrior, flat, flat}
	switch {
	case r.NoIntercept:
		learn, priors = G.Nodes{w, s}, []nn.Prior{r.SlopePrior, flat}
	case r.InterceptFirst:
		learn, priors = G.Nodes{a, w, s}, []nn.Prior{flat, r.SlopePrior, flat}
	}
	// Initial values: zero coefficients and sigma = 1 (a user's start;
	// the harness starts its chains elsewhere, see Start).
	return &nn.Graph{G: g, Batch: batch, DType: dt, Input: x, Target: y, Learnables: learn,
		Priors: priors, InitSD: make([]float64, len(learn)), LogLik: ll}, nil
}

// logLik builds LogLik ([batch]) from the nodes of build.
func (r Regression) logLik(x, y, w, a, s *G.Node) (*G.Node, error) {
	dt := x.Dtype()
	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil {
			err = e
		}
		return n
	}
	c := func(v float64) *G.Node { return constant(dt, v) }
	f := must(G.Mul(x, w))
	if a != nil {
		f = must(G.BroadcastAdd(f, a, nil, []byte{0}))
	}
	d := must(G.Sub(y, f))
	sq := must(G.Square(d))
	prec := must(G.Exp(must(G.Mul(c(-2), s)))) // 1/sigma^2
	quad := must(G.BroadcastHadamardProd(sq, prec, nil, []byte{0}))
	half := must(G.Mul(c(-0.5), quad))
	// per-example constant: -s - log(2 pi)/2 + (1/N)(log p(a) + log p(sigma) + s)
	k := 1 / float64(r.N)
	perEx := must(G.Add(must(G.Mul(c(k-1), s)), c(-0.5*math.Log(2*math.Pi))))
	if lp := r.Sigma.logDensity(s, c, must); lp != nil {
		perEx = must(G.Add(perEx, must(G.Mul(c(k), lp))))
	}
	if t := r.InterceptPrior; t.DF > 0 && a != nil {
		// log student_t(a | df, loc, scale) = -(df+1)/2 log1p(((a-loc)/scale)^2/df) + const
		z := must(G.Square(must(G.Sub(a, c(t.Loc)))))
		lp := must(G.Mul(c(-(t.DF+1)/2), must(G.Log1p(must(G.Mul(c(1/(t.Scale*t.Scale*t.DF)), z))))))
		perEx = must(G.Add(perEx, must(G.Mul(c(k), lp))))
	}
	rows := must(G.BroadcastAdd(half, perEx, nil, []byte{0}))
	ll := must(G.Sum(rows, 1))
	if err != nil {
		return nil, err
	}
	return ll, nil
}

// logDensity returns log p(sigma = exp(s)) up to a constant as a node of
// s's shape, or nil for the flat prior.
func (p ScalePrior) logDensity(s *G.Node, c func(float64) *G.Node, must func(*G.Node, error) *G.Node) *G.Node {
	var df float64
	switch p.Kind {
	case ScaleHalfNormal:
		// -sigma^2 / (2 scale^2)
		return must(G.Mul(c(-0.5/(p.Scale*p.Scale)), must(G.Exp(must(G.Mul(c(2), s))))))
	case ScaleHalfCauchy:
		df = 1
	case ScaleHalfStudentT:
		df = p.DF
	default:
		return nil
	}
	// -(df+1)/2 log1p(sigma^2 / (df scale^2)), sigma^2 = exp(2 s)
	s2 := must(G.Exp(must(G.Mul(c(2), s))))
	return must(G.Mul(c(-(df+1)/2), must(G.Log1p(must(G.Mul(c(1/(df*p.Scale*p.Scale)), s2))))))
}

// LogDensity returns log p(sigma) up to a constant (0 for the flat prior).
func (p ScalePrior) LogDensity(sigma float64) float64 {
	switch p.Kind {
	case ScaleHalfNormal:
		return -0.5 * sigma * sigma / (p.Scale * p.Scale)
	case ScaleHalfCauchy:
		return -math.Log1p(sigma * sigma / (p.Scale * p.Scale))
	case ScaleHalfStudentT:
		return -(p.DF + 1) / 2 * math.Log1p(sigma*sigma/(p.DF*p.Scale*p.Scale))
	}
	return 0
}

// LogDensity returns log p(a) up to a constant (0 when DF is 0).
func (t StudentT) LogDensity(a float64) float64 {
	if t.DF <= 0 {
		return 0
	}
	z := (a - t.Loc) / t.Scale
	return -(t.DF + 1) / 2 * math.Log1p(z*z/t.DF)
}

// constant returns a scalar constant of dtype dt.
func constant(dt tensor.Dtype, v float64) *G.Node {
	if dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}
