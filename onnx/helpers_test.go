package onnx_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/onnx"
)

// Builders of small ONNX graphs for the tests.

func floatInit(name string, dims []int64, rng *rand.Rand, scale float64) *onnx.Tensor {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return &onnx.Tensor{Name: name, Dims: dims, DataType: onnx.TypeFloat, FloatData: v}
}

func intInit(name string, vals ...int64) *onnx.Tensor {
	return &onnx.Tensor{Name: name, Dims: []int64{int64(len(vals))}, DataType: onnx.TypeInt64, Int64Data: vals}
}

func ints(name string, v ...int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInts, Ints: v}
}

func intAttr(name string, v int64) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInt, I: v}
}

func node(op, name string, in, out []string, a ...*onnx.Attribute) *onnx.Node {
	return &onnx.Node{OpType: op, Name: name, Inputs: in, Outputs: out, Attributes: a}
}

func input(name string, dims ...int64) *onnx.ValueInfo {
	v := &onnx.ValueInfo{Name: name, ElemType: onnx.TypeFloat, HasShape: true}
	for i, d := range dims {
		if i == 0 && d == 0 {
			v.Shape = append(v.Shape, onnx.Dim{Param: "N"})
		} else {
			v.Shape = append(v.Shape, onnx.Dim{Value: d})
		}
	}
	return v
}

func model(nodes []*onnx.Node, inits []*onnx.Tensor, in []*onnx.ValueInfo, out ...string) *onnx.Model {
	g := &onnx.Graph{Name: "test", Nodes: nodes, Initializers: inits, Inputs: in}
	for _, o := range out {
		g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: o, ElemType: onnx.TypeFloat})
	}
	return &onnx.Model{IRVersion: 8, ProducerName: "go test", Opsets: []onnx.Opset{{Version: 14}}, Graph: g}
}

// imageData returns n examples of d features in [0, 1) and 10 classes.
func imageData(n, d int, rng *rand.Rand) *datasets.Dataset {
	ds := &datasets.Dataset{N: n, D: d, Classes: 10, X: make([]float32, n*d), Labels: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = float32(rng.Float64())
	}
	for i := range ds.Labels {
		ds.Labels[i] = i % 10
	}
	return ds
}

