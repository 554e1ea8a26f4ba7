package rundir

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strings"

	"github.com/ptsghmc/ptsghmc/nn"
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
// never returned by ReadSamples. A record that fails its checksum with
// intact records after it is corruption, not a crash: readers stop with an
// error naming it (see ScanSamples).
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
	return ReopenSamples(path, count, 0)
}

// ReopenSamples is OpenSamplesAt; with params > 0 a file whose samples do
// not have that many values is refused before anything is truncated.
func ReopenSamples(path string, count, params int) (*SampleWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	hlen, sc, err := scanRecords(path, bufio.NewReaderSize(f, 1<<16), fileSize(f), false, count, -1, nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	h := sc.Header
	if params > 0 && h.Params != params {
		f.Close()
		return nil, fmt.Errorf("samples %s hold %d values per sample (arch %s), the model has %d: the files are of different runs", path, h.Params, h.Arch, params)
	}
	if sc.Intact < count {
		f.Close()
		if len(sc.Corrupt) > 0 {
			b := sc.Corrupt[0]
			return nil, fmt.Errorf("samples %s: record #%d (counting from 1; step field %d) fails its checksum, and the checkpoint covers %d samples: %w", path, b.Index+1, b.Step, count, ErrCorruptSamples)
		}
		return nil, fmt.Errorf("samples %s: %d intact samples, checkpoint expects %d", path, sc.Intact, count)
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

// Header returns the file's header.
func (w *SampleWriter) Header() SampleHeader { return w.h }

// Sync flushes the file to stable storage.
func (w *SampleWriter) Sync() error { return w.f.Sync() }

// Close closes the file.
func (w *SampleWriter) Close() error { return w.f.Close() }

// ReadSampleHeaderFile reads the header of the samples file at path.
func ReadSampleHeaderFile(path string) (SampleHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return SampleHeader{}, fmt.Errorf("samples: %w", err)
	}
	defer f.Close()
	h, _, err := ReadSampleHeader(f)
	if err != nil {
		return h, fmt.Errorf("samples %s: %w", path, err)
	}
	return h, nil
}

// ReadSampleHeader parses the header at the start of r. A file that ends
// inside the header is "truncated"; other read errors are returned wrapped.
func ReadSampleHeader(r io.Reader) (SampleHeader, int, error) {
	var h SampleHeader
	fixed := make([]byte, 8+4+4+8+4)
	n, err := io.ReadFull(r, fixed)
	if n >= 8 && string(fixed[:8]) != samplesMagic || n < 8 && string(fixed[:n]) != samplesMagic[:n] {
		return h, 0, fmt.Errorf("bad magic %q: not a ptsghmc samples file", fixed[:min(n, 8)])
	}
	if err != nil {
		return h, 0, headerReadErr(err, n, len(fixed))
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
	if n, err := io.ReadFull(r, rest); err != nil {
		return h, 0, headerReadErr(err, len(fixed)+n, len(fixed)+len(rest))
	}
	h.Arch = string(rest[:alen])
	all := append(fixed, rest[:alen]...)
	if crc32.ChecksumIEEE(all) != binary.LittleEndian.Uint32(rest[alen:]) {
		return h, 0, errors.New("header checksum mismatch")
	}
	return h, len(all) + 4, nil
}

// headerReadErr tells a file that ends inside its header from a failed read.
func headerReadErr(err error, got, want int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %d bytes of at least %d", ErrTruncatedHeader, got, want)
	}
	return fmt.Errorf("read header: %w", err)
}

// ErrTruncatedHeader is wrapped by the error about a samples file that
// ends inside its header (a write cut short as the file was created).
var ErrTruncatedHeader = errors.New("truncated header")

// ErrCorruptSamples is wrapped by the error about a record that fails its
// checksum inside a samples file (intact records follow it): corruption,
// not a crash mid-write.
var ErrCorruptSamples = errors.New("corrupt sample record")

// BadRecord is a sample record that failed its checksum.
type BadRecord struct {
	Index int // 0-based position of the record in the file (messages count from 1)
	Step  int // the step the record's own (unverified) step field holds
}

// SampleScan is what reading a samples file found.
type SampleScan struct {
	Header SampleHeader
	Intact int // records that passed their checksum (those passed to fn)
	// Torn counts the records at the end of the file, from the first bad
	// one on, of which none is intact, and TornBytes a partial record
	// after them: what a crash mid-write leaves. They are dropped.
	Torn, TornBytes int
	// Corrupt are the bad records followed by intact ones (only with
	// skipCorrupt; without it the first is an error).
	Corrupt []BadRecord
}

// Dropped reports whether anything at the end of the file was dropped.
func (s SampleScan) Dropped() bool { return s.Torn > 0 || s.TornBytes > 0 }

// ScanSamples reads the samples file at path and calls fn with each intact
// sample in order. A record that fails its checksum and is followed by an
// intact record is corruption: without skipCorrupt the read stops with an
// error (wrapping ErrCorruptSamples) naming the file, the record's index and
// step, and the steps of its intact neighbours; with skipCorrupt it is
// skipped and listed in the result. Bad records at the end of the file with
// nothing intact after them, and a partial last record, are what a crash
// mid-write leaves: they are counted in Torn and TornBytes and dropped.
func ScanSamples(path string, skipCorrupt bool, fn func(step int, theta []float64) error) (SampleScan, error) {
	return scanSamplesUpTo(path, skipCorrupt, -1, fn)
}

// corruptError is the error of the bad records pending, the first
// corrupt one of the file, between the intact record of lastStep (-1:
// none) and after (the next intact one, or why there is none).
func corruptError(path string, pending []BadRecord, lastStep int, after string) error {
	b := pending[0]
	prev := "none"
	if lastStep >= 0 {
		prev = fmt.Sprint(lastStep)
	}
	return fmt.Errorf("samples %s: record #%d (counting from 1; step field %d; intact neighbours: step %s before, %s after) fails its checksum: %w (%d bad record(s) before the next intact one; --skip-corrupt evaluates the intact records)",
		path, b.Index+1, b.Step, prev, after, ErrCorruptSamples, len(pending))
}

// scanSamplesUpTo is ScanSamples of the first records records alone,
// intact or not (records < 0: all of them): what a checkpoint counted. A
// bad record among them with no intact one after it is corrupt, not torn
// (the checkpoint counted it whole).
func scanSamplesUpTo(path string, skipCorrupt bool, records int, fn func(step int, theta []float64) error) (SampleScan, error) {
	var sc SampleScan
	f, err := os.Open(path)
	if err != nil {
		return sc, fmt.Errorf("samples: %w", err)
	}
	defer f.Close()
	_, sc, err = scanRecords(path, bufio.NewReaderSize(f, 1<<16), fileSize(f), skipCorrupt, -1, records, fn)
	return sc, err
}

// fileSize returns the size of f, or -1 when it cannot be read.
func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return -1
	}
	return st.Size()
}

