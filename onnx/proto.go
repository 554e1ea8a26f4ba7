package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages below are the part of onnx.proto (ONNX's ModelProto and the
// messages it holds) that describes a feed-forward network: fields this
// package does not read are skipped when decoding and not written when
// encoding. Field numbers are onnx.proto's.

// Model is an ONNX ModelProto: the graph and the operator sets it uses.
type Model struct {
	IRVersion       int64
	ProducerName    string
	ProducerVersion string
	Opsets          []Opset
	Graph           *Graph
}

// Opset is an OperatorSetIdProto: an operator domain ("" is ONNX's own)
// and its version.
type Opset struct {
	Domain  string
	Version int64
}

// Graph is a GraphProto: nodes in topological order, the initialisers
// (named constant tensors: a network's weights), and the graph's inputs
// and outputs.
type Graph struct {
	Name         string
	Nodes        []*Node
	Initializers []*Tensor
	Inputs       []*ValueInfo
	Outputs      []*ValueInfo
}

// Node is a NodeProto: one operator applied to named values.
type Node struct {
	Name       string
	OpType     string
	Domain     string
	Inputs     []string // "" is an omitted optional input
	Outputs    []string
	Attributes []*Attribute
}

// Attribute types of AttributeProto.type.
const (
	AttrFloat   = 1
	AttrInt     = 2
	AttrString  = 3
	AttrTensor  = 4
	AttrGraph   = 5
	AttrFloats  = 6
	AttrInts    = 7
	AttrStrings = 8
)

// Attribute is an AttributeProto: a node's named setting.
type Attribute struct {
	Name   string
	Type   int32
	F      float32
	I      int64
	S      []byte
	T      *Tensor
	Floats []float32
	Ints   []int64
}

// Element types of TensorProto.data_type (TensorProto.DataType).
const (
	TypeFloat  = 1
	TypeUint8  = 2
	TypeInt8   = 3
	TypeInt32  = 6
	TypeInt64  = 7
	TypeBool   = 9
	TypeDouble = 11
)

// Tensor is a TensorProto: a named constant of shape Dims whose values are
// in RawData (little-endian) or in the typed field of its data type.
type Tensor struct {
	Name       string
	Dims       []int64
	DataType   int32
	FloatData  []float32
	Int32Data  []int32
	Int64Data  []int64
	DoubleData []float64
	RawData    []byte
	// External is set when the values live in a file beside the model
	// (data_location EXTERNAL), which this package does not read.
	External bool
}

// ValueInfo is a ValueInfoProto of a tensor: its name, element type and
// shape, each dimension a number (Dim) or a symbol (Param, e.g. "batch").
type ValueInfo struct {
	Name     string
	ElemType int32
	Shape    []Dim
	HasShape bool
}

// Dim is one dimension of a ValueInfo's shape: Value when known, else
// Param names it (or neither: unknown).
type Dim struct {
	Value int64
	Param string
}

// wireError is a malformed field: where it is and what is wrong.
type wireError struct {
	at   int // byte offset in the file
	path string
	what string
}

func (e *wireError) Error() string {
	return fmt.Sprintf("corrupt protobuf at byte %d (%s): %s", e.at, e.path, e.what)
}

// message is a protobuf message being decoded: its bytes, their offset in
// the file and its place in the model, for errors.
type message struct {
	b    []byte
	base int
	path string
}

// fields calls f for every field of m with its number, wire type and the
// bytes of its value (for length-delimited fields, the content; for
// varints and fixed fields, the encoded value), and its offset.
func (m message) fields(f func(num protowire.Number, typ protowire.Type, v []byte, at int) error) error {
	b, off := m.b, 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return &wireError{m.base + off, m.path, "bad field tag: " + protowire.ParseError(n).Error()}
		}
		if num < 1 {
			return &wireError{m.base + off, m.path, fmt.Sprintf("field number %d", num)}
		}
		vn := protowire.ConsumeFieldValue(num, typ, b[n:])
		if vn < 0 {
			return &wireError{m.base + off, m.path, fmt.Sprintf("field %d: %v (the file is truncated or corrupt)", num, protowire.ParseError(vn))}
		}
		v := b[n : n+vn]
		at := m.base + off + n
		if typ == protowire.BytesType {
			_, ln := protowire.ConsumeVarint(v)
			v, at = v[ln:], at+ln
		}
		if err := f(num, typ, v, at); err != nil {
			return err
		}
		b, off = b[n+vn:], off+n+vn
	}
	return nil
}

