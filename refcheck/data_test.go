package refcheck

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDataFile writes body as the posteriordb data file name (a zip of
// one JSON file) under dir/data.
func writeDataFile(t *testing.T, dir, name, body string) {
	t.Helper()
	path := dataFile(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create(name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLoadDataValidation checks Posterior.Load on data files with a count
// that is null, zero or too small, or a field missing: an error naming the
// file and the field, not a panic at d.X[0] or make(-1), nor "unexpected
// end of JSON input".
func TestLoadDataValidation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		posterior string
		body      string
		want      []string
	}{
		{"valid", "earnings-earn_height", `{"N": 3, "earn": [1, 2, 4], "height": [60, 65, 70]}`, nil},
		{"N null", "earnings-earn_height", `{"N": null, "earn": [], "height": []}`, []string{`"N"`, "null"}},
		{"N zero", "earnings-earn_height", `{"N": 0, "earn": [], "height": []}`, []string{`"N"`, "0, expected at least 1"}},
		{"N missing", "earnings-earn_height", `{"earn": [1], "height": [60]}`, []string{`"N"`, "missing"}},
		{"earn missing", "earnings-earn_height", `{"N": 1, "height": [60]}`, []string{`"earn"`, "missing"}},
		{"earn null", "earnings-earn_height", `{"N": 1, "earn": null, "height": [60]}`, []string{`"earn"`, "null"}},
		{"diamonds K zero", "diamonds-diamonds", `{"N": 1, "K": 0, "Y": [1], "X": [[]]}`, []string{`"K"`, "0, expected at least 2"}},
		{"diamonds K one", "diamonds-diamonds", `{"N": 1, "K": 1, "Y": [1], "X": [[1]]}`, []string{`"K"`, "1, expected at least 2"}},
		{"diamonds X null", "diamonds-diamonds", `{"N": 1, "K": 2, "Y": [1], "X": null}`, []string{`"X"`, "null"}},
		{"sblrc D zero", "sblrc-blr", `{"N": 1, "D": 0, "y": [1], "X": [[]]}`, []string{`"D"`, "0, expected at least 1"}},
	} {
		p := Posteriors[tc.posterior]
		dir := t.TempDir()
		writeDataFile(t, dir, p.Data, tc.body)
		err := func() (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("panic: %v", v)
				}
			}()
			_, _, err = p.Load(dir)
			return err
		}()
		checkLoadError(t, tc.name, err, tc.want, dataFile(dir, p.Data))
	}
}

// checkLoadError checks a load's error: none when want is nil, else one
// that says every string of want and names the file.
func checkLoadError(t *testing.T, name string, err error, want []string, file string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return
	}
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	for _, w := range append(want, file) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", name, err, w)
		}
	}
}
