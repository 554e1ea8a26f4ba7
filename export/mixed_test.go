package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestExportRefusesMixedRuns: runs of one model sampled at different
// temperatures, or trained on the classes in another output order, are
// refused by both formats (in either order) with an error naming both
// runs and what differs, and nothing is written.
func TestExportRefusesMixedRuns(t *testing.T) {
	base, test := trainRun(t, 1, 160)
	cold, _ := trainRunWith(t, 1, 160, 30, func(c *runspec.Config) { c.Temperature = 0.5 })
	permuted, _ := trainRunWith(t, 1, 160, 30, func(c *runspec.Config) { c.Classes = []int{2, 1, 0} })
	for _, tc := range []struct {
		name   string
		runs   []string
		wants  []string
		noData bool
	}{
		{"temperatures", []string{base, cold}, []string{"run " + cold + " sampled at temperature 0.5, run " + base + " at 1", "different temperatures"}, false},
		{"temperatures, cold first", []string{cold, base}, []string{"run " + base + " sampled at temperature 1, run " + cold + " at 0.5"}, true},
		{"classes", []string{base, permuted}, []string{"run " + permuted + " was trained on classes 2,1,0, run " + base + " on all classes"}, false},
		{"classes, permuted first", []string{permuted, base}, []string{"run " + base + " was trained on all classes, run " + permuted + " on classes 2,1,0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := test
			if tc.noData {
				data = nil
			}
			out := t.TempDir()
			_, errNPZ := NPZ(filepath.Join(out, "p.npz"), tc.runs, data)
			_, errZarr := Zarr(filepath.Join(out, "p.zarr"), tc.runs, data, ZarrOptions{})
			for format, err := range map[string]error{"npz": errNPZ, "zarr": errZarr} {
				if err == nil {
					t.Errorf("%s: runs %v exported together", format, tc.runs)
					continue
				}
				for _, want := range tc.wants {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not say %q", format, err, want)
					}
				}
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a refused export left %v", entries)
			}
		})
	}
}