// sub returns the message held in a length-delimited field.
func (m message) sub(v []byte, at int, path string) message {
	return message{b: v, base: at, path: m.path + "." + path}
}

// errWire is returned by the value readers for a field of the wrong wire
// type.
var errWire = errors.New("wrong wire type")

func wantType(m message, at int, field string, typ, want protowire.Type) error {
	if typ != want {
		return &wireError{at, m.path + "." + field, fmt.Sprintf("wire type %d, expected %d", typ, want)}
	}
	return nil
}

func varint(v []byte) uint64 {
	x, _ := protowire.ConsumeVarint(v)
	return x
}

// int64s appends a repeated int64 field's values: one varint, or a packed
// run of them.
func int64s(m message, at int, field string, typ protowire.Type, v []byte, out []int64) ([]int64, error) {
	switch typ {
	case protowire.VarintType:
		return append(out, int64(varint(v))), nil
	case protowire.BytesType:
		for len(v) > 0 {
			x, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return nil, &wireError{at, m.path + "." + field, "bad packed varint"}
			}
			out, v = append(out, int64(x)), v[n:]
		}
		return out, nil
	}
	return nil, &wireError{at, m.path + "." + field, errWire.Error()}
}

// float32s appends a repeated float field's values: one fixed32, or a
// packed run of them.
func float32s(m message, at int, field string, typ protowire.Type, v []byte, out []float32) ([]float32, error) {
	switch {
	case typ == protowire.Fixed32Type:
		return append(out, math.Float32frombits(binary.LittleEndian.Uint32(v))), nil
	case typ == protowire.BytesType && len(v)%4 == 0:
		for i := 0; i < len(v); i += 4 {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(v[i:])))
		}
		return out, nil
	}
	return nil, &wireError{at, m.path + "." + field, "not a float or a packed run of floats"}
}

// float64s appends a repeated double field's values.
func float64s(m message, at int, field string, typ protowire.Type, v []byte, out []float64) ([]float64, error) {
	switch {
	case typ == protowire.Fixed64Type:
		return append(out, math.Float64frombits(binary.LittleEndian.Uint64(v))), nil
	case typ == protowire.BytesType && len(v)%8 == 0:
		for i := 0; i < len(v); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(v[i:])))
		}
		return out, nil
	}
	return nil, &wireError{at, m.path + "." + field, "not a double or a packed run of doubles"}
}

// Decode decodes a serialised ModelProto (the bytes of a .onnx file). It
// reads the fields a feed-forward network needs and skips the others; a
// file that is not a well-formed protobuf (truncated, corrupt) is an
// error naming the byte and the field where decoding failed, as is a model
// without a graph or an operator set.
func Decode(b []byte) (*Model, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty file: expected an ONNX ModelProto")
	}
	m := &Model{}
	root := message{b: b, path: "ModelProto"}
	err := root.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		switch num {
		case 1:
			if err := wantType(root, at, "ir_version", typ, protowire.VarintType); err != nil {
				return err
			}
			m.IRVersion = int64(varint(v))
		case 2, 3:
			if err := wantType(root, at, "producer", typ, protowire.BytesType); err != nil {
				return err
			}
			if num == 2 {
				m.ProducerName = string(v)
			} else {
				m.ProducerVersion = string(v)
			}
		case 7:
			if err := wantType(root, at, "graph", typ, protowire.BytesType); err != nil {
				return err
			}
			g, err := decodeGraph(root.sub(v, at, "graph"))
			if err != nil {
				return err
			}
			m.Graph = g
		case 8:
			if err := wantType(root, at, "opset_import", typ, protowire.BytesType); err != nil {
				return err
			}
			o, err := decodeOpset(root.sub(v, at, fmt.Sprintf("opset_import[%d]", len(m.Opsets))))
			if err != nil {
				return err
			}
			m.Opsets = append(m.Opsets, o)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case m.Graph == nil:
		return nil, fmt.Errorf("no graph in the ModelProto (%d bytes): not an ONNX model, or truncated", len(b))
	case len(m.Opsets) == 0:
		return nil, fmt.Errorf("no opset_import in the ModelProto (%d bytes): not an ONNX model, or truncated", len(b))
	}
	return m, nil
}