// logitsOf returns the model's logits ([N, K] row-major) of data at theta
// on engine in dtype.
func logitsOf(t testing.TB, m nn.Model, engine autodiff.Engine, dt autodiff.DType, theta []float64, data *datasets.Dataset) []float64 {
	t.Helper()
	batch := min(data.N, 100)
	ev, err := autodiff.NewPredictorFor(engine, m, batch, dt)
	if err != nil {
		t.Fatal(err)
	}
	lg, ok := ev.(interface {
		Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error
	})
	if !ok {
		t.Fatalf("evaluator %T reports no logits", ev)
	}
	out := make([]float64, data.N*m.Outputs)
	idx := make([]int, 0, batch)
	for i := 0; i < data.N; i += batch {
		idx = idx[:0]
		for j := i; j < min(i+batch, data.N); j++ {
			idx = append(idx, j)
		}
		if err := lg.Logits(theta, data, idx, out[i*m.Outputs:(i+len(idx))*m.Outputs]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// maxAbsDiff returns the largest |a_i - b_i|.
func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// The reference: an interpreter of the supported layers on one example at
// a time, in float64, written from ONNX's operator definitions.

type refTensor struct {
	shape []int
	v     []float64
}

func (r refTensor) at(i ...int) float64 {
	off := 0
	for k, x := range i {
		off = off*r.shape[k] + x
	}
	return r.v[off]
}

// refForward runs m on one example x (its shape without the batch) and
// returns the graph output's values.
func refForward(m *onnx.Model, x refTensor) ([]float64, error) {
	vals := map[string]refTensor{}
	ints := map[string][]int64{}
	for _, t := range m.Graph.Initializers {
		if t.DataType == onnx.TypeInt64 {
			v, _ := t.Ints()
			ints[t.Name] = v
			continue
		}
		v, err := t.Floats()
		if err != nil {
			return nil, err
		}
		s := make([]int, len(t.Dims))
		for i, d := range t.Dims {
			s[i] = int(d)
		}
		vals[t.Name] = refTensor{s, v}
	}
	in := m.Graph.Inputs[0].Name
	vals[in] = x
	attr := func(n *onnx.Node, name string, def []int64) []int64 {
		for _, a := range n.Attributes {
			if a.Name == name {
				if a.Type == onnx.AttrInt {
					return []int64{a.I}
				}
				return a.Ints
			}
		}
		return def
	}
	for _, n := range m.Graph.Nodes {
		get := func(i int) refTensor { return vals[n.Inputs[i]] }
		var y refTensor
		switch n.OpType {
		case "Gemm", "MatMul":
			a, w := get(0), get(1)
			tb := n.OpType == "Gemm" && attr(n, "transB", []int64{0})[0] == 1
			k, o := w.shape[0], w.shape[1]
			if tb {
				k, o = o, k
			}
			y = refTensor{[]int{o}, make([]float64, o)}
			for j := 0; j < o; j++ {
				s := 0.0
				for i := 0; i < k; i++ {
					if tb {
						s += a.v[i] * w.at(j, i)
					} else {
						s += a.v[i] * w.at(i, j)
					}
				}
				if n.OpType == "Gemm" && len(n.Inputs) > 2 {
					s += get(2).v[j]
				}
				y.v[j] = s
			}
		case "Add":
			a, b := get(0), get(1)
			if len(a.v) < len(b.v) {
				a, b = b, a
			}
			y = refTensor{a.shape, make([]float64, len(a.v))}
			per := len(a.v) / len(b.v) // a bias per channel (C,1,1 on C,H,W) or the same shape
			if len(a.shape) == 1 {
				per = 1
			}
			for i := range a.v {
				y.v[i] = a.v[i] + b.v[i/per%len(b.v)]
			}
		case "Conv":
			a, w := get(0), get(1)
			p, s, d := attr(n, "pads", []int64{0, 0, 0, 0}), attr(n, "strides", []int64{1, 1}), attr(n, "dilations", []int64{1, 1})
			c, h, wd := a.shape[0], a.shape[1], a.shape[2]
			o, kh, kw := w.shape[0], w.shape[2], w.shape[3]
			oh := (h+int(p[0]+p[2])-int(d[0])*(kh-1)-1)/int(s[0]) + 1
			ow := (wd+int(p[1]+p[3])-int(d[1])*(kw-1)-1)/int(s[1]) + 1
			y = refTensor{[]int{o, oh, ow}, make([]float64, o*oh*ow)}
			for oc := 0; oc < o; oc++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						sum := 0.0
						if len(n.Inputs) > 2 {
							sum = get(2).v[oc]
						}
						for ic := 0; ic < c; ic++ {
							for u := 0; u < kh; u++ {
								for v := 0; v < kw; v++ {
									r, q := i*int(s[0])-int(p[0])+u*int(d[0]), j*int(s[1])-int(p[1])+v*int(d[1])
									if r >= 0 && r < h && q >= 0 && q < wd {
										sum += a.at(ic, r, q) * w.at(oc, ic, u, v)
									}
								}
							}
						}
						y.v[(oc*oh+i)*ow+j] = sum
					}
				}
			}
		case "MaxPool", "AveragePool":
			a := get(0)
			k, p, s := attr(n, "kernel_shape", nil), attr(n, "pads", []int64{0, 0, 0, 0}), attr(n, "strides", []int64{1, 1})
			c, h, wd := a.shape[0], a.shape[1], a.shape[2]
			oh := (h+int(p[0]+p[2])-int(k[0]))/int(s[0]) + 1
			ow := (wd+int(p[1]+p[3])-int(k[1]))/int(s[1]) + 1
			y = refTensor{[]int{c, oh, ow}, make([]float64, c*oh*ow)}
			for ch := 0; ch < c; ch++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						best, sum, cnt := math.Inf(-1), 0.0, 0
						for u := 0; u < int(k[0]); u++ {
							for v := 0; v < int(k[1]); v++ {
								r, q := i*int(s[0])-int(p[0])+u, j*int(s[1])-int(p[1])+v
								if r >= 0 && r < h && q >= 0 && q < wd {
									best = max(best, a.at(ch, r, q))
									sum += a.at(ch, r, q)
									cnt++
								}
							}
						}
						if n.OpType == "MaxPool" {
							y.v[(ch*oh+i)*ow+j] = best
						} else {
							y.v[(ch*oh+i)*ow+j] = sum / float64(cnt)
						}
					}
				}
			}
		case "Relu", "Tanh", "Sigmoid":
			a := get(0)
			y = refTensor{a.shape, make([]float64, len(a.v))}
			for i, v := range a.v {
				switch n.OpType {
				case "Relu":
					y.v[i] = max(v, 0)
				case "Tanh":
					y.v[i] = math.Tanh(v)
				default:
					y.v[i] = 1 / (1 + math.Exp(-v))
				}
			}
		case "Flatten", "Reshape", "Identity", "Softmax", "LogSoftmax":
			// row-major values stay; the output's softmax is stripped by
			// the import, so the reference stops before it too
			a := get(0)
			y = refTensor{[]int{len(a.v)}, a.v}
		case "Shape", "Gather", "Unsqueeze", "Concat", "Constant":
			ints[n.Outputs[0]] = nil // folded shapes: the reshape keeps row-major values
			continue
		default:
			return nil, fmt.Errorf("reference: no %s", n.OpType)
		}
		vals[n.Outputs[0]] = y
	}
	return vals[m.Graph.Outputs[0].Name].v, nil
}
