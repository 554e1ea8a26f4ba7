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

	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation, cfg.Chains = "16-8-3", 0, 2
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch = 200, 100, 20, 32
	run, err := train.NewChains(filepath.Join(dir, "run"), cfg, true, runspec.DefaultSetup().WithTrain(data))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := run.Train(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}
	run.Close()

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
