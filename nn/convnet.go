package nn

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ConvNet describes a LeNet-style Bayesian CNN classifier built from
// Gorgonia's own ops: for each entry of Conv, a Kernel x Kernel convolution
// with that many channels ("same" padding, stride 1, plus a bias per
// channel), Rectify, and 2x2 max pooling of stride 2; then the flattened
// features go through dense ReLU layers of widths Dense and a dense output
// layer of Classes logits, with a categorical likelihood. Every learnable
// has the prior Prior gives for its fan-in, and He initialisation. Skip
// adds a dense branch from the raw image to the first dense layer.
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
	// Skip, when true, adds the skip branch: a dense weight W, the
	// learnable skip.W of shape [Channels*Height*Width, n] (n the first
	// dense layer's width, the last learnable of the layout), from the raw
	// flattened image x to the first dense layer's pre-activation,
	// flat(features) fc1.W + x W + fc1.b. Its prior is a dense layer's of
	// fan-in Channels*Height*Width, its initial values He's. Without Skip
	// the network, its layout and its graph are those of a ConvNet
	// without the field.
	Skip bool
	// SkipBasis and SkipScale, when SkipBasis is not nil (with Skip),
	// reparametrise the branch: L orthonormal image directions v_j
	// (SkipBasis[j*D:(j+1)*D] is v_j, D = Channels*Height*Width: the
	// layout of nullspace.Prior.V) and the scale s > 0 make the branch's
	// weight W = s V V^T W', where W' is the learnable skip.W under its
	// own prior: zero on the span of the directions left out of V, s W'
	// projected on V's. The graph computes x W as s (x V) (V^T W'): a
	// product of L x D x n multiply-adds per pass and D x L per example
	// (and as much again for the gradient). The learnables' names, shapes
	// and priors are unchanged, so a sample of W' with s V V^T W' in its
	// place is the network without SkipBasis (nullspace.Prior.SkipModel
	// and FoldSkip sample it so).
	SkipBasis []float64
	SkipScale float64
}

// SkipWeights is the name of the skip branch's learnable (ConvNet.Skip).
const SkipWeights = "skip.W"

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
	net.SkipBasis = append([]float64(nil), c.SkipBasis...)
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
	if err := c.validateSkip(); err != nil {
		return err
	}
	return (Prior{Precision: c.Prior.Precision, DF: c.Prior.DF}).Validate()
}

// validateSkip reports an error when the skip branch's map (SkipBasis,
// SkipScale) is set without the branch or does not fit the images.
func (c ConvNet) validateSkip() error {
	if c.SkipBasis == nil {
		if c.SkipScale != 0 {
			return fmt.Errorf("convnet: skip scale %v without a skip basis", c.SkipScale)
		}
		return nil
	}
	d := c.Channels * c.Height * c.Width
	switch {
	case !c.Skip:
		return fmt.Errorf("convnet: a skip basis without the skip branch (Skip)")
	case len(c.SkipBasis) == 0 || len(c.SkipBasis)%d != 0:
		return fmt.Errorf("convnet: skip basis of %d values is not a whole number of directions of %d image values", len(c.SkipBasis), d)
	case !(c.SkipScale > 0) || math.IsInf(c.SkipScale, 0):
		return fmt.Errorf("convnet: skip scale %v must be positive and finite", c.SkipScale)
	}
	return nil
}

// CheckImages returns an error naming both shapes when images of
// dimensions dims (one example's, as its file gives them: rows, cols, or
// channels, rows, cols; dimensions of 1 anywhere, such as a single
// channel's, aside) are not the Channels x Height x Width images the
// network takes: a convolution over images of another shape, even of as
// many values, computes nothing meaningful. Dimensions of fewer than two
// entries (flat rows, or not known) are not checked here.
func (c ConvNet) CheckImages(dims []int) error {
	if len(dims) < 2 {
		return nil
	}
	// dimensions of 1 do not change a row-major layout: 28x28x1 and
	// 1x28x28 hold a 28x28 image as 28x28 does (3x28x28 and 28x28x3 differ)
	want := []int{c.Channels, c.Height, c.Width}
	if slices.Equal(squeeze(dims), squeeze(want)) {
		return nil
	}
	takes := fmt.Sprintf("%dx%d", c.Height, c.Width)
	if c.Channels != 1 {
		takes = fmt.Sprintf("%dx%dx%d (channels, rows, cols)", c.Channels, c.Height, c.Width)
	}
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return fmt.Errorf("the data's images are %s, the network takes %s images (%d values each)", strings.Join(s, "x"), takes, c.Channels*c.Height*c.Width)
}

