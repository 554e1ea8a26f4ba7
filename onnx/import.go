package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Supported lists the operators Import builds networks of: the layers
// (Gemm, MatMul, Add, Conv, MaxPool, AveragePool, Relu, Tanh, Sigmoid,
// Flatten, Reshape), Identity, inference-mode Dropout and a Pad of zero
// widths (no-ops), a
// Softmax or LogSoftmax at the output (stripped: the logits are its
// input), and the constant folding of shapes exporters emit (Constant,
// Shape, Gather, Unsqueeze, Squeeze, Concat, Slice, Cast).
var Supported = []string{"Add", "AveragePool", "Cast", "Concat", "Constant", "Conv", "Dropout", "Flatten", "Gather", "Gemm",
	"Identity", "LogSoftmax", "MatMul", "MaxPool", "Pad", "Relu", "Reshape", "Shape", "Sigmoid", "Slice", "Softmax", "Squeeze", "Tanh", "Unsqueeze"}

// Network is an ONNX model checked for import as a classifier: one
// input (the images, a batch of them along the first dimension), one
// output (the logits, [batch, classes]), and initialisers that become the
// learnable weights.
type Network struct {
	name     string // for errors: the file, or the model's name
	model    *Model
	opset    int64
	input    *ValueInfo
	inShape  []int // one example's dimensions
	fixedN   int64 // the input's first dimension when the file fixes it (the export's batch), else 0
	output   string
	stripped string // "Softmax" or "LogSoftmax" when the output's one was stripped
	inits    map[string]*Tensor
	// Params are the learnables in the order of the flat parameter
	// vector, found by a build (Import).
	params []learnable
	// Weights are the initialisers' values in the layout of the model:
	// the network as it was trained.
	Weights []float64
}

// learnable is one initialiser made a learnable of the graph.
type learnable struct {
	name      string // the layout's name: the initialiser's, with ".T" when transposed
	init      *Tensor
	shape     []int // its shape in the graph
	transpose bool  // a Gemm's transB weight, stored [in, out]
	fanIn     int
	bias      bool
}

// ReadFile reads the ONNX file at path and returns the model and the
// file's SHA-256 digest (hex). Errors name the file.
func ReadFile(path string) (*Model, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("onnx: %w", err)
	}
	sum := sha256.Sum256(b)
	m, err := Decode(b)
	if err != nil {
		return nil, "", fmt.Errorf("onnx %s: %w", path, err)
	}
	return m, hex.EncodeToString(sum[:]), nil
}

// FileDigest returns the hex SHA-256 digest of the file at path.
func FileDigest(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// IsModelPath reports whether a model name is an ONNX file (it ends in
// .onnx), which train, eval and predict load instead of a registered
// model.
func IsModelPath(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".onnx") }

// Load reads the ONNX file at path and returns it as the model called
// name (the path when name is empty): its graph with a categorical
// likelihood, the prior p on every weight and bias (its precision times
// the layer's fan-in with p.FanIn), and the file's weights and digest
// (nn.Model.Weights, SHA256). p.Classes is not used: the file fixes the
// output layer. Every error is one line naming the file and, for a node
// at fault, the node.
func Load(path, name string, p nn.PriorConfig) (nn.Model, error) {
	m, digest, err := ReadFile(path)
	if err != nil {
		return nn.Model{}, err
	}
	if name == "" {
		name = path
	}
	net, err := Import(path, m)
	if err != nil {
		return nn.Model{}, err
	}
	model, err := net.Model(name, p)
	if err != nil {
		return nn.Model{}, err
	}
	model.SHA256 = digest
	return model, nil
}

// Import checks an ONNX model for import (one float input, one output,
// supported operators, shapes that fit) and returns it as a Network; name
// names it in errors (a file name). The network's graph is built once
// (batch 1, float64) to find its learnables and check its shapes.
func Import(name string, m *Model) (*Network, error) {
	net, err := newNetwork(name, m)
	if err != nil {
		return nil, err
	}
	if _, info, err := net.build(1, tensor.Float64, nn.PriorConfig{}); err != nil {
		return nil, err
	} else {
		net.params = info
	}
	for _, l := range net.params {
		v, err := l.init.Floats()
		if err != nil {
			return nil, fmt.Errorf("onnx %s: initialiser %w", name, err)
		}
		if l.transpose {
			v = transpose(v, int(l.init.Dims[0]), int(l.init.Dims[1]))
		}
		net.Weights = append(net.Weights, v...)
	}
	return net, nil
}

// transpose returns the r x c row-major matrix v transposed.
func transpose(v []float64, r, c int) []float64 {
	out := make([]float64, len(v))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = v[i*c+j]
		}
	}
	return out
}

// newNetwork checks the graph's interface: one input (not an
// initialiser), one output, an operator set of ONNX's domain.
func newNetwork(name string, m *Model) (*Network, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("onnx %s: no graph", name)
	}
	net := &Network{name: name, model: m, inits: map[string]*Tensor{}}
	for _, o := range m.Opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			net.opset = o.Version
		}
	}
	if net.opset == 0 {
		return nil, fmt.Errorf("onnx %s: no opset of the ONNX domain (opset_import %v)", name, m.Opsets)
	}
	g := m.Graph
	for _, t := range g.Initializers {
		if t.Name == "" {
			return nil, fmt.Errorf("onnx %s: an initialiser without a name", name)
		}
		net.inits[t.Name] = t
	}
	var inputs []*ValueInfo
	for _, in := range g.Inputs {
		if _, ok := net.inits[in.Name]; !ok { // IR < 4 lists initialisers as inputs too
			inputs = append(inputs, in)
		}
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("onnx %s: the graph has %d inputs (%s): expected one, the images", name, len(inputs), valueNames(inputs))
	}
	if len(g.Outputs) != 1 {
		return nil, fmt.Errorf("onnx %s: the graph has %d outputs (%s): expected one, the logits", name, len(g.Outputs), valueNames(g.Outputs))
	}
	net.input, net.output = inputs[0], g.Outputs[0].Name
	in := net.input
	if in.ElemType != TypeFloat && in.ElemType != TypeDouble {
		return nil, fmt.Errorf("onnx %s: input %q is of type %s: expected float images", name, in.Name, typeName(in.ElemType))
	}
	if len(in.Shape) < 2 {
		return nil, fmt.Errorf("onnx %s: input %q has shape %s: expected a batch of examples, [N, ...] with the example's dimensions known", name, in.Name, dimsString(in.Shape))
	}
	if in.Shape[0].Param == "" && in.Shape[0].Value > 0 {
		net.fixedN = in.Shape[0].Value
	}
	per := 1 // values per example, checked before each product so it cannot wrap
	for _, d := range in.Shape[1:] {
		if d.Value <= 0 {
			return nil, fmt.Errorf("onnx %s: input %q has shape %s: the dimensions after the batch must be numbers", name, in.Name, dimsString(in.Shape))
		}
		if d.Value > int64(math.MaxInt32/per) {
			return nil, fmt.Errorf("onnx %s: input %q has shape %s: more than %d values per example", name, in.Name, dimsString(in.Shape), math.MaxInt32)
		}
		per *= int(d.Value)
		net.inShape = append(net.inShape, int(d.Value))
	}
	// A Softmax or LogSoftmax that makes the output is stripped: the
	// logits are its input.
	for _, n := range g.Nodes {
		if (n.OpType == "Softmax" || n.OpType == "LogSoftmax") && len(n.Outputs) == 1 && n.Outputs[0] == net.output {
			net.stripped = n.OpType
		}
	}
	return net, nil
}

