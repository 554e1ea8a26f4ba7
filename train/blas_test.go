package train

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestBLASThreadsScoped checks a run sets BLAS to one thread per call only
// while it trains, when its rungs or chains step in parallel, and restores
// the process's setting afterwards.
func TestBLASThreadsScoped(t *testing.T) {
	tinyCNN("test-cnn-blas", 2)
	defer delete(nn.Models, "test-cnn-blas")
	prev := autodiff.BLASThreads()
	defer autodiff.SetBLASThreads(prev)
	autodiff.SetBLASThreads(2)
	if autodiff.BLASThreads() != 2 {
		t.Skip("this build's BLAS has no thread setting")
	}
	for _, c := range []struct {
		name    string
		mod     func(*runspec.Config)
		threads int  // while training
		cores   bool // the case needs several cores
	}{
		{"PT rungs in parallel", func(c *runspec.Config) {}, 1, false},
		{"one sgnht chain", func(c *runspec.Config) { c.Sampler = "sgnht" }, 2, false},
		{"two chains in parallel", func(c *runspec.Config) { c.Sampler, c.Chains = "sgnht", 2 }, 1, false},
		{"one chain of a CNN, validated on parallel graphs", func(c *runspec.Config) {
			*c = cnnConfig("test-cnn-blas")
			c.Sampler, c.GradShards = "sgnht", 1
		}, 1, true},
	} {
		if c.cores && runtime.GOMAXPROCS(0) == 1 {
			continue // no parallel forward graphs on one core
		}
		cfg := smallConfig()
		cfg.Steps, cfg.BurnIn = 20, 10
		c.mod(&cfg)
		ch, err := NewChainsFromData(filepath.Join(t.TempDir(), "run"), cfg, smallData(t))
		if err != nil {
			t.Fatal(err)
		}
		during := map[int]bool{}
		err = ch.Train(context.Background(), func(int, Status) { during[autodiff.BLASThreads()] = true })
		ch.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(during) != 1 || !during[c.threads] {
			t.Errorf("%s: BLAS threads %v while training, want %d", c.name, during, c.threads)
		}
		if after := autodiff.BLASThreads(); after != 2 {
			t.Errorf("%s: BLAS threads %d after training, want the 2 set before", c.name, after)
		}
	}
	// The posterior-predictive ensemble of a graph model: one thread while
	// its parallel forward graphs run.
	model, err := cnnConfig("test-cnn-blas").BuildModel()
	if err != nil {
		t.Fatal(err)
	}
	ens, err := evaluate.NewModelEnsemble(model, smallData(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ens.Add(make([]float64, model.NumParams())); err != nil {
		t.Fatal(err)
	}
	if after := autodiff.BLASThreads(); after != 2 {
		t.Errorf("ensemble: BLAS threads %d after Add, want the 2 set before", after)
	}
}
