package onnx_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/onnx"
)

// smallMLP is a 12-5-10 network of Gemm (transB), Relu, MatMul, Add and a
// trailing Softmax.
func smallMLP(rng *rand.Rand) *onnx.Model {
	return model([]*onnx.Node{
		node("Gemm", "fc1", []string{"x", "w1", "b1"}, []string{"h1"}, intAttr("transB", 1)),
		node("Relu", "relu1", []string{"h1"}, []string{"a1"}),
		node("MatMul", "fc2", []string{"a1", "w2"}, []string{"h2"}),
		node("Add", "fc2.bias", []string{"h2", "b2"}, []string{"z"}),
		node("Softmax", "softmax", []string{"z"}, []string{"p"}, intAttr("axis", 1)),
	}, []*onnx.Tensor{
		floatInit("w1", []int64{5, 12}, rng, 0.5), floatInit("b1", []int64{5}, rng, 0.1),
		floatInit("w2", []int64{5, 10}, rng, 0.5), floatInit("b2", []int64{10}, rng, 0.1),
	}, []*onnx.ValueInfo{input("x", 0, 12)}, "p")
}

func TestRoundTrip(t *testing.T) {
	m := smallMLP(rand.New(rand.NewPCG(1, 1)))
	m.ProducerVersion = "0.1"
	m.Graph.Nodes = append(m.Graph.Nodes, &onnx.Node{OpType: "Constant", Outputs: []string{"c"}, Domain: "ai.onnx", Attributes: []*onnx.Attribute{
		{Name: "value", Type: onnx.AttrTensor, T: &onnx.Tensor{Dims: []int64{2}, DataType: onnx.TypeInt64, RawData: []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}}},
		{Name: "f", Type: onnx.AttrFloat, F: 0.5}, {Name: "fs", Type: onnx.AttrFloats, Floats: []float32{1, 2}},
		{Name: "s", Type: onnx.AttrString, S: []byte("SAME_UPPER")}, ints("is", 1, -2, 3),
	}})
	m.Graph.Initializers = append(m.Graph.Initializers, &onnx.Tensor{Name: "d", Dims: []int64{2}, DataType: onnx.TypeDouble, DoubleData: []float64{1.5, -2}},
		&onnx.Tensor{Name: "i", Dims: []int64{3}, DataType: onnx.TypeInt32, Int32Data: []int32{-1, 0, 7}})
	got, err := onnx.Decode(m.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("decoded model differs from the encoded one:\n got %+v\nwant %+v", got.Graph, m.Graph)
	}
}

