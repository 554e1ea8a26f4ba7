package onnx_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ptsghmc/ptsghmc/onnx"
)

// refusal is a graph the import must refuse with an error of one line
// naming the file (net.onnx) and holding every string of want.
type refusal struct {
	name string
	m    *onnx.Model
	want []string
}

// checkRefusals encodes, decodes and imports every case's graph and
// checks its error.
func checkRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := onnx.Decode(c.m.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			if _, err = onnx.Import("net.onnx", m); err == nil {
				t.Fatal("imported")
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("error of more than one line")
			}
			for _, w := range append(c.want, "onnx net.onnx: ") {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q", w)
				}
			}
		})
	}
}

// editMLP returns smallMLP edited by edit.
func editMLP(rng *rand.Rand, edit func(m *onnx.Model)) *onnx.Model {
	m := smallMLP(rng)
	edit(m)
	return m
}

// TestIntsHugeDims checks that an integer tensor whose dims claim more
// values than its data hold is an error before anything of the claimed
// size is allocated: dims [2147483647] and no data, some 20 bytes of
// protobuf, must not make the import allocate 16 GiB.
func TestIntsHugeDims(t *testing.T) {
	huge := []int64{math.MaxInt32}
	for _, c := range []struct {
		t    *onnx.Tensor
		want string
	}{
		{&onnx.Tensor{Name: "no data", Dims: huge, DataType: onnx.TypeInt64}, "0 int64 values for dims [2147483647]"},
		{&onnx.Tensor{Name: "raw", Dims: huge, DataType: onnx.TypeInt64, RawData: make([]byte, 8)}, "8 bytes of raw data"},
		{&onnx.Tensor{Name: "int32", Dims: huge, DataType: onnx.TypeInt32, Int32Data: []int32{1}}, "1 int32 values"},
		{&onnx.Tensor{Name: "bool", Dims: []int64{math.MaxInt32 / 2, 2}, DataType: onnx.TypeBool}, "0 bool values"},
	} {
		t.Run(c.t.Name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := c.t.Ints()
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"`+c.t.Name+`"`) {
				t.Errorf("got %v, want an error naming the tensor with %q", err, c.want)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
				t.Errorf("%d bytes allocated for a tensor of no data", d)
			}
		})
	}
}

// TestImportHugeIntTensors checks that an integer initialiser or Constant
// of huge dims and no data is refused (not allocated) at import.
func TestImportHugeIntTensors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	huge := &onnx.Tensor{Name: "huge", Dims: []int64{math.MaxInt32}, DataType: onnx.TypeInt64}
	checkRefusals(t, []refusal{
		{"initialiser", editMLP(rng, func(m *onnx.Model) {
			m.Graph.Initializers = append(m.Graph.Initializers, huge)
		}), []string{`initialiser tensor "huge"`, "0 int64 values for dims [2147483647]"}},
		{"Constant", editMLP(rng, func(m *onnx.Model) {
			c := node("Constant", "const", nil, []string{"k"}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, T: huge})
			m.Graph.Nodes = append([]*onnx.Node{c}, m.Graph.Nodes...)
		}), []string{`node "const" (Constant)`, "0 int64 values for dims [2147483647]"}},
	})
}

// poolNet is x [N, 1, 4, 4] -> op of attributes a -> Flatten -> MatMul
// of a [16, 10] weight.
func poolNet(rng *rand.Rand, op string, a ...*onnx.Attribute) *onnx.Model {
	return model([]*onnx.Node{
		node(op, "pool", []string{"x"}, []string{"p"}, a...),
		node("Flatten", "flat", []string{"p"}, []string{"f"}),
		node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
	}, []*onnx.Tensor{floatInit("w", []int64{16, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 1, 4, 4)}, "z")
}

// TestImportPoolPadding checks that pooling padded by more than half its
// kernel, which makes windows of padding alone, is refused, and that
// padding by half the kernel, as PyTorch allows, is imported.
func TestImportPoolPadding(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	checkRefusals(t, []refusal{
		{"max pooling padded as wide as the kernel", poolNet(rng, "MaxPool", ints("kernel_shape", 2, 2), ints("pads", 2, 2, 2, 2), ints("strides", 2, 2)),
			[]string{`node "pool" (MaxPool)`, "pads [2 2 2 2] with kernel_shape [2 2]", "at most [1, 1]"}},
		{"average pooling padded as wide as the kernel", poolNet(rng, "AveragePool", ints("kernel_shape", 2, 2), ints("pads", 2, 2, 2, 2), ints("strides", 2, 2)),
			[]string{`node "pool" (AveragePool)`, "pads [2 2 2 2] with kernel_shape [2 2]"}},
		{"a 1x1 window padded by 1", poolNet(rng, "MaxPool", ints("kernel_shape", 1, 1), ints("pads", 1, 1, 1, 1)),
			[]string{`node "pool" (MaxPool)`, "pads [1 1 1 1] with kernel_shape [1 1]"}},
	})
	// 4x4, kernel 2, pads 1, strides 2 -> 3x3
	m := model([]*onnx.Node{
		node("MaxPool", "pool", []string{"x"}, []string{"p"}, ints("kernel_shape", 2, 2), ints("pads", 1, 1, 1, 1), ints("strides", 2, 2)),
		node("Flatten", "flat", []string{"p"}, []string{"f"}),
		node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
	}, []*onnx.Tensor{floatInit("w", []int64{9, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 1, 4, 4)}, "z")
	if _, err := onnx.Import("net.onnx", m); err != nil {
		t.Errorf("pads of half the kernel: %v", err)
	}
}

// TestImportSizeWraps checks that sizes whose products wrap in int64
// (4611686018427388100 x 4 is 784) are refused: an input of more than
// MaxInt32 values per example, a Reshape to dimensions larger than the
// example.
func TestImportSizeWraps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const wrap = 4611686018427388100
	checkRefusals(t, []refusal{
		{"input shape", model([]*onnx.Node{
			node("Flatten", "flat", []string{"x"}, []string{"f"}),
			node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
		}, []*onnx.Tensor{floatInit("w", []int64{784, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, wrap, 4)}, "z"),
			[]string{`input "x" has shape [N, 4611686018427388100, 4]`, "more than 2147483647 values per example"}},
		{"reshape", model([]*onnx.Node{
			node("Reshape", "view", []string{"x", "target"}, []string{"r"}),
			node("Flatten", "flat", []string{"r"}, []string{"f"}),
			node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
		}, []*onnx.Tensor{intInit("target", 0, wrap, 4), floatInit("w", []int64{784, 10}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 784)}, "z"),
			[]string{`node "view" (Reshape)`, "dimension 4611686018427388100 is larger than the 784 values per example"}},
	})
}

// TestImportUnreadTypes checks that a node using an initialiser of an
// element type the import does not read says so, rather than that no
// node makes it.
func TestImportUnreadTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	checkRefusals(t, []refusal{
		{"float16 weights", editMLP(rng, func(m *onnx.Model) {
			w := m.Graph.Initializers[0]
			w.DataType, w.FloatData, w.RawData = 10, nil, make([]byte, 2*5*12)
		}), []string{`node "fc1" (Gemm)`, `initialiser "w1" is float16: expected float or double`}},
		{"bfloat16 bias", editMLP(rng, func(m *onnx.Model) {
			b := m.Graph.Initializers[1]
			b.DataType, b.FloatData, b.RawData = 16, nil, make([]byte, 2*5)
		}), []string{`node "fc1" (Gemm)`, `initialiser "b1" is bfloat16: expected float or double`}},
		{"uint64 shape", model([]*onnx.Node{
			node("Reshape", "view", []string{"x", "target"}, []string{"r"}),
			node("MatMul", "fc", []string{"r", "w"}, []string{"z"}),
		}, []*onnx.Tensor{{Name: "target", Dims: []int64{2}, DataType: 13, RawData: make([]byte, 16)}, floatInit("w", []int64{12, 10}, rng, 1)},
			[]*onnx.ValueInfo{input("x", 0, 12)}, "z"),
			[]string{`node "view" (Reshape)`, `initialiser "target" is uint64`}},
	})
}

// TestImportBiasPerChannel checks that a [C] bias on [N, C, H, W] (which
// ONNX adds along W) is refused with the channel count in the message.
func TestImportBiasPerChannel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	// x [N, 1, 5, 5] -> Conv (2 channels) -> [N, 2, 3, 3]
	checkRefusals(t, []refusal{{"a [C] bias", model([]*onnx.Node{
		node("Conv", "conv", []string{"x", "cw"}, []string{"c"}),
		node("Add", "bias", []string{"c", "cb"}, []string{"cz"}),
		node("Flatten", "flat", []string{"cz"}, []string{"f"}),
		node("MatMul", "fc", []string{"f", "w"}, []string{"z"}),
	}, []*onnx.Tensor{floatInit("cw", []int64{2, 1, 3, 3}, rng, 1), floatInit("cb", []int64{2}, rng, 1), floatInit("w", []int64{18, 10}, rng, 1)},
		[]*onnx.ValueInfo{input("x", 0, 1, 5, 5)}, "z"),
		[]string{`node "bias" (Add)`, "of dims [2] to activations of [2 3 3] per example", "expected a bias, [2, 1, 1] per channel on [N, 2, H, W]"}}})
}

// TestImportAttributeTypes checks that an attribute of another type than
// its operator's is refused, naming the node and the attribute, rather
// than read as its default (a float transB read as 0).
func TestImportAttributeTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	checkRefusals(t, []refusal{
		{"transB as a float", editMLP(rng, func(m *onnx.Model) {
			m.Graph.Nodes[0].Attributes = []*onnx.Attribute{{Name: "transB", Type: onnx.AttrFloat, F: 1}}
		}), []string{`node "fc1" (Gemm)`, `attribute "transB" is of type FLOAT: expected INT`}},
		{"alpha as an int", editMLP(rng, func(m *onnx.Model) {
			m.Graph.Nodes[0].Attributes = append(m.Graph.Nodes[0].Attributes, intAttr("alpha", 1))
		}), []string{`node "fc1" (Gemm)`, `attribute "alpha" is of type INT: expected FLOAT`}},
		{"pads as an int", poolNet(rng, "MaxPool", ints("kernel_shape", 2, 2), intAttr("pads", 0)),
			[]string{`node "pool" (MaxPool)`, `attribute "pads" is of type INT: expected INTS`}},
		{"auto_pad as ints", poolNet(rng, "MaxPool", ints("kernel_shape", 2, 2), ints("auto_pad", 1)),
			[]string{`node "pool" (MaxPool)`, `attribute "auto_pad" is of type INTS: expected STRING`}},
		{"a Constant's value_ints as an int", editMLP(rng, func(m *onnx.Model) {
			c := node("Constant", "const", nil, []string{"k"}, intAttr("value_ints", 3))
			m.Graph.Nodes = append([]*onnx.Node{c}, m.Graph.Nodes...)
		}), []string{`node "const" (Constant)`, `attribute "value_ints" is of type INT: expected INTS`}},
	})
}

// TestDecodeValueInfoPath checks that an error in a graph's input or
// output names its place in its own list (output[0] after two inputs).
func TestDecodeValueInfoPath(t *testing.T) {
	good := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v")
	bad := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7) // a name of the wrong wire type
	value := func(g []byte, field protowire.Number, vi []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(g, field, protowire.BytesType), vi)
	}
	for _, c := range []struct {
		name string
		g    []byte
		want string
	}{
		{"output after two inputs", value(value(value(nil, 11, good), 11, good), 12, bad), "ModelProto.graph.output[0].name"},
		{"second input after two outputs", value(value(value(value(nil, 12, good), 12, good), 11, good), 11, bad), "ModelProto.graph.input[1].name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := protowire.AppendBytes(protowire.AppendTag(nil, 7, protowire.BytesType), c.g)
			_, err := onnx.Decode(b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error at %s", err, c.want)
			}
		})
	}
}

// TestImportStridesMessage checks that a refused pooling's strides and
// dilations are printed as the file holds them (the attribute's struct
// was printed before, "&{...}").
func TestImportStridesMessage(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	checkRefusals(t, []refusal{
		{"three strides", poolNet(rng, "MaxPool", ints("kernel_shape", 2, 2), ints("strides", 2, 2, 2)),
			[]string{`node "pool" (MaxPool)`, "strides [2 2 2], dilations absent: expected positive strides and no dilation"}},
		{"dilated pooling", poolNet(rng, "MaxPool", ints("kernel_shape", 2, 2), ints("dilations", 2, 2)),
			[]string{"strides absent, dilations [2 2]: expected"}},
		{"dilations of another type", poolNet(rng, "MaxPool", ints("kernel_shape", 2, 2), intAttr("dilations", 2)),
			[]string{`attribute "dilations" is of type INT: expected INTS`}},
	})
}

// TestImportConvPadding checks that a convolution's pads are bounded: a
// pad beyond maxPad, and one within it whose output would hold more than
// MaxInt32 values per example (a few bytes of file asking for gigabytes),
// are refused, naming the node.
func TestImportConvPadding(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	conv := func(pad int64, outCh int64) *onnx.Model {
		return model([]*onnx.Node{
			node("Conv", "conv", []string{"x", "w"}, []string{"c"}, ints("pads", pad, pad, pad, pad)),
			node("Flatten", "flat", []string{"c"}, []string{"z"}),
		}, []*onnx.Tensor{floatInit("w", []int64{outCh, 1, 1, 1}, rng, 1)}, []*onnx.ValueInfo{input("x", 0, 1, 5, 5)}, "z")
	}
	checkRefusals(t, []refusal{
		{"a pad of 2^40", conv(1<<40, 1), []string{`node "conv" (Conv)`, "more than 65536 on an axis"}},
		{"an output of 8 x 131077^2 values", conv(1<<16, 8), []string{`node "conv" (Conv)`, "output of 8 x 131077 x 131077 values per example"}},
	})
}
