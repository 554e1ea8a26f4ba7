package nn

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NewGraph builds spec's MLP as a model graph (the contract of Graph) for
// batches of batch examples in dtype (tensor.Float32 or tensor.Float64):
// Input [batch, Sizes[0]], learnables W0, b0, W1, b1, ... in the order of
// the flat layout, each layer computing x W + b.
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
	g, err := buildMLP(spec, batch, dtype)
	if err != nil {
		return nil, fmt.Errorf("graph %s: %w", spec.Arch(), err)
	}
	return g, nil
}

func buildMLP(s Spec, batch int, dt tensor.Dtype) (*Graph, error) {
	eg := G.NewGraph()
	nOut := s.Sizes[len(s.Sizes)-1]
	g := &Graph{G: eg, Batch: batch, DType: dt,
		Input:  G.NewMatrix(eg, dt, G.WithShape(batch, s.Sizes[0]), G.WithName("x")),
		Target: G.NewMatrix(eg, dt, G.WithShape(batch, nOut), G.WithName("y")),
		OneHot: s.Likelihood == Categorical,
	}
	layout := s.Layout()
	h := g.Input
	for l, ly := range s.Layers() {
		w := G.NewMatrix(eg, dt, G.WithShape(ly.In, ly.Out), G.WithName(fmt.Sprintf("W%d", l)))
		b := G.NewVector(eg, dt, G.WithShape(ly.Out), G.WithName(fmt.Sprintf("b%d", l)))
		g.Learnables = append(g.Learnables, w, b)
		for _, p := range layout[2*l : 2*l+2] {
			g.Priors = append(g.Priors, p.Prior)
			g.InitSD = append(g.InitSD, p.InitSD)
		}
		z, err := G.Mul(h, w)
		if err != nil {
			return nil, err
		}
		if z, err = G.BroadcastAdd(z, b, nil, []byte{0}); err != nil {
			return nil, err
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
				return nil, err
			}
		}
		h = z
	}
	var err error
	switch s.Likelihood {
	case Categorical:
		g.Logits = h
		g.LogLik, err = CategoricalLogLik(h, g.Target)
	case Gaussian:
		g.LogLik, err = GaussianLogLik(h, g.Target, s.NoiseSD)
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Layout returns the MLP's flat layout as a Layout: W0, b0, W1, b1, ...
// with layer l's prior on both its weights and biases and Init's scales
// (He for ReLU, Xavier otherwise; biases zero), so that Layout's
// NegLogPrior and Init agree with Spec's.
func (s Spec) Layout() Layout {
	var out Layout
	for l, ly := range s.Layers() {
		sd := math.Sqrt(2 / float64(ly.In+ly.Out))
		if s.Activation == ReLU {
			sd = math.Sqrt(2 / float64(ly.In))
		}
		pr := s.layerPrior(l)
		out = append(out,
			Param{Name: fmt.Sprintf("W%d", l), Shape: []int{ly.In, ly.Out}, Offset: ly.W, Prior: pr, InitSD: sd},
			Param{Name: fmt.Sprintf("b%d", l), Shape: []int{ly.Out}, Offset: ly.B, Prior: pr})
	}
	return out
}

// Model returns the MLP as a Model named by its widths (784-400-10), with
// MLP set so that its graph compiles to its BLAS plan's arithmetic.
func (s Spec) Model() (Model, error) {
	if err := s.Validate(); err != nil {
		return Model{}, err
	}
	m, err := NewModel(s.Arch(), func(batch int, dt tensor.Dtype) (*Graph, error) { return NewGraph(s, batch, dt) })
	if err != nil {
		return Model{}, err
	}
	spec := s
	spec.Sizes = append([]int(nil), s.Sizes...)
	spec.PriorPrecision = append([]float64(nil), s.PriorPrecision...)
	m.MLP = &spec
	return m, nil
}
