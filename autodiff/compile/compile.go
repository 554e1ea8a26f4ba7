package compile

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	_ "github.com/ptsghmc/ptsghmc/autodiff/internal/blasimpl" // installs OpenBLAS (cgo) for blas32 and blas64
	"github.com/ptsghmc/ptsghmc/nn"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// UnsupportedOpError reports a node of a model's graph whose op the graph
// compiler has no kernel for: the model then runs on Gorgonia's VM.
type UnsupportedOpError struct {
	Model string // the model's name
	Node  string // the node's name in the graph
	Op    string // the op, as Gorgonia prints it
	Why   string // what the compiler found wrong, if the op kind is known
}

// Error implements error.
func (e *UnsupportedOpError) Error() string {
	s := fmt.Sprintf("model %s: the graph compiler does not support op %q (node %s)", e.Model, e.Op, e.Node)
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

// program is a model graph compiled for one float type: the forward steps
// in topological order over preallocated buffers, and their adjoints in
// reverse order. Every buffer is allocated by compile; run and backward
// allocate nothing.
type program[T float] struct {
	batch   int
	x, y    []T   // input and target buffers
	params  [][]T // the learnables' values, in layout order
	grads   [][]T // their adjoints (nil without a gradient)
	loglik  []T   // LogLik's value
	dLoglik []T   // LogLik's adjoint: the seed of the backward pass
	logits  []T   // Logits' value, nil if the model reports none
	fwd     []func()
	ops     []string // the kind of each forward step's op (for tests)
	bwd     []func() // in execution order (reverse topological)
	zero    [][]T    // adjoints no step writes, cleared before the backward pass
	// macs counts the multiply-adds of the matrix products and
	// convolutions: forward, and backward when compiled with a gradient.
	macs int64
	// rows is the number of examples of the evaluation (load sets it): an
	// MLP's kernels run on these rows alone, the others on the whole batch.
	rows int
	// An MLP's (mlp.go): its learnables' values and adjoints in one buffer
	// each, in layout order; its per-example log-likelihoods in float64;
	// each example's class (categorical likelihood).
	flat, gflat []T
	ll64        []float64
	labels      []int
}

// forward runs the forward steps.
func (p *program[T]) forward() {
	for _, f := range p.fwd {
		f()
	}
}

// backward runs the adjoint steps from the seed in dLoglik.
func (p *program[T]) backward() {
	for _, z := range p.zero {
		clear(z)
	}
	for _, f := range p.bwd {
		f()
	}
}

// cnode is what the compiler knows of one graph node.
type cnode[T float] struct {
	n        *G.Node
	shape    []int
	val      []T
	adj      []T // nil when no gradient flows through the node
	adjOwner int // index of the node whose adjoint buffer adj is (aliases)
	written  bool
	uses     int  // consumers among the compiled nodes
	inBwd    bool // an ancestor of LogLik
	needGrad bool
	skip     bool // consumed by a fused kernel: no buffer, no step
	fused    bool // computed by a fused kernel: a value buffer, no step, no adjoint
	block    *convBlock[T]
	dense    *denseLayer[T] // an MLP's layer (mlp.go)
	tail     *mlpTail[T]    // an MLP's likelihood (mlp.go)
	repeat   bool           // a broadcast repeat: a view, no buffer
	kind     string
	// mkBwd, called once in reverse topological order, claims the
	// adjoints its step writes and returns the step (nil: none).
	mkBwd func() func()
}

// compiler builds a program from a graph.
type compiler[T float] struct {
	model    string
	g        *nn.Graph
	withGrad bool
	mlp      *nn.Spec // an nn.Spec MLP's graph, compiled to the plan's arithmetic (mlp.go)
	gemm     gemmFunc[T]
	idx      map[int64]int
	nodes    []*cnode[T]
	p        *program[T]
}

func children(eg *G.ExprGraph, n *G.Node) []*G.Node {
	var out []*G.Node
	it := eg.From(n.ID())
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

// ancestors returns the set of nodes roots depend on, roots included.
func ancestors(eg *G.ExprGraph, roots ...*G.Node) map[int64]bool {
	seen := map[int64]bool{}
	var visit func(n *G.Node)
	visit = func(n *G.Node) {
		if n == nil || seen[n.ID()] {
			return
		}
		seen[n.ID()] = true
		for _, c := range children(eg, n) {
			visit(c)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return seen
}

// opKind names an op for the compiler: its Go type without the package.
func opKind(op G.Op) string {
	if op == nil {
		return ""
	}
	s := fmt.Sprintf("%T", op)
	s = strings.TrimPrefix(s, "*")
	return strings.TrimPrefix(s, "gorgonia.")
}

// opField reads an unexported field of an op's struct by reflection (the
// ops' parameters are not exported).
func opField(op G.Op, name string) reflect.Value {
	v := reflect.ValueOf(op)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	return v.FieldByName(name)
}

func opInt(op G.Op, name string) int { return intOf(opField(op, name)) }

func intOf(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(v.Uint())
	}
	return int(v.Int())
}

func opInts(op G.Op, name string) []int {
	f := opField(op, name)
	out := make([]int, f.Len())
	for i := range out {
		out[i] = intOf(f.Index(i))
	}
	return out
}

// compileGraph compiles g for element type T. The ops' parameters are read
// by reflection from Gorgonia's unexported fields; should a Gorgonia
// version lay them out differently, the op is reported unsupported.
func compileGraph[T float](model string, g *nn.Graph, mlp *nn.Spec, withGrad bool, gemm gemmFunc[T]) (prog *program[T], err error) {
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, &UnsupportedOpError{Model: model, Op: "?", Node: "?", Why: fmt.Sprintf("reading an op's parameters: %v", r)}
		}
	}()
	c := &compiler[T]{model: model, g: g, mlp: mlp, withGrad: withGrad, gemm: gemm, idx: map[int64]int{}, p: &program[T]{batch: g.Batch}}
	if err := c.sortNodes(); err != nil {
		return nil, err
	}
	if err := c.classify(); err != nil {
		return nil, err
	}
	c.allocate()
	if err := c.emit(); err != nil {
		return nil, err
	}
	if withGrad {
		c.emitBackward()
	}
	return c.p, nil
}

func (c *compiler[T]) unsupported(n *G.Node, why string) error {
	return &UnsupportedOpError{Model: c.model, Node: n.Name(), Op: fmt.Sprint(n.Op()), Why: why}
}

// sortNodes lists the nodes LogLik and Logits depend on, inputs first.
func (c *compiler[T]) sortNodes() error {
	eg := c.g.G
	sorted, err := G.Sort(eg)
	if err != nil {
		return fmt.Errorf("compile %s: sort graph: %w", c.model, err)
	}
	need := ancestors(eg, c.g.LogLik, c.g.Logits)
	bwd := ancestors(eg, c.g.LogLik)
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		if !need[n.ID()] {
			continue
		}
		c.idx[n.ID()] = len(c.nodes)
		c.nodes = append(c.nodes, &cnode[T]{n: n, shape: []int(n.Shape().Clone()), adjOwner: len(c.nodes), inBwd: bwd[n.ID()], kind: opKind(n.Op())})
	}
	return nil
}

