package export_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/export"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// Example_exportNames lists the named arrays of an MLP's flat parameter
// vector (its learnables), as NPZ names them.
func Example_exportNames() {
	for _, l := range (nn.Spec{Sizes: []int{784, 100, 10}, PriorPrecision: []float64{1}}).Layout() {
		fmt.Println(l.Name, l.Shape, l.Offset)
	}
	// Output:
	// W0 [784 100] 0
	// b0 [100] 78400
	// W1 [100 10] 78500
	// b1 [10] 79500
}

// ExampleNPZ trains two small chains and exports their samples with
// the per-example log-likelihoods of held-out data, then reads the archive's
// shapes back.
func ExampleNPZ() {
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := datasets.SyntheticImages(300, 16, 3, rng)
	test, _ := datasets.SyntheticImages(50, 16, 3, rng)
	dir, _ := os.MkdirTemp("", "ptsghmc-export")
	defer os.RemoveAll(dir)
	if err := trainTwoChains(filepath.Join(dir, "run"), data); err != nil {
		fmt.Println(err)
		return
	}

	out := filepath.Join(dir, "posterior.npz")
	if _, err := export.NPZ(out, []string{filepath.Join(dir, "run")}, test); err != nil {
		fmt.Println(err)
		return
	}
	r, err := npz.Open(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for _, k := range r.Keys() {
		fmt.Println(k, r.Header(k).Descr.Shape)
	}
	// Output:
	// W0.npy [10 16 8]
	// b0.npy [10 8]
	// W1.npy [10 8 3]
	// b1.npy [10 3]
	// step.npy [10]
	// chain.npy [10]
	// chain_dirs.npy [2]
	// log_likelihood.npy [2 5 50]
	// log_likelihood_step.npy [2 5]
}

// ExampleNPZWith exports the samples two chains took from step 150 to
// step 190 (a longer burn-in chosen after the run, and an earlier end),
// and prints each sample's chain and step.
func ExampleNPZWith() {
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := datasets.SyntheticImages(300, 16, 3, rng)
	dir, _ := os.MkdirTemp("", "ptsghmc-export")
	defer os.RemoveAll(dir)
	if err := trainTwoChains(filepath.Join(dir, "run"), data); err != nil {
		fmt.Println(err)
		return
	}

	out := filepath.Join(dir, "window.npz")
	sum, err := export.NPZWith(out, []string{filepath.Join(dir, "run")}, nil, export.NPZOptions{Window: rundir.Window{From: 150, To: 190}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("draws per chain", sum.Draws)
	r, err := npz.Open(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	var chain, step []int64
	r.Read(export.Chain+".npy", &chain)
	r.Read(export.Step+".npy", &step)
	fmt.Println("chain", chain)
	fmt.Println("step ", step)
	// Output:
	// draws per chain [2 2]
	// chain [0 0 1 1]
	// step  [160 180 160 180]
}

// trainTwoChains trains two chains of a 16-8-3 network on data into dir:
// 200 steps, burn-in 100, a sample every 20 steps (at steps 120 to 200).
func trainTwoChains(dir string, data *datasets.Dataset) error {
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation, cfg.Chains = "16-8-3", 0, 2
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch = 200, 100, 20, 32
	run, err := train.NewChains(dir, cfg, true, runspec.DefaultSetup().WithTrain(data))
	if err != nil {
		return err
	}
	if err := run.Train(context.Background(), nil); err != nil {
		run.Close()
		return err
	}
	return run.Close()
}