func valueNames(vs []*ValueInfo) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func dimsString(ds []Dim) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		switch {
		case d.Param != "":
			parts[i] = d.Param
		case d.Value > 0:
			parts[i] = fmt.Sprint(d.Value)
		default:
			parts[i] = "?"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Model returns the network as the model called name, with prior p:
// its graph (nn.Builder) with a categorical likelihood on the logits, the
// initialisers' values as Weights and a description saying what was
// imported. The prior of every learnable is p.Prior(fan-in of its layer);
// the initial scale (the prior start) He's, sqrt(2/fan-in), for weights,
// zero for biases.
func (net *Network) Model(name string, p nn.PriorConfig) (nn.Model, error) {
	m, err := nn.NewModel(name, func(batch int, dt tensor.Dtype) (*nn.Graph, error) {
		g, _, err := net.build(batch, dt, p)
		return g, err
	})
	if err != nil {
		return nn.Model{}, err
	}
	m.Weights = append([]float64(nil), net.Weights...)
	m.Description = net.Description()
	return m, nil
}

// Description says in one line what the network is: its producer, input,
// logits, operators and parameters, and whether a trailing softmax was
// stripped.
func (net *Network) Description() string {
	ops := map[string]int{}
	for _, n := range net.model.Graph.Nodes {
		ops[n.OpType]++
	}
	var names []string
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, op := range names {
		parts[i] = fmt.Sprintf("%s x%d", op, ops[op])
	}
	prod := strings.TrimSpace(net.model.ProducerName + " " + net.model.ProducerVersion)
	if prod == "" {
		prod = "unknown producer"
	}
	s := fmt.Sprintf("ONNX network (%s, opset %d): input %q %v per example, %d learnable tensors (%d parameters); nodes %s",
		prod, net.opset, net.input.Name, net.inShape, len(net.params), len(net.Weights), strings.Join(parts, ", "))
	if net.stripped != "" {
		s += fmt.Sprintf("; the output's %s is stripped: the model's logits are its input, and its likelihood is categorical on them", net.stripped)
	}
	return s
}

// batchMark stands for the batch dimension in folded shape constants
// (Shape of an activation): a value no real dimension takes.
const batchMark = math.MinInt64 + 1

// value is a named value of the graph while it is built: an activation
// (node, [batch, ...]), a float initialiser not yet made a learnable
// (init), or a folded integer constant (ints, of dims intDims).
type value struct {
	node    *G.Node
	fanIn   int // of the layer that made the activation (a bias added to it takes it)
	init    *Tensor
	fixed   bool // init is a Constant node's tensor: fixed, not learnable
	ints    []int64
	intDims []int64
	isInts  bool
	unread  *Tensor // an initialiser of an element type the import does not read (float16, int16, ...)
}

// builder builds one graph of the network.
type builder struct {
	net    *Network
	eg     *G.ExprGraph
	dt     tensor.Dtype
	batch  int
	prior  nn.PriorConfig
	vals   map[string]value
	g      *nn.Graph
	params []learnable
	made   map[string]int // initialiser name -> index in params
}

// nodeError is an error at a node: the file, the node's name and
// operator, and what is wrong.
func (b *builder) nodeError(n *Node, format string, args ...any) error {
	name := n.Name
	if name == "" && len(n.Outputs) > 0 {
		name = "producing " + n.Outputs[0]
	}
	return fmt.Errorf("onnx %s: node %q (%s): %s", b.net.name, name, n.OpType, fmt.Sprintf(format, args...))
}

// build builds the network's graph for batch examples of dtype dt with
// prior p, and returns it with its learnables.
func (net *Network) build(batch int, dt tensor.Dtype, p nn.PriorConfig) (g *nn.Graph, params []learnable, err error) {
	if batch <= 0 {
		return nil, nil, fmt.Errorf("onnx %s: batch %d must be positive", net.name, batch)
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, nil, fmt.Errorf("onnx %s: dtype %v: expected float32 or float64", net.name, dt)
	}
	b := &builder{net: net, eg: G.NewGraph(), dt: dt, batch: batch, prior: p, vals: map[string]value{}, made: map[string]int{}}
	b.g = &nn.Graph{G: b.eg, Batch: batch, DType: dt, OneHot: true}
	shape := append([]int{batch}, net.inShape...)
	b.g.Input = G.NewTensor(b.eg, dt, len(shape), G.WithShape(shape...), G.WithName("x"))
	b.vals[net.input.Name] = value{node: b.g.Input}
	for name, t := range net.inits {
		switch {
		case t.isFloat():
			b.vals[name] = value{init: t}
		case t.isInt():
			v, err := t.Ints()
			if err != nil {
				return nil, nil, fmt.Errorf("onnx %s: initialiser %w", net.name, err)
			}
			b.vals[name] = value{ints: v, intDims: t.Dims, isInts: true}
		default: // recorded, so that a node using it says what it is
			b.vals[name] = value{unread: t}
		}
	}
	var cur *Node
	defer func() { // Gorgonia panics on some shapes it does not expect
		if r := recover(); r != nil {
			if cur != nil {
				err = b.nodeError(cur, "%v", r)
			} else {
				err = fmt.Errorf("onnx %s: %v", net.name, r)
			}
			g, params = nil, nil
		}
	}()
	for _, n := range net.model.Graph.Nodes {
		cur = n
		if err := b.node(n); err != nil {
			return nil, nil, err
		}
	}
	cur = nil
	out, ok := b.vals[net.output]
	if !ok {
		return nil, nil, fmt.Errorf("onnx %s: output %q is made by no node", net.name, net.output)
	}
	if out.node == nil {
		return nil, nil, fmt.Errorf("onnx %s: output %q is a constant, not computed from the input", net.name, net.output)
	}
	if s := out.node.Shape(); len(s) != 2 {
		return nil, nil, fmt.Errorf("onnx %s: output %q has shape %v per example: expected a vector of logits, [N, classes]", net.name, net.output, []int(s[1:]))
	}
	classes := out.node.Shape()[1]
	b.g.Target = G.NewMatrix(b.eg, dt, G.WithShape(batch, classes), G.WithName("y"))
	b.g.Logits = out.node
	if b.g.LogLik, err = nn.CategoricalLogLik(out.node, b.g.Target); err != nil {
		return nil, nil, fmt.Errorf("onnx %s: likelihood: %w", net.name, err)
	}
	for _, l := range b.params {
		pr := p.Prior(l.fanIn)
		sd := math.Sqrt(2 / float64(l.fanIn))
		if l.bias {
			sd = 0
		}
		b.g.Priors = append(b.g.Priors, pr)
		b.g.InitSD = append(b.g.InitSD, sd)
	}
	if len(b.params) == 0 {
		return nil, nil, fmt.Errorf("onnx %s: no initialiser is a weight of the network: nothing to learn", net.name)
	}
	return b.g, b.params, nil
}

// in returns the node's i-th input, or an error naming it.
func (b *builder) in(n *Node, i int) (value, error) {
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return value{}, b.nodeError(n, "input %d is missing", i+1)
	}
	v, ok := b.vals[n.Inputs[i]]
	if !ok {
		return value{}, b.nodeError(n, "input %q is made by no earlier node, initialiser or graph input", n.Inputs[i])
	}
	if v.unread != nil {
		return value{}, b.nodeError(n, "initialiser %q is %s: expected float or double (weights), or int64, int32, int8, uint8 or bool (shapes)", n.Inputs[i], typeName(v.unread.DataType))
	}
	return v, nil
}