func (c *compiler[T]) node(n *G.Node) *cnode[T] { return c.nodes[c.idx[n.ID()]] }

func (c *compiler[T]) kids(n *G.Node) []*cnode[T] {
	var out []*cnode[T]
	for _, k := range children(c.g.G, n) {
		out = append(out, c.node(k))
	}
	return out
}

func size(shape []int) int {
	s := 1
	for _, d := range shape {
		s *= d
	}
	return s
}

// binSym returns an elemBinOp's symbol and whether a comparison returns
// the operands' type ("+ false" -> "+", false).
func binSym(op G.Op) (string, bool) {
	f := strings.Fields(fmt.Sprint(op))
	if len(f) != 2 {
		return "", false
	}
	b, _ := strconv.ParseBool(f[1])
	return f[0], b
}

var (
	arithOps   = map[string]bool{"+": true, "-": true, "⊙": true, "÷": true}
	compareOps = map[string]bool{"<": true, ">": true, "<=": true, ">=": true, "==": true, "!=": true}
	unaryOps   = map[string]bool{"neg": true, "square": true, "cube": true, "sqrt": true, "inv": true, "exp": true, "ln": true, "log1p": true, "tanh": true, "sigmoid": true, "softplus": true, "abs": true}
)

// isZeroConst reports whether n is the scalar constant 0.
func isZeroConst(n *G.Node) bool {
	if opKind(n.Op()) != "constantScalar" || n.Value() == nil {
		return false
	}
	switch v := n.Value().Data().(type) {
	case float64:
		return v == 0
	case float32:
		return v == 0
	}
	return false
}

// classify checks every op, counts uses, marks which nodes need an adjoint
// and recognises fused patterns (ReLU as x ⊙ (x >= 0)).
func (c *compiler[T]) classify() error {
	learn := map[int64]bool{}
	for _, l := range c.g.Learnables {
		learn[l.ID()] = true
	}
	for _, cn := range c.nodes {
		for _, k := range c.kids(cn.n) {
			k.uses++
		}
		if err := c.checkOp(cn, learn); err != nil {
			return err
		}
	}
	// Repeats must feed elementwise operations only (broadcasting), and
	// sizes only repeats.
	for _, cn := range c.nodes {
		for _, k := range c.kids(cn.n) {
			if k.repeat && cn.kind != "elemBinOp" && cn.kind != "repeatOp" {
				return c.unsupported(k.n, "a repeat is compiled only as the broadcast of an elementwise operation")
			}
			if k.kind == "sizeOp" && cn.kind != "repeatOp" {
				return c.unsupported(k.n, "a size is compiled only as a repeat's count")
			}
		}
	}
	if c.node(c.g.LogLik).repeat {
		return c.unsupported(c.g.LogLik, "the log-likelihood is a repeat")
	}
	c.markGradients(learn)
	c.fuseReLU()
	if c.mlp != nil {
		return c.fuseMLP()
	}
	c.fuseConvolutions()
	c.fuseConvBlocks()
	return nil
}