func decodeOpset(m message) (Opset, error) {
	var o Opset
	err := m.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		switch num {
		case 1:
			if err := wantType(m, at, "domain", typ, protowire.BytesType); err != nil {
				return err
			}
			o.Domain = string(v)
		case 2:
			if err := wantType(m, at, "version", typ, protowire.VarintType); err != nil {
				return err
			}
			o.Version = int64(varint(v))
		}
		return nil
	})
	return o, err
}

func decodeGraph(m message) (*Graph, error) {
	g := &Graph{}
	err := m.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		if num != 1 && num != 2 && num != 5 && num != 11 && num != 12 {
			return nil
		}
		if err := wantType(m, at, fmt.Sprintf("field %d", num), typ, protowire.BytesType); err != nil {
			return err
		}
		switch num {
		case 1:
			n, err := decodeNode(m.sub(v, at, fmt.Sprintf("node[%d]", len(g.Nodes))))
			if err != nil {
				return err
			}
			g.Nodes = append(g.Nodes, n)
		case 2:
			g.Name = string(v)
		case 5:
			t, err := decodeTensor(m.sub(v, at, fmt.Sprintf("initializer[%d]", len(g.Initializers))))
			if err != nil {
				return err
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12:
			name, i := "input", len(g.Inputs)
			if num == 12 {
				name, i = "output", len(g.Outputs)
			}
			vi, err := decodeValueInfo(m.sub(v, at, fmt.Sprintf("%s[%d]", name, i)))
			if err != nil {
				return err
			}
			if num == 11 {
				g.Inputs = append(g.Inputs, vi)
			} else {
				g.Outputs = append(g.Outputs, vi)
			}
		}
		return nil
	})
	return g, err
}

func decodeNode(m message) (*Node, error) {
	n := &Node{}
	err := m.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		switch num {
		case 1, 2, 3, 4, 7:
			if err := wantType(m, at, fmt.Sprintf("field %d", num), typ, protowire.BytesType); err != nil {
				return err
			}
			switch num {
			case 1:
				n.Inputs = append(n.Inputs, string(v))
			case 2:
				n.Outputs = append(n.Outputs, string(v))
			case 3:
				n.Name = string(v)
			case 4:
				n.OpType = string(v)
			case 7:
				n.Domain = string(v)
			}
		case 5:
			if err := wantType(m, at, "attribute", typ, protowire.BytesType); err != nil {
				return err
			}
			a, err := decodeAttribute(m.sub(v, at, fmt.Sprintf("attribute[%d]", len(n.Attributes))))
			if err != nil {
				return err
			}
			n.Attributes = append(n.Attributes, a)
		}
		return nil
	})
	return n, err
}