// act returns the node's i-th input as an activation of rank rank (0: any).
func (b *builder) act(n *Node, i, rank int) (*G.Node, value, error) {
	v, err := b.in(n, i)
	if err != nil {
		return nil, v, err
	}
	if v.node == nil {
		return nil, v, b.nodeError(n, "input %q is a constant: expected an activation computed from the images", n.Inputs[i])
	}
	if rank > 0 && v.node.Dims() != rank {
		return nil, v, b.nodeError(n, "input %q has shape %v: expected rank %d ([N%s])", n.Inputs[i], []int(v.node.Shape()), rank, strings.Repeat(", .", rank-1))
	}
	return v.node, v, nil
}

// intsIn returns the node's i-th input as a folded integer constant.
func (b *builder) intsIn(n *Node, i int) (value, error) {
	v, err := b.in(n, i)
	if err != nil {
		return v, err
	}
	if !v.isInts {
		return v, b.nodeError(n, "input %q is not an integer constant the import can fold (shapes of the graph must be computable without the images)", n.Inputs[i])
	}
	return v, nil
}

// weight returns the node's i-th input, a float initialiser, as a
// learnable of shape shape (transposed from its [rows, cols] when
// transpose), creating it at its first use.
func (b *builder) weight(n *Node, i int, shape []int, transpose, bias bool, fanIn int) (*G.Node, error) {
	v, err := b.in(n, i)
	if err != nil {
		return nil, err
	}
	if v.init == nil || v.fixed {
		what := "an activation"
		if v.fixed {
			what = "a Constant node's tensor"
		} else if v.isInts {
			what = "an integer constant"
		}
		return nil, b.nodeError(n, "input %d %q is %s: expected an initialiser (the weights become the model's learnables)", i+1, n.Inputs[i], what)
	}
	t := v.init
	size, err := t.Size()
	if err != nil {
		return nil, b.nodeError(n, "%v", err)
	}
	want := 1
	for _, d := range shape {
		want *= d
	}
	if size != want {
		return nil, b.nodeError(n, "initialiser %q has dims %v: expected %d values (%v)", t.Name, t.Dims, want, shape)
	}
	if k, ok := b.made[t.Name]; ok {
		l := b.params[k]
		if l.transpose != transpose || !slices.Equal(l.shape, shape) {
			return nil, b.nodeError(n, "initialiser %q is used as %v here and as %v before: one learnable cannot be both", t.Name, shape, l.shape)
		}
		return b.g.Learnables[k], nil
	}
	name := t.Name
	if transpose {
		name += ".T"
	}
	node := G.NewTensor(b.eg, b.dt, len(shape), G.WithShape(shape...), G.WithName(name))
	if len(shape) == 1 {
		node = G.NewVector(b.eg, b.dt, G.WithShape(shape...), G.WithName(name))
	} else if len(shape) == 2 {
		node = G.NewMatrix(b.eg, b.dt, G.WithShape(shape...), G.WithName(name))
	}
	b.made[t.Name] = len(b.params)
	b.params = append(b.params, learnable{name: name, init: t, shape: shape, transpose: transpose, fanIn: max(fanIn, 1), bias: bias})
	b.g.Learnables = append(b.g.Learnables, node)
	return node, nil
}

// set records the node's first output.
func (b *builder) set(n *Node, v value) error {
	if len(n.Outputs) == 0 || n.Outputs[0] == "" {
		return b.nodeError(n, "no output")
	}
	for _, o := range n.Outputs[1:] {
		if o != "" {
			return b.nodeError(n, "a second output (%q) is not supported", o)
		}
	}
	b.vals[n.Outputs[0]] = v
	return nil
}

