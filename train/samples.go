package train

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// Samples file format (little endian), RUNDIR/samples:
//
//	header:  magic "PTSGSMP1" | version uint32 | dtype uint32 (1 float32, 2 float64)
//	         | params uint64 | arch length uint32 | arch bytes | CRC-32 (IEEE) of all before it
//	         (arch: the model's name and parameter shapes, "NAME SHAPES"; files
//	         written before models were recorded hold an MLP's widths alone)
//	records: step uint64 | params values of dtype | CRC-32 of step and values
//
// Records have a fixed size, so a record torn by a crash mid-write is
// detected (short, or a checksum mismatch) and dropped on resume; it is
// never returned by ReadSamples.
const (
	samplesMagic   = "PTSGSMP1"
	samplesVersion = 1
)

// SampleHeader describes the samples in a samples file.
type SampleHeader struct {
	Arch   string // the model: "NAME SHAPES" (nn.Model.Name, nn.Layout.String()), or an MLP's widths alone in older files
	Params int    // values per sample
	DType  string // float32 or float64: the stored precision
}

func dtypeCode(d string) (uint32, int, error) {
	switch d {
	case "float32":
		return 1, 4, nil
	case "float64":
		return 2, 8, nil
	}
	return 0, 0, fmt.Errorf("samples: dtype %q: expected float32 or float64", d)
}

func (h SampleHeader) encode() ([]byte, error) {
	code, _, err := dtypeCode(h.DType)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(samplesMagic)
	binary.Write(&b, binary.LittleEndian, uint32(samplesVersion))
	binary.Write(&b, binary.LittleEndian, code)
	binary.Write(&b, binary.LittleEndian, uint64(h.Params))
	binary.Write(&b, binary.LittleEndian, uint32(len(h.Arch)))
	b.WriteString(h.Arch)
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE(b.Bytes()))
	return b.Bytes(), nil
}

func (h SampleHeader) recordSize() int {
	_, size, _ := dtypeCode(h.DType)
	return 8 + size*h.Params + 4
}

// SampleWriter appends samples to a samples file.
type SampleWriter struct {
	f     *os.File
	h     SampleHeader
	buf   []byte
	size  int64 // bytes of complete content
	Count int   // samples in the file
	path  string
}

// CreateSamples creates (truncating) a samples file at path.
func CreateSamples(path string, h SampleHeader) (*SampleWriter, error) {
	head, err := h.encode()
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	if _, err := f.Write(head); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &SampleWriter{f: f, h: h, size: int64(len(head)), path: path}, nil
}

// OpenSamplesAt reopens a samples file for appending after its first count
// samples, truncating anything after them (records written after the last
// checkpoint, or a torn record).
func OpenSamplesAt(path string, count int) (*SampleWriter, error) {
	h, hlen, n, err := scanSamples(path)
	if err != nil {
		return nil, err
	}
	if n < count {
		return nil, fmt.Errorf("samples %s: %d intact samples, checkpoint expects %d", path, n, count)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	size := int64(hlen) + int64(count)*int64(h.recordSize())
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate %s: %w", path, err)
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek %s: %w", path, err)
	}
	return &SampleWriter{f: f, h: h, size: size, Count: count, path: path}, nil
}

// Append writes one sample taken at step.
func (w *SampleWriter) Append(step int, theta []float64) error {
	if len(theta) != w.h.Params {
		return fmt.Errorf("samples: sample has %d values, file holds %d", len(theta), w.h.Params)
	}
	rs := w.h.recordSize()
	if cap(w.buf) < rs {
		w.buf = make([]byte, rs)
	}
	b := w.buf[:rs]
	binary.LittleEndian.PutUint64(b, uint64(step))
	off := 8
	if w.h.DType == "float32" {
		for _, v := range theta {
			binary.LittleEndian.PutUint32(b[off:], math.Float32bits(float32(v)))
			off += 4
		}
	} else {
		for _, v := range theta {
			binary.LittleEndian.PutUint64(b[off:], math.Float64bits(v))
			off += 8
		}
	}
	binary.LittleEndian.PutUint32(b[off:], crc32.ChecksumIEEE(b[:off]))
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.size += int64(rs)
	w.Count++
	return nil
}

// Sync flushes the file to stable storage.
func (w *SampleWriter) Sync() error { return w.f.Sync() }