// checkOp returns an error when the op of node cn is one the compiler does
// not compile (learn: the learnables' IDs, the free variables allowed
// besides the input and the target); it marks repeats.
func (c *compiler[T]) checkOp(cn *cnode[T], learn map[int64]bool) error {
	n := cn.n
	switch cn.kind {
	case "":
		if n != c.g.Input && n != c.g.Target && !learn[n.ID()] {
			return &UnsupportedOpError{Model: c.model, Node: n.Name(), Op: "input", Why: "a free variable that is neither the input, the target nor a learnable"}
		}
	case "constantScalar", "constantTensor":
		if n.Value() == nil {
			return c.unsupported(n, "constant without a value")
		}
	case "sizeOp", "reshapeOp", "transposeOp", "im2colOp", "maxPoolOp":
	case "repeatOp":
		cn.repeat = true
	case "linAlgBinOp":
		ks := c.kids(n)
		if opInt(n.Op(), "āBinaryOperator") != 0 || len(ks) != 2 || len(ks[0].shape) != 2 || len(ks[1].shape) != 2 {
			return c.unsupported(n, "only matrix-matrix products are compiled")
		}
	case "elemBinOp":
		sym, same := binSym(n.Op())
		if !arithOps[sym] && !(compareOps[sym] && same) {
			return c.unsupported(n, "")
		}
	case "elemUnaryOp":
		if !unaryOps[fmt.Sprint(n.Op())] {
			return c.unsupported(n, "")
		}
	case "sumOp":
	case "softmaxOp":
		ax := opInt(n.Op(), "axis")
		if ax != -1 && ax != len(cn.shape)-1 {
			return c.unsupported(n, "softmax is compiled along the last axis only")
		}
	default:
		return c.unsupported(n, "")
	}
	if cn.kind == "maxPoolOp" && len(cn.shape) != 4 {
		return c.unsupported(n, "max pooling of a 4-d tensor only")
	}
	return nil
}

// markGradients marks the nodes that need an adjoint: gradients flow from
// the learnables (learn) to LogLik; comparisons, sizes and constants stop
// them.
func (c *compiler[T]) markGradients(learn map[int64]bool) {
	for _, cn := range c.nodes {
		if !c.withGrad || !cn.inBwd {
			continue
		}
		switch cn.kind {
		case "":
			cn.needGrad = learn[cn.n.ID()]
		case "constantScalar", "constantTensor", "sizeOp":
		case "elemBinOp":
			if sym, _ := binSym(cn.n.Op()); compareOps[sym] {
				break
			}
			fallthrough
		default:
			for _, k := range c.kids(cn.n) {
				cn.needGrad = cn.needGrad || k.needGrad
			}
		}
	}
}

// fuseReLU recognises ReLU, x ⊙ (x >= 0) with the comparison used only
// there, and makes the product a relu node and the comparison skipped.
func (c *compiler[T]) fuseReLU() {
	for _, cn := range c.nodes {
		if cn.kind != "elemBinOp" {
			continue
		}
		if sym, _ := binSym(cn.n.Op()); sym != "⊙" {
			continue
		}
		ks := c.kids(cn.n)
		if len(ks) != 2 || ks[1].kind != "elemBinOp" || ks[1].uses != 1 {
			continue
		}
		if sym, same := binSym(ks[1].n.Op()); sym != ">=" || !same {
			continue
		}
		cks := c.kids(ks[1].n)
		if len(cks) == 2 && cks[0] == ks[0] && isZeroConst(cks[1].n) && !c.isOutput(ks[1]) {
			cn.kind = "relu"
			ks[1].skip = true
			ks[0].uses--
		}
	}
}

// convBlock is a convolution, its per-channel bias, ReLU and, when the
// ReLU's output feeds only a max pooling, that pooling: run image by image
// while the image's activations are in cache.
type convBlock[T float] struct {
	conv, add, relu, pool *cnode[T]
	bias                  *cnode[T] // the bias vector behind the broadcast
}

// fuseConvBlocks recognises conv -> + bias (broadcast over batch and
// positions) -> ReLU [-> max pooling], each used only by the next, and
// compiles them as one kernel on the last node.
func (c *compiler[T]) fuseConvBlocks() {
	cons := map[*cnode[T]][]*cnode[T]{}
	for _, cn := range c.nodes {
		if cn.skip || cn.kind == "sizeOp" { // a size reads the shape alone
			continue
		}
		for _, k := range c.kids(cn.n) {
			cons[k] = append(cons[k], cn)
		}
	}
	for _, cn := range c.nodes {
		if cn.kind != "conv" || len(cons[cn]) != 1 {
			continue
		}
		add := cons[cn][0]
		if sym, _ := binSym(add.n.Op()); add.kind != "elemBinOp" || sym != "+" {
			continue
		}
		ks := c.kids(add.n)
		if len(ks) != 2 || ks[0] != cn || !ks[1].repeat {
			continue
		}
		v, err := c.view(ks[1], add.shape)
		sh := add.shape
		if err != nil || size(v.src.shape) != sh[1] || v.strides[1] != 1 ||
			(sh[0] > 1 && v.strides[0] != 0) || (sh[2] > 1 && v.strides[2] != 0) || (sh[3] > 1 && v.strides[3] != 0) {
			continue
		}
		if len(cons[add]) != 1 || cons[add][0].kind != "relu" || c.isOutput(cn) {
			continue
		}
		blk := &convBlock[T]{conv: cn, add: add, relu: cons[add][0], bias: v.src}
		last := blk.relu
		if p := cons[blk.relu]; len(p) == 1 && p[0].kind == "maxPoolOp" {
			blk.pool, last = p[0], p[0]
			blk.relu.fused = true
		}
		cn.skip, add.fused = true, true
		last.kind, last.block = "convblock", blk
	}
}

