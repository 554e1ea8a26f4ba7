package train_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// ExampleOpenChain runs chain 2 of a 3-chain run alone, as one task of an
// array job would, and lists the run's chains with RunStatus: chain 2 is
// finished, the others (run by other tasks) have not started.
func ExampleOpenChain() {
	data, _ := datasets.SyntheticImages(300, 16, 3, rand.New(rand.NewPCG(1, 2)))
	dir, _ := os.MkdirTemp("", "ptsghmc-example")
	defer os.RemoveAll(dir)

	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation, cfg.Batch = "16-8-3", 50, 32
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Chains = 100, 50, 10, 3
	run := filepath.Join(dir, "run")
	ch, err := train.OpenChain(run, cfg, 2, runspec.DefaultSetup().WithTrain(data)) // the same call resumes it after a requeue
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := ch.Train(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}
	ch.Close()

	status, err := rundir.RunStatus(run)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range status {
		fmt.Printf("chain %d: %s, step %d of %d, %d samples\n", s.Chain, s.State, s.Steps, s.Target, s.Samples)
	}
	// Output:
	// chain 1: missing, step 0 of 100, 0 samples
	// chain 2: finished, step 100 of 100, 5 samples
	// chain 3: missing, step 0 of 100, 0 samples
}
