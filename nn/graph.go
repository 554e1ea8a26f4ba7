package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Graph is a Spec built as a Gorgonia expression graph for batches of up to
// Batch examples, with the minibatch potential and its symbolic gradient:
//
//	U~(theta) = -log p(theta) - Scale * sum_i Mask_i log l(theta; x_i, y_i)
//
// Rows of X beyond the examples in use are masked out with Mask_i = 0, so one
// graph serves every batch size up to Batch.
type Graph struct {
	Spec  Spec
	Batch int
	DType tensor.Dtype

	G      *G.ExprGraph
	X      *G.Node   // Batch x Sizes[0] inputs
	Y      *G.Node   // Batch x outputs: one-hot labels, or regression targets
	Mask   *G.Node   // Batch weights: 1 for examples in use, 0 for padding
	Scale  *G.Node   // scalar N/|S|
	Params []*G.Node // W_0, b_0, W_1, b_1, ... in the flat layout's order
	LogLik *G.Node   // Batch per-example log-likelihoods
	// LogLikOut is a copy of LogLik outside the potential's ancestry, so the
	// backward pass cannot overwrite its value in place.
	LogLikOut *G.Node
	U         *G.Node // scalar potential
	Grads     G.Nodes // dU/dParams, same order as Params
}

// NewGraph builds the expression graph of spec for batches of up to batch
// examples in dtype (tensor.Float32 or tensor.Float64).
func NewGraph(spec Spec, batch int, dtype tensor.Dtype) (*Graph, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if batch <= 0 {
		return nil, fmt.Errorf("graph: batch size %d must be positive", batch)
	}
	if dtype != tensor.Float32 && dtype != tensor.Float64 {
		return nil, fmt.Errorf("graph: dtype %v: expected float32 or float64", dtype)
	}
	g := &Graph{Spec: spec, Batch: batch, DType: dtype, G: G.NewGraph()}
	if err := g.build(); err != nil {
		return nil, fmt.Errorf("graph %s: %w", spec.Arch(), err)
	}
	return g, nil
}

func (g *Graph) scalar(v float64) *G.Node {
	if g.DType == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

func (g *Graph) build() error {
	s := g.Spec
	nOut := s.Sizes[len(s.Sizes)-1]
	g.X = G.NewMatrix(g.G, g.DType, G.WithShape(g.Batch, s.Sizes[0]), G.WithName("x"))
	g.Y = G.NewMatrix(g.G, g.DType, G.WithShape(g.Batch, nOut), G.WithName("y"))
	g.Mask = G.NewVector(g.G, g.DType, G.WithShape(g.Batch), G.WithName("mask"))
	g.Scale = G.NewScalar(g.G, g.DType, G.WithName("scale"))

	var prior *G.Node
	h := g.X
	for l, ly := range s.Layers() {
		w := G.NewMatrix(g.G, g.DType, G.WithShape(ly.In, ly.Out), G.WithName(fmt.Sprintf("W%d", l)))
		b := G.NewVector(g.G, g.DType, G.WithShape(ly.Out), G.WithName(fmt.Sprintf("b%d", l)))
		g.Params = append(g.Params, w, b)
		z, err := G.Mul(h, w)
		if err != nil {
			return err
		}
		if z, err = G.BroadcastAdd(z, b, nil, []byte{0}); err != nil {
			return err
		}
		if l < s.NumLayers()-1 {
			switch s.Activation {
			case ReLU:
				z, err = G.Rectify(z)
			case Tanh:
				z, err = G.Tanh(z)
			case Sigmoid:
				z, err = G.Sigmoid(z)
			}
			if err != nil {
				return err
			}
		}
		h = z
		term, err := g.priorTerm(s, l, w, b)
		if err != nil {
			return err
		}
		if prior == nil {
			prior = term
		} else {
			prior = G.Must(G.Add(prior, term))
		}
	}

	var err error
	switch s.Likelihood {
	case Categorical:
		// log softmax_y(z), picked out by the one-hot labels.
		lsm, e := G.LogSoftMax(h, 1)
		if e != nil {
			return e
		}
		g.LogLik, err = G.Sum(G.Must(G.HadamardProd(lsm, g.Y)), 1)
	case Gaussian:
		d := G.Must(G.Sub(g.Y, h))
		ss := G.Must(G.Sum(G.Must(G.Square(d)), 1))
		ll := G.Must(G.Mul(g.scalar(-0.5/(s.NoiseSD*s.NoiseSD)), ss))
		g.LogLik, err = G.Add(ll, g.scalar(s.GaussianLogNorm()))
	}
	if err != nil {
		return err
	}
	g.LogLikOut = G.Must(G.Add(g.LogLik, g.scalar(0)))
	masked := G.Must(G.Sum(G.Must(G.HadamardProd(g.LogLik, g.Mask))))
	g.U, err = G.Sub(prior, G.Must(G.Mul(g.Scale, masked)))
	if err != nil {
		return err
	}
	g.Grads, err = G.Grad(g.U, g.Params...)
	return err
}

// priorTerm builds layer l's -log prior: lambda/2 (sum W^2 + sum b^2) for the
// Gaussian prior, (nu+1)/2 sum log(1 + lambda w^2/nu) for the Student-t one.
func (g *Graph) priorTerm(s Spec, l int, w, b *G.Node) (*G.Node, error) {
	lam := s.Precision(l)
	nu := s.PriorDF
	sum := func(x *G.Node) (*G.Node, error) {
		sq, err := G.Square(x)
		if err != nil {
			return nil, err
		}
		if nu > 0 {
			if sq, err = G.Mul(g.scalar(lam/nu), sq); err != nil {
				return nil, err
			}
			if sq, err = G.Log1p(sq); err != nil {
				return nil, err
			}
		}
		return G.Sum(sq)
	}
	sw, err := sum(w)
	if err != nil {
		return nil, err
	}
	sb, err := sum(b)
	if err != nil {
		return nil, err
	}
	coef := 0.5 * lam
	if nu > 0 {
		coef = 0.5 * (nu + 1)
	}
	return G.Mul(g.scalar(coef), G.Must(G.Add(sw, sb)))
}
