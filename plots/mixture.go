package plots

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/experiments"
	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// grid2d is a 2-d histogram as a plotter.GridXYZ.
type grid2d struct {
	n        int
	lo, step float64
	val      [][]float64
}

func (g grid2d) Dims() (int, int)   { return g.n, g.n }
func (g grid2d) Z(c, r int) float64 { return g.val[c][r] }
func (g grid2d) X(c int) float64    { return g.lo + (float64(c)+0.5)*g.step }
func (g grid2d) Y(r int) float64    { return g.lo + (float64(r)+0.5)*g.step }

// newGrid returns the 80 x 80 grid of cells 0.25 wide over [-10, 10]^2,
// each cell's value set by f (nil: 0).
func newGrid(f func(x, y float64) float64) grid2d {
	g := grid2d{n: 80, lo: -10, step: 0.25}
	g.val = make([][]float64, g.n)
	for c := range g.val {
		g.val[c] = make([]float64, g.n)
		if f != nil {
			for r := range g.val[c] {
				g.val[c][r] = f(g.X(c), g.Y(r))
			}
		}
	}
	return g
}

// Mixture writes the mixture experiment's figure to path: left, the
// samples xs of a 1-d target as a histogram over the true density (a 2-d
// target's as a heat map under the density's contours); right, the rung-1
// trace of the first coordinate, a value every thin steps.
func Mixture(path string, m *sampler.Mixture, xs [][]float64, trace []float64, thin int, sum experiments.MixtureSummary) error {
	left := plot.New()
	left.Title.Text = fmt.Sprintf("%s, %s: samples vs true density", sum.Target, sum.Sampler)
	if m.Dim() == 1 {
		if err := densityHistogram(left, m, xs); err != nil {
			return err
		}
	} else {
		g := newGrid(nil)
		for _, x := range xs {
			c, r := int((x[0]-g.lo)/g.step), int((x[1]-g.lo)/g.step)
			if c >= 0 && c < g.n && r >= 0 && r < g.n {
				g.val[c][r]++
			}
		}
		left.Add(plotter.NewHeatMap(g, palette.Heat(32, 1)))
		t := newGrid(func(x, y float64) float64 { return m.Density([]float64{x, y}) }) // true density contours
		left.Add(plotter.NewContour(t, []float64{0.01, 0.05, 0.1}, palette.Rainbow(3, 0.6, 0.9, 1, 1, 1)))
		left.X.Label.Text, left.Y.Label.Text = "theta 1", "theta 2"
	}
	right := plot.New()
	right.Title.Text = "rung-1 trace (first coordinate)"
	right.X.Label.Text = "step"
	pts := make(plotter.XYs, len(trace))
	for i, v := range trace {
		pts[i] = plotter.XY{X: float64((i + 1) * thin), Y: v}
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	right.Add(line)
	return SaveRow(path, left, right)
}

// densityHistogram adds to p the normalised histogram of the 1-d samples
// xs over m's density, on [-13, 13].
func densityHistogram(p *plot.Plot, m *sampler.Mixture, xs [][]float64) error {
	vals := make(plotter.Values, len(xs))
	for i, x := range xs {
		vals[i] = x[0]
	}
	hist, err := plotter.NewHist(vals, 120)
	if err != nil {
		return err
	}
	hist.Normalize(1)
	p.Add(hist)
	dens := plotter.NewFunction(func(x float64) float64 { return m.Density([]float64{x}) })
	dens.Samples = 600
	dens.Width = vg.Points(1.5)
	p.Add(dens)
	p.X.Min, p.X.Max = -13, 13
	p.X.Label.Text = "theta"
	return nil
}
