package compile

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/dense"
	"github.com/ptsghmc/ptsghmc/nn"
)

// An nn.Spec MLP (a model with MLP set) compiles to the arithmetic of
// autodifftest.Plan, the MLP's hand-written BLAS plan: each dense layer
// (Mul, BroadcastAdd of the bias, activation) runs as one kernel of package
// dense, the likelihood (CategoricalLogLik's log-softmax, product with the
// one-hot target and sum, or GaussianLogLik's chain) as one kernel computing
// in float64 as the plan does, every kernel on the evaluation's rows only
// (not the padding rows of a short batch), and the learnables live in one
// flat buffer so that the Gaussian prior is summed layer by layer over
// weights and biases together. The compiled MLP then computes the plan's
// values bit for bit (TestCompiledMLPMatchesPlan), so a run recorded on the
// plan resumes on it. Other graphs, LeNet's and CNN3's dense layers
// included, keep the generic kernels.

// denseLayer is one of an MLP's layers, compiled on the node of its output
// (the activation's, or the bias add's for the last layer).
type denseLayer[T float] struct {
	l        int       // the layer's index
	in, w, b *cnode[T] // its input, weights and biases
	act      bool      // whether the activation applies (all but the last)
}

// mlpTail is an MLP's likelihood compiled on LogLik's node.
type mlpTail[T float] struct {
	z *cnode[T] // the last layer's output
}

// consumers maps each node to the compiled nodes that read it.
func (c *compiler[T]) consumers() map[*cnode[T]][]*cnode[T] {
	cons := map[*cnode[T]][]*cnode[T]{}
	for _, cn := range c.nodes {
		if cn.skip || cn.kind == "sizeOp" {
			continue
		}
		for _, k := range c.kids(cn.n) {
			cons[k] = append(cons[k], cn)
		}
	}
	return cons
}

// fuseMLP recognises the graph nn.NewGraph builds for the spec c.mlp, layer
// by layer, and its likelihood, and marks them for the MLP's kernels. It
// refuses a graph of another shape.
func (c *compiler[T]) fuseMLP() error {
	s := c.mlp
	cons := c.consumers()
	learn := map[int64]bool{}
	for _, l := range c.g.Learnables {
		learn[l.ID()] = true
	}
	only := func(n *cnode[T], what string) (*cnode[T], error) {
		if cs := cons[n]; len(cs) == 1 {
			return cs[0], nil
		}
		return nil, fmt.Errorf("MLP %s: %s of node %s has %d consumers, expected 1", s.Arch(), what, n.n.Name(), len(cons[n]))
	}
	h := c.node(c.g.Input)
	layers := s.Layers()
	for l, ly := range layers {
		mm, err := only(h, "the layer input")
		if err != nil {
			return err
		}
		ks := c.kids(mm.n)
		if mm.kind != "linAlgBinOp" || opField(mm.n.Op(), "transA").Bool() || opField(mm.n.Op(), "transB").Bool() ||
			len(ks) != 2 || ks[0] != h || !learn[ks[1].n.ID()] || fmt.Sprint(ks[1].shape) != fmt.Sprint([]int{ly.In, ly.Out}) || ks[1].uses != 1 {
			return fmt.Errorf("MLP %s: layer %d: node %s is not the product of its input and its weights", s.Arch(), l, mm.n.Name())
		}
		w := ks[1]
		add, err := only(mm, "the product")
		if err != nil {
			return err
		}
		aks := c.kids(add.n)
		if sym, _ := binSym(add.n.Op()); add.kind != "elemBinOp" || sym != "+" || len(aks) != 2 || aks[0] != mm || !aks[1].repeat {
			return fmt.Errorf("MLP %s: layer %d: node %s is not the bias add", s.Arch(), l, add.n.Name())
		}
		v, err := c.view(aks[1], add.shape)
		bias := v.src
		for err == nil && bias.kind == "reshapeOp" && bias.uses == 1 {
			bias = c.kids(bias.n)[0] // BroadcastAdd reshapes the vector to a row
		}
		// (at batch 1 the bias's one row is the output's: its row stride
		// is never used)
		if err != nil || !learn[bias.n.ID()] || fmt.Sprint(bias.shape) != fmt.Sprint([]int{ly.Out}) || bias.uses != 1 || (v.strides[0] != 0 && add.shape[0] != 1) {
			return fmt.Errorf("MLP %s: layer %d: node %s does not add a bias vector to every row", s.Arch(), l, add.n.Name())
		}
		last := add
		if l < len(layers)-1 {
			act, err := only(add, "the bias add")
			if err != nil {
				return err
			}
			if !isActivation(act, s.Activation) {
				return fmt.Errorf("MLP %s: layer %d: node %s is not the %s activation", s.Arch(), l, act.n.Name(), s.Activation)
			}
			add.skip = true
			last = act
		}
		mm.skip = true
		last.kind, last.dense = "dense", &denseLayer[T]{l: l, in: h, w: w, b: bias, act: l < len(layers)-1}
		h = last
	}
	if c.g.Logits != nil && c.node(c.g.Logits) != h {
		return fmt.Errorf("MLP %s: the logits are not the last layer's output", s.Arch())
	}
	return c.fuseTail(h)
}

