package diagnose

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSweepTable writes a two-seed sweep's table and checks its rows (the
// medians and ranges, the best method, the errors at each budget
// fraction), and reads the sweep back from its JSON.
func TestSweepTable(t *testing.T) {
	t.Parallel()
	sw := &PTSweep{Target: "gauss1d4", Budget: 1000, Replicas: 4, BurnIn: 50, Fractions: []float64{0.5, 1},
		Rows: []PTSweepRow{{Dim: 10, Seeds: []uint64{1, 2}, Lambda: []float64{1, 2}, LambdaTuned: []float64{3, 5},
			RoundTrips: []int{4, 6},
			Error: map[string][][]float64{
				"pt":          {{0.2, 0.1}, {0.4, 0.3}},
				"swaps-off":   {{0.5, 0.5}, {0.6, 0.6}},
				"independent": {{0.1, 0.05}, {0.2, 0.15}},
			}}}}
	var b bytes.Buffer
	if err := sw.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"gauss1d4 + d-dimensional Gaussian block: largest mode-weight error; 1000 gradient evaluations per method and seed (250 steps x 4 replicas, burn-in 50)",
		"| 10 | 2 | 1.50 (1.00-2.00) | 4.0 (3.0-5.0) | 5 (4-6) | 0.200 (0.100-0.300) | 0.550 (0.500-0.600) | 0.100 (0.050-0.150) | independent |",
		"| d | method | 500 | 1000 |",
		"| 10 | pt | 0.300 | 0.200 |",
		"| 10 | independent | 0.150 | 0.100 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	path := filepath.Join(t.TempDir(), "sweep.json")
	js, _ := json.Marshal(sw)
	os.WriteFile(path, js, 0o644)
	back, err := ReadSweep(path)
	if err != nil || !reflect.DeepEqual(back, sw) {
		t.Errorf("read back %+v, %v", back, err)
	}
	os.WriteFile(path, []byte("{"), 0o644)
	if _, err := ReadSweep(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a torn file: %v, want an error naming it", err)
	}
}