// fuseConvolutions recognises the nodes Gorgonia's Conv2d builds,
//
//	transpose{0,3,1,2}(reshape(matmul(reshape(im2col(x)), reshape(W))ᵀ))
//
// each intermediate used only by the next, and compiles them as one conv
// kernel on the transpose's node.
func (c *compiler[T]) fuseConvolutions() {
	for _, cn := range c.nodes {
		if cn.kind != "transposeOp" || fmt.Sprint(opInts(cn.n.Op(), "pattern")) != "[0 3 1 2]" {
			continue
		}
		r2 := c.kids(cn.n)[0]
		if r2.kind != "reshapeOp" || r2.uses != 1 {
			continue
		}
		mm := c.kids(r2.n)[0]
		if mm.kind != "linAlgBinOp" || mm.uses != 1 || opField(mm.n.Op(), "transA").Bool() || !opField(mm.n.Op(), "transB").Bool() {
			continue
		}
		ks := c.kids(mm.n)
		p, f := ks[0], ks[1]
		if p.kind != "reshapeOp" || p.uses != 1 || f.kind != "reshapeOp" || f == p {
			continue
		}
		ic := c.kids(p.n)[0]
		if ic.kind != "im2colOp" || ic.uses != 1 || len(ic.shape) != 4 || len(cn.shape) != 4 {
			continue
		}
		b, oh, ow, k := ic.shape[0], ic.shape[1], ic.shape[2], ic.shape[3]
		if fmt.Sprint(cn.shape) != fmt.Sprint([]int{b, f.shape[0], oh, ow}) || len(f.shape) != 2 || f.shape[1] != k {
			continue
		}
		if c.isOutput(r2) || c.isOutput(mm) || c.isOutput(p) || c.isOutput(ic) {
			continue
		}
		cn.kind = "conv"
		for _, n := range []*cnode[T]{r2, mm, p, ic} {
			n.skip = true
		}
	}
}

// isOutput reports whether cn is LogLik or Logits, whose values a fused
// kernel must not skip.
func (c *compiler[T]) isOutput(cn *cnode[T]) bool {
	return cn.n == c.g.LogLik || cn.n == c.g.Logits
}

// allocate gives every node its value buffer (reshapes alias their input)
// and every node that needs one its adjoint buffer (a reshape of a node it
// alone consumes aliases that node's adjoint).
func (c *compiler[T]) allocate() {
	p := c.p
	if c.mlp != nil {
		c.allocateFlat()
	}
	for i, cn := range c.nodes {
		n := cn.n
		switch {
		case cn.skip || cn.repeat || cn.kind == "sizeOp":
		case cn.kind == "reshapeOp":
			k := c.kids(n)[0]
			cn.val = k.val
			if cn.needGrad && k.uses == 1 {
				cn.adj = k.adj // set below once k's adjoint exists
				cn.adjOwner = k.adjOwner
			}
		case cn.kind == "constantScalar" || cn.kind == "constantTensor":
			cn.val = make([]T, max(size(cn.shape), 1))
			switch d := n.Value().Data().(type) {
			case float64:
				cn.val[0] = T(d)
			case float32:
				cn.val[0] = T(d)
			case []float64:
				for j, v := range d {
					cn.val[j] = T(v)
				}
			case []float32:
				for j, v := range d {
					cn.val[j] = T(v)
				}
			}
		case cn.val != nil: // a learnable of allocateFlat
		default:
			cn.val = make([]T, max(size(cn.shape), 1))
		}
		if cn.fused || cn.skip && c.mlp != nil {
			continue
		}
		if cn.needGrad && cn.adjOwner == i && cn.adj == nil {
			cn.adj = make([]T, max(size(cn.shape), 1))
		} else if cn.needGrad {
			cn.adj = c.nodes[cn.adjOwner].adj
		}
	}
	p.x = c.node(c.g.Input).val
	p.y = c.node(c.g.Target).val
	for _, l := range c.g.Learnables {
		cn := c.node(l)
		if cn.val == nil { // a learnable no output depends on
			cn.val = make([]T, size(cn.shape))
		}
		p.params = append(p.params, cn.val)
		if c.withGrad {
			if cn.adj == nil {
				cn.adj = make([]T, size(cn.shape))
				p.zero = append(p.zero, cn.adj)
			}
			p.grads = append(p.grads, cn.adj)
		}
	}
	if p.x == nil {
		p.x = make([]T, size(c.g.Input.Shape()))
	}
	if p.y == nil {
		p.y = make([]T, size(c.g.Target.Shape()))
	}
	p.loglik = c.node(c.g.LogLik).val
	if c.g.Logits != nil {
		p.logits = c.node(c.g.Logits).val
	}
}

