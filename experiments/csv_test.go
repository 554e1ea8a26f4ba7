package experiments

import (
	"bytes"
	"testing"
)

// TestWriteSamplesCSV checks the mixture command's samples file: one row
// per sample, 8 significant digits, no header.
func TestWriteSamplesCSV(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteSamplesCSV(&b, [][]float64{{1, -0.5}, {1.0 / 3, 2e-9}}); err != nil {
		t.Fatal(err)
	}
	if want := "1,-0.5\n0.33333333,2e-09\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}