// attrs is a node's attributes by name, read by the helpers below. Each
// helper reads an attribute of one type (an int, a float, ints, a
// string, a tensor) and takes one of another type for absent, recording
// the first such in err; node reports it.
type attrs struct {
	byName map[string]*Attribute
	err    *error
}

func attrsOf(n *Node) attrs {
	a := attrs{byName: map[string]*Attribute{}, err: new(error)}
	for _, at := range n.Attributes {
		a.byName[at.Name] = at
	}
	return a
}

// attrTypeNames are AttributeProto.AttributeType's names.
var attrTypeNames = map[int32]string{0: "UNDEFINED", AttrFloat: "FLOAT", AttrInt: "INT", AttrString: "STRING", AttrTensor: "TENSOR",
	AttrGraph: "GRAPH", AttrFloats: "FLOATS", AttrInts: "INTS", AttrStrings: "STRINGS"}

func attrTypeName(t int32) string {
	if s, ok := attrTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type %d", t)
}

// get returns the attribute called name when the node has it with type
// want; one of another type is recorded in a.err.
func (a attrs) get(name string, want int32) (*Attribute, bool) {
	at, ok := a.byName[name]
	if !ok {
		return nil, false
	}
	if at.Type != want {
		if *a.err == nil {
			*a.err = fmt.Errorf("attribute %q is of type %s: expected %s", name, attrTypeName(at.Type), attrTypeName(want))
		}
		return nil, false
	}
	return at, true
}

// show prints attribute name's integers for an error message ("absent",
// or its type when it holds none).
func (a attrs) show(name string) string {
	at, ok := a.byName[name]
	switch {
	case !ok:
		return "absent"
	case at.Type == AttrInts:
		return fmt.Sprint(at.Ints)
	}
	return "of type " + attrTypeName(at.Type)
}

func (a attrs) int(name string, def int64) int64 {
	if at, ok := a.get(name, AttrInt); ok {
		return at.I
	}
	return def
}

func (a attrs) float(name string, def float32) float32 {
	if at, ok := a.get(name, AttrFloat); ok {
		return at.F
	}
	return def
}

func (a attrs) ints(name string) ([]int64, bool) {
	at, ok := a.get(name, AttrInts)
	if !ok {
		return nil, false
	}
	return at.Ints, true
}

func (a attrs) str(name, def string) string {
	if at, ok := a.get(name, AttrString); ok {
		return string(at.S)
	}
	return def
}

// node builds one ONNX node. An attribute of another type than the one
// its operator reads is the node's error, before any other.
func (b *builder) node(n *Node) error {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return b.nodeError(n, "operator of domain %q: only ONNX's own operators are supported", n.Domain)
	}
	a := attrsOf(n)
	err := b.op(n, a)
	if *a.err != nil {
		return b.nodeError(n, "%v", *a.err)
	}
	return err
}

// op builds node n of attributes a by its operator.
func (b *builder) op(n *Node, a attrs) error {
	switch n.OpType {
	case "Gemm":
		return b.gemm(n, a)
	case "MatMul":
		return b.matmul(n)
	case "Add":
		return b.add(n)
	case "Conv":
		return b.conv(n, a)
	case "MaxPool", "AveragePool":
		return b.pool(n, a)
	case "Relu", "Tanh", "Sigmoid":
		return b.activation(n)
	case "Flatten":
		return b.flatten(n, a)
	case "Reshape":
		return b.reshape(n, a)
	case "Identity", "Dropout":
		return b.passThrough(n)
	case "Pad":
		return b.pad(n, a)
	case "Softmax", "LogSoftmax":
		return b.softmaxOutput(n, a)
	case "Constant":
		return b.constant(n, a)
	case "Shape":
		return b.shape(n, a)
	case "Gather":
		return b.gather(n, a)
	case "Unsqueeze", "Squeeze":
		return b.squeeze(n, a)
	case "Concat":
		return b.concat(n, a)
	case "Slice":
		return b.slice(n, a)
	case "Cast":
		return b.cast(n, a)
	}
	return b.nodeError(n, "operator %s is not supported (supported: %s)", n.OpType, strings.Join(Supported, ", "))
}

// activation builds an elementwise activation (Relu, Tanh, Sigmoid).
func (b *builder) activation(n *Node) error {
	x, _, err := b.act(n, 0, 0)
	if err != nil {
		return err
	}
	var y *G.Node
	switch n.OpType {
	case "Relu":
		y, err = G.Rectify(x)
	case "Tanh":
		y, err = G.Tanh(x)
	default:
		y, err = G.Sigmoid(x)
	}
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	return b.set(n, value{node: y})
}

// flatten builds Flatten to one row per example.
func (b *builder) flatten(n *Node, a attrs) error {
	x, _, err := b.act(n, 0, 0)
	if err != nil {
		return err
	}
	axis := a.int("axis", 1)
	if axis < 0 {
		axis += int64(x.Dims())
	}
	if axis != 1 {
		return b.nodeError(n, "axis %d: only axis 1 (one row per example) keeps the batch apart", a.int("axis", 1))
	}
	y, err := G.Reshape(x, tensor.Shape{b.batch, x.Shape().TotalSize() / b.batch})
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	return b.set(n, value{node: y})
}

// passThrough builds Identity or an inference-mode Dropout: its input unchanged.
func (b *builder) passThrough(n *Node) error {
	v, err := b.in(n, 0)
	if err != nil {
		return err
	}
	if n.OpType == "Dropout" && len(n.Inputs) > 2 && n.Inputs[2] != "" {
		tm, err := b.intsIn(n, 2)
		if err != nil || len(tm.ints) != 1 || tm.ints[0] != 0 {
			return b.nodeError(n, "training_mode is not a constant false: only inference-mode Dropout (a no-op) is supported")
		}
	}
	return b.set(n, v)
}

// pad builds a Pad of zero widths: its input unchanged.
func (b *builder) pad(n *Node, a attrs) error {
	v, err := b.in(n, 0)
	if err != nil {
		return err
	}
	pads, ok := a.ints("pads")
	if !ok && len(n.Inputs) > 1 && n.Inputs[1] != "" {
		pv, err := b.intsIn(n, 1)
		if err != nil {
			return err
		}
		pads = pv.ints
	}
	for _, p := range pads {
		if p != 0 {
			return b.nodeError(n, "pads %v: only a Pad of zero widths (a no-op exporters write before AveragePool) is supported; pad in the Conv or pooling node instead", pads)
		}
	}
	return b.set(n, v)
}