// operand is a node's value as an elementwise operation reads it: the
// buffer of the node behind any broadcast repeats, with the strides that
// walk it in the operation's output shape (0 along broadcast axes).
type operand[T float] struct {
	src     *cnode[T]
	strides []int
}

func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// view returns n's operand in an output of shape out.
func (c *compiler[T]) view(n *cnode[T], out []int) (operand[T], error) {
	for n.repeat {
		n = c.kids(n.n)[0]
	}
	st := make([]int, len(out))
	if size(n.shape) == 1 && len(n.shape) <= len(out) {
		return operand[T]{src: n, strides: st}, nil // a scalar
	}
	if len(n.shape) != len(out) {
		return operand[T]{}, fmt.Errorf("operand shape %v against output %v", n.shape, out)
	}
	rm := rowMajor(n.shape)
	for i := range out {
		switch n.shape[i] {
		case out[i]:
			st[i] = rm[i]
		case 1:
		default:
			return operand[T]{}, fmt.Errorf("operand shape %v against output %v", n.shape, out)
		}
	}
	return operand[T]{src: n, strides: st}, nil
}

// claim returns the adjoint buffer of n for a backward step and whether the
// step must add to it (another step wrote it first) rather than write it.
func (c *compiler[T]) claim(n *cnode[T]) ([]T, bool) {
	for n.repeat {
		n = c.kids(n.n)[0]
	}
	owner := c.nodes[n.adjOwner]
	acc := owner.written
	owner.written = true
	return n.adj, acc
}

// emit builds each node's forward step and the maker of its adjoint step.
func (c *compiler[T]) emit() error {
	for _, cn := range c.nodes {
		if cn.skip || cn.repeat || cn.fused {
			continue
		}
		var err error
		switch cn.kind {
		case "convblock":
			err = c.emitConvBlock(cn)
		case "dense":
			c.emitDense(cn)
		case "mlptail":
			c.emitTail(cn)
		case "reshapeOp":
			c.emitReshape(cn)
		case "transposeOp":
			c.emitTranspose(cn)
		case "linAlgBinOp":
			c.emitMatMul(cn)
		case "elemBinOp", "relu":
			err = c.emitBinary(cn)
		case "elemUnaryOp":
			c.emitUnary(cn)
		case "sumOp":
			err = c.emitSum(cn)
		case "softmaxOp":
			c.emitSoftmax(cn)
		case "im2colOp":
			err = c.emitIm2col(cn)
		case "conv":
			err = c.emitConv(cn)
		case "maxPoolOp":
			err = c.emitMaxPool(cn)
		}
		if err != nil {
			return c.unsupported(cn.n, err.Error())
		}
		for len(c.p.ops) < len(c.p.fwd) {
			c.p.ops = append(c.p.ops, cn.kind)
		}
	}
	return nil
}

// emitBackward seeds LogLik's adjoint and builds the adjoint steps in
// reverse topological order.
func (c *compiler[T]) emitBackward() {
	p := c.p
	ll := c.node(c.g.LogLik)
	if !ll.needGrad {
		p.dLoglik = make([]T, c.g.Batch)
		return
	}
	p.dLoglik, _ = c.claim(ll)
	for i := len(c.nodes) - 1; i >= 0; i-- {
		cn := c.nodes[i]
		if !cn.needGrad || cn.skip || cn.repeat || cn.fused {
			continue
		}
		if own := c.nodes[cn.adjOwner]; !own.written && cn.adjOwner == i {
			own.written = true
			p.zero = append(p.zero, cn.adj)
		}
		if cn.mkBwd != nil {
			if f := cn.mkBwd(); f != nil {
				p.bwd = append(p.bwd, f)
			}
		}
	}
}

func (c *compiler[T]) emitReshape(cn *cnode[T]) {
	k := c.kids(cn.n)[0]
	if cn.adj == nil || cn.adjOwner == k.adjOwner {
		return // aliases its input's value and adjoint: nothing to run
	}
	dout := cn.adj
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() { accumulate(din, dout, acc) }
	}
}

func (c *compiler[T]) emitTranspose(cn *cnode[T]) {
	k := c.kids(cn.n)[0]
	perm := opInts(cn.n.Op(), "pattern")
	in, out := k.val, cn.val
	st := rowMajor(k.shape)
	pst := make([]int, len(perm))
	for i, a := range perm {
		pst[i] = st[a]
	}
	r := newRuns(cn.shape, rowMajor(cn.shape), pst)
	c.p.fwd = append(c.p.fwd, func() {
		for q := 0; q < len(r.offs); q += 2 {
			gather(out[r.offs[q]:r.offs[q]+r.n], in[r.offs[q+1]:], r.st[1])
		}
	})
	dout := cn.adj
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() {
			for q := 0; q < len(r.offs); q += 2 {
				scatter(din[r.offs[q+1]:], r.st[1], dout[r.offs[q]:r.offs[q]+r.n], acc)
			}
		}
	}
}