// scanRecords reads a samples file from r (at its start). With stopAt >= 0
// it stops after that many intact records, and reports the first bad record
// (if any, before stopAt intact ones) through the scan's Corrupt list
// without looking further. With records >= 0 it reads that many records,
// intact or not, at most (scanSamplesUpTo). size is the bytes of the file
// (-1: unknown): a file too short for one record is read without a buffer
// of the size its header declares (up to 32 GiB in a corrupt header). It
// returns the header length.
func scanRecords(path string, r io.Reader, size int64, skipCorrupt bool, stopAt, records int, fn func(int, []float64) error) (int, SampleScan, error) {
	var sc SampleScan
	h, hlen, err := ReadSampleHeader(r)
	if err != nil {
		return 0, sc, fmt.Errorf("samples %s: %w", path, err)
	}
	sc.Header = h
	rs := h.recordSize()
	var buf []byte
	var theta []float64
	var pending []BadRecord // bad records not yet known to be corrupt or torn
	lastStep := -1          // step of the last intact record (-1: none yet)
	for index := 0; ; index++ {
		if stopAt >= 0 && sc.Intact >= stopAt {
			return hlen, sc, nil
		}
		if records >= 0 && index >= records {
			if len(pending) > 0 { // counted whole, so corrupt
				if !skipCorrupt {
					return hlen, sc, corruptError(path, pending, lastStep, fmt.Sprintf("none up to the %d records counted", records))
				}
				sc.Corrupt = append(sc.Corrupt, pending...)
			}
			return hlen, sc, nil
		}
		if buf == nil {
			if size >= 0 && size-int64(hlen) < int64(rs) { // not one whole record: as a read of the first would end
				sc.TornBytes = int(max(size-int64(hlen), 0))
				return hlen, sc, nil
			}
			buf, theta = make([]byte, rs), make([]float64, h.Params)
		}
		k, err := io.ReadFull(r, buf)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			sc.Torn, sc.TornBytes = len(pending), k
			return hlen, sc, nil
		}
		if err != nil {
			return hlen, sc, fmt.Errorf("samples %s: read record %d: %w", path, index, err)
		}
		off := rs - 4
		step := int(binary.LittleEndian.Uint64(buf))
		if crc32.ChecksumIEEE(buf[:off]) != binary.LittleEndian.Uint32(buf[off:]) {
			pending = append(pending, BadRecord{Index: index, Step: step})
			if stopAt >= 0 {
				sc.Corrupt = pending
				return hlen, sc, nil
			}
			continue
		}
		if len(pending) > 0 {
			if !skipCorrupt {
				return hlen, sc, corruptError(path, pending, lastStep, fmt.Sprintf("step %d at record #%d", step, index+1))
			}
			sc.Corrupt = append(sc.Corrupt, pending...)
			pending = pending[:0]
		}
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
		sc.Intact++
		lastStep = step
		if fn != nil {
			if err := fn(step, theta); err != nil {
				return hlen, sc, err
			}
		}
	}
}

// ReadSamples reads a samples file and calls fn with each intact sample in
// order. A torn end (what a crash mid-write leaves) is dropped and reported
// through dropped; a corrupt record inside the file is an error wrapping
// ErrCorruptSamples (ScanSamples can skip such records).
func ReadSamples(path string, fn func(step int, theta []float64) error) (h SampleHeader, dropped bool, err error) {
	sc, err := ScanSamples(path, false, fn)
	return sc.Header, sc.Dropped(), err
}

// SamplesModel is what a samples header records of its model: its name
// and parameter shapes, "NAME SHAPES". Headers written before models were
// recorded hold an MLP's widths alone.
func SamplesModel(m nn.Model) string { return m.Name + " " + m.Layout.String() }

// CheckSamplesModel reports an error when a samples file's header does not
// describe model m.
func CheckSamplesModel(path string, h SampleHeader, m nn.Model) error {
	name, shapes, recorded := strings.Cut(h.Arch, " ")
	if name != m.Name || recorded && shapes != m.Layout.String() || h.Params != m.NumParams() {
		return fmt.Errorf("samples %s hold model %q (%d parameters), the run's model is %q (%d parameters, %s): refusing to mix models", path, h.Arch, h.Params, m.Name, m.NumParams(), m.Layout)
	}
	return nil
}

// Path returns the path of the samples file w writes.
func (w *SampleWriter) Path() string { return w.path }
