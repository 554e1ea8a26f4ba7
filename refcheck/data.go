package refcheck

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// DataDir is the directory of the posteriordb files this package ships
// (README.md there names their source and licence).
const DataDir = "testdata/posteriordb"

// readZippedJSON decodes the one JSON file in the zip archive path (a
// posteriordb data or draws file, as the database stores them) into v.
func readZippedJSON(path string, v any) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		return fmt.Errorf("%s: %d files in the archive, expected one JSON file", path, len(zr.File))
	}
	f, err := zr.File[0].Open()
	if err != nil {
		return fmt.Errorf("%s: %s: %w", path, zr.File[0].Name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", path, zr.File[0].Name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %s: %w", path, zr.File[0].Name, err)
	}
	return nil
}

// rawData is a posteriordb data file: Stan's data block, by name.
type rawData map[string]json.RawMessage

// dataFile returns the path of the data file name (its base name, e.g.
// "earnings") under dir.
func dataFile(dir, name string) string {
	return filepath.Join(dir, "data", name+".json.zip")
}

// loadData reads the data file name (its base name, e.g. "earnings") from
// dir/data.
func loadData(dir, name string) (rawData, error) {
	var d rawData
	if err := readZippedJSON(dataFile(dir, name), &d); err != nil {
		return nil, fmt.Errorf("data %s: %w", name, err)
	}
	return d, nil
}

// field returns the field key's JSON, refusing a field that is missing or
// null (which would decode as a zero value).
func (d rawData) field(key string) (json.RawMessage, error) {
	raw, ok := d[key]
	if !ok {
		return nil, fmt.Errorf("field %q: missing", key)
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, fmt.Errorf("field %q: null", key)
	}
	return raw, nil
}

// int returns the integer field key, refusing one below least.
func (d rawData) int(key string, least int) (int, error) {
	raw, err := d.field(key)
	if err != nil {
		return 0, err
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("field %q: expected an integer: %w", key, err)
	}
	if n < least {
		return 0, fmt.Errorf("field %q: %d, expected at least %d", key, n, least)
	}
	return n, nil
}

// vector returns the field key, a vector of n numbers.
func (d rawData) vector(key string, n int) ([]float64, error) {
	raw, err := d.field(key)
	if err != nil {
		return nil, err
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("field %q: expected a vector: %w", key, err)
	}
	if len(v) != n {
		return nil, fmt.Errorf("field %q: %d values, expected N = %d", key, len(v), n)
	}
	return v, nil
}

// matrix returns the field key, n rows of k numbers.
func (d rawData) matrix(key string, n, k int) ([][]float64, error) {
	raw, err := d.field(key)
	if err != nil {
		return nil, err
	}
	var m [][]float64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("field %q: expected a matrix: %w", key, err)
	}
	if len(m) != n {
		return nil, fmt.Errorf("field %q: %d rows, expected %d", key, len(m), n)
	}
	for i, row := range m {
		if len(row) != k {
			return nil, fmt.Errorf("field %q: row %d has %d values, expected %d", key, i+1, len(row), k)
		}
	}
	return m, nil
}

// logOf returns the elementwise logarithm of v, refusing values that are
// not positive (Stan would produce -inf or NaN).
func logOf(key string, v []float64) ([]float64, error) {
	out := make([]float64, len(v))
	for i, x := range v {
		if !(x > 0) {
			return nil, fmt.Errorf("field %q: value %d is %v, its log is not finite", key, i+1, x)
		}
		out[i] = math.Log(x)
	}
	return out, nil
}

// Design is a regression's data in float64: X (N rows of the predictors,
// without the intercept) and y.
type Design struct {
	X [][]float64
	Y []float64
}

// Dataset returns the design as the float32 datasets.Dataset the
// potential reads (D = the predictors, one regression target).
func (d Design) Dataset() *datasets.Dataset {
	n, k := len(d.X), len(d.X[0])
	ds := &datasets.Dataset{N: n, D: k, X: make([]float32, n*k), Outputs: 1, Targets: make([]float32, n)}
	for i, row := range d.X {
		for j, v := range row {
			ds.X[i*k+j] = float32(v)
		}
		ds.Targets[i] = float32(d.Y[i])
	}
	return ds
}

// Float32 returns the design rounded to float32 as the potential sees it,
// in float64.
func (d Design) Float32() Design {
	out := Design{X: make([][]float64, len(d.X)), Y: make([]float64, len(d.Y))}
	for i, row := range d.X {
		out.X[i] = make([]float64, len(row))
		for j, v := range row {
			out.X[i][j] = float64(float32(v))
		}
		out.Y[i] = float64(float32(d.Y[i]))
	}
	return out
}

// columns returns the design of N examples whose predictors are the given
// columns.
func columns(y []float64, cols ...[]float64) Design {
	d := Design{X: make([][]float64, len(y)), Y: y}
	for i := range y {
		d.X[i] = make([]float64, len(cols))
		for j, c := range cols {
			d.X[i][j] = c[i]
		}
	}
	return d
}
