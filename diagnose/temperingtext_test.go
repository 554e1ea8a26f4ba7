package diagnose

import (
	"strings"
	"testing"
)

// TestTuningVerdict checks the line train and eval print about an adaptive
// ladder's tuning: converged, or not with the burn-in it would need.
func TestTuningVerdict(t *testing.T) {
	for _, c := range []struct {
		name string
		tp   Tempering
		want []string
	}{
		{"converged", Tempering{TuningOver: true, TuningConverged: true, Predicted: []float64{0.56, 0.56}, Rejection: []float64{0.5, 0.6}},
			[]string{"converged by burn-in", "placed for 0.56/0.56", "measured since 0.50/0.60"}},
		{"not converged", Tempering{TuningOver: true, TuningRestarts: 3, NeededBurnIn: 8560, Predicted: []float64{0.56}, Rejection: []float64{0.9}},
			[]string{"did NOT converge", "3 rounds restarted", "--burnin 8560"}},
	} {
		got := c.tp.TuningVerdict()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
}