func (c *compiler[T]) emitMatMul(cn *cnode[T]) {
	ks := c.kids(cn.n)
	ta, tb := opField(cn.n.Op(), "transA").Bool(), opField(cn.n.Op(), "transB").Bool()
	mm := &matmul[T]{gemm: c.gemm, a: ks[0].val, b: ks[1].val, c: cn.val, ta: ta, tb: tb,
		ar: ks[0].shape[0], ac: ks[0].shape[1], br: ks[1].shape[0], bc: ks[1].shape[1]}
	c.p.fwd = append(c.p.fwd, mm.forward)
	prod := int64(size(cn.shape)) * int64(ks[0].shape[1])
	if ta {
		prod = int64(size(cn.shape)) * int64(ks[0].shape[0])
	}
	c.p.macs += prod
	mm.dc = cn.adj
	cn.mkBwd = func() func() {
		for _, k := range ks {
			if k.needGrad {
				c.p.macs += prod
			}
		}
		// Claim B first, then A: the order the steps below write them.
		var accA, accB bool
		if ks[1].needGrad {
			mm.db, accB = c.claim(ks[1])
		}
		if ks[0].needGrad {
			mm.da, accA = c.claim(ks[0])
		}
		return func() { mm.backward(accA, accB) }
	}
}

func (c *compiler[T]) emitBinary(cn *cnode[T]) error {
	ks := c.kids(cn.n)
	sym := "relu"
	if cn.kind == "elemBinOp" {
		sym, _ = binSym(cn.n.Op())
		if len(ks) != 2 {
			return fmt.Errorf("%d operands", len(ks))
		}
	}
	a, err := c.view(ks[0], cn.shape)
	if err != nil {
		return err
	}
	b := a
	if cn.kind == "elemBinOp" {
		if b, err = c.view(ks[1], cn.shape); err != nil {
			return err
		}
	}
	r := newRuns(cn.shape, rowMajor(cn.shape), a.strides, b.strides)
	av, bv, out := a.src.val, b.src.val, cn.val
	op := binOps[sym]
	c.p.fwd = append(c.p.fwd, func() {
		for q := 0; q < len(r.offs); q += 3 {
			o, ia, ib := r.offs[q], r.offs[q+1], r.offs[q+2]
			binRun(op, out[o:o+r.n], av[ia:], r.st[1], bv[ib:], r.st[2])
		}
	})
	if compareOps[sym] {
		return nil
	}
	dout := cn.adj
	cn.mkBwd = func() func() {
		var steps []func()
		for side, opd := range []operand[T]{a, b} {
			if side == 1 && cn.kind == "relu" {
				break
			}
			if !opd.src.needGrad {
				continue
			}
			d, acc := c.claim(opd.src)
			bcast := size(opd.src.shape) < size(cn.shape)
			part := partOf(op, side)
			side := side
			steps = append(steps, func() {
				if bcast && !acc {
					clear(d)
				}
				for q := 0; q < len(r.offs); q += 3 {
					o, ia, ib := r.offs[q], r.offs[q+1], r.offs[q+2]
					io, so := ia, r.st[1]
					if side == 1 {
						io, so = ib, r.st[2]
					}
					partRun(part, d[io:], so, acc || bcast, dout[o:o+r.n], av[ia:], r.st[1], bv[ib:], r.st[2])
				}
			})
		}
		return func() {
			for _, s := range steps {
				s()
			}
		}
	}
	return nil
}

func (c *compiler[T]) emitUnary(cn *cnode[T]) {
	k := c.kids(cn.n)[0]
	op := unaryCodes[fmt.Sprint(cn.n.Op())]
	in, out, dout := k.val, cn.val, cn.adj
	if size(k.shape) != size(cn.shape) {
		in = in[:1]
	}
	c.p.fwd = append(c.p.fwd, func() { unaryForward(op, in, out) })
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() { unaryBackward(op, in, out, dout, din, acc) }
	}
}

func (c *compiler[T]) emitSum(cn *cnode[T]) error {
	k := c.kids(cn.n)[0]
	along := opInts(cn.n.Op(), "along")
	red := map[int]bool{}
	for _, a := range along {
		if a < 0 || a >= len(k.shape) {
			return fmt.Errorf("sum along axis %d of a %d-d tensor", a, len(k.shape))
		}
		red[a] = true
	}
	// The output's strides in the input's shape: 0 along summed axes.
	var kept []int
	for i, d := range k.shape {
		if !red[i] {
			kept = append(kept, d)
		}
	}
	if size(kept) != max(size(cn.shape), 1) {
		return fmt.Errorf("sum of %v along %v into %v", k.shape, along, cn.shape)
	}
	kst := rowMajor(kept)
	ost := make([]int, len(k.shape))
	j := 0
	for i := range k.shape {
		if !red[i] {
			ost[i] = kst[j]
			j++
		}
	}
	r := newRuns(k.shape, rowMajor(k.shape), ost)
	in, out, dout := k.val, cn.val, cn.adj
	c.p.fwd = append(c.p.fwd, func() {
		clear(out)
		for q := 0; q < len(r.offs); q += 2 {
			scatter(out[r.offs[q+1]:], r.st[1], in[r.offs[q]:r.offs[q]+r.n], true)
		}
	})
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() {
			for q := 0; q < len(r.offs); q += 2 {
				gatherAcc(din[r.offs[q]:r.offs[q]+r.n], dout[r.offs[q+1]:], r.st[1], acc)
			}
		}
	}
	return nil
}

