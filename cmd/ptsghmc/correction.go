package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/ptsghmc/ptsghmc/tempering"
)

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
	if !(*step > 0) {
		return fmt.Errorf("--step must be positive")
	}
	c, err := tempering.NewCorrection(*sigma, tempering.CorrectionOptions{Method: tempering.CorrectionMethod(*method), Gamma: *gamma, Terms: *terms})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, "x,cdf")
	lo, hi := c.X[0], c.X[len(c.X)-1]
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
