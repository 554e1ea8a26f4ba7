package train_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// ExampleNewChains_setup runs two chains of a model from a registry of its
// own (runspec.DefaultSetup's registries with it added; the process-wide
// nn.Models is left alone): the model is built once and shared by the
// chains. While the run is open, a second writer of its directory is
// refused.
func ExampleNewChains_setup() {
	data, _ := datasets.SyntheticImages(300, 16, 3, rand.New(rand.NewPCG(1, 1)))
	builds := 0
	setup := runspec.DefaultSetup().WithTrain(data).WithModel("tiny", func(p nn.PriorConfig) (nn.Model, error) {
		builds++
		spec := nn.Spec{Sizes: []int{16, 8, 3}, Activation: nn.ReLU, Likelihood: nn.Categorical,
			PriorPrecision: []float64{p.Precision * 16, p.Precision * 8}}
		return spec.Model()
	})
	dir, _ := os.MkdirTemp("", "ptsghmc-example")
	defer os.RemoveAll(dir)

	cfg := runspec.DefaultConfig()
	cfg.Model, cfg.Arch, cfg.Sampler, cfg.Chains = "tiny", "", "sgnht", 2
	cfg.Validation, cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch = 50, 100, 50, 10, 32
	run, err := train.NewChains(filepath.Join(dir, "run"), cfg, false, setup)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer run.Close()
	_, err = train.ResumeChains(filepath.Join(dir, "run"), 0, setup)
	fmt.Println("second writer refused:", errors.Is(err, rundir.ErrLocked))
	if err := run.Train(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("model builds:", builds, "chains:", len(run.Runs), "samples per chain:", run.Runs[0].LastMetrics().Samples)
	// Output:
	// second writer refused: true
	// model builds: 1 chains: 2 samples per chain: 5
}