// softmaxOutput builds the output's Softmax or LogSoftmax, stripped: the logits are its input.
func (b *builder) softmaxOutput(n *Node, a attrs) error {
	if b.net.stripped == "" || len(n.Outputs) != 1 || n.Outputs[0] != b.net.output {
		return b.nodeError(n, "a %s inside the network: only one making the graph's output is supported (it is stripped: the logits are its input)", n.OpType)
	}
	x, _, err := b.act(n, 0, 2)
	if err != nil {
		return err
	}
	axis := a.int("axis", map[bool]int64{true: -1, false: 1}[b.net.opset >= 13])
	if axis != -1 && axis != 1 {
		return b.nodeError(n, "axis %d: expected the classes' axis (1 or -1)", axis)
	}
	return b.set(n, value{node: x})
}

// cast builds a Cast to float: its input unchanged.
func (b *builder) cast(n *Node, a attrs) error {
	v, err := b.in(n, 0)
	if err != nil {
		return err
	}
	to := int32(a.int("to", 0))
	if v.node != nil && to != TypeFloat && to != TypeDouble {
		return b.nodeError(n, "casts an activation to %s: only casts to float are no-ops here", typeName(to))
	}
	if v.init != nil {
		return b.nodeError(n, "casts an initialiser: expected weights stored as float")
	}
	return b.set(n, v)
}

func (b *builder) gemm(n *Node, a attrs) error {
	x, _, err := b.act(n, 0, 2)
	if err != nil {
		return err
	}
	if a.int("transA", 0) != 0 {
		return b.nodeError(n, "transA 1: expected the examples as rows (transA 0)")
	}
	if al, be := a.float("alpha", 1), a.float("beta", 1); al != 1 || be != 1 {
		return b.nodeError(n, "alpha %g, beta %g: only alpha = beta = 1 (a dense layer) is supported", al, be)
	}
	wv, err := b.in(n, 1)
	if err != nil {
		return err
	}
	if wv.init == nil || len(wv.init.Dims) != 2 {
		dims := []int64(nil)
		if wv.init != nil {
			dims = wv.init.Dims
		}
		return b.nodeError(n, "B %q (dims %v): expected a 2-D initialiser, the layer's weights", n.Inputs[1], dims)
	}
	k := x.Shape()[1]
	tb := a.int("transB", 0) != 0
	rows, cols := int(wv.init.Dims[0]), int(wv.init.Dims[1])
	in, out := rows, cols
	if tb {
		in, out = cols, rows
	}
	if in != k {
		return b.nodeError(n, "B %q has dims %v (transB %v): it takes %d inputs, the layer gets %d", n.Inputs[1], wv.init.Dims, tb, in, k)
	}
	w, err := b.weight(n, 1, []int{in, out}, tb, false, in)
	if err != nil {
		return err
	}
	y, err := G.Mul(x, w)
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		bias, err := b.weight(n, 2, []int{out}, false, true, in)
		if err != nil {
			return err
		}
		if y, err = G.BroadcastAdd(y, bias, nil, []byte{0}); err != nil {
			return b.nodeError(n, "%v", err)
		}
	}
	return b.set(n, value{node: y, fanIn: in})
}

func (b *builder) matmul(n *Node) error {
	x, _, err := b.act(n, 0, 2)
	if err != nil {
		return err
	}
	wv, err := b.in(n, 1)
	if err != nil {
		return err
	}
	if wv.init == nil || len(wv.init.Dims) != 2 {
		return b.nodeError(n, "B %q: expected a 2-D initialiser (the weights), [inputs, outputs]", n.Inputs[1])
	}
	k := x.Shape()[1]
	if int(wv.init.Dims[0]) != k {
		return b.nodeError(n, "B %q has dims %v: it takes %d inputs, the layer gets %d", n.Inputs[1], wv.init.Dims, wv.init.Dims[0], k)
	}
	w, err := b.weight(n, 1, []int{k, int(wv.init.Dims[1])}, false, false, k)
	if err != nil {
		return err
	}
	y, err := G.Mul(x, w)
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	return b.set(n, value{node: y, fanIn: k})
}

func (b *builder) add(n *Node) error {
	if len(n.Inputs) != 2 {
		return b.nodeError(n, "%d inputs: expected 2", len(n.Inputs))
	}
	l, err := b.in(n, 0)
	if err != nil {
		return err
	}
	r, err := b.in(n, 1)
	if err != nil {
		return err
	}
	if l.node != nil && r.node != nil {
		if !l.node.Shape().Eq(r.node.Shape()) {
			return b.nodeError(n, "adds shapes %v and %v: expected equal shapes", []int(l.node.Shape()), []int(r.node.Shape()))
		}
		y, err := G.Add(l.node, r.node)
		if err != nil {
			return b.nodeError(n, "%v", err)
		}
		return b.set(n, value{node: y})
	}
	xi, bi := 0, 1
	if l.node == nil {
		xi, bi = 1, 0
	}
	x, xv, err := b.act(n, xi, 0)
	if err != nil {
		return err
	}
	bv, _ := b.in(n, bi)
	if bv.init == nil {
		return b.nodeError(n, "input %q is not an activation or an initialiser", n.Inputs[bi])
	}
	// A bias: [N] (or [1, N]) on [batch, N], or [C, 1, 1] (or [1, C, 1,
	// 1]) on [batch, C, H, W] per channel. A [C] on [batch, C, H, W] is
	// refused: ONNX broadcasts it along the last axis (W), not per channel.
	s := x.Shape()
	dims := bv.init.Dims
	for len(dims) > 1 && dims[0] == 1 && len(dims) >= len(s) {
		dims = dims[1:]
	}
	var pattern []byte
	var size int
	switch {
	case len(s) == 2 && len(dims) == 1 && int(dims[0]) == s[1]:
		pattern, size = []byte{0}, s[1]
	case len(s) == 4 && len(dims) == 3 && int(dims[0]) == s[1] && dims[1] == 1 && dims[2] == 1:
		pattern, size = []byte{0, 2, 3}, s[1]
	default:
		want := "[K] on [N, K], or [C, 1, 1] per channel on [N, C, H, W]"
		switch len(s) {
		case 2:
			want = fmt.Sprintf("[%d] on [N, %d]", s[1], s[1])
		case 4: // the channels are s[1]
			want = fmt.Sprintf("[%d, 1, 1] per channel on [N, %d, H, W]", s[1], s[1])
		}
		return b.nodeError(n, "adds initialiser %q of dims %v to activations of %v per example: expected a bias, %s", n.Inputs[bi], bv.init.Dims, []int(s[1:]), want)
	}
	bias, err := b.weight(n, bi, []int{size}, false, true, xv.fanIn)
	if err != nil {
		return err
	}
	y, err := G.BroadcastAdd(x, bias, nil, pattern)
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	return b.set(n, value{node: y})
}

