package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/experiments"
	"github.com/ptsghmc/ptsghmc/plots"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// parseList parses a comma-separated list with parse.
func parseList[T any](s, what string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", what, f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func runTemperingSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tempering-sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o experiments.SweepSettings
	fs.StringVar(&o.Target, "target", "gauss1d4", "the mixture in the first coordinates: gauss1d4 or gauss2d5; or tinybnn, the one-unit tanh network (--dims ignored)")
	dims := fs.String("dims", "10,100,1000,10000", "dimensions of the Gaussian block, comma-separated")
	seeds := fs.String("seeds", "1,2,3", "seeds, comma-separated")
	fs.IntVar(&o.Budget, "budget", 500000, "gradient evaluations per method and seed (PT: replicas x steps)")
	fs.IntVar(&o.Replicas, "replicas", 10, "PT rungs, and the number of independent chains")
	fs.Float64Var(&o.TMax, "tmax", 10, "PT's top temperature (the ends stay fixed; the interior is adapted)")
	fs.IntVar(&o.BurnIn, "burnin", 10000, "steps per replica discarded (PT tunes its ladder there)")
	fs.IntVar(&o.Thin, "thin", 5, "keep every this many steps")
	fs.IntVar(&o.Every, "exchange", 2, "steps between PT's exchange rounds")
	fs.Float64Var(&o.StepSize, "h", 0.2, "SGNHT step size")
	fs.Float64Var(&o.Diffusion, "diffusion", 1, "SGNHT diffusion A")
	fracs := fs.String("fractions", "0.25,0.5,1", "budget fractions at which the errors are recorded")
	jsonOut := fs.String("json", "", "write the sweep as JSON here (diagnose/tempering_sweep.json is the one the advice quotes)")
	plotPath := fs.String("plot", "", "write a PNG: each method's error against the block dimension, and PT's Lambda")
	from := fs.String("from", "", "run nothing: print the table (and --plot) of a sweep saved with --json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: ptsghmc tempering-sweep [--dims 10,100] [--seeds 1,2,3] [--budget N] [--json out.json] [--plot out.png]

Where PT earns its cost: the paper's mixture (noisy energies and gradients,
noise variance 0.25) in the first coordinates plus a d-dimensional standard
Gaussian block with the same gradient noise. For each d and seed, at the same
number of gradient evaluations: (a) PT-SGHMC, its ladder (fixed ends 1..tmax)
adapted during burn-in, from the lowest-weight mode as in the paper; (b) the
same adapted ladder with exchanges off, same start; (c) as many independent
SGNHT chains at T = 1 as PT has rungs, started uniformly over the modes' box,
samples pooled. Prints a markdown table of the largest mode-weight error
(median and range over seeds) with PT's measured barrier Lambda.

--target tinybnn replaces the mixture and block by a one-hidden-unit tanh
network on 20 points (experiments.TinyBNN: two modes of unequal mass that
no symmetry relates); the error is that of the posterior predictive mean
at x = -0.5, 0, 0.5 against quadrature, the independent chains start from
the prior, and PT and the ablation in the lighter mode.

flags:`)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from != "" {
		return printSavedSweep(stdout, *from, *plotPath)
	}
	ds, ss, err := sweepLists(*dims, *seeds, *fracs, &o)
	if err != nil {
		return err
	}
	return runSweep(stdout, stderr, o, ds, ss, "ptsghmc tempering-sweep "+strings.Join(args, " "), *jsonOut, *plotPath)
}

// sweepLists parses the lists of block dimensions, seeds and budget
// fractions (into o.Fractions) and validates o.
func sweepLists(dims, seeds, fracs string, o *experiments.SweepSettings) ([]int, []uint64, error) {
	ds, err := parseList(dims, "block dimension", strconv.Atoi)
	if err != nil {
		return nil, nil, err
	}
	ss, err := parseList(seeds, "seed", func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
	if err != nil {
		return nil, nil, err
	}
	if o.Fractions, err = parseList(fracs, "budget fraction", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
		return nil, nil, err
	}
	return ds, ss, o.Validate()
}

// runSweep runs the sweep o of block dimensions ds over seeds ss, prints
// its table and writes its JSON (jsonOut) and plot (plotPath) when given;
// command is the command line the record quotes.
func runSweep(stdout, stderr io.Writer, o experiments.SweepSettings, ds []int, ss []uint64, command, jsonOut, plotPath string) error {
	sw := &diagnose.PTSweep{Command: command, Target: o.Target, Budget: o.Budget,
		Replicas: o.Replicas, TMax: o.TMax, BurnIn: o.BurnIn, Fractions: o.Fractions}
	var bnn *experiments.TinyBNN
	var ref *experiments.BNNReference
	if o.Target == "tinybnn" {
		ds = []int{0}
		bnn = experiments.NewTinyBNN(0.03)
		var err error
		if ref, err = bnn.Reference(400); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "tinybnn reference (quadrature): predictive mean %.4f at x = %v, mass of v > 0 %.4f\n", ref.Predictive, bnn.Test, ref.MassPos)
	}
	for _, d := range ds {
		row, err := sweepRow(stderr, o, d, ss, bnn, ref)
		if err != nil {
			return err
		}
		sw.Rows = append(sw.Rows, row)
	}
	if err := sw.WriteTable(stdout); err != nil {
		return err
	}
	if jsonOut != "" {
		if err := writeJSONFile(jsonOut, sw); err != nil {
			return err
		}
	}
	if plotPath != "" {
		return plots.Sweep(plotPath, sw)
	}
	return nil
}

// printSavedSweep prints the table of the sweep saved (--json) at path,
// and its plot when plotPath is not empty.
func printSavedSweep(stdout io.Writer, path, plotPath string) error {
	sw, err := diagnose.ReadSweep(path)
	if err != nil {
		return err
	}
	if err := sw.WriteTable(stdout); err != nil {
		return err
	}
	if plotPath != "" {
		return plots.Sweep(plotPath, sw)
	}
	return nil
}

// sweepRow runs the sweep's row of block dimension d (experiments.SweepRow),
// each case reported on stderr; a diverged chain's error says what to
// change.
func sweepRow(stderr io.Writer, o experiments.SweepSettings, d int, ss []uint64, bnn *experiments.TinyBNN, ref *experiments.BNNReference) (diagnose.PTSweepRow, error) {
	last := len(o.Fractions) - 1
	row, err := experiments.SweepRow(o, d, ss, bnn, ref, func(c experiments.SweepCaseResult) {
		fmt.Fprintf(stderr, "d %d seed %d: Lambda %.3g (tuned %.3g), round trips %d; error PT %.3f, swaps off %.3f, independent %.3f\n",
			c.Dim, c.Seed, c.Lambda, c.LambdaTuned, c.RoundTrips, c.Errors["pt"][last], c.Errors["swaps-off"][last], c.Errors["independent"][last])
	})
	if errors.Is(err, sampler.ErrDiverged) {
		hint := "a smaller --h"
		if bnn != nil {
			hint = "make tempering-sweep runs tinybnn at --h 0.05"
		}
		return row, fmt.Errorf("%w (at --h %g; %s)", err, o.StepSize, hint)
	}
	return row, err
}

// writeJSONFile writes v as JSON (writeJSON) to the file at path.
func writeJSONFile(path string, v any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeJSON(f, v); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
