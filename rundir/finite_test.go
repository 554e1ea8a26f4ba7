package rundir

import (
	"math"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
)

func TestCheckFinite(t *testing.T) {
	layout := nn.Layout{{Name: "W1", Shape: []int{2, 3}}, {Name: "b1", Shape: []int{3}, Offset: 6}}
	theta := func(set map[int]float64) []float64 {
		th := []float64{1, -2, 3, 0, 5e300, -0.5, 7, 8, 9}
		for i, v := range set {
			th[i] = v
		}
		return th
	}
	cases := []struct {
		name  string
		theta []float64
		want  []string // empty: no error
	}{
		{"finite", theta(nil), nil},
		{"NaN in the bias", theta(map[int]float64{7: math.NaN()}), []string{"samples.bin", "step 40", "1 value that is not", "(value 1 of b1, is NaN)", "NaN", "--to-step"}},
		{"infinities, first in the weights", theta(map[int]float64{4: math.Inf(1), 8: math.Inf(-1)}), []string{"2 values that are not", "(the first, value 4 of W1, is +Inf)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckFinite("run/samples.bin", 40, c.theta, layout)
			if (err == nil) != (c.want == nil) {
				t.Fatalf("error %v, want one: %v", err, c.want != nil)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}