// pairs returns an attribute of two values per spatial axis (kernel
// shape, strides, dilations) with a default.
func pairs(a attrs, name string, def int64) ([]int, bool) {
	v, ok := a.ints(name)
	if !ok {
		return []int{int(def), int(def)}, true
	}
	if len(v) != 2 || v[0] <= 0 || v[1] <= 0 {
		return nil, false
	}
	return []int{int(v[0]), int(v[1])}, true
}

// pads returns symmetric 2-D padding from ONNX's pads [top, left, bottom,
// right] or auto_pad, for kernel k, stride s and dilation d.
// maxPad bounds a pad, so that a padded size cannot wrap and a
// convolution's output stays of the sizes the import allows
// (maxConvOutput).
const maxPad = 1 << 16

// maxConvOutput bounds the values one example's convolution writes, as
// newNetwork bounds its input's (math.MaxInt32): a huge pad would
// otherwise make a huge output.
const maxConvOutput = math.MaxInt32

func (b *builder) pads(n *Node, a attrs, k, s, d []int) ([]int, error) {
	switch ap := a.str("auto_pad", "NOTSET"); ap {
	case "NOTSET", "":
	case "VALID":
		return []int{0, 0}, nil
	case "SAME_UPPER", "SAME_LOWER":
		p := []int{0, 0}
		for i := range p {
			ext := d[i]*(k[i]-1) + 1
			if s[i] != 1 || ext%2 == 0 {
				return nil, b.nodeError(n, "auto_pad %s with kernel %v, strides %v: only odd kernels of stride 1 pad the same on both sides", ap, k, s)
			}
			p[i] = (ext - 1) / 2
		}
		return p, nil
	default:
		return nil, b.nodeError(n, "auto_pad %q: expected NOTSET, VALID, SAME_UPPER or SAME_LOWER", ap)
	}
	v, ok := a.ints("pads")
	if !ok {
		return []int{0, 0}, nil
	}
	if len(v) != 4 || v[0] != v[2] || v[1] != v[3] || v[0] < 0 || v[1] < 0 {
		return nil, b.nodeError(n, "pads %v: only the same padding on both sides of each axis ([t, l, t, l]) is supported", v)
	}
	if v[0] > maxPad || v[1] > maxPad {
		return nil, b.nodeError(n, "pads %v: more than %d on an axis", v, maxPad)
	}
	return []int{int(v[0]), int(v[1])}, nil
}

func (b *builder) conv(n *Node, a attrs) error {
	x, _, err := b.act(n, 0, 4)
	if err != nil {
		return err
	}
	if g := a.int("group", 1); g != 1 {
		return b.nodeError(n, "group %d: only group 1 (a full convolution) is supported", g)
	}
	wv, err := b.in(n, 1)
	if err != nil {
		return err
	}
	if wv.init == nil || len(wv.init.Dims) != 4 {
		return b.nodeError(n, "W %q: expected a 4-D initialiser [out channels, in channels, kh, kw]", n.Inputs[1])
	}
	wd := wv.init.Dims
	c := x.Shape()[1]
	if int(wd[1]) != c {
		return b.nodeError(n, "W %q has dims %v: it takes %d channels, the input has %d (shape %v)", n.Inputs[1], wd, wd[1], c, []int(x.Shape()))
	}
	k := []int{int(wd[2]), int(wd[3])}
	if ks, ok := a.ints("kernel_shape"); ok && (len(ks) != 2 || int(ks[0]) != k[0] || int(ks[1]) != k[1]) {
		return b.nodeError(n, "kernel_shape %v differs from W's dims %v", ks, wd)
	}
	s, ok1 := pairs(a, "strides", 1)
	d, ok2 := pairs(a, "dilations", 1)
	if !ok1 || !ok2 {
		return b.nodeError(n, "strides %s, dilations %s: expected two positive values each", a.show("strides"), a.show("dilations"))
	}
	p, err := b.pads(n, a, k, s, d)
	if err != nil {
		return err
	}
	fanIn := c * k[0] * k[1]
	w, err := b.weight(n, 1, []int{int(wd[0]), c, k[0], k[1]}, false, false, fanIn)
	if err != nil {
		return err
	}
	h, wd3 := x.Shape()[2], x.Shape()[3]
	if h+2*p[0] < d[0]*(k[0]-1)+1 || wd3+2*p[1] < d[1]*(k[1]-1)+1 {
		return b.nodeError(n, "kernel %v does not fit the %dx%d input (pads %v)", k, h, wd3, p)
	}
	oh := int64((h+2*p[0]-d[0]*(k[0]-1)-1)/s[0] + 1)
	ow := int64((wd3+2*p[1]-d[1]*(k[1]-1)-1)/s[1] + 1)
	if wd[0] > 0 && oh*ow > maxConvOutput/wd[0] { // oh*ow stays below 2^36 (the input's and the pads' bounds): no wrap
		return b.nodeError(n, "output of %d x %d x %d values per example (pads %v): more than %d", wd[0], oh, ow, p, maxConvOutput)
	}
	y, err := G.Conv2d(x, w, tensor.Shape{k[0], k[1]}, p, s, d)
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		bias, err := b.weight(n, 2, []int{int(wd[0])}, false, true, fanIn)
		if err != nil {
			return err
		}
		if y, err = G.BroadcastAdd(y, bias, nil, []byte{0, 2, 3}); err != nil {
			return b.nodeError(n, "%v", err)
		}
	}
	return b.set(n, value{node: y, fanIn: fanIn})
}

