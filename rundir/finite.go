package rundir

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/nn"
)

// CheckFinite returns an error when theta, the sample of step read from the
// samples file path, holds a value that is not a finite number (NaN or an
// infinity): a chain that diverged before it. Its predictions would be NaN
// and so would every figure pooled with it, so a reader that predicts
// (eval, predict, serve) refuses it, naming the file, the step, how many
// values and the first one's learnable in layout.
func CheckFinite(path string, step int, theta []float64, layout nn.Layout) error {
	bad, first := 0, -1
	for i, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	where := fmt.Sprintf("parameter %d", first)
	for _, p := range layout {
		if first >= p.Offset && first < p.Offset+p.Size() {
			where = fmt.Sprintf("value %d of %s", first-p.Offset, p.Name)
			break
		}
	}
	n, detail := "1 value that is not a finite number", fmt.Sprintf("%s, is %v", where, theta[first])
	if bad > 1 {
		n, detail = fmt.Sprintf("%d values that are not finite numbers", bad), "the first, "+detail
	}
	return fmt.Errorf("%s: the sample of step %d holds %s (%s): the chain diverged before this step; score the samples before it (--to-step) or train again with a smaller step size", path, step, n, detail)
}