func decodeAttribute(m message) (*Attribute, error) {
	a := &Attribute{}
	err := m.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		var err error
		switch num {
		case 1:
			err = wantType(m, at, "name", typ, protowire.BytesType)
			a.Name = string(v)
		case 20:
			err = wantType(m, at, "type", typ, protowire.VarintType)
			a.Type = int32(varint(v))
		case 2:
			if err = wantType(m, at, "f", typ, protowire.Fixed32Type); err == nil {
				a.F = math.Float32frombits(binary.LittleEndian.Uint32(v))
			}
		case 3:
			err = wantType(m, at, "i", typ, protowire.VarintType)
			a.I = int64(varint(v))
		case 4:
			err = wantType(m, at, "s", typ, protowire.BytesType)
			a.S = append([]byte(nil), v...)
		case 5:
			if err = wantType(m, at, "t", typ, protowire.BytesType); err == nil {
				a.T, err = decodeTensor(m.sub(v, at, "t"))
			}
		case 7:
			a.Floats, err = float32s(m, at, "floats", typ, v, a.Floats)
		case 8:
			a.Ints, err = int64s(m, at, "ints", typ, v, a.Ints)
		}
		return err
	})
	return a, err
}

func decodeTensor(m message) (*Tensor, error) {
	t := &Tensor{}
	err := m.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		var err error
		switch num {
		case 1:
			t.Dims, err = int64s(m, at, "dims", typ, v, t.Dims)
		case 2:
			err = wantType(m, at, "data_type", typ, protowire.VarintType)
			t.DataType = int32(varint(v))
		case 4:
			t.FloatData, err = float32s(m, at, "float_data", typ, v, t.FloatData)
		case 5:
			var xs []int64
			xs, err = int64s(m, at, "int32_data", typ, v, nil)
			for _, x := range xs {
				t.Int32Data = append(t.Int32Data, int32(x))
			}
		case 7:
			t.Int64Data, err = int64s(m, at, "int64_data", typ, v, t.Int64Data)
		case 8:
			err = wantType(m, at, "name", typ, protowire.BytesType)
			t.Name = string(v)
		case 9:
			err = wantType(m, at, "raw_data", typ, protowire.BytesType)
			t.RawData = append([]byte(nil), v...)
		case 10:
			t.DoubleData, err = float64s(m, at, "double_data", typ, v, t.DoubleData)
		case 13:
			t.External = true
		case 14:
			err = wantType(m, at, "data_location", typ, protowire.VarintType)
			t.External = t.External || varint(v) == 1
		}
		return err
	})
	return t, err
}

func decodeValueInfo(m message) (*ValueInfo, error) {
	vi := &ValueInfo{}
	err := m.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		switch num {
		case 1:
			if err := wantType(m, at, "name", typ, protowire.BytesType); err != nil {
				return err
			}
			vi.Name = string(v)
		case 2: // TypeProto
			if err := wantType(m, at, "type", typ, protowire.BytesType); err != nil {
				return err
			}
			tp := m.sub(v, at, "type")
			return tp.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
				if num != 1 { // tensor_type; sequences and maps are left undescribed
					return nil
				}
				if err := wantType(tp, at, "tensor_type", typ, protowire.BytesType); err != nil {
					return err
				}
				tt := tp.sub(v, at, "tensor_type")
				return tt.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
					switch num {
					case 1:
						if err := wantType(tt, at, "elem_type", typ, protowire.VarintType); err != nil {
							return err
						}
						vi.ElemType = int32(varint(v))
					case 2:
						if err := wantType(tt, at, "shape", typ, protowire.BytesType); err != nil {
							return err
						}
						vi.HasShape = true
						sh := tt.sub(v, at, "shape")
						return sh.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
							if num != 1 {
								return nil
							}
							if err := wantType(sh, at, "dim", typ, protowire.BytesType); err != nil {
								return err
							}
							var d Dim
							dm := sh.sub(v, at, "dim")
							err := dm.fields(func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
								switch num {
								case 1:
									if err := wantType(dm, at, "dim_value", typ, protowire.VarintType); err != nil {
										return err
									}
									d.Value = int64(varint(v))
								case 2:
									if err := wantType(dm, at, "dim_param", typ, protowire.BytesType); err != nil {
										return err
									}
									d.Param = string(v)
								}
								return nil
							})
							vi.Shape = append(vi.Shape, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}
