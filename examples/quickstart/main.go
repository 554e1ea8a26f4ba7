// Command quickstart trains a Bayesian MLP on Fashion-MNIST with the ptsghmc
// library, scores its posterior-predictive ensemble on the test images and
// exports the samples for NumPy. It is the program README.md shows.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/export"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

func main() {
	data := flag.String("data", datasets.DefaultDir, "directory of the IDX files")
	out := flag.String("out", "runs/quickstart", "run directory (overwritten)")
	arch := flag.String("arch", "784-100-10", "layer widths")
	steps := flag.Int("steps", 20000, "SGNHT steps")
	flag.Parse()
	if err := run(*data, *out, *arch, *steps); err != nil {
		log.Fatal(err)
	}
}

func run(data, out, arch string, steps int) error {
	cfg := runspec.DefaultConfig() // one SGNHT chain, lr 0.02, batch 128, Gaussian prior
	cfg.Data, cfg.Arch, cfg.Validation = data, arch, 0
	cfg.Steps, cfg.BurnIn, cfg.Thin = steps, steps/4, max(steps/100, 1)
	r, err := train.New(out, cfg, true, runspec.DefaultSetup()) // loads the training images; checkpoints as it goes
	if err != nil {
		return err
	}
	if err := r.Train(context.Background(), nil); err != nil { // nil: no progress callback
		r.Close()
		return err
	}
	if err := r.Close(); err != nil {
		return err
	}

	_, test, err := datasets.LoadMNIST(data)
	if err != nil {
		return err
	}
	rep, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{out}, "", test) // the ensemble of the kept samples
	if err != nil {
		return err
	}
	e := rep.Ensemble
	fmt.Printf("%d samples: accuracy %.4f, NLL %.4f, ECE %.4f, Brier %.4f\n", e.Samples, e.Accuracy, e.NLL, e.ECE, e.Brier)

	npz := filepath.Join(out, "posterior.npz")
	if _, err := export.NPZ(npz, []string{out}, test); err != nil {
		return err
	}
	fmt.Println("samples and test log-likelihoods written to", npz)
	return nil
}
