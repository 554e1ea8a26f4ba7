package nn

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ConvNet describes a LeNet-style Bayesian CNN classifier built from
// Gorgonia's own ops: for each entry of Conv, a Kernel x Kernel convolution
// with that many channels ("same" padding, stride 1, plus a bias per
// channel), Rectify, and 2x2 max pooling of stride 2; then the flattened
// features go through dense ReLU layers of widths Dense and a dense output
// layer of Classes logits, with a categorical likelihood. Every learnable
// has the prior Prior gives for its fan-in, and He initialisation.
type ConvNet struct {
	Height, Width, Channels int // input images, Channels x Height x Width per example
	Conv                    []int
	Kernel                  int // odd
	Dense                   []int
	Classes                 int
	Prior                   PriorConfig
	// FirstMap, when not nil, reparametrises the first convolution: a
	// P x P matrix A (row-major, P = Channels*Kernel*Kernel, the values of
	// a patch) such that the convolution's kernel is K = K' A, where K' is
	// the learnable conv1.W as a matrix [Conv[0], P] under its own prior.
	// The graph computes K from K' at each pass (a product of Conv[0] x P
	// x P multiply-adds); the learnables' names, shapes and priors are
	// unchanged, so a sample of K' with K' A in its place is the network
	// without FirstMap. Package nullspace's prior of a convolution is
	// sampled so (nullspace.Prior.Matrix, FoldKernel).
	FirstMap []float64
}

// LeNet returns the LeNet-style CNN for 28x28 grey images in 10 classes:
// conv 5x5x32, pool, conv 5x5x64, pool, dense 256, dense 10
// (857,738 parameters), with prior p.
func LeNet(p PriorConfig) ConvNet {
	return ConvNet{Height: 28, Width: 28, Channels: 1, Conv: []int{32, 64}, Kernel: 5, Dense: []int{256}, Classes: 10, Prior: p}
}

// CNN3 returns a CNN of another shape than LeNet for 28x28 grey images in
// 10 classes: three blocks of 3x3 convolution, ReLU and 2x2 pooling with
// 32, 64 and 128 channels (28 -> 14 -> 7 -> 3), dense 256, dense 10
// (390,410 parameters), with prior p.
func CNN3(p PriorConfig) ConvNet {
	return ConvNet{Height: 28, Width: 28, Channels: 1, Conv: []int{32, 64, 128}, Kernel: 3, Dense: []int{256}, Classes: 10, Prior: p}
}

// Model returns the network as a Model called name.
func (c ConvNet) Model(name string) (Model, error) {
	if err := c.validate(); err != nil {
		return Model{}, fmt.Errorf("model %s: %w", name, err)
	}
	m, err := NewModel(name, c.Build)
	if err != nil {
		return Model{}, err
	}
	net := c
	net.Conv = append([]int(nil), c.Conv...)
	net.Dense = append([]int(nil), c.Dense...)
	net.FirstMap = append([]float64(nil), c.FirstMap...) // nil stays nil
	m.Conv = &net
	return m, nil
}

func (c ConvNet) validate() error {
	if c.Height <= 0 || c.Width <= 0 || c.Channels <= 0 || c.Classes < 2 {
		return fmt.Errorf("convnet: images %dx%dx%d and %d classes: sizes must be positive and classes at least 2", c.Channels, c.Height, c.Width, c.Classes)
	}
	if c.Kernel <= 0 || c.Kernel%2 == 0 {
		return fmt.Errorf("convnet: kernel %d must be odd and positive", c.Kernel)
	}
	for _, n := range append(append([]int(nil), c.Conv...), c.Dense...) {
		if n <= 0 {
			return fmt.Errorf("convnet: layer widths %v %v must be positive", c.Conv, c.Dense)
		}
	}
	if p := c.Channels * c.Kernel * c.Kernel; c.FirstMap != nil && len(c.FirstMap) != p*p {
		return fmt.Errorf("convnet: first map of %d values, the first convolution's patches have %d: expected %d", len(c.FirstMap), p, p*p)
	}
	return (Prior{Precision: c.Prior.Precision, DF: c.Prior.DF}).Validate()
}

// firstKernel returns the kernel the first convolution applies, w' A as a
// [out, in, k, k] tensor (FirstMap A as a constant of dtype dt).
func (c ConvNet) firstKernel(w *G.Node, dt tensor.Dtype) (*G.Node, error) {
	s := w.Shape()
	out, p := s[0], s[1]*s[2]*s[3]
	var backing any
	if dt == tensor.Float32 {
		a := make([]float32, len(c.FirstMap))
		for i, v := range c.FirstMap {
			a[i] = float32(v)
		}
		backing = a
	} else {
		backing = append([]float64(nil), c.FirstMap...)
	}
	a := G.NewConstant(tensor.New(tensor.WithShape(p, p), tensor.WithBacking(backing)), G.WithName("conv1.map"))
	flat, err := G.Reshape(w, tensor.Shape{out, p})
	if err != nil {
		return nil, err
	}
	k, err := G.Mul(flat, a)
	if err != nil {
		return nil, err
	}
	return G.Reshape(k, tensor.Shape(append([]int(nil), s...)))
}