func (b *builder) pool(n *Node, a attrs) error {
	x, _, err := b.act(n, 0, 4)
	if err != nil {
		return err
	}
	ksv, ok := a.ints("kernel_shape")
	if !ok || len(ksv) != 2 || ksv[0] <= 0 || ksv[1] <= 0 {
		return b.nodeError(n, "kernel_shape %v: expected two positive sizes (2-D pooling)", ksv)
	}
	k := []int{int(ksv[0]), int(ksv[1])}
	s, ok1 := pairs(a, "strides", 1)
	d, ok2 := pairs(a, "dilations", 1)
	if !ok1 || !ok2 || d[0] != 1 || d[1] != 1 {
		return b.nodeError(n, "strides %s, dilations %s: expected positive strides and no dilation", a.show("strides"), a.show("dilations"))
	}
	if a.int("ceil_mode", 0) != 0 {
		return b.nodeError(n, "ceil_mode 1: only floor mode (ceil_mode 0) is supported")
	}
	p, err := b.pads(n, a, k, s, []int{1, 1})
	if err != nil {
		return err
	}
	// A pad wider than half the kernel makes windows of padding alone (a
	// max of none: -MaxFloat, an argmax of -1 that Gorgonia's backward
	// indexes); PyTorch refuses it too.
	if 2*p[0] > k[0] || 2*p[1] > k[1] {
		return b.nodeError(n, "pads %v with kernel_shape %v: a pad wider than half the kernel makes windows of padding alone; expected pads of at most [%d, %d]", []int{p[0], p[1], p[0], p[1]}, k, k[0]/2, k[1]/2)
	}
	sh := x.Shape()
	if sh[2]+2*p[0] < k[0] || sh[3]+2*p[1] < k[1] {
		return b.nodeError(n, "kernel %v does not fit the %dx%d input (pads %v)", k, sh[2], sh[3], p)
	}
	var y *G.Node
	if n.OpType == "MaxPool" {
		y, err = G.MaxPool2D(x, tensor.Shape{k[0], k[1]}, p, s)
	} else {
		if p[0] != 0 || p[1] != 0 {
			return b.nodeError(n, "pads %v: only unpadded average pooling is supported", p)
		}
		y, err = b.avgPool(x, k, s)
	}
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	return b.set(n, value{node: y})
}

// avgPool averages x over k windows of stride s that tile the image
// (stride = kernel, sizes divisible by it), as a reshape, a sum and a
// scale, which the graph compiler runs. (Gorgonia's AveragePool2D computes
// other windows than ONNX's AveragePool when they overlap.)
func (b *builder) avgPool(x *G.Node, k, s []int) (*G.Node, error) {
	sh := x.Shape()
	bt, c, h, w := sh[0], sh[1], sh[2], sh[3]
	if k[0] != s[0] || k[1] != s[1] || h%k[0] != 0 || w%k[1] != 0 {
		return nil, fmt.Errorf("kernel %v, strides %v on %dx%d: only windows that tile the image (strides = kernel, sizes divisible by it) are supported", k, s, h, w)
	}
	oh, ow := h/k[0], w/k[1]
	r, err := G.Reshape(x, tensor.Shape{bt * c * oh, k[0], ow, k[1]})
	if err != nil {
		return nil, err
	}
	if r, err = G.Sum(r, 1, 3); err != nil {
		return nil, err
	}
	if r, err = G.Reshape(r, tensor.Shape{bt, c, oh, ow}); err != nil {
		return nil, err
	}
	var scale *G.Node
	if b.dt == tensor.Float32 {
		scale = G.NewConstant(float32(1 / float64(k[0]*k[1])))
	} else {
		scale = G.NewConstant(1 / float64(k[0]*k[1]))
	}
	return G.HadamardProd(r, scale)
}

func (b *builder) reshape(n *Node, a attrs) error {
	x, _, err := b.act(n, 0, 0)
	if err != nil {
		return err
	}
	sv, err := b.intsIn(n, 1)
	if err != nil {
		return err
	}
	t := sv.ints
	if len(t) < 1 {
		return b.nodeError(n, "target shape %v: expected the batch first", t)
	}
	switch {
	case t[0] == batchMark, t[0] == 0, t[0] == -1, b.net.fixedN > 0 && t[0] == b.net.fixedN:
	default:
		return b.nodeError(n, "target shape %s moves the batch dimension: expected it first (0, -1 or the input's N)", intsString(t))
	}
	per := x.Shape().TotalSize() / b.batch
	rest := make([]int, len(t)-1)
	free := -1
	known := 1
	for i, v := range t[1:] {
		switch {
		case v == 0 && a.int("allowzero", 0) == 0:
			if i+1 >= x.Dims() {
				return b.nodeError(n, "target shape %s copies dimension %d, which the input %v lacks", intsString(t), i+1, []int(x.Shape()))
			}
			rest[i] = x.Shape()[i+1]
		case v == -1 && t[0] != -1 && free < 0:
			free = i
			continue
		case v > 0 && v <= int64(per):
			rest[i] = int(v)
		case v > 0:
			return b.nodeError(n, "target shape %s: dimension %d is larger than the %d values per example of the input %v", intsString(t), v, per, []int(x.Shape()))
		default:
			return b.nodeError(n, "target shape %s: expected one -1 at most, and the example's dimensions known", intsString(t))
		}
		if rest[i] > 0 && known > per/rest[i] { // known*rest[i] > per, without the product (which can wrap)
			return b.nodeError(n, "target shape %s holds more than the %d values per example of the input %v", intsString(t), per, []int(x.Shape()))
		}
		known *= rest[i]
	}
	if free >= 0 {
		if known == 0 || per%known != 0 {
			return b.nodeError(n, "target shape %s does not fit %d values per example", intsString(t), per)
		}
		rest[free] = per / known
		known = per
	}
	if known != per {
		return b.nodeError(n, "target shape %s holds %d values per example, the input %v has %d", intsString(t), known, []int(x.Shape()), per)
	}
	y, err := G.Reshape(x, append(tensor.Shape{b.batch}, rest...))
	if err != nil {
		return b.nodeError(n, "%v", err)
	}
	return b.set(n, value{node: y})
}