// fuseTail marks the likelihood of an MLP whose last layer's output is h:
// every node LogLik depends on that does not lead to h, but the target, is
// part of it. It refuses a graph with a node that is neither.
func (c *compiler[T]) fuseTail(h *cnode[T]) error {
	s := c.mlp
	ll := c.node(c.g.LogLik)
	before := ancestors(c.g.G, h.n)
	for _, cn := range c.nodes {
		switch {
		case before[cn.n.ID()]:
		case cn == ll || cn.n == c.g.Target:
		case cn.inBwd:
			cn.skip = true
		default:
			return fmt.Errorf("MLP %s: node %s is neither a layer nor the likelihood", s.Arch(), cn.n.Name())
		}
	}
	if c.node(c.g.Target).uses != 1 {
		return fmt.Errorf("MLP %s: the target is read by %d nodes, expected the likelihood alone", s.Arch(), c.node(c.g.Target).uses)
	}
	ll.kind, ll.tail = "mlptail", &mlpTail[T]{z: h}
	return nil
}

// isActivation reports whether cn computes the activation a.
func isActivation[T float](cn *cnode[T], a nn.Activation) bool {
	switch a {
	case nn.ReLU:
		return cn.kind == "relu"
	case nn.Tanh, nn.Sigmoid:
		return cn.kind == "elemUnaryOp" && fmt.Sprint(cn.n.Op()) == a.String()
	}
	return false
}

// allocateFlat gives an MLP's learnables their value (and adjoint) buffers
// as consecutive pieces of one buffer, in layout order, as the plan keeps
// them.
func (c *compiler[T]) allocateFlat() {
	n := 0
	for _, l := range c.g.Learnables {
		n += size(c.node(l).shape)
	}
	p := c.p
	p.flat = make([]T, n)
	if c.withGrad {
		p.gflat = make([]T, n)
	}
	off := 0
	for _, l := range c.g.Learnables {
		cn := c.node(l)
		k := size(cn.shape)
		cn.val = p.flat[off : off+k]
		if c.withGrad && cn.needGrad {
			cn.adj = p.gflat[off : off+k]
		}
		off += k
	}
}

// emitDense emits one MLP layer: forward, the product, the bias and the
// activation on the evaluation's rows; backward, the activation's
// derivative, then the weights', biases' and input's adjoints.
func (c *compiler[T]) emitDense(cn *cnode[T]) {
	d, p, act := cn.dense, c.p, c.mlp.Activation
	ly := c.mlp.Layers()[d.l]
	gemm := dense.Gemm[T](c.gemm)
	in, w, b, out := d.in.val, d.w.val, d.b.val, cn.val
	c.p.fwd = append(c.p.fwd, func() { dense.Forward(gemm, act, d.act, in, w, b, out, p.rows, ly.In, ly.Out) })
	prod := int64(p.batch) * int64(ly.In) * int64(ly.Out)
	c.p.macs += prod
	dout := cn.adj
	cn.mkBwd = func() func() {
		// Each buffer is claimed first here (fuseMLP checked that the
		// weights, the biases and the input have this layer alone as
		// consumer), so the layer writes them.
		gw, _ := c.claim(d.w)
		gb, _ := c.claim(d.b)
		c.p.macs += prod
		var din []T
		if d.in.needGrad {
			din, _ = c.claim(d.in)
			c.p.macs += prod
		}
		return func() {
			n := p.rows
			if d.act {
				dense.ActivateGrad(act, out[:n*ly.Out], dout[:n*ly.Out])
			}
			dense.Backward(gemm, in, w, dout, gw, gb, din, n, ly.In, ly.Out)
		}
	}
}

// emitTail emits an MLP's likelihood: per example, in float64, into
// p.ll64 (and rounded into LogLik's buffer); backward, the last layer's
// output adjoint for -scale times the log-likelihoods (the seed in
// LogLik's adjoint, -scale per example).
func (c *compiler[T]) emitTail(cn *cnode[T]) {
	p, s := c.p, c.mlp
	z := cn.tail.z
	k := z.shape[1]
	p.ll64 = make([]float64, p.batch)
	lse := make([]float64, p.batch)
	zv, y, llT := z.val, p.y, cn.val
	categorical := s.Likelihood == nn.Categorical
	if categorical {
		p.labels = make([]int, p.batch)
	}
	inv, logNorm := 1/(s.NoiseSD*s.NoiseSD), s.GaussianLogNorm()
	c.p.fwd = append(c.p.fwd, func() {
		for r := 0; r < p.rows; r++ {
			zr := zv[r*k : (r+1)*k]
			if categorical {
				p.ll64[r], lse[r] = dense.Categorical(zr, p.labels[r])
			} else {
				p.ll64[r] = dense.Gaussian(zr, y[r*k:(r+1)*k], inv, logNorm)
			}
			llT[r] = T(p.ll64[r])
		}
	})
	seed := cn.adj
	cn.mkBwd = func() func() {
		dz, _ := c.claim(z)
		return func() {
			for r := 0; r < p.rows; r++ {
				zr, dr := zv[r*k:(r+1)*k], dz[r*k:(r+1)*k]
				scale := -seed[r] // the seed is -scale, rounded to T: negating it is exact
				if categorical {
					dense.CategoricalGrad(zr, dr, p.labels[r], lse[r], scale)
				} else {
					dense.GaussianGrad(zr, dr, y[r*k:(r+1)*k], inv, scale)
				}
			}
		}
	}
}
