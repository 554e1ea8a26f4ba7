package evaluate

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestValidationSet checks that runs holding out the same examples (same
// data, training subset, validation size and split seed, whatever their
// seeds) give their validation set, that one of another split is refused
// naming both runs, and that a run without validation examples is
// refused.
func TestValidationSet(t *testing.T) {
	t.Parallel()
	full, err := datasets.SyntheticImages(300, 16, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, edit func(c *runspec.Config)) string {
		c := runspec.DefaultConfig()
		c.Data, c.TrainSize, c.Validation, c.SplitSeed = "d", 200, 50, 3
		edit(&c)
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := rundir.WriteConfig(d, c); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write("a", func(c *runspec.Config) { c.Seed = 1 })
	b := write("b", func(c *runspec.Config) { c.Seed = 2 })
	other := write("other", func(c *runspec.Config) { c.SplitSeed = 4 })
	none := write("none", func(c *runspec.Config) { c.Validation = 0 })
	val, err := ValidationSet([]string{a, b}, full)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := rundir.ReadRunConfig(a)
	want, _ := runspec.ValidationSet(ca, full)
	if val.N != 50 || !reflect.DeepEqual(val, want) {
		t.Errorf("validation set of %d examples, want run a's %d", val.N, want.N)
	}
	if _, err := ValidationSet([]string{a, other}, full); err == nil || !strings.Contains(err.Error(), "not the same validation set") || !strings.Contains(err.Error(), other) {
		t.Errorf("another split: %v", err)
	}
	if _, err := ValidationSet([]string{none}, full); err == nil || !strings.Contains(err.Error(), "no validation examples") {
		t.Errorf("no validation: %v", err)
	}
	if _, _, _, err := LoadRunsData(nil, ""); err == nil {
		t.Error("no runs: no error")
	}
}
