package plots

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Sweep writes the tempering sweep's figure to path: each method's median
// error at the full budget against log10 of the block dimension, and PT's
// measured Lambda (after burn-in and tuned) beside it.
func Sweep(path string, sw *diagnose.PTSweep) error {
	left := plot.New()
	left.Title.Text = fmt.Sprintf("%s + Gaussian block, %d gradient evaluations", sw.Target, sw.Budget)
	left.X.Label.Text = "log10 block dimension"
	left.Y.Label.Text = "largest mode-weight error (median over seeds)"
	for i, m := range diagnose.PTSweepMethods {
		xy := make(plotter.XYs, len(sw.Rows))
		for j, r := range sw.Rows {
			xy[j] = plotter.XY{X: math.Log10(float64(r.Dim)), Y: diagnose.Median(r.Final(m))}
		}
		if err := AddLine(left, m, xy, i); err != nil {
			return err
		}
	}
	right := plot.New()
	right.Title.Text = fmt.Sprintf("PT's barrier, %d rungs T = 1..%g", sw.Replicas, sw.TMax)
	right.X.Label.Text = "log10 block dimension"
	right.Y.Label.Text = "Lambda"
	for i, which := range []string{"after burn-in", "tuned (desaturated)"} {
		xy := make(plotter.XYs, len(sw.Rows))
		for j, r := range sw.Rows {
			v := r.Lambda
			if i == 1 {
				v = r.LambdaTuned
			}
			xy[j] = plotter.XY{X: math.Log10(float64(r.Dim)), Y: diagnose.Median(v)}
		}
		if err := AddLine(right, which, xy, i); err != nil {
			return err
		}
	}
	return SaveRow(path, left, right)
}