// Close closes the file.
func (w *SampleWriter) Close() error { return w.f.Close() }

// readSampleHeader parses the header at the start of r.
func readSampleHeader(r io.Reader) (SampleHeader, int, error) {
	var h SampleHeader
	fixed := make([]byte, 8+4+4+8+4)
	n, err := io.ReadFull(r, fixed)
	if n >= 8 && string(fixed[:8]) != samplesMagic || n < 8 && string(fixed[:n]) != samplesMagic[:n] {
		return h, 0, fmt.Errorf("bad magic %q: not a ptsghmc samples file", fixed[:min(n, 8)])
	}
	if err != nil {
		return h, 0, errors.New("truncated header")
	}
	if string(fixed[:8]) != samplesMagic {
		return h, 0, fmt.Errorf("bad magic %q: not a ptsghmc samples file", fixed[:8])
	}
	if v := binary.LittleEndian.Uint32(fixed[8:]); v != samplesVersion {
		return h, 0, fmt.Errorf("format version %d, this build reads %d", v, samplesVersion)
	}
	switch binary.LittleEndian.Uint32(fixed[12:]) {
	case 1:
		h.DType = "float32"
	case 2:
		h.DType = "float64"
	default:
		return h, 0, fmt.Errorf("unknown dtype code %d", binary.LittleEndian.Uint32(fixed[12:]))
	}
	params := binary.LittleEndian.Uint64(fixed[16:])
	alen := binary.LittleEndian.Uint32(fixed[24:])
	if params == 0 || params > 1<<32 || alen > 4096 {
		return h, 0, fmt.Errorf("implausible header: %d parameters, architecture of %d bytes", params, alen)
	}
	h.Params = int(params)
	rest := make([]byte, int(alen)+4)
	if _, err := io.ReadFull(r, rest); err != nil {
		return h, 0, errors.New("truncated header")
	}
	h.Arch = string(rest[:alen])
	all := append(fixed, rest[:alen]...)
	if crc32.ChecksumIEEE(all) != binary.LittleEndian.Uint32(rest[alen:]) {
		return h, 0, errors.New("header checksum mismatch")
	}
	return h, len(all) + 4, nil
}

// scanSamples returns the header, its length and the number of intact
// records before the first torn or corrupt one.
func scanSamples(path string) (SampleHeader, int, int, error) {
	n := 0
	h, hlen, err := readSamples(path, func(int, []float64) error { n++; return nil }, false)
	return h, hlen, n, err
}

// ReadSamples reads a samples file and calls fn with each intact sample in
// order; a torn or corrupt record ends the file (its later records are
// ignored) and is reported through dropped.
func ReadSamples(path string, fn func(step int, theta []float64) error) (h SampleHeader, dropped bool, err error) {
	dropped = false
	h, _, err = readSamples(path, fn, true)
	if errors.Is(err, errTorn) {
		return h, true, nil
	}
	return h, false, err
}

var errTorn = errors.New("torn record")

func readSamples(path string, fn func(int, []float64) error, reportTorn bool) (SampleHeader, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return SampleHeader{}, 0, fmt.Errorf("samples: %w", err)
	}
	defer f.Close()
	h, hlen, err := readSampleHeader(f)
	if err != nil {
		return h, 0, fmt.Errorf("samples %s: %w", path, err)
	}
	rs := h.recordSize()
	buf := make([]byte, rs)
	theta := make([]float64, h.Params)
	for {
		k, err := io.ReadFull(f, buf)
		if err == io.EOF {
			return h, hlen, nil
		}
		if err != nil || k < rs {
			if reportTorn {
				return h, hlen, errTorn
			}
			return h, hlen, nil
		}
		off := 8 + rs - 12
		if crc32.ChecksumIEEE(buf[:off]) != binary.LittleEndian.Uint32(buf[off:]) {
			if reportTorn {
				return h, hlen, errTorn
			}
			return h, hlen, nil
		}
		step := int(binary.LittleEndian.Uint64(buf))
		p := 8
		if h.DType == "float32" {
			for i := range theta {
				theta[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[p:])))
				p += 4
			}
		} else {
			for i := range theta {
				theta[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[p:]))
				p += 8
			}
		}
		if err := fn(step, theta); err != nil {
			return h, hlen, err
		}
	}
}
