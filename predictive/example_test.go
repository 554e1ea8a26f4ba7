package predictive_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/predictive"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// ExampleLoad trains a small run, loads its posterior once and predicts
// two new images with their uncertainty, after fixing the abstention rule
// on held-out images at a rate of 10%; then loads only the samples taken
// from step 200 on (LoadWith's Options.Window, as eval --from-step 200).
func ExampleLoad() {
	rng := rand.New(rand.NewPCG(1, 2))
	all, _ := datasets.SyntheticImages(400, 16, 3, rng)
	idx := make([]int, 400)
	for i := range idx {
		idx[i] = i
	}
	data, heldOut := all.Subset(idx[:300]), all.Subset(idx[300:])
	dir, _ := os.MkdirTemp("", "ptsghmc-predictive")
	defer os.RemoveAll(dir)
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation = "16-8-3", 0
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.LR = 300, 100, 20, 32, 0.5
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

	post, err := predictive.Load(filepath.Join(dir, "run"))
	if err != nil {
		fmt.Println(err)
		return
	}
	rule, _, err := post.FixAbstention(heldOut, 0.1, "the held-out images")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d samples; %d of %d held-out images abstain\n", post.Samples(), rule.Abstained, rule.Images)
	preds, err := post.Predict([][]float32{heldOut.Row(0), heldOut.Row(1)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range preds {
		fmt.Printf("image %d: class %d (label %d), %d probabilities\n", i, p.Class, heldOut.Labels[i], len(p.Probabilities))
	}

	late, err := predictive.LoadWith(runspec.DefaultSetup(), predictive.Options{Window: rundir.Window{From: 200}}, filepath.Join(dir, "run"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d samples %s: steps %v\n", late.Samples(), late.Window.Phrase(), late.Steps)
	// Output:
	// 10 samples; 10 of 100 held-out images abstain
	// image 0: class 0 (label 0), 3 probabilities
	// image 1: class 1 (label 1), 3 probabilities
	// 6 samples taken at step 200 or later: steps [200 220 240 260 280 300]
}
