package train

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestBLASThreadsScoped checks the BLAS threads a run computes with: one
// per call when its rungs or chains step in parallel, or its validation
// runs on parallel forward graphs, else the process's setting (0); that the
// run sets them only while it trains, restoring the process's setting; and
// that an ensemble's Add leaves the setting as it found it. It changes no
// setting itself (autodiff's TestWithBLASThreads does), and runs alone (no
// t.Parallel): it reads the process's setting while its runs train.
func TestBLASThreadsScoped(t *testing.T) {
	before := autodiff.BLASThreads()
	data := smallData(t)
	s := cnnSetup(data, "test-cnn-blas", 2)
	for _, c := range []struct {
		name    string
		mod     func(*runspec.Config)
		threads int  // while training (0: the process's setting)
		cores   bool // the case needs several cores
	}{
		{"PT rungs in parallel", func(c *runspec.Config) {}, 1, false},
		{"one sgnht chain", func(c *runspec.Config) { c.Sampler = "sgnht" }, 0, false},
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
		ch, err := NewChains(filepath.Join(t.TempDir(), "run"), cfg, true, s)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range ch.Runs {
			if r.threads != c.threads {
				t.Errorf("%s: chain %d computes with %d BLAS threads, want %d", c.name, i+1, r.threads, c.threads)
			}
		}
		want := c.threads
		if want == 0 {
			want = before
		}
		during := map[int]bool{}
		err = ch.Train(context.Background(), func(int, Status) { during[autodiff.BLASThreads()] = true })
		ch.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(during) != 1 || !during[want] {
			t.Errorf("%s: BLAS threads %v while training, want %d", c.name, during, want)
		}
		if after := autodiff.BLASThreads(); after != before {
			t.Errorf("%s: BLAS threads %d after training, want the %d set before", c.name, after, before)
		}
	}
	// The posterior-predictive ensemble of a graph model: one thread while
	// its parallel forward graphs run, the setting restored after.
	model, err := cnnConfig("test-cnn-blas").BuildModel(s.Models)
	if err != nil {
		t.Fatal(err)
	}
	ens, err := evaluate.NewModelEnsemble(model, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := ens.Add(make([]float64, model.NumParams())); err != nil {
		t.Fatal(err)
	}
	if after := autodiff.BLASThreads(); after != before {
		t.Errorf("ensemble: BLAS threads %d after Add, want the %d set before", after, before)
	}
}