// convBlock returns convolution l's block on h: the convolution with
// kernel kern ("same" padding, stride 1), the bias b per channel, ReLU
// and 2x2 max pooling of stride 2.
func (c ConvNet) convBlock(h, kern, b *G.Node, l int) (*G.Node, error) {
	pad := c.Kernel / 2
	z, err := G.Conv2d(h, kern, tensor.Shape{c.Kernel, c.Kernel}, []int{pad, pad}, []int{1, 1}, []int{1, 1})
	if err != nil {
		return nil, fmt.Errorf("conv%d: %w", l, err)
	}
	if z, err = G.BroadcastAdd(z, b, nil, []byte{0, 2, 3}); err != nil {
		return nil, fmt.Errorf("conv%d bias: %w", l, err)
	}
	if z, err = G.Rectify(z); err != nil {
		return nil, fmt.Errorf("conv%d: %w", l, err)
	}
	if h, err = G.MaxPool2D(z, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}); err != nil {
		return nil, fmt.Errorf("pool%d: %w", l, err)
	}
	return h, nil
}

// Build builds the network's graph for batches of batch examples: the
// Builder of the model contract.
func (c ConvNet) Build(batch int, dt tensor.Dtype) (*Graph, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if batch <= 0 {
		return nil, fmt.Errorf("convnet: batch size %d must be positive", batch)
	}
	eg := G.NewGraph()
	g := &Graph{G: eg, Batch: batch, DType: dt,
		Input:  G.NewTensor(eg, dt, 4, G.WithShape(batch, c.Channels, c.Height, c.Width), G.WithName("x")),
		Target: G.NewMatrix(eg, dt, G.WithShape(batch, c.Classes), G.WithName("y")),
		OneHot: true,
	}
	learn := func(n *G.Node, fanIn int) {
		g.Learnables = append(g.Learnables, n)
		g.Priors = append(g.Priors, c.Prior.Prior(fanIn))
		sd := 0.0
		if n.Dims() > 1 { // weights; biases start at zero
			sd = math.Sqrt(2 / float64(fanIn))
		}
		g.InitSD = append(g.InitSD, sd)
	}
	h := g.Input
	in := c.Channels
	for l, out := range c.Conv {
		w := G.NewTensor(eg, dt, 4, G.WithShape(out, in, c.Kernel, c.Kernel), G.WithName(fmt.Sprintf("conv%d.W", l+1)))
		b := G.NewVector(eg, dt, G.WithShape(out), G.WithName(fmt.Sprintf("conv%d.b", l+1)))
		fanIn := in * c.Kernel * c.Kernel
		learn(w, fanIn)
		learn(b, fanIn)
		kern, err := w, error(nil)
		if l == 0 && c.FirstMap != nil {
			if kern, err = c.firstKernel(w, dt); err != nil {
				return nil, fmt.Errorf("conv1 map: %w", err)
			}
		}
		if h, err = c.convBlock(h, kern, b, l+1); err != nil {
			return nil, err
		}
		in = out
	}
	s := h.Shape()
	flat := s.TotalSize() / batch
	h, err := G.Reshape(h, tensor.Shape{batch, flat})
	if err != nil {
		return nil, fmt.Errorf("flatten: %w", err)
	}
	widths := append(append([]int{flat}, c.Dense...), c.Classes)
	for l := 0; l+1 < len(widths); l++ {
		w := G.NewMatrix(eg, dt, G.WithShape(widths[l], widths[l+1]), G.WithName(fmt.Sprintf("fc%d.W", l+1)))
		b := G.NewVector(eg, dt, G.WithShape(widths[l+1]), G.WithName(fmt.Sprintf("fc%d.b", l+1)))
		learn(w, widths[l])
		learn(b, widths[l])
		if h, err = G.Mul(h, w); err != nil {
			return nil, fmt.Errorf("fc%d: %w", l+1, err)
		}
		if h, err = G.BroadcastAdd(h, b, nil, []byte{0}); err != nil {
			return nil, fmt.Errorf("fc%d bias: %w", l+1, err)
		}
		if l+2 < len(widths) {
			if h, err = G.Rectify(h); err != nil {
				return nil, fmt.Errorf("fc%d: %w", l+1, err)
			}
		}
	}
	g.Logits = h
	if g.LogLik, err = CategoricalLogLik(h, g.Target); err != nil {
		return nil, err
	}
	return g, nil
}
