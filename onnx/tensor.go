package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
)

// typeName returns the name of an ONNX element type.
func typeName(t int32) string {
	switch t {
	case TypeFloat:
		return "float"
	case TypeUint8:
		return "uint8"
	case TypeInt8:
		return "int8"
	case TypeInt32:
		return "int32"
	case TypeInt64:
		return "int64"
	case TypeBool:
		return "bool"
	case TypeDouble:
		return "double"
	case 4:
		return "uint16"
	case 5:
		return "int16"
	case 8:
		return "string"
	case 10:
		return "float16"
	case 12:
		return "uint32"
	case 13:
		return "uint64"
	case 14:
		return "complex64"
	case 15:
		return "complex128"
	case 16:
		return "bfloat16"
	}
	return fmt.Sprintf("type %d", t)
}

// Size returns the number of values the tensor's dimensions hold, or an
// error for a negative dimension or one too large.
func (t *Tensor) Size() (int, error) {
	n := 1
	for _, d := range t.Dims {
		if d < 0 || d > math.MaxInt32 {
			return 0, fmt.Errorf("tensor %q: dimension %d in %v", t.Name, d, t.Dims)
		}
		n *= int(d)
		if n > math.MaxInt32 {
			return 0, fmt.Errorf("tensor %q: dims %v hold too many values", t.Name, t.Dims)
		}
	}
	return n, nil
}

// isFloat reports whether the tensor holds floating-point values this
// package reads (float or double).
func (t *Tensor) isFloat() bool { return t.DataType == TypeFloat || t.DataType == TypeDouble }

// isInt reports whether the tensor holds integers this package reads.
func (t *Tensor) isInt() bool {
	return t.DataType == TypeInt64 || t.DataType == TypeInt32 || t.DataType == TypeInt8 || t.DataType == TypeUint8 || t.DataType == TypeBool
}

// Floats returns the values of a float or double tensor as float64, in
// row-major order, checking that the data hold exactly as many values as
// the dimensions say.
func (t *Tensor) Floats() ([]float64, error) {
	n, err := t.Size()
	if err != nil {
		return nil, err
	}
	if t.External {
		return nil, fmt.Errorf("tensor %q: values in an external file, which is not read (export the model in one file)", t.Name)
	}
	var out []float64
	switch {
	case t.DataType == TypeFloat && t.RawData != nil:
		if len(t.RawData) != 4*n {
			return nil, fmt.Errorf("tensor %q: %d bytes of raw data for %v float values (%d bytes expected)", t.Name, len(t.RawData), t.Dims, 4*n)
		}
		out = make([]float64, n)
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(t.RawData[4*i:])))
		}
	case t.DataType == TypeFloat:
		if len(t.FloatData) != n {
			return nil, fmt.Errorf("tensor %q: %d float values for dims %v (%d expected)", t.Name, len(t.FloatData), t.Dims, n)
		}
		out = make([]float64, n)
		for i, v := range t.FloatData {
			out[i] = float64(v)
		}
	case t.DataType == TypeDouble && t.RawData != nil:
		if len(t.RawData) != 8*n {
			return nil, fmt.Errorf("tensor %q: %d bytes of raw data for %v double values (%d bytes expected)", t.Name, len(t.RawData), t.Dims, 8*n)
		}
		out = make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.RawData[8*i:]))
		}
	case t.DataType == TypeDouble:
		if len(t.DoubleData) != n {
			return nil, fmt.Errorf("tensor %q: %d double values for dims %v (%d expected)", t.Name, len(t.DoubleData), t.Dims, n)
		}
		out = append([]float64(nil), t.DoubleData...)
	default:
		return nil, fmt.Errorf("tensor %q: element type %s: expected float or double", t.Name, typeName(t.DataType))
	}
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("tensor %q: value %d is %v: expected finite values", t.Name, i, v)
		}
	}
	return out, nil
}

// Ints returns the values of an integer (or bool) tensor as int64, in
// row-major order, checking their count against the dimensions.
func (t *Tensor) Ints() ([]int64, error) {
	n, err := t.Size()
	if err != nil {
		return nil, err
	}
	if t.External {
		return nil, fmt.Errorf("tensor %q: values in an external file, which is not read", t.Name)
	}
	width := map[int32]int{TypeInt64: 8, TypeInt32: 4, TypeInt8: 1, TypeUint8: 1, TypeBool: 1}[t.DataType]
	if width == 0 {
		return nil, fmt.Errorf("tensor %q: element type %s: expected integers", t.Name, typeName(t.DataType))
	}
	// The count is checked before anything is allocated: dims claim up to
	// MaxInt32 values whatever the data hold, and a file of a few bytes
	// must not make the import allocate gigabytes.
	switch {
	case t.RawData != nil:
		if len(t.RawData) != width*n {
			return nil, fmt.Errorf("tensor %q: %d bytes of raw data for %v %s values (%d bytes expected)", t.Name, len(t.RawData), t.Dims, typeName(t.DataType), width*n)
		}
	case t.DataType == TypeInt64:
		if len(t.Int64Data) != n {
			return nil, fmt.Errorf("tensor %q: %d int64 values for dims %v (%d expected)", t.Name, len(t.Int64Data), t.Dims, n)
		}
	default: // int32_data holds the narrower types
		if len(t.Int32Data) != n {
			return nil, fmt.Errorf("tensor %q: %d %s values for dims %v (%d expected)", t.Name, len(t.Int32Data), typeName(t.DataType), t.Dims, n)
		}
	}
	out := make([]int64, n)
	switch {
	case t.RawData != nil:
		for i := range out {
			switch t.DataType {
			case TypeInt64:
				out[i] = int64(binary.LittleEndian.Uint64(t.RawData[8*i:]))
			case TypeInt32:
				out[i] = int64(int32(binary.LittleEndian.Uint32(t.RawData[4*i:])))
			case TypeInt8:
				out[i] = int64(int8(t.RawData[i]))
			default:
				out[i] = int64(t.RawData[i])
			}
		}
	case t.DataType == TypeInt64:
		copy(out, t.Int64Data)
	default:
		for i, v := range t.Int32Data {
			out[i] = int64(v)
		}
	}
	return out, nil
}