func intsString(t []int64) string {
	parts := make([]string, len(t))
	for i, v := range t {
		if v == batchMark {
			parts[i] = "N"
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (b *builder) constant(n *Node, a attrs) error {
	if at, ok := a.get("value", AttrTensor); ok && at.T != nil {
		t := at.T
		switch {
		case t.isFloat():
			if _, err := t.Floats(); err != nil {
				return b.nodeError(n, "%v", err)
			}
			return b.set(n, value{init: t, fixed: true})
		case t.isInt():
			v, err := t.Ints()
			if err != nil {
				return b.nodeError(n, "%v", err)
			}
			return b.set(n, value{ints: v, intDims: t.Dims, isInts: true})
		}
		return b.nodeError(n, "value of element type %s: expected numbers", typeName(t.DataType))
	}
	if at, ok := a.get("value_int", AttrInt); ok {
		return b.set(n, value{ints: []int64{at.I}, isInts: true})
	}
	if v, ok := a.ints("value_ints"); ok {
		return b.set(n, value{ints: v, intDims: []int64{int64(len(v))}, isInts: true})
	}
	return b.nodeError(n, "no integer or tensor value (value, value_int, value_ints): other constants are not supported")
}

func (b *builder) shape(n *Node, a attrs) error {
	v, err := b.in(n, 0)
	if err != nil {
		return err
	}
	var dims []int64
	switch {
	case v.node != nil:
		dims = append(dims, batchMark)
		for _, d := range v.node.Shape()[1:] {
			dims = append(dims, int64(d))
		}
	case v.isInts:
		dims = append([]int64(nil), v.intDims...)
	case v.init != nil:
		dims = append([]int64(nil), v.init.Dims...)
	}
	r := int64(len(dims))
	start, end := a.int("start", 0), a.int("end", r)
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = min(max(start, 0), r), min(max(end, 0), r)
	if start > end {
		start = end
	}
	dims = dims[start:end]
	return b.set(n, value{ints: dims, intDims: []int64{int64(len(dims))}, isInts: true})
}

func (b *builder) gather(n *Node, a attrs) error {
	data, err := b.intsIn(n, 0)
	if err != nil {
		return err
	}
	idx, err := b.intsIn(n, 1)
	if err != nil {
		return err
	}
	if len(data.intDims) > 1 || a.int("axis", 0) != 0 {
		return b.nodeError(n, "gathers along axis %d of dims %v: only 1-D shape constants fold", a.int("axis", 0), data.intDims)
	}
	out := make([]int64, len(idx.ints))
	for i, j := range idx.ints {
		if j < 0 {
			j += int64(len(data.ints))
		}
		if j < 0 || j >= int64(len(data.ints)) {
			return b.nodeError(n, "index %d out of range of %d values", idx.ints[i], len(data.ints))
		}
		out[i] = data.ints[j]
	}
	return b.set(n, value{ints: out, intDims: idx.intDims, isInts: true})
}

func (b *builder) squeeze(n *Node, a attrs) error {
	v, err := b.intsIn(n, 0)
	if err != nil {
		return err
	}
	axes, ok := a.ints("axes")
	if !ok && len(n.Inputs) > 1 && n.Inputs[1] != "" {
		av, err := b.intsIn(n, 1)
		if err != nil {
			return err
		}
		axes = av.ints
	}
	dims := append([]int64(nil), v.intDims...)
	if n.OpType == "Unsqueeze" {
		r := int64(len(dims) + len(axes))
		sorted := make([]int64, len(axes))
		for i, x := range axes {
			if x < 0 {
				x += r
			}
			sorted[i] = x
		}
		slices.Sort(sorted)
		for _, x := range sorted {
			if x < 0 || x > int64(len(dims)) {
				return b.nodeError(n, "axes %v out of range for dims %v", axes, v.intDims)
			}
			dims = slices.Insert(dims, int(x), 1)
		}
	} else {
		var kept []int64
		for i, d := range dims {
			drop := len(axes) == 0 && d == 1
			for _, x := range axes {
				if x == int64(i) || x+int64(len(dims)) == int64(i) {
					drop = true
				}
			}
			if !drop {
				kept = append(kept, d)
			}
		}
		dims = kept
	}
	return b.set(n, value{ints: v.ints, intDims: dims, isInts: true})
}

func (b *builder) concat(n *Node, a attrs) error {
	var out []int64
	for i := range n.Inputs {
		v, err := b.intsIn(n, i)
		if err != nil {
			return err
		}
		if len(v.intDims) > 1 {
			return b.nodeError(n, "concatenates dims %v: only 1-D shape constants fold", v.intDims)
		}
		out = append(out, v.ints...)
	}
	return b.set(n, value{ints: out, intDims: []int64{int64(len(out))}, isInts: true})
}

func (b *builder) slice(n *Node, a attrs) error {
	v, err := b.intsIn(n, 0)
	if err != nil {
		return err
	}
	if len(v.intDims) > 1 {
		return b.nodeError(n, "slices dims %v: only 1-D shape constants fold", v.intDims)
	}
	get := func(i int, attr string) ([]int64, error) {
		if x, ok := a.ints(attr); ok {
			return x, nil
		}
		if i < len(n.Inputs) && n.Inputs[i] != "" {
			c, err := b.intsIn(n, i)
			return c.ints, err
		}
		return nil, nil
	}
	starts, err := get(1, "starts")
	if err != nil {
		return err
	}
	ends, err := get(2, "ends")
	if err != nil {
		return err
	}
	steps, err := get(4, "steps")
	if err != nil {
		return err
	}
	if len(starts) != 1 || len(ends) != 1 || len(steps) > 1 || len(steps) == 1 && steps[0] != 1 {
		return b.nodeError(n, "starts %v, ends %v, steps %v: only a 1-D slice of step 1 folds", starts, ends, steps)
	}
	r := int64(len(v.ints))
	s, e := starts[0], ends[0]
	if s < 0 {
		s += r
	}
	if e < 0 {
		e += r
	}
	s, e = min(max(s, 0), r), min(max(e, 0), r)
	if e < s {
		e = s
	}
	out := append([]int64(nil), v.ints[s:e]...)
	return b.set(n, value{ints: out, intDims: []int64{int64(len(out))}, isInts: true})
}
