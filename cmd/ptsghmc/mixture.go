package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ptsghmc/ptsghmc/experiments"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func runMixture(args []string, stdout, stderr io.Writer) error {
	var o experiments.MixtureSettings
	fs := flag.NewFlagSet("mixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Target, "target", "gauss1d4", "gauss1d4 or gauss2d5")
	fs.StringVar(&o.Sampler, "sampler", runspec.PTSGHMC, samplerHelp(experiments.MixtureSamplers()))
	fs.IntVar(&o.Steps, "steps", 2000000, "steps")
	fs.IntVar(&o.BurnIn, "burnin", 20000, "steps before the first kept sample")
	fs.IntVar(&o.Thin, "thin", 5, "keep every this many steps")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed")
	fs.Float64Var(&o.Kernel.StepSize, "h", 0.2, "step size (SGLD: eps = h^2/... see --sgld-eps)")
	fs.Float64Var(&o.Kernel.Diffusion, "diffusion", 1, "SGNHT diffusion A / SGHMC friction C")
	fs.IntVar(&o.Kernel.Leapfrog, "leapfrog", 10, "HMC leapfrog steps")
	fs.Float64Var(&o.Kernel.SGLDStep, "sgld-eps", 0.02, "SGLD step size eps")
	fs.IntVar(&o.Replicas, "replicas", 10, "PT rungs")
	fs.Float64Var(&o.TMax, "tmax", 10, "PT top temperature")
	fs.IntVar(&o.Every, "exchange", 2, "steps between PT exchange rounds")
	fs.StringVar(&o.Scheme, "scheme", "alternate", "alternate or first")
	fs.StringVar(&o.Correction, "correction", "nnls", "nnls or hermite")
	out := fs.String("out", "", "write the rung-1 samples here as CSV (one per line)")
	plotPath := fs.String("plot", "", "write a PNG: sample histogram (2-d: heat map) over the true density, and the trace")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc mixture --target gauss1d4|gauss2d5 --sampler S --steps N --seed X --out samples.csv [--plot p.png]\n\nThe paper's experiment: noisy U and grad U (noise variance 0.25, the mean of 16\nper-example terms), every chain started at the lowest-weight mode, PT ladder 1..10.\nPrints a JSON summary.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	r, err := experiments.RunMixture(o)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeCSV(*out, r.Samples); err != nil {
			return err
		}
	}
	if *plotPath != "" {
		if err := plotMixture(*plotPath, r.Mixture, r.Samples, r.Trace, o.Thin, r.Summary); err != nil {
			return err
		}
	}
	return writeJSON(stdout, r.Summary)
}

func writeCSV(path string, xs [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, x := range xs {
		s := make([]string, len(x))
		for i, v := range x {
			s[i] = strconv.FormatFloat(v, 'g', 8, 64)
		}
		fmt.Fprintln(w, strings.Join(s, ","))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

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

func plotMixture(path string, m *sampler.Mixture, xs [][]float64, trace []float64, thin int, sum experiments.MixtureSummary) error {
	left := plot.New()
	left.Title.Text = fmt.Sprintf("%s, %s: samples vs true density", sum.Target, sum.Sampler)
	if m.Dim() == 1 {
		vals := make(plotter.Values, len(xs))
		for i, x := range xs {
			vals[i] = x[0]
		}
		hist, err := plotter.NewHist(vals, 120)
		if err != nil {
			return err
		}
		hist.Normalize(1)
		left.Add(hist)
		dens := plotter.NewFunction(func(x float64) float64 { return m.Density([]float64{x}) })
		dens.Samples = 600
		dens.Width = vg.Points(1.5)
		left.Add(dens)
		left.X.Min, left.X.Max = -13, 13
		left.X.Label.Text = "theta"
	} else {
		g := grid2d{n: 80, lo: -10, step: 0.25}
		g.val = make([][]float64, g.n)
		for c := range g.val {
			g.val[c] = make([]float64, g.n)
		}
		for _, x := range xs {
			c, r := int((x[0]-g.lo)/g.step), int((x[1]-g.lo)/g.step)
			if c >= 0 && c < g.n && r >= 0 && r < g.n {
				g.val[c][r]++
			}
		}
		hm := plotter.NewHeatMap(g, palette.Heat(32, 1))
		left.Add(hm)
		// true density contours
		t := grid2d{n: 80, lo: -10, step: 0.25}
		t.val = make([][]float64, t.n)
		for c := range t.val {
			t.val[c] = make([]float64, t.n)
			for r := range t.val[c] {
				t.val[c][r] = m.Density([]float64{t.X(c), t.Y(r)})
			}
		}
		ct := plotter.NewContour(t, []float64{0.01, 0.05, 0.1}, palette.Rainbow(3, 0.6, 0.9, 1, 1, 1))
		left.Add(ct)
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
	return saveRow(path, left, right)
}
