package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// maxCorrectionRows is the most rows correction prints: a --step finer
// than the table's span over it would print for ever, in effect.
const maxCorrectionRows = 1_000_000

func runCorrection(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("correction", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sigma := fs.Float64("sigma", 1, "standard deviation of the Gaussian noise the correction completes to a logistic")
	method := fs.String("method", "nnls", "construction: nnls (default, more accurate) or hermite (the paper's)")
	gamma := fs.Float64("gamma", 0.05, "hermite: kernel exp(-gamma^2 t^4)")
	terms := fs.Int("terms", 8, "hermite: series terms")
	step := fs.Float64("step", 0.01, "spacing of the printed x values")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptsghmc correction [--sigma S] [--method nnls|hermite]\n\nPrints the tabulated CDF of the correction variable C as x,cdf lines, and on\nstandard error the largest |P(N(0,S^2)+C <= x) - logistic(x)|.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if !(*step > 0) || math.IsInf(*step, 0) {
		return fmt.Errorf("correction: --step %g: expected a positive, finite spacing", *step)
	}
	c, err := tempering.NewCorrection(*sigma, tempering.CorrectionOptions{Method: tempering.CorrectionMethod(*method), Gamma: *gamma, Terms: *terms})
	if err != nil {
		return err
	}
	lo, hi := c.X[0], c.X[len(c.X)-1]
	if rows := (hi - lo) / *step; rows > maxCorrectionRows {
		return fmt.Errorf("correction: --step %g: expected at least %.3g, the table's span [%.4g, %.4g] in at most %d rows (this step makes %.3g)", *step, (hi-lo)/maxCorrectionRows, lo, hi, maxCorrectionRows, rows+1)
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, "x,cdf")
	for i := 0; ; i++ {
		x := lo + float64(i)**step
		if x > hi+1e-9 {
			break
		}
		fmt.Fprintf(w, "%.4f,%.8f\n", x, c.CDFAt(x))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "correction %s sigma=%g: largest CDF error of N(0,sigma^2)+C against the logistic: %.3g\n", c.Method, c.Sigma, c.MaxError())
	return nil
}