// TestDecodeCorrupt checks that every truncation of a model and byte
// flips are errors, never panics or a model read from half a file.
func TestDecodeCorrupt(t *testing.T) {
	b := smallMLP(rand.New(rand.NewPCG(1, 1))).Marshal()
	for n := 0; n < len(b); n++ {
		if _, err := onnx.Decode(b[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes decoded without error", n, len(b))
		}
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 2000; i++ {
		c := append([]byte(nil), b...)
		c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
		if m, err := onnx.Decode(c); err == nil {
			onnx.Import("flipped", m) // may fail; must not panic
		}
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"text", []byte("this is not a model\n"), "corrupt protobuf"},
		{"half", b[:len(b)/2], "truncated or corrupt"},
		{"no graph", (&onnx.Model{IRVersion: 8, Opsets: []onnx.Opset{{Version: 14}}}).Marshal(), "no graph"},
		{"no opset", (&onnx.Model{IRVersion: 8, Graph: &onnx.Graph{}}).Marshal(), "no opset_import"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := onnx.Decode(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
}

// TestImportMatchesReference checks the imported graphs' logits against a
// reference interpreter of ONNX's operators, compiled and on Gorgonia's VM,
// in float64 and float32.
func TestImportMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	cnn := func(extra ...*onnx.Node) []*onnx.Node {
		return append([]*onnx.Node{
			node("Conv", "conv1", []string{"x", "cw1", "cb1"}, []string{"c1"}, ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1), ints("strides", 2, 2)),
			node("Tanh", "tanh", []string{"c1"}, []string{"t1"}),
			node("MaxPool", "pool1", []string{"t1"}, []string{"p1"}, ints("kernel_shape", 3, 3), ints("pads", 1, 1, 1, 1), ints("strides", 1, 1)),
			node("Conv", "conv2", []string{"p1", "cw2"}, []string{"c2"}, ints("dilations", 2, 2)),
			node("Add", "conv2.bias", []string{"c2", "cb2"}, []string{"c2b"}),
			node("Sigmoid", "sig", []string{"c2b"}, []string{"s2"}),
			node("AveragePool", "pool2", []string{"s2"}, []string{"p2"}, ints("kernel_shape", 2, 2), ints("strides", 2, 2)),
		}, extra...)
	}
	cnnInits := func() []*onnx.Tensor {
		return []*onnx.Tensor{floatInit("cw1", []int64{3, 2, 3, 3}, rng, 0.5), floatInit("cb1", []int64{3}, rng, 0.1),
			floatInit("cw2", []int64{4, 3, 2, 2}, rng, 0.5), floatInit("cb2", []int64{4, 1, 1}, rng, 0.1),
			floatInit("fw", []int64{10, 4}, rng, 0.5), floatInit("fb", []int64{10}, rng, 0.1)}
	}
	// 2x7x7 images: conv1 stride 2 -> 3x4x4, pool (same) -> 4x4, conv2
	// dilated 2x2 -> 4x2x2, average 2x2 -> 4x1x1
	cases := []struct {
		name string
		m    *onnx.Model
		in   []int
	}{
		{"mlp", smallMLP(rng), []int{12}},
		{"cnn, Flatten", model(cnn(
			node("Flatten", "flat", []string{"p2"}, []string{"f"}),
			node("Gemm", "fc", []string{"f", "fw", "fb"}, []string{"z"}, intAttr("transB", 1)),
		), cnnInits(), []*onnx.ValueInfo{input("x", 0, 2, 7, 7)}, "z"), []int{2, 7, 7}},
		{"cnn, the exporters' shape chain", model(cnn(
			node("Shape", "shape", []string{"p2"}, []string{"sh"}),
			node("Gather", "gather", []string{"sh", "zero"}, []string{"n"}, intAttr("axis", 0)),
			node("Unsqueeze", "unsq", []string{"n", "axes"}, []string{"n1"}),
			node("Concat", "cat", []string{"n1", "minus1"}, []string{"target"}, intAttr("axis", 0)),
			node("Reshape", "view", []string{"p2", "target"}, []string{"f"}),
			node("Identity", "id", []string{"f"}, []string{"f2"}),
			node("Gemm", "fc", []string{"f2", "fw", "fb"}, []string{"z"}, intAttr("transB", 1)),
			node("LogSoftmax", "lsm", []string{"z"}, []string{"out"}, intAttr("axis", 1)),
		), append(cnnInits(), &onnx.Tensor{Name: "zero", DataType: onnx.TypeInt64, Int64Data: []int64{0}},
			intInit("axes", 0), intInit("minus1", -1)), []*onnx.ValueInfo{input("x", 0, 2, 7, 7)}, "out"), []int{2, 7, 7}},
		{"cnn, a fixed batch of 1 and a folded reshape", model(cnn(
			node("Reshape", "view", []string{"p2", "target"}, []string{"f"}),
			node("Gemm", "fc", []string{"f", "fw", "fb"}, []string{"z"}, intAttr("transB", 1)),
		), append(cnnInits(), intInit("target", 1, 4)), []*onnx.ValueInfo{input("x", 1, 2, 7, 7)}, "z"), []int{2, 7, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := onnx.Decode(c.m.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			net, err := onnx.Import(c.name, m)
			if err != nil {
				t.Fatal(err)
			}
			mod, err := net.Model(c.name, nn.PriorConfig{Precision: 1})
			if err != nil {
				t.Fatal(err)
			}
			d := 1
			for _, x := range c.in {
				d *= x
			}
			data := imageData(7, d, rng)
			var want []float64
			for i := 0; i < data.N; i++ {
				x := make([]float64, d)
				for j := range x {
					x[j] = float64(data.Row(i)[j])
				}
				z, err := refForward(m, refTensor{c.in, x})
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, z...)
			}
			for _, run := range []struct {
				engine autodiff.Engine
				dt     autodiff.DType
				tol    float64
			}{{autodiff.EngineCompiled, autodiff.Float64, 1e-12}, {autodiff.EngineGraph, autodiff.Float64, 1e-12}, {autodiff.EngineCompiled, autodiff.Float32, 1e-5}} {
				got := logitsOf(t, mod, run.engine, run.dt, mod.Weights, data)
				if d := maxAbsDiff(got, want); d > run.tol {
					t.Errorf("%s %s: logits differ from the reference by %g (> %g)", run.engine, run.dt, d, run.tol)
				}
			}
		})
	}
}

// TestImportRefuses checks that graphs outside the supported set are
// refused in one line naming the fault (and the node at fault).
func TestImportRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	mlp := func(edit func(m *onnx.Model)) *onnx.Model { return editMLP(rng, edit) }
	conv := func(a ...*onnx.Attribute) *onnx.Model {
		return model([]*onnx.Node{
			node("Conv", "conv", []string{"x", "w"}, []string{"c"}, a...),
			node("Flatten", "flat", []string{"c"}, []string{"z"}),
		}, []*onnx.Tensor{floatInit("w", []int64{2, 1, 3, 3}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 1, 5, 5)}, "z")
	}
	cases := []refusal{
		{"unsupported operator", mlp(func(m *onnx.Model) { m.Graph.Nodes[1].OpType = "LeakyRelu" }),
			[]string{`node "relu1" (LeakyRelu)`, "operator LeakyRelu is not supported", "supported: Add"}},
		{"two inputs", mlp(func(m *onnx.Model) { m.Graph.Inputs = append(m.Graph.Inputs, input("y", 0, 3)) }),
			[]string{"2 inputs (x, y)", "expected one, the images"}},
		{"no input", mlp(func(m *onnx.Model) { m.Graph.Inputs = nil }), []string{"0 inputs (none)"}},
		{"two outputs", mlp(func(m *onnx.Model) {
			m.Graph.Outputs = append(m.Graph.Outputs, &onnx.ValueInfo{Name: "h1", ElemType: onnx.TypeFloat})
		}), []string{"2 outputs (p, h1)", "expected one, the logits"}},
		{"softmax inside", mlp(func(m *onnx.Model) { m.Graph.Nodes[1].OpType = "Softmax" }),
			[]string{`node "relu1" (Softmax)`, "inside the network"}},
		{"input of integers", mlp(func(m *onnx.Model) { m.Graph.Inputs[0].ElemType = onnx.TypeInt64 }),
			[]string{`input "x" is of type int64`}},
		{"input of unknown size", mlp(func(m *onnx.Model) { m.Graph.Inputs[0].Shape[1] = onnx.Dim{Param: "D"} }),
			[]string{`input "x" has shape [N, D]`}},
		{"weights that do not fit", mlp(func(m *onnx.Model) {
			m.Graph.Initializers[0].Dims = []int64{6, 10}
			m.Graph.Initializers[0].FloatData = make([]float32, 60)
		}),
			[]string{`node "fc1" (Gemm)`, "takes 10 inputs, the layer gets 12"}},
		{"bias that does not fit", mlp(func(m *onnx.Model) {
			m.Graph.Initializers[3].Dims = []int64{9}
			m.Graph.Initializers[3].FloatData = make([]float32, 9)
		}),
			[]string{`node "fc2.bias" (Add)`, "expected a bias"}},
		{"truncated initialiser", mlp(func(m *onnx.Model) {
			m.Graph.Initializers[0].FloatData = nil
			m.Graph.Initializers[0].RawData = make([]byte, 7)
		}), []string{`tensor "w1"`, "7 bytes of raw data"}},
		{"weights from an activation", mlp(func(m *onnx.Model) { m.Graph.Nodes[2].Inputs[1] = "h1" }),
			[]string{`node "fc2" (MatMul)`, "expected a 2-D initialiser"}},
		{"an input made by no node", mlp(func(m *onnx.Model) { m.Graph.Nodes[1].Inputs[0] = "nowhere" }),
			[]string{`node "relu1" (Relu)`, `input "nowhere" is made by no earlier node`}},
		{"operator of another domain", mlp(func(m *onnx.Model) { m.Graph.Nodes[1].Domain = "com.microsoft" }),
			[]string{`node "relu1"`, `domain "com.microsoft"`}},
		{"asymmetric pads", conv(ints("pads", 0, 0, 1, 1)), []string{`node "conv" (Conv)`, "pads [0 0 1 1]"}},
		{"grouped convolution", conv(intAttr("group", 2)), []string{`node "conv" (Conv)`, "group 2"}},
		{"output not logits", conv(), nil}, // made 3-D below
		{"overlapping average pooling", model([]*onnx.Node{
			node("AveragePool", "avg", []string{"x"}, []string{"a"}, ints("kernel_shape", 3, 3), ints("strides", 2, 2)),
			node("Flatten", "flat", []string{"a"}, []string{"f"}),
			node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
		}, []*onnx.Tensor{floatInit("w", []int64{4, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 1, 5, 5)}, "z"),
			[]string{`node "avg" (AveragePool)`, "only windows that tile the image"}},
		{"padding", model([]*onnx.Node{
			node("Pad", "pad", []string{"x", "pads"}, []string{"p"}),
			node("Flatten", "flat", []string{"p"}, []string{"f"}),
			node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
		}, []*onnx.Tensor{intInit("pads", 0, 0, 1, 1, 0, 0, 1, 1), floatInit("w", []int64{49, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 1, 5, 5)}, "z"),
			[]string{`node "pad" (Pad)`, "pads [0 0 1 1 0 0 1 1]"}},
		{"reshape across the batch", model([]*onnx.Node{
			node("Reshape", "view", []string{"x", "target"}, []string{"r"}),
			node("Gemm", "fc", []string{"r", "w"}, []string{"z"}),
		}, []*onnx.Tensor{intInit("target", 12, 1), floatInit("w", []int64{1, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 12)}, "z"),
			[]string{`node "view" (Reshape)`, "target shape [12, 1] moves the batch dimension"}},
		{"no learnable", model([]*onnx.Node{node("Relu", "r", []string{"x"}, []string{"z"})}, nil, []*onnx.ValueInfo{input("x", 0, 10)}, "z"),
			[]string{"no initialiser is a weight"}},
	}
	// a convolution's output is [N, 2, 3, 3] per example flattened: 18
	// values, a vector, so the conv case is fine as logits; make it 3-D
	cases[15].m.Graph.Nodes = cases[15].m.Graph.Nodes[:1]
	cases[15].m.Graph.Outputs[0].Name = "c"
	cases[15].want = []string{`output "c" has shape [2 3 3] per example`, "expected a vector of logits"}
	checkRefusals(t, cases)
}

// fixture is onnx/testdata/tiny.json: four Fashion-MNIST test images and
// PyTorch's logits of them for the tiny networks (scripts/onnx_export.py
// --tiny).
type fixture struct {
	Producer string                 `json:"producer"`
	Images   [][]int                `json:"images"`
	Labels   []int                  `json:"labels"`
	Logits   map[string][][]float64 `json:"logits"`
}

func readFixture(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPyTorchFixtures checks the import of the committed files PyTorch
// exported (a Gemm MLP of fixed batch with a Softmax at the output, a CNN
// with average and max pooling and the shape chain of x.view(x.size(0),
// -1) with a LogSoftmax at the output) against PyTorch's logits.
func TestPyTorchFixtures(t *testing.T) {
	f := readFixture(t)
	data := &datasets.Dataset{N: len(f.Images), D: 784, Classes: 10, Labels: f.Labels}
	for _, im := range f.Images {
		for _, v := range im {
			data.X = append(data.X, float32(float64(v)/255))
		}
	}
	for _, c := range []struct {
		file     string
		layout   string
		stripped string
		compiles bool
	}{
		{"tiny_mlp", "layers.0.weight.T:784x16,layers.0.bias:16,layers.1.weight.T:16x10,layers.1.bias:10", "Softmax", true},
		{"tiny_cnn", "conv1.weight:4x1x5x5,conv1.bias:4,conv2.weight:8x4x3x3,conv2.bias:8,fc.weight.T:288x10,fc.bias:10", "LogSoftmax", true},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := onnx.Load(filepath.Join("testdata", c.file+".onnx"), "", nn.PriorConfig{Precision: 1, FanIn: true})
			if err != nil {
				t.Fatal(err)
			}
			if m.Layout.String() != c.layout {
				t.Errorf("layout %s, want %s", m.Layout, c.layout)
			}
			if !strings.Contains(m.Description, "the output's "+c.stripped+" is stripped") {
				t.Errorf("description does not say the %s is stripped: %s", c.stripped, m.Description)
			}
			if err := compile.Check(m); (err == nil) != c.compiles {
				t.Errorf("compile.Check: %v", err)
			}
			var want []float64
			for _, row := range f.Logits[c.file] {
				want = append(want, row...)
			}
			for _, dt := range []autodiff.DType{autodiff.Float32, autodiff.Float64} {
				got := logitsOf(t, m, autodiff.EngineCompiled, dt, m.Weights, data)
				d := maxAbsDiff(got, want)
				t.Logf("%s: max |logit - PyTorch's| = %.2g", dt, d)
				if d > 1e-4 {
					t.Errorf("%s: logits differ from PyTorch's by %g", dt, d)
				}
			}
		})
	}
}

// TestPrior checks the prior and the initial scales the import gives:
// precision times fan-in, He's scale for weights, zero for biases.
func TestPrior(t *testing.T) {
	m, err := onnx.Load(filepath.Join("testdata", "tiny_cnn.onnx"), "cnn", nn.PriorConfig{Precision: 2, FanIn: true, DF: 3})
	if err != nil {
		t.Fatal(err)
	}
	fanIn := []float64{25, 25, 36, 36, 288, 288}
	for i, p := range m.Layout {
		if p.Prior.Precision != 2*fanIn[i] || p.Prior.DF != 3 {
			t.Errorf("%s: prior %+v, want precision %g, df 3", p.Name, p.Prior, 2*fanIn[i])
		}
		sd := math.Sqrt(2 / fanIn[i])
		if len(p.Shape) == 1 {
			sd = 0
		}
		if math.Abs(p.InitSD-sd) > 1e-15 {
			t.Errorf("%s: initial scale %g, want %g", p.Name, p.InitSD, sd)
		}
	}
	if m.Name != "cnn" || len(m.SHA256) != 64 || len(m.Weights) != m.NumParams() {
		t.Errorf("name %q, digest %q, %d weights for %d parameters", m.Name, m.SHA256, len(m.Weights), m.NumParams())
	}
	if d, err := onnx.FileDigest(filepath.Join("testdata", "tiny_cnn.onnx")); err != nil || d != m.SHA256 {
		t.Errorf("FileDigest %s, %v; the model's %s", d, err, m.SHA256)
	}
}

// TestLeNetTwinBitExact imports a network of the architecture of
// nn.LeNet (--model lenet) as PyTorch exports it (Conv, Relu, MaxPool
// twice, Flatten, Gemm with transB, Relu, Gemm) and checks that the
// compiled engine computes its potential, gradient and logits bit for bit
// as LeNet's: the import builds the same graph, so it runs the same fused
// kernels at the same speed.
func TestLeNetTwinBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	conv := func(name, in, w, b string) *onnx.Node {
		return node("Conv", name, []string{in, w, b}, []string{name}, ints("kernel_shape", 5, 5), ints("pads", 2, 2, 2, 2), ints("strides", 1, 1), ints("dilations", 1, 1), intAttr("group", 1))
	}
	pool := func(name, in string) *onnx.Node {
		return node("MaxPool", name, []string{in}, []string{name}, ints("kernel_shape", 2, 2), ints("pads", 0, 0, 0, 0), ints("strides", 2, 2))
	}
	m := model([]*onnx.Node{
		conv("c1", "x", "conv1.weight", "conv1.bias"), node("Relu", "r1", []string{"c1"}, []string{"r1"}), pool("p1", "r1"),
		conv("c2", "p1", "conv2.weight", "conv2.bias"), node("Relu", "r2", []string{"c2"}, []string{"r2"}), pool("p2", "r2"),
		node("Flatten", "flat", []string{"p2"}, []string{"f"}, intAttr("axis", 1)),
		node("Gemm", "fc1", []string{"f", "fc1.weight", "fc1.bias"}, []string{"h"}, intAttr("transB", 1)),
		node("Relu", "r3", []string{"h"}, []string{"r3"}),
		node("Gemm", "fc2", []string{"r3", "fc2.weight", "fc2.bias"}, []string{"z"}, intAttr("transB", 1)),
	}, []*onnx.Tensor{
		floatInit("conv1.weight", []int64{32, 1, 5, 5}, rng, 0.2), floatInit("conv1.bias", []int64{32}, rng, 0.1),
		floatInit("conv2.weight", []int64{64, 32, 5, 5}, rng, 0.05), floatInit("conv2.bias", []int64{64}, rng, 0.1),
		floatInit("fc1.weight", []int64{256, 3136}, rng, 0.02), floatInit("fc1.bias", []int64{256}, rng, 0.1),
		floatInit("fc2.weight", []int64{10, 256}, rng, 0.1), floatInit("fc2.bias", []int64{10}, rng, 0.1),
	}, []*onnx.ValueInfo{input("x", 0, 1, 28, 28)}, "z")
	prior := nn.PriorConfig{Precision: 0.03, FanIn: true}
	net, err := onnx.Import("lenet twin", m)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := net.Model("twin", prior)
	if err != nil {
		t.Fatal(err)
	}
	lenet, err := nn.LeNet(prior).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	if imp.NumParams() != lenet.NumParams() {
		t.Fatalf("%d parameters, LeNet has %d", imp.NumParams(), lenet.NumParams())
	}
	for i, p := range imp.Layout {
		q := lenet.Layout[i]
		if !reflect.DeepEqual(p.Shape, q.Shape) || p.Prior != q.Prior || p.InitSD != q.InitSD {
			t.Errorf("learnable %d: %s %v %+v %g, LeNet's %s %v %+v %g", i, p.Name, p.Shape, p.Prior, p.InitSD, q.Name, q.Shape, q.Prior, q.InitSD)
		}
	}
	data := imageData(16, 784, rng)
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	var us []float64
	var grads [][]float64
	for _, mod := range []nn.Model{imp, lenet} {
		ev, err := autodiff.NewFor(autodiff.EngineCompiled, mod, 12, autodiff.Float32)
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, mod.NumParams())
		u, err := ev.Eval(imp.Weights, data, idx, 5000, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		us, grads = append(us, u), append(grads, g)
	}
	if us[0] != us[1] || !reflect.DeepEqual(grads[0], grads[1]) {
		t.Errorf("U~ %v and %v, gradients differ by %g: not LeNet's arithmetic", us[0], us[1], maxAbsDiff(grads[0], grads[1]))
	}
	if l1, l2 := logitsOf(t, imp, autodiff.EngineCompiled, autodiff.Float32, imp.Weights, data), logitsOf(t, lenet, autodiff.EngineCompiled, autodiff.Float32, imp.Weights, data); !reflect.DeepEqual(l1, l2) {
		t.Errorf("logits differ by %g", maxAbsDiff(l1, l2))
	}
}
