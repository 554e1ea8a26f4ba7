// Package testmodel holds the models and data the tests of autodiff and
// autodiff/compile share: a graph of every op the compiler supports, a
// linear regression, a CNN small enough for finite differences, and random
// data for them. Only tests import it.
package testmodel

import (
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AllOps is a small classifier whose graph uses every op the compiler
// supports: Conv2d (im2col, reshapes, a product with a transposed operand,
// a transpose, fused into one kernel), Im2Col on its own, broadcast bias adds, Rectify, MaxPool2D, Reshape, Mul,
// Transpose, Tanh, Sigmoid, Square, Neg, Exp, Log, Sqrt, Add, Sub,
// HadamardProd, HadamardDiv, scalar constants, SoftMax, LogSoftMax and Sum.
func AllOps(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	eg := G.NewGraph()
	g := &nn.Graph{G: eg, Batch: batch, DType: dt, OneHot: true,
		Input:  G.NewTensor(eg, dt, 4, G.WithShape(batch, 1, 5, 5), G.WithName("x")),
		Target: G.NewMatrix(eg, dt, G.WithShape(batch, 3), G.WithName("y")),
	}
	learn := func(n *G.Node, sd float64) *G.Node {
		g.Learnables = append(g.Learnables, n)
		g.Priors = append(g.Priors, nn.Prior{Precision: 0.7})
		g.InitSD = append(g.InitSD, sd)
		return n
	}
	cw := learn(G.NewTensor(eg, dt, 4, G.WithShape(2, 1, 3, 3), G.WithName("cw")), 0.5)
	cb := learn(G.NewVector(eg, dt, G.WithShape(2), G.WithName("cb")), 0.1)
	w1 := learn(G.NewMatrix(eg, dt, G.WithShape(8, 4), G.WithName("w1")), 0.5)
	b1 := learn(G.NewVector(eg, dt, G.WithShape(4), G.WithName("b1")), 0.1)
	v := learn(G.NewMatrix(eg, dt, G.WithShape(3, 4), G.WithName("v")), 0.5)
	u := learn(G.NewMatrix(eg, dt, G.WithShape(32, 3), G.WithName("u")), 0.3)
	cw2 := learn(G.NewTensor(eg, dt, 4, G.WithShape(1, 1, 3, 3), G.WithName("cw2")), 0.3)
	u2 := learn(G.NewMatrix(eg, dt, G.WithShape(9, 3), G.WithName("u2")), 0.3)
	one := constant(dt, 1)
	must := func(n *G.Node, err error) *G.Node {
		if err != nil {
			panic(err) // test helper: the graph is fixed
		}
		return n
	}
	// a convolution with no bias or ReLU after it (stride 2, no padding)
	plain := must(G.Conv2d(g.Input, cw2, tensor.Shape{3, 3}, []int{0, 0}, []int{1, 1}, []int{1, 1}))
	extra2 := must(G.Mul(must(G.Reshape(plain, tensor.Shape{batch, 9})), u2))
	h := must(G.Conv2d(g.Input, cw, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}))
	h = must(G.BroadcastAdd(h, cb, nil, []byte{0, 2, 3}))
	h = must(G.Rectify(h))
	// im2col on its own (not a convolution): patches of the hidden layer
	cols := must(G.Im2Col(h, tensor.Shape{2, 2}, tensor.Shape{0, 0}, tensor.Shape{2, 2}, tensor.Shape{1, 1}))
	extra := must(G.Mul(must(G.Reshape(cols, tensor.Shape{batch, 32})), u))
	h = must(G.MaxPool2D(h, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
	h = must(G.Reshape(h, tensor.Shape{batch, 8}))
	h = must(G.Mul(h, w1))
	h = must(G.BroadcastAdd(h, b1, nil, []byte{0}))
	h = must(G.Tanh(h))
	h = must(G.HadamardProd(must(G.Sigmoid(h)), must(G.Square(h))))
	z := must(G.Mul(h, must(G.Transpose(v))))
	e := must(G.HadamardDiv(z, must(G.Add(must(G.Exp(must(G.Neg(must(G.Square(z)))))), one))))
	s := must(G.Log(must(G.Add(must(G.SoftMax(z, 1)), one))))
	r := must(G.Sqrt(must(G.Add(must(G.Square(z)), one))))
	logits := must(G.Sub(must(G.Add(e, must(G.Mul(constant(dt, 0.5), s)))), must(G.Mul(constant(dt, 0.25), r))))
	logits = must(G.Add(must(G.Add(logits, extra)), extra2))
	g.Logits = logits
	var err error
	if g.LogLik, err = nn.CategoricalLogLik(logits, g.Target); err != nil {
		return nil, err
	}
	return g, nil
}

func constant(dt tensor.Dtype, v float64) *G.Node {
	if dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

// LinearRegression is a regression model through nn.GaussianLogLik with two
// outputs.
func LinearRegression(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	eg := G.NewGraph()
	x := G.NewMatrix(eg, dt, G.WithShape(batch, 3), G.WithName("x"))
	y := G.NewMatrix(eg, dt, G.WithShape(batch, 2), G.WithName("y"))
	w := G.NewMatrix(eg, dt, G.WithShape(3, 2), G.WithName("w"))
	b := G.NewVector(eg, dt, G.WithShape(2), G.WithName("b"))
	xw, err := G.Mul(x, w)
	if err != nil {
		return nil, err
	}
	f, err := G.BroadcastAdd(xw, b, nil, []byte{0})
	if err != nil {
		return nil, err
	}
	ll, err := nn.GaussianLogLik(f, y, 0.7)
	if err != nil {
		return nil, err
	}
	p := nn.Prior{Precision: 2}
	return &nn.Graph{G: eg, Batch: batch, DType: dt, Input: x, Target: y, Learnables: G.Nodes{w, b},
		Priors: []nn.Prior{p, p}, InitSD: []float64{0.5, 0.5}, LogLik: ll}, nil
}

// ToyData is n examples of in standard normal features with, for the
// categorical likelihood, uniform labels among out classes, otherwise out
// standard normal regression targets.
func ToyData(lik nn.Likelihood, n, in, out int, rng *rand.Rand) *datasets.Dataset {
	d := &datasets.Dataset{N: n, D: in, X: make([]float32, n*in)}
	for i := range d.X {
		d.X[i] = float32(rng.NormFloat64())
	}
	if lik == nn.Categorical {
		d.Classes = out
		d.Labels = make([]int, n)
		for i := range d.Labels {
			d.Labels[i] = rng.IntN(out)
		}
	} else {
		d.Outputs = out
		d.Targets = make([]float32, n*out)
		for i := range d.Targets {
			d.Targets[i] = float32(rng.NormFloat64())
		}
	}
	return d
}

// SmallCNN is a CNN small enough for finite differences: 6x6 images, conv
// 3x3x2, pool, conv 3x3x3, pool, dense 4, 3 classes.
func SmallCNN(df float64) nn.ConvNet {
	return nn.ConvNet{Height: 6, Width: 6, Channels: 1, Conv: []int{2, 3}, Kernel: 3, Dense: []int{4}, Classes: 3,
		Prior: nn.PriorConfig{Precision: 0.5, FanIn: true, DF: df}}
}