func (c *compiler[T]) emitSoftmax(cn *cnode[T]) {
	k := c.kids(cn.n)[0]
	isLog := opField(cn.n.Op(), "isLog").Bool()
	w := cn.shape[len(cn.shape)-1]
	in, out, dout := k.val, cn.val, cn.adj
	c.p.fwd = append(c.p.fwd, func() { softmaxForward(in, out, w, isLog) })
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() { softmaxBackward(out, dout, din, w, isLog, acc) }
	}
}

// im2colOf reads an im2col node's parameters.
func (c *compiler[T]) im2colOf(cn *cnode[T]) (im2col, *cnode[T], error) {
	k := c.kids(cn.n)[0]
	if len(k.shape) != 4 {
		return im2col{}, nil, fmt.Errorf("im2col of a %d-d tensor", len(k.shape))
	}
	op := cn.n.Op()
	ic := im2col{b: k.shape[0], c: k.shape[1], h: k.shape[2], w: k.shape[3],
		kh: opInt(op, "h"), kw: opInt(op, "w"), padH: opInt(op, "padH"), padW: opInt(op, "padW"),
		strideH: opInt(op, "strideH"), strideW: opInt(op, "strideW"), dilH: opInt(op, "dilationH"), dilW: opInt(op, "dilationW")}
	ic.oh = (ic.h+2*ic.padH-(ic.dilH*(ic.kh-1)+1))/ic.strideH + 1
	ic.ow = (ic.w+2*ic.padW-(ic.dilW*(ic.kw-1)+1))/ic.strideW + 1
	if want := []int{ic.b, ic.oh, ic.ow, ic.c * ic.kh * ic.kw}; fmt.Sprint(want) != fmt.Sprint(cn.shape) {
		return im2col{}, nil, fmt.Errorf("im2col shape %v, expected %v", cn.shape, want)
	}
	return ic, k, nil
}

// emitConv emits a fused convolution (fuseConvolutions).
func (c *compiler[T]) emitConv(cn *cnode[T]) error {
	mm := c.kids(c.kids(cn.n)[0].n)[0]
	ks := c.kids(mm.n)
	f := ks[1]
	icn := c.kids(ks[0].n)[0]
	ic, x, err := c.im2colOf(icn)
	if err != nil {
		return err
	}
	k := ic.c * ic.kh * ic.kw
	cv := &conv[T]{ic: ic, o: f.shape[0], gemm: c.gemm, col: make([]T, k*ic.oh*ic.ow), rows: newKernelRows[T](ic, f.shape[0])}
	xv, wv, out, dout := x.val, f.val, cn.val, cn.adj
	c.p.fwd = append(c.p.fwd, func() { cv.forward(xv, wv, out) })
	prod := int64(size(cn.shape)) * int64(k)
	c.p.macs += prod
	cn.mkBwd = func() func() {
		for _, n := range []*cnode[T]{f, x} {
			if n.needGrad {
				c.p.macs += prod
			}
		}
		var dw, dx []T
		var accW, accX bool
		if f.needGrad {
			dw, accW = c.claim(f)
		}
		if x.needGrad {
			dx, accX = c.claim(x)
			cv.dcol = make([]T, len(cv.col))
		}
		return func() { cv.backward(xv, wv, dout, dw, dx, accW, accX) }
	}
	return nil
}

// emitConvBlock emits a fused convolution block (fuseConvBlocks) on its
// last node.
func (c *compiler[T]) emitConvBlock(last *cnode[T]) error {
	blk := last.block
	mm := c.kids(c.kids(blk.conv.n)[0].n)[0]
	ks := c.kids(mm.n)
	f := ks[1]
	ic, x, err := c.im2colOf(c.kids(ks[0].n)[0])
	if err != nil {
		return err
	}
	k := ic.c * ic.kh * ic.kw
	ohw := ic.oh * ic.ow
	cb := &convBlockKernel[T]{conv: conv[T]{ic: ic, o: f.shape[0], gemm: c.gemm, col: make([]T, k*ohw), rows: newKernelRows[T](ic, f.shape[0])},
		scratch: make([]T, f.shape[0]*ohw)}
	if blk.pool != nil {
		mp, err := c.maxPoolOf(blk.pool)
		if err != nil {
			return err
		}
		cb.pool = mp
	}
	xv, wv, bv, pre, post := x.val, f.val, blk.bias.val, blk.add.val, blk.relu.val
	var pooled []T
	if blk.pool != nil {
		pooled = blk.pool.val
	}
	c.p.fwd = append(c.p.fwd, func() { cb.forward(xv, wv, bv, pre, post, pooled) })
	prod := int64(size(blk.conv.shape)) * int64(k)
	c.p.macs += prod
	dlast := last.adj
	last.mkBwd = func() func() {
		var dw, db, dx []T
		var accW, accB, accX bool
		if blk.bias.needGrad {
			db, accB = c.claim(blk.bias)
		}
		if f.needGrad {
			dw, accW = c.claim(f)
			c.p.macs += prod
		}
		if x.needGrad {
			dx, accX = c.claim(x)
			cb.dcol = make([]T, len(cb.conv.col))
			c.p.macs += prod
		}
		return func() { cb.backward(xv, wv, pre, dlast, dw, db, dx, accW, accB, accX) }
	}
	return nil
}

