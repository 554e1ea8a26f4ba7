package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ptsghmc/ptsghmc/experiments"
	"github.com/ptsghmc/ptsghmc/plots"
	"github.com/ptsghmc/ptsghmc/runspec"
)

func runMixture(args []string, stdout, stderr io.Writer) error {
	var o experiments.MixtureSettings
	fs := flag.NewFlagSet("mixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Target, "target", "gauss1d4", "gauss1d4 or gauss2d5")
	fs.StringVar(&o.Sampler, "sampler", runspec.PTSGHMC, runspec.SamplerHelp(experiments.MixtureSamplers()))
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
		if err := plots.Mixture(*plotPath, r.Mixture, r.Samples, r.Trace, o.Thin, r.Summary); err != nil {
			return err
		}
	}
	return writeJSON(stdout, r.Summary)
}

// writeCSV writes the samples xs to the file at path
// (experiments.WriteSamplesCSV).
func writeCSV(path string, xs [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := experiments.WriteSamplesCSV(f, xs); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
