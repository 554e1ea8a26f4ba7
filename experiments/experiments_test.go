package experiments

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestMaxError checks the mode-weight error against hand-computed pools of
// counts on gauss1d4, whose true weights are those of sampler.Target.
func TestMaxError(t *testing.T) {
	b, err := sampler.NewMixtureBlock("gauss1d4", 2)
	if err != nil {
		t.Fatal(err)
	}
	w := b.Mix.Weights
	exact := make([]float64, len(w))
	for m := range w {
		exact[m] = 1000 * w[m]
	}
	oneMode := make([]float64, len(w))
	oneMode[0] = 10
	worst := 1 - w[0] // all in mode 0: mode 0 over by 1 - w0, the rest under by their weights
	for m := 1; m < len(w); m++ {
		worst = math.Max(worst, w[m])
	}
	for _, c := range []struct {
		name string
		cs   []ModeCounts
		want float64
	}{
		{"exact weights", []ModeCounts{{exact}}, 0},
		{"no samples", []ModeCounts{{make([]float64, len(w))}}, 1},
		{"all in mode 0", []ModeCounts{{oneMode}}, worst},
		{"pooled halves", []ModeCounts{{scale(exact, 0.5)}, {scale(exact, 0.5)}}, 0},
	} {
		if got := MaxError(b, 0, c.cs...); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: MaxError %v, want %v", c.name, got, c.want)
		}
	}
}

func scale(x []float64, a float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = a * v
	}
	return y
}

// TestSweepSettingsValidate checks that settings the sweep cannot run are
// refused with the setting to change named.
func TestSweepSettingsValidate(t *testing.T) {
	ok := SweepSettings{Target: "gauss1d4", Budget: 1000, Replicas: 4, BurnIn: 50, Thin: 1, Every: 2, Fractions: []float64{0.5, 1}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid settings: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*SweepSettings)
		want string
	}{
		{"two replicas", func(o *SweepSettings) { o.Replicas = 2 }, "at least 3"},
		{"zero thin", func(o *SweepSettings) { o.Thin = 0 }, "--thin 0"},
		{"no fractions", func(o *SweepSettings) { o.Fractions = nil }, "no budget fractions"},
		{"fraction in burn-in", func(o *SweepSettings) { o.Fractions = []float64{0.1, 1} }, "burn-in of 50"},
		{"decreasing", func(o *SweepSettings) { o.Fractions = []float64{1, 0.5} }, "must increase"},
	} {
		o := ok
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// ExampleSweepCase runs one small case of the tempering sweep: the
// four-mode 1-d mixture plus a 10-dimensional Gaussian block, 20,000
// gradient evaluations per method, and prints which methods it scored.
func ExampleSweepCase() {
	o := SweepSettings{Target: "gauss1d4", Budget: 20000, Replicas: 4, BurnIn: 500, Thin: 5, Every: 2,
		TMax: 10, StepSize: 0.2, Diffusion: 1, Fractions: []float64{0.5, 1}}
	if err := o.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	errs, st, err := SweepCase(o, 10, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range []string{"pt", "swaps-off", "independent"} {
		fmt.Printf("%s: %d checkpoints, final error in [0, 1]: %v\n", m, len(errs[m]), errs[m][1] >= 0 && errs[m][1] <= 1)
	}
	fmt.Println("rungs:", len(st.Temps))
	// Output:
	// pt: 2 checkpoints, final error in [0, 1]: true
	// swaps-off: 2 checkpoints, final error in [0, 1]: true
	// independent: 2 checkpoints, final error in [0, 1]: true
	// rungs: 4
}
