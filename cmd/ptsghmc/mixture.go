package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// MixtureSummary is the JSON summary of a mixture experiment.
type MixtureSummary struct {
	Target      string    `json:"target"`
	Sampler     string    `json:"sampler"`
	Steps       int       `json:"steps"`
	Seed        uint64    `json:"seed"`
	Samples     int       `json:"samples"`
	ModeWeights []float64 `json:"mode_weights"` // fraction of samples nearest each component
	TrueWeights []float64 `json:"true_weights"`
	MaxAbsError float64   `json:"max_abs_error"`
	StepsPerSec float64   `json:"steps_per_sec"`
	SwapRate    []float64 `json:"swap_rate,omitempty"`
	RoundTrips  int       `json:"round_trips,omitempty"`
	MeanXi      []float64 `json:"mean_xi,omitempty"`
	MeanKinetic []float64 `json:"mean_kinetic,omitempty"`
	HMCAccept   float64   `json:"hmc_accept,omitempty"`
}

func runMixture(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "gauss1d4", "gauss1d4 or gauss2d5")
	samplerName := fs.String("sampler", runspec.PTSGHMC, samplerHelp(mixtureSamplers()))
	steps := fs.Int("steps", 2000000, "steps")
	burn := fs.Int("burnin", 20000, "steps before the first kept sample")
	thin := fs.Int("thin", 5, "keep every this many steps")
	seed := fs.Uint64("seed", 1, "random seed")
	h := fs.Float64("h", 0.2, "step size (SGLD: eps = h^2/... see --sgld-eps)")
	diff := fs.Float64("diffusion", 1, "SGNHT diffusion A / SGHMC friction C")
	leap := fs.Int("leapfrog", 10, "HMC leapfrog steps")
	sgldEps := fs.Float64("sgld-eps", 0.02, "SGLD step size eps")
	replicas := fs.Int("replicas", 10, "PT rungs")
	tmax := fs.Float64("tmax", 10, "PT top temperature")
	every := fs.Int("exchange", 2, "steps between PT exchange rounds")
	scheme := fs.String("scheme", "alternate", "alternate or first")
	corr := fs.String("correction", "nnls", "nnls or hermite")
	out := fs.String("out", "", "write the rung-1 samples here as CSV (one per line)")
	plotPath := fs.String("plot", "", "write a PNG: sample histogram (2-d: heat map) over the true density, and the trace")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc mixture --target gauss1d4|gauss2d5 --sampler S --steps N --seed X --out samples.csv [--plot p.png]\n\nThe paper's experiment: noisy U and grad U (noise variance 0.25, the mean of 16\nper-example terms), every chain started at the lowest-weight mode, PT ladder 1..10.\nPrints a JSON summary.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := sampler.Target(*target)
	if err != nil {
		return err
	}
	if *steps <= *burn || *thin <= 0 {
		return fmt.Errorf("need steps > burnin and thin > 0")
	}
	info, ok := runspec.KernelOf(*samplerName)
	if !ok || !info.Sampler {
		return fmt.Errorf("unknown sampler %q: expected one of %s", *samplerName, strings.Join(mixtureSamplers(), ", "))
	}
	k := info.New(sampler.KernelParams{StepSize: *h, Diffusion: *diff, SGLDStep: *sgldEps, Leapfrog: *leap})
	temps := []float64{1}
	if *samplerName == runspec.PTSGHMC {
		if temps, err = tempering.GeometricLadder(*replicas, *tmax); err != nil {
			return err
		}
	}
	pt := &tempering.PT{Kernel: k, Temps: temps, Workers: 1}
	if len(temps) > 1 {
		c, err := tempering.NewCorrection(1, tempering.CorrectionOptions{Method: tempering.CorrectionMethod(*corr)})
		if err != nil {
			return err
		}
		pt.Every, pt.Scheme = *every, tempering.Scheme(*scheme)
		pt.Exchange = &tempering.Exchanger{Batch: 16, Correction: c}
	}
	st, err := pt.Init([][]float64{m.Start()}, *seed)
	if err != nil {
		return err
	}
	pots := make([]sampler.Potential, len(temps))
	for i := range pots {
		pots[i] = m
	}
	var xs [][]float64
	var trace []float64
	start := time.Now()
	err = pt.Run(pots, m, st, *steps, func(s *tempering.PTState) error {
		if s.Steps%*thin == 0 {
			trace = append(trace, s.Rungs[0].Theta[0])
			if s.Steps > *burn {
				xs = append(xs, append([]float64(nil), s.Rungs[0].Theta...))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	el := time.Since(start).Seconds()
	sum := MixtureSummary{Target: *target, Sampler: *samplerName, Steps: *steps, Seed: *seed, Samples: len(xs),
		TrueWeights: m.Weights, StepsPerSec: float64(*steps) / el, ModeWeights: m.ModeWeights(xs)}
	for c := range m.Weights {
		sum.MaxAbsError = math.Max(sum.MaxAbsError, math.Abs(sum.ModeWeights[c]-m.Weights[c]))
	}
	if len(temps) > 1 {
		for p := range st.Stats.Proposed {
			sum.SwapRate = append(sum.SwapRate, st.Stats.AcceptanceRate(p))
		}
		sum.RoundTrips = st.Stats.RoundTrips
	}
	if _, ok := k.(sampler.HMC); ok {
		sum.HMCAccept = float64(st.Rungs[0].Accepted) / float64(max(1, st.Rungs[0].Proposed))
	} else if _, ok := k.(sampler.Frictional); ok { // a thermostat to report
		for j := range temps {
			sum.MeanXi = append(sum.MeanXi, st.Stats.MeanXi(j))
			sum.MeanKinetic = append(sum.MeanKinetic, st.Stats.MeanKinetic(j))
		}
	}
	if *out != "" {
		if err := writeCSV(*out, xs); err != nil {
			return err
		}
	}
	if *plotPath != "" {
		if err := plotMixture(*plotPath, m, xs, trace, *thin, sum); err != nil {
			return err
		}
	}
	return writeJSON(stdout, sum)
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

func plotMixture(path string, m *sampler.Mixture, xs [][]float64, trace []float64, thin int, sum MixtureSummary) error {
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