func (c *compiler[T]) emitIm2col(cn *cnode[T]) error {
	ic, k, err := c.im2colOf(cn)
	if err != nil {
		return err
	}
	in, out, dout := k.val, cn.val, cn.adj
	c.p.fwd = append(c.p.fwd, func() { im2colForward(&ic, in, out) })
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() { col2im(&ic, dout, din, acc) }
	}
	return nil
}

// maxPoolOf reads a max pooling node's parameters.
func (c *compiler[T]) maxPoolOf(cn *cnode[T]) (*maxPool, error) {
	k := c.kids(cn.n)[0]
	op := cn.n.Op()
	mp := &maxPool{b: k.shape[0], c: k.shape[1], h: k.shape[2], w: k.shape[3], oh: cn.shape[2], ow: cn.shape[3],
		kh: opInt(op, "h"), kw: opInt(op, "w"), padH: opInt(op, "padNorth"), padW: opInt(op, "padWest"),
		strideH: opInt(op, "strideH"), strideW: opInt(op, "strideW")}
	if opField(op, "explicitPadding").Bool() { // as Gorgonia's kernel reads it
		mp.padH, mp.padW = opInt(op, "padSouth"), opInt(op, "padEast")
	}
	if cn.shape[0] != mp.b || cn.shape[1] != mp.c {
		return nil, fmt.Errorf("max pooling %v into %v", k.shape, cn.shape)
	}
	mp.arg = make([]int32, size(cn.shape))
	return mp, nil
}

func (c *compiler[T]) emitMaxPool(cn *cnode[T]) error {
	k := c.kids(cn.n)[0]
	mp, err := c.maxPoolOf(cn)
	if err != nil {
		return err
	}
	in, out, dout := k.val, cn.val, cn.adj
	c.p.fwd = append(c.p.fwd, func() { maxPoolForward(mp, in, out, mp.arg, mp.b*mp.c) })
	cn.mkBwd = func() func() {
		din, acc := c.claim(k)
		return func() { maxPoolBackward(mp, dout, din, mp.arg, mp.b*mp.c, acc) }
	}
	return nil
}

// float is the element type a program computes in.
type float interface{ ~float32 | ~float64 }

// gemmFunc is a BLAS matrix product, C = alpha op(A) op(B) + beta C, on
// row-major operands (blas32's Sgemm or blas64's Dgemm).
type gemmFunc[T float] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// gemmFor returns the BLAS matrix product for T: the library the package
// blasimpl installed (OpenBLAS with cgo, else gonum's).
func gemmFor[T float]() gemmFunc[T] {
	var z T
	switch any(z).(type) {
	case float32:
		return any(gemmFunc[float32](blas32.Implementation().Sgemm)).(gemmFunc[T])
	default:
		return any(gemmFunc[float64](blas64.Implementation().Dgemm)).(gemmFunc[T])
	}
}

// compileModel builds model's graph for batch examples of dtype and
// compiles it.
func compileModel[T float](model nn.Model, batch int, dt tensor.Dtype, withGrad bool) (*program[T], *nn.Graph, error) {
	if model.Build == nil {
		return nil, nil, fmt.Errorf("compile: model %q has no builder", model.Name)
	}
	g, err := model.Build(batch, dt)
	if err != nil {
		return nil, nil, fmt.Errorf("compile: model %s: %w", model.Name, err)
	}
	if err := g.Validate(); err != nil {
		return nil, nil, fmt.Errorf("compile: model %s: %w", model.Name, err)
	}
	if g.Batch != batch || g.DType != dt {
		return nil, nil, fmt.Errorf("compile: model %s: asked for batch %d %v, built %d %v", model.Name, batch, dt, g.Batch, g.DType)
	}
	if l := g.Layout(); l.String() != model.Layout.String() {
		return nil, nil, fmt.Errorf("compile: model %s: graph's learnables %s differ from the model's %s", model.Name, l, model.Layout)
	}
	p, err := compileGraph(model.Name, g, model.MLP, withGrad, gemmFor[T]())
	if err != nil {
		return nil, nil, err
	}
	return p, g, nil
}
