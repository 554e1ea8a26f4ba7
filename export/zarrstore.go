package export

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// zarrStore writes a Zarr v2 directory store: groups (.zgroup, .zattrs),
// arrays (.zarray, .zattrs with xarray's _ARRAY_DIMENSIONS) whose chunks
// are files named by their chunk indices joined with dots, little-endian,
// C order, raw or zlib-compressed, and the consolidated metadata
// (.zmetadata) xarray and zarr read in one go. The format:
// zarr.readthedocs.io, "Zarr storage specification version 2".
type zarrStore struct {
	root     string
	compress bool           // zlib, level 1
	meta     map[string]any // consolidated metadata: key -> JSON object
}

// zarrArray is one array of a store.
type zarrArray struct {
	store  *zarrStore
	key    string // path in the store, "group/name"
	shape  []int
	chunks []int
	dtype  string // "<f4", "<f8" or "<i8"
}

func newZarrStore(root string, compress bool) (*zarrStore, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("zarr: %w", err)
	}
	z := &zarrStore{root: root, compress: compress, meta: map[string]any{}}
	return z, z.group("", nil)
}

// writeMeta writes a metadata document and records it for consolidation.
func (z *zarrStore) writeMeta(key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("zarr %s: %w", key, err)
	}
	path := filepath.Join(z.root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("zarr: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("zarr: %w", err)
	}
	z.meta[key] = json.RawMessage(b)
	return nil
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// group creates group name ("" for the root) with attributes attrs.
func (z *zarrStore) group(name string, attrs map[string]any) error {
	if err := z.writeMeta(join(name, ".zgroup"), map[string]int{"zarr_format": 2}); err != nil {
		return err
	}
	if attrs == nil {
		attrs = map[string]any{}
	}
	return z.writeMeta(join(name, ".zattrs"), attrs)
}

// array creates an array of shape, chunked by chunks, of dtype, whose
// dimensions are named dims (for xarray).
func (z *zarrStore) array(key string, shape, chunks []int, dtype string, dims []string, attrs map[string]any) (*zarrArray, error) {
	if len(shape) != len(chunks) || len(shape) != len(dims) {
		return nil, fmt.Errorf("zarr %s: shape %v, chunks %v, dimensions %v", key, shape, chunks, dims)
	}
	var comp any // JSON null: raw chunks
	if z.compress {
		comp = map[string]any{"id": "zlib", "level": 1}
	}
	// fill_value null: every chunk is written, and xarray would mask a
	// value equal to a fill value (turning integers into floats)
	za := map[string]any{"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "compressor": comp,
		"fill_value": nil, "order": "C", "filters": nil}
	if err := z.writeMeta(key+"/.zarray", za); err != nil {
		return nil, err
	}
	at := map[string]any{"_ARRAY_DIMENSIONS": dims}
	for k, v := range attrs {
		at[k] = v
	}
	if err := z.writeMeta(key+"/.zattrs", at); err != nil {
		return nil, err
	}
	return &zarrArray{store: z, key: key, shape: shape, chunks: chunks, dtype: dtype}, nil
}

// consolidate writes .zmetadata: every metadata document of the store.
func (z *zarrStore) consolidate() error {
	b, err := json.Marshal(map[string]any{"zarr_consolidated_format": 1, "metadata": z.meta})
	if err != nil {
		return fmt.Errorf("zarr: %w", err)
	}
	if err := os.WriteFile(filepath.Join(z.root, ".zmetadata"), b, 0o644); err != nil {
		return fmt.Errorf("zarr: %w", err)
	}
	return nil
}

// chunkValues returns the number of values in one chunk.
func (a *zarrArray) chunkValues() int {
	n := 1
	for _, c := range a.chunks {
		n *= c
	}
	return n
}

// write writes chunk idx (its indices along each dimension); values are
// float64, float32 or int64 to match the dtype, exactly a chunk's count.
func (a *zarrArray) write(idx []int, values any) error {
	var buf bytes.Buffer
	n := 0
	switch v := values.(type) {
	case []float64:
		n = len(v)
		if a.dtype != "<f8" {
			return fmt.Errorf("zarr %s: float64 values for dtype %s", a.key, a.dtype)
		}
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		buf.Write(b)
	case []float32:
		n = len(v)
		if a.dtype != "<f4" {
			return fmt.Errorf("zarr %s: float32 values for dtype %s", a.key, a.dtype)
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		buf.Write(b)
	case []int64:
		n = len(v)
		if a.dtype != "<i8" {
			return fmt.Errorf("zarr %s: int64 values for dtype %s", a.key, a.dtype)
		}
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
		buf.Write(b)
	default:
		return fmt.Errorf("zarr %s: values of type %T", a.key, values)
	}
	if n != a.chunkValues() {
		return fmt.Errorf("zarr %s: chunk of %d values, chunks %v hold %d", a.key, n, a.chunks, a.chunkValues())
	}
	data := buf.Bytes()
	if a.store.compress {
		var zb bytes.Buffer
		zw, err := zlib.NewWriterLevel(&zb, 1)
		if err != nil {
			return err
		}
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("zarr %s: %w", a.key, err)
		}
		data = zb.Bytes()
	}
	name := make([]string, len(idx))
	for i, v := range idx {
		name[i] = strconv.Itoa(v)
	}
	if len(idx) == 0 {
		name = []string{"0"}
	}
	path := filepath.Join(a.store.root, filepath.FromSlash(a.key), strings.Join(name, "."))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("zarr: %w", err)
	}
	return nil
}

// coordinate writes a one-dimensional int64 coordinate array named dim in
// group, one chunk.
func (z *zarrStore) coordinate(group, dim string, values []int64) error {
	a, err := z.array(join(group, dim), []int{len(values)}, []int{max(len(values), 1)}, "<i8", []string{dim}, nil)
	if err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	return a.write([]int{0}, values)
}

// arange returns 0, 1, ..., n-1.
func arange(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
