package onnx

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Marshal encodes the model as a ModelProto: the fields of this package's
// messages, in onnx.proto's numbering, so that Decode(m.Marshal()) gives m
// back. It writes ONNX files from Go (tests, tools); files written by
// exporters carry more fields, which Decode skips.
func (m *Model) Marshal() []byte {
	var b []byte
	if m.IRVersion != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(m.IRVersion))
	}
	b = appendString(b, 2, m.ProducerName)
	b = appendString(b, 3, m.ProducerVersion)
	if m.Graph != nil {
		b = appendMessage(b, 7, m.Graph.marshal())
	}
	for _, o := range m.Opsets {
		var ob []byte
		ob = appendString(ob, 1, o.Domain)
		ob = protowire.AppendTag(ob, 2, protowire.VarintType)
		ob = protowire.AppendVarint(ob, uint64(o.Version))
		b = appendMessage(b, 8, ob)
	}
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendPackedInts(b []byte, num protowire.Number, xs []int64) []byte {
	if len(xs) == 0 {
		return b
	}
	var p []byte
	for _, x := range xs {
		p = protowire.AppendVarint(p, uint64(x))
	}
	return appendMessage(b, num, p)
}

func appendPackedFloats(b []byte, num protowire.Number, xs []float32) []byte {
	if len(xs) == 0 {
		return b
	}
	p := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(x))
	}
	return appendMessage(b, num, p)
}

func (g *Graph) marshal() []byte {
	var b []byte
	for _, n := range g.Nodes {
		b = appendMessage(b, 1, n.marshal())
	}
	b = appendString(b, 2, g.Name)
	for _, t := range g.Initializers {
		b = appendMessage(b, 5, t.marshal())
	}
	for _, v := range g.Inputs {
		b = appendMessage(b, 11, v.marshal())
	}
	for _, v := range g.Outputs {
		b = appendMessage(b, 12, v.marshal())
	}
	return b
}

func (n *Node) marshal() []byte {
	var b []byte
	for _, s := range n.Inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	for _, s := range n.Outputs {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	b = appendString(b, 3, n.Name)
	b = appendString(b, 4, n.OpType)
	for _, a := range n.Attributes {
		b = appendMessage(b, 5, a.marshal())
	}
	b = appendString(b, 7, n.Domain)
	return b
}

func (a *Attribute) marshal() []byte {
	var b []byte
	b = appendString(b, 1, a.Name)
	switch a.Type {
	case AttrFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	case AttrInt:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.I))
	case AttrString:
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, a.S)
	case AttrTensor:
		if a.T != nil {
			b = appendMessage(b, 5, a.T.marshal())
		}
	case AttrFloats:
		b = appendPackedFloats(b, 7, a.Floats)
	case AttrInts:
		b = appendPackedInts(b, 8, a.Ints)
	}
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(a.Type))
}

func (t *Tensor) marshal() []byte {
	var b []byte
	b = appendPackedInts(b, 1, t.Dims)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.DataType))
	b = appendPackedFloats(b, 4, t.FloatData)
	if len(t.Int32Data) > 0 {
		xs := make([]int64, len(t.Int32Data))
		for i, x := range t.Int32Data {
			xs[i] = int64(x)
		}
		b = appendPackedInts(b, 5, xs)
	}
	b = appendPackedInts(b, 7, t.Int64Data)
	b = appendString(b, 8, t.Name)
	if len(t.RawData) > 0 {
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendBytes(b, t.RawData)
	}
	if len(t.DoubleData) > 0 {
		p := make([]byte, 8*len(t.DoubleData))
		for i, x := range t.DoubleData {
			binary.LittleEndian.PutUint64(p[8*i:], math.Float64bits(x))
		}
		b = appendMessage(b, 10, p)
	}
	if t.External {
		b = protowire.AppendTag(b, 14, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	return b
}

func (v *ValueInfo) marshal() []byte {
	var b []byte
	b = appendString(b, 1, v.Name)
	var tt []byte
	tt = protowire.AppendTag(tt, 1, protowire.VarintType)
	tt = protowire.AppendVarint(tt, uint64(v.ElemType))
	if v.HasShape || len(v.Shape) > 0 {
		var sh []byte
		for _, d := range v.Shape {
			var db []byte
			if d.Param != "" {
				db = appendString(db, 2, d.Param)
			} else {
				db = protowire.AppendTag(db, 1, protowire.VarintType)
				db = protowire.AppendVarint(db, uint64(d.Value))
			}
			sh = appendMessage(sh, 1, db)
		}
		tt = appendMessage(tt, 2, sh)
	}
	var tp []byte
	tp = appendMessage(tp, 1, tt)
	return appendMessage(b, 2, tp)
}