// squeeze returns dims without its dimensions of 1.
func squeeze(dims []int) []int {
	return slices.DeleteFunc(slices.Clone(dims), func(d int) bool { return d == 1 })
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
	if h, err = c.denseLayers(g, h, learn); err != nil {
		return nil, err
	}
	g.Logits = h
	if g.LogLik, err = CategoricalLogLik(h, g.Target); err != nil {
		return nil, err
	}
	return g, nil
}

// denseLayers returns the logits of the dense layers on the flattened
// features h of g's input, the learnables given to learn (with their
// fan-in) in the layout's order: fc1.W, fc1.b, ... and, with Skip, the
// branch's skip.W last, added to the first layer's pre-activation.
func (c ConvNet) denseLayers(g *Graph, h *G.Node, learn func(*G.Node, int)) (*G.Node, error) {
	widths := append(append([]int{h.Shape()[1]}, c.Dense...), c.Classes)
	var skipW *G.Node
	var err error
	for l := 0; l+1 < len(widths); l++ {
		w := G.NewMatrix(g.G, g.DType, G.WithShape(widths[l], widths[l+1]), G.WithName(fmt.Sprintf("fc%d.W", l+1)))
		b := G.NewVector(g.G, g.DType, G.WithShape(widths[l+1]), G.WithName(fmt.Sprintf("fc%d.b", l+1)))
		learn(w, widths[l])
		learn(b, widths[l])
		if h, err = G.Mul(h, w); err != nil {
			return nil, fmt.Errorf("fc%d: %w", l+1, err)
		}
		if l == 0 && c.Skip {
			var skip *G.Node
			if skipW, skip, err = c.skipBranch(g, widths[1]); err != nil {
				return nil, err
			}
			if h, err = G.Add(h, skip); err != nil {
				return nil, fmt.Errorf("fc1 skip: %w", err)
			}
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
	if skipW != nil {
		learn(skipW, c.Channels*c.Height*c.Width)
	}
	return h, nil
}

// skipBranch returns the skip branch's learnable W' ([D, n], D the
// image's values) and its [Batch, n] term on g's input x flattened: x W',
// or with SkipBasis s (x V) (V^T W'), V^T the constant [L, D] SkipBasis.
func (c ConvNet) skipBranch(g *Graph, n int) (w, term *G.Node, err error) {
	d := c.Channels * c.Height * c.Width
	w = G.NewMatrix(g.G, g.DType, G.WithShape(d, n), G.WithName(SkipWeights))
	x, err := G.Reshape(g.Input, tensor.Shape{g.Batch, d})
	if err != nil {
		return nil, nil, fmt.Errorf("skip input: %w", err)
	}
	if c.SkipBasis == nil {
		if term, err = G.Mul(x, w); err != nil {
			return nil, nil, fmt.Errorf("skip: %w", err)
		}
		return w, term, nil
	}
	l := len(c.SkipBasis) / d
	vt := make([]float64, l*d) // V^T, row j the direction v_j
	sv := make([]float64, d*l) // s V
	for j := 0; j < l; j++ {
		for i := 0; i < d; i++ {
			vt[j*d+i] = c.SkipBasis[j*d+i]
			sv[i*l+j] = c.SkipScale * c.SkipBasis[j*d+i]
		}
	}
	xv, err := G.Mul(x, constMatrix(sv, d, l, g.DType, "skip.sV")) // [Batch, L]
	if err != nil {
		return nil, nil, fmt.Errorf("skip map: %w", err)
	}
	vw, err := G.Mul(constMatrix(vt, l, d, g.DType, "skip.Vt"), w) // [L, n]
	if err != nil {
		return nil, nil, fmt.Errorf("skip map: %w", err)
	}
	if term, err = G.Mul(xv, vw); err != nil {
		return nil, nil, fmt.Errorf("skip: %w", err)
	}
	return w, term, nil
}

// constMatrix returns the r x c row-major values v as a constant matrix
// of dtype dt called name.
func constMatrix(v []float64, r, c int, dt tensor.Dtype, name string) *G.Node {
	var backing any = v
	if dt == tensor.Float32 {
		a := make([]float32, len(v))
		for i, x := range v {
			a[i] = float32(x)
		}
		backing = a
	}
	return G.NewConstant(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(backing)), G.WithName(name))
}
