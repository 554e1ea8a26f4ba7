// Command ptsghmc trains Bayesian neural networks by parallel-tempered
// stochastic-gradient HMC and evaluates their posterior-predictive ensembles.
//
// Usage:
//
//	ptsghmc train      [flags]   sample a Bayesian MLP's posterior (checkpointed, resumable)
//	ptsghmc eval       [flags]   posterior-predictive accuracy, NLL, ECE, Brier of runs
//	ptsghmc slurm      [flags]   write a Slurm array job script: one task per chain
//	ptsghmc export     [flags]   samples and log-likelihoods as a NumPy .npz archive
//	ptsghmc predict    [flags]   class probabilities and uncertainties for new images
//	ptsghmc serve      [flags]   the same over HTTP (POST /v1/predict), load once
//	ptsghmc mixture    [flags]   the paper's Gaussian-mixture experiments
//	ptsghmc tempering-sweep [flags]  PT against independent chains at equal cost, by dimension
//	ptsghmc correction [flags]   print the Barker correction distribution's CDF
//	ptsghmc bench      [flags]   time full PT-SGHMC steps
//
// Run "ptsghmc COMMAND -h" for a command's flags.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
)

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"train", "sample a Bayesian model's posterior: --sampler " + strings.Join(runspec.SamplerNames(sampler.Kernels), ", ") + " (default " + runspec.DefaultConfig().Sampler + ")", runTrain},
		{"eval", "posterior-predictive figures of one or more runs", runEval},
		{"slurm", "write the Slurm array job script of a multi-chain run (one task per chain, preemption-safe)", runSlurm},
		{"export", "write runs' samples (and test log-likelihoods) as a NumPy .npz archive", runExport},
		{"predict", "class probabilities and uncertainties for an IDX image file", runPredict},
		{"serve", "answer the posterior's predictions with uncertainty over HTTP", runServe},
		{"mixture", "the paper's Gaussian-mixture experiments", runMixture},
		{"tempering-sweep", "where PT earns its cost: PT, swaps off and independent chains at equal gradient cost as the dimension grows", runTemperingSweep},
		{"correction", "print the Barker correction distribution's CDF as x,cdf lines", runCorrection},
		{"bench", "time full PT-SGHMC steps on MNIST-shaped synthetic data", runBench},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ptsghmc COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'ptsghmc COMMAND -h' for a command's flags.")
}

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

func mainCode(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			case errors.As(err, new(requeueError)):
				return exitRequeue // the reason is printed already
			}
			// a package named like the command already said its name
			fmt.Fprintf(stderr, "ptsghmc %s: %s\n", c.name, strings.TrimPrefix(err.Error(), c.name+": "))
			return 1
		}
	}
	fmt.Fprintf(stderr, "ptsghmc: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage reports bad flags; the flag package has already printed why.
var errUsage = errors.New("usage")

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	return nil
}

// writeJSON writes v to w as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
