// Package datasets reads labelled image data in the IDX format (MNIST,
// Fashion-MNIST, KMNIST, ...), makes small synthetic data sets, and iterates
// over minibatches in a reproducible order.
package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// IDX element type codes, as in the third byte of an IDX header.
const (
	IDXUint8   byte = 0x08
	IDXInt8    byte = 0x09
	IDXInt16   byte = 0x0B
	IDXInt32   byte = 0x0C
	IDXFloat32 byte = 0x0D
	IDXFloat64 byte = 0x0E
)

// maxIDXElements bounds the element count a header may declare, so a corrupt
// header cannot make the reader allocate without limit.
const maxIDXElements = 1 << 31

// IDX is one decoded IDX array: its dimensions and its elements as float64,
// in row-major order.
type IDX struct {
	Type byte      // element type code (IDXUint8, ...)
	Dims []int     // dimension sizes, outermost first
	Data []float64 // len(Data) is the product of Dims
}

// ErrFormat is wrapped by every error that reports malformed IDX content.
var ErrFormat = errors.New("malformed IDX data")

func elemSize(t byte) (int, bool) {
	switch t {
	case IDXUint8, IDXInt8:
		return 1, true
	case IDXInt16:
		return 2, true
	case IDXInt32, IDXFloat32:
		return 4, true
	case IDXFloat64:
		return 8, true
	}
	return 0, false
}

// ReadIDXFile reads the IDX file at path, gunzipping it when it starts with
// the gzip magic number. Errors name the file.
func ReadIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read IDX: %w", err)
	}
	defer f.Close()
	a, err := ReadIDX(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return a, nil
}

// ReadIDX decodes one IDX array from r, which may be gzip-compressed.
func ReadIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(2)
	if err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("unreadable gzip stream: %w", err)
		}
		defer zr.Close()
		a, err := decodeIDX(zr)
		if err == nil {
			err = atEnd(zr, a) // reading to the end checks the stream's CRC-32 and length
		}
		if err != nil {
			var fe formatError
			if !errors.As(err, &fe) {
				return nil, fmt.Errorf("unreadable gzip stream: %w", err)
			}
			return nil, fmt.Errorf("gzip stream: %w", err)
		}
		return a, nil
	}
	a, err := decodeIDX(br)
	if err == nil {
		err = atEnd(br, a)
	}
	return a, err
}

// atEnd returns nil when r holds nothing after the array a (a file of more
// images than its header declares, or two arrays, would otherwise be read
// short without a word), or r's error.
func atEnd(r io.Reader, a *IDX) error {
	var one [1]byte
	switch n, err := io.ReadFull(r, one[:]); {
	case n > 0:
		return formatErr("trailing data after the %d elements of dimensions %v", len(a.Data), a.Dims)
	case errors.Is(err, io.EOF):
		return nil
	default:
		return err
	}
}

// formatError marks errors about the IDX content itself, as opposed to
// errors from the underlying reader.
type formatError struct{ msg string }

func (e formatError) Error() string { return e.msg }
func (e formatError) Unwrap() error { return ErrFormat }

func formatErr(f string, args ...any) error {
	return formatError{fmt.Sprintf(f, args...)}
}

func decodeIDX(r io.Reader) (*IDX, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, formatErr("truncated header: fewer than 4 bytes")
		}
		return nil, err
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, formatErr("bad magic number 0x%02x%02x%02x%02x: expected 0x0000 then type and rank", magic[0], magic[1], magic[2], magic[3])
	}
	size, ok := elemSize(magic[2])
	if !ok {
		return nil, formatErr("bad magic number: unknown element type 0x%02x", magic[2])
	}
	rank := int(magic[3])
	if rank == 0 {
		return nil, formatErr("bad magic number: rank 0")
	}
	dimBuf := make([]byte, 4*rank)
	if _, err := io.ReadFull(r, dimBuf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, formatErr("truncated header: %d dimensions declared", rank)
		}
		return nil, err
	}
	dims := make([]int, rank)
	n := 1
	for i := range dims {
		d := binary.BigEndian.Uint32(dimBuf[4*i:])
		dims[i] = int(d)
		if d != 0 && n > maxIDXElements/int(d) {
			return nil, formatErr("dimensions %v declare more than %d elements", dims[:i+1], maxIDXElements)
		}
		n *= int(d)
	}
	// Read in chunks so a header that lies about its size cannot force a
	// huge allocation before the truncation is noticed.
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, r, int64(n*size))
	raw := buf.Bytes()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) { // a plain file's end, or a gzip stream's
			return nil, formatErr("truncated data: dimensions %v need %d bytes, found %d", dims, n*size, got)
		}
		return nil, err
	}
	a := &IDX{Type: magic[2], Dims: dims, Data: make([]float64, n)}
	for i := range a.Data {
		b := raw[i*size:]
		switch a.Type {
		case IDXUint8:
			a.Data[i] = float64(b[0])
		case IDXInt8:
			a.Data[i] = float64(int8(b[0]))
		case IDXInt16:
			a.Data[i] = float64(int16(binary.BigEndian.Uint16(b)))
		case IDXInt32:
			a.Data[i] = float64(int32(binary.BigEndian.Uint32(b)))
		case IDXFloat32:
			a.Data[i] = float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
		case IDXFloat64:
			a.Data[i] = math.Float64frombits(binary.BigEndian.Uint64(b))
		}
	}
	return a, nil
}

// WriteIDX encodes a as IDX to w. Values are converted to a's element type
// (truncating toward zero for integer types).
func WriteIDX(w io.Writer, a *IDX) error {
	size, ok := elemSize(a.Type)
	if !ok {
		return fmt.Errorf("write IDX: unknown element type 0x%02x", a.Type)
	}
	if len(a.Dims) == 0 || len(a.Dims) > 255 {
		return fmt.Errorf("write IDX: rank %d outside 1..255", len(a.Dims))
	}
	n := 1
	for _, d := range a.Dims {
		n *= d
	}
	if n != len(a.Data) {
		return fmt.Errorf("write IDX: dimensions %v hold %d elements, data has %d", a.Dims, n, len(a.Data))
	}
	buf := make([]byte, 4+4*len(a.Dims)+n*size)
	buf[2], buf[3] = a.Type, byte(len(a.Dims))
	for i, d := range a.Dims {
		binary.BigEndian.PutUint32(buf[4+4*i:], uint32(d))
	}
	body := buf[4+4*len(a.Dims):]
	for i, v := range a.Data {
		b := body[i*size:]
		switch a.Type {
		case IDXUint8:
			b[0] = byte(v)
		case IDXInt8:
			b[0] = byte(int8(v))
		case IDXInt16:
			binary.BigEndian.PutUint16(b, uint16(int16(v)))
		case IDXInt32:
			binary.BigEndian.PutUint32(b, uint32(int32(v)))
		case IDXFloat32:
			binary.BigEndian.PutUint32(b, math.Float32bits(float32(v)))
		case IDXFloat64:
			binary.BigEndian.PutUint64(b, math.Float64bits(v))
		}
	}
	_, err := w.Write(buf)
	return err
}

// WriteIDXFile writes a to path, gzip-compressed when gz is true.
func WriteIDXFile(path string, a *IDX, gz bool) error {
	var buf bytes.Buffer
	var err error
	if gz {
		zw := gzip.NewWriter(&buf)
		if err = WriteIDX(zw, a); err == nil {
			err = zw.Close()
		}
	} else {
		err = WriteIDX(&buf, a)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
