package plugins_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/examples/plugins"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/train"
)

// forgetful is PSGLD that loses its moment on resume (it restarts it at
// zero): what a checkpoint without the kernel's state would do.
type forgetful struct{ plugins.PSGLD }

func (k forgetful) UnmarshalExtra(s *sampler.State, b []byte) error {
	k.Init(s, nil)
	return nil
}

// TestResumeBitExact interrupts the plug-ins' PT run at several steps
// (before, at and after an exchange round and a log line), resumes it and
// checks its samples, metrics and final position equal those of the
// uninterrupted run bit for bit; a kernel that forgets its moment on resume
// does not, so the moment the checkpoint saves is what makes them equal.
func TestResumeBitExact(t *testing.T) {
	whole, err := trainPlugins(filepath.Join(t.TempDir(), "whole"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if whole.swaps == 0 || whole.last.Exact == 0 {
		t.Errorf("%d swaps accepted, %d exact exchanges: the exchange rule was not used", whole.swaps, whole.last.Exact)
	}
	if chance := math.Log(1.0 / 3); !(whole.last.ValLogLik > chance) {
		t.Errorf("validation log-likelihood %v, not above chance %v: the kernel does not learn", whole.last.ValLogLik, chance)
	}
	for _, stop := range []int{9, 10, 20, 55} {
		got, err := trainPlugins(filepath.Join(t.TempDir(), "resumed"), stop)
		if err != nil {
			t.Fatal(err)
		}
		if !same(got, whole) {
			t.Errorf("interrupted at step %d: the resumed run differs from the uninterrupted one", stop)
		}
	}
	d, err := data()
	if err != nil {
		t.Fatal(err)
	}
	s := plugins.Setup(d)
	for i, k := range s.Kernels {
		if k.Name == plugins.KernelName {
			s.Kernels[i].Params = func() sampler.Params { return &forgetfulParams{} }
		}
	}
	got, err := trainWith(filepath.Join(t.TempDir(), "forgetful"), 55, s)
	if err != nil {
		t.Fatal(err)
	}
	if same(got, whole) {
		t.Error("a kernel that forgets its moment on resume gives the same run: the test cannot see the kernel's state")
	}
}

// forgetfulParams build the forgetful PSGLD.
type forgetfulParams struct{ plugins.PSGLDParams }

func (p forgetfulParams) Kernel(r sampler.Rate, t sampler.Tempering) sampler.Kernel {
	return forgetful{p.PSGLDParams.Kernel(r, t).(plugins.PSGLD)}
}

// TestPluginsNeedTheirSetup checks that the plug-ins' names are unknown to
// a run without their Setup: creating one is refused, and so is resuming
// the plug-ins' run, each naming what it expected.
func TestPluginsNeedTheirSetup(t *testing.T) {
	d, err := data()
	if err != nil {
		t.Fatal(err)
	}
	base := runspec.DefaultSetup().WithTrain(d).WithModel(plugins.ModelName, plugins.TinyModel)
	cases := []struct {
		name string
		set  func(*runspec.Config)
		want string
	}{
		{"kernel", func(c *runspec.Config) { c.XTest = "barker" }, `replica_kernel "psgld"`},
		{"exchange rule", func(c *runspec.Config) { c.ReplicaKernel = "" }, `exchange_test "metropolis-exact": expected one of barker, resghmc`},
		{"replica kernel of one chain", func(c *runspec.Config) { c.Sampler = "sgld" }, "replica_kernel \"psgld\" needs sampler ptsghmc"},
	}
	for _, c := range cases {
		cfg := config()
		c.set(&cfg)
		_, err := train.NewChains(filepath.Join(t.TempDir(), "run"), cfg, false, base)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := trainPlugins(dir, 30); err != nil {
		t.Fatal(err)
	}
	_, err = train.ResumeChains(dir, 0, base)
	if !errors.Is(err, rundir.ErrCheckpoint) || !strings.Contains(err.Error(), "psgld") {
		t.Errorf("resume without the plug-ins: error %v, want an unusable checkpoint naming psgld", err)
	}
}
