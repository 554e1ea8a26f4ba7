package train_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// Example trains a small Bayesian MLP on synthetic images with PT-SGHMC and
// evaluates the posterior-predictive ensemble on held-out examples.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	all, _ := datasets.SyntheticImages(2400, 64, 10, rng)
	idx := make([]int, 2400)
	for i := range idx {
		idx[i] = i
	}
	data, test := all.Subset(idx[:1200]), all.Subset(idx[1200:])
	dir, _ := os.MkdirTemp("", "ptsghmc-example")
	defer os.RemoveAll(dir)

	cfg := runspec.DefaultConfig()
	cfg.Sampler, cfg.Arch, cfg.Validation = "ptsghmc", "64-32-10", 200
	cfg.Steps, cfg.BurnIn, cfg.Thin = 600, 300, 30
	cfg.Batch, cfg.Replicas, cfg.Exchange = 32, 3, 20
	run, err := train.New(filepath.Join(dir, "run"), cfg, true, runspec.DefaultSetup().WithTrain(data))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := run.Train(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}
	run.Close()

	rep, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{run.Dir}, "", test)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d samples, ensemble accuracy above 0.9: %v\n", rep.Ensemble.Samples, rep.Ensemble.Accuracy > 0.9)
	// Output:
	// 10 samples, ensemble accuracy above 0.9: true
}
