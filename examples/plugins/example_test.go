package plugins_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/examples/plugins"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// config is a small PT run of the plug-ins: three rungs of PSGLD with
// exact Metropolis swaps every 10 steps, on the tiny model.
func config() runspec.Config {
	cfg := runspec.DefaultConfig()
	cfg.Model, cfg.Arch = plugins.ModelName, ""
	cfg.Sampler, cfg.ReplicaKernel, cfg.XTest = runspec.PTSGHMC, plugins.KernelName, plugins.ExchangeName
	cfg.Replicas, cfg.TMax, cfg.Exchange = 3, 2, 10
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.Validation = 120, 40, 10, 32, 50
	cfg.CkptEvery, cfg.LogEvery = 1000, 20
	return cfg
}

// data is the run's training data: synthetic 16-feature images of 3
// classes.
func data() (*datasets.Dataset, error) {
	return datasets.SyntheticImages(250, 16, 3, rand.New(rand.NewPCG(1, 1)))
}

// outcome is what a run leaves: its samples and metrics files and the
// rung-1 position at the end.
type outcome struct {
	samples, metrics []byte
	theta            []float64
	swaps            int
	last             rundir.MetricsLine
}

// trainPlugins trains config() in dir with the plug-ins' Setup. With stop
// > 0 it interrupts the run after step stop, then resumes it from its
// checkpoint (a new process would do the same) and trains to the end.
func trainPlugins(dir string, stop int) (outcome, error) {
	d, err := data()
	if err != nil {
		return outcome{}, err
	}
	return trainWith(dir, stop, plugins.Setup(d))
}

// trainWith is trainPlugins with the setup s.
func trainWith(dir string, stop int, s runspec.Setup) (outcome, error) {
	run, err := train.NewChains(dir, config(), false, s)
	if err != nil {
		return outcome{}, err
	}
	if stop > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		err = run.Train(ctx, func(_ int, st train.Status) {
			if st.Step >= stop {
				cancel()
			}
		})
		cancel()
		run.Close()
		if !errors.Is(err, train.ErrInterrupted) {
			return outcome{}, fmt.Errorf("interrupt at %d: %v", stop, err)
		}
		if run, err = train.ResumeChains(dir, 0, s); err != nil {
			return outcome{}, err
		}
	}
	defer run.Close()
	if err := run.Train(context.Background(), nil); err != nil {
		return outcome{}, err
	}
	var o outcome
	r := run.Runs[0]
	o.theta = append([]float64(nil), r.State().Rungs[0].Theta...)
	for _, a := range r.State().Stats.Accepted {
		o.swaps += a
	}
	o.last = r.LastMetrics()
	if o.samples, err = os.ReadFile(filepath.Join(dir, rundir.SamplesFile)); err != nil {
		return o, err
	}
	o.metrics, err = os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	return o, err
}

// Example trains a PT run of a model, a kernel and an exchange rule that
// package train does not know, given to it in a runspec.Setup: the pSGLD
// kernel's adapted moment is saved in the checkpoint, so a run interrupted
// at step 50 and resumed ends where an uninterrupted one does, bit for bit.
func Example() {
	tmp, err := os.MkdirTemp("", "ptsghmc-plugins")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	whole, err := trainPlugins(filepath.Join(tmp, "whole"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	resumed, err := trainPlugins(filepath.Join(tmp, "resumed"), 50)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("samples kept:", whole.last.Samples, "swaps accepted:", whole.swaps > 0)
	fmt.Println("resumed run equals the uninterrupted one:", same(whole, resumed))
	// Output:
	// samples kept: 8 swaps accepted: true
	// resumed run equals the uninterrupted one: true
}

// same reports whether two outcomes are equal bit for bit.
func same(a, b outcome) bool {
	if string(a.samples) != string(b.samples) || string(a.metrics) != string(b.metrics) || len(a.theta) != len(b.theta) {
		return false
	}
	for i := range a.theta {
		if a.theta[i] != b.theta[i] {
			return false
		}
	}
	return true
}
