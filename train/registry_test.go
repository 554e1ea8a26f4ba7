package train

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// optimiserKernel is a custom kernel that declares itself an optimiser.
type optimiserKernel struct{ sampler.SGD }

// optimiserParams are optimiserKernel's settings: none.
type optimiserParams struct{}

func (optimiserParams) Validate() error { return nil }

func (optimiserParams) Kernel(sampler.Rate, sampler.Tempering) sampler.Kernel {
	return optimiserKernel{}
}

func (optimiserKernel) Name() string { return "myopt" }

// TestSetupRegistries validates configs against the kernel and exchange
// registries of a Setup, each test with its own registry (sampler.Kernels
// and DefaultExchanges are left alone): names are looked up in the Setup's
// registries, not in the defaults.
func TestSetupRegistries(t *testing.T) {
	t.Parallel()
	mine := sampler.KernelInfo{Name: "mykernel", Sampler: true, Minibatch: true,
		Params: func() sampler.Params { return &sampler.SGLDParams{} }}
	myopt := sampler.KernelInfo{Name: "myopt", Sampler: false, Minibatch: true,
		Params: func() sampler.Params { return &optimiserParams{} }}
	rule := runspec.ExchangeRule{Name: "always", New: func(runspec.Config) (tempering.ExchangeTest, error) { return nil, nil }}
	defaults := runspec.DefaultSetup()
	withMine := runspec.DefaultSetup()
	withMine.Kernels, withMine.Exchanges = []sampler.KernelInfo{mine, myopt}, append(runspec.DefaultExchanges(), rule)
	cases := []struct {
		name string
		s    runspec.Setup
		set  func(*runspec.Config)
		want string // "" for valid
	}{
		{"defaults", defaults, func(*runspec.Config) {}, ""},
		{"a zero setup", runspec.Setup{}, func(*runspec.Config) {}, "start from runspec.DefaultSetup()"},
		{"custom kernel, default registry", defaults, func(c *runspec.Config) { c.Sampler = "mykernel" }, `sampler "mykernel": expected one of ptsghmc, sgnht`},
		{"custom kernel", withMine, func(c *runspec.Config) { c.Sampler = "mykernel" }, ""},
		{"replica kernel", withMine, func(c *runspec.Config) { c.ReplicaKernel = "mykernel" }, ""},
		{"sgnht is not in the setup's registry", withMine, func(*runspec.Config) {}, `replica_kernel "sgnht": expected a minibatch kernel of mykernel, myopt`},
		{"replica kernel, default registry", defaults, func(c *runspec.Config) { c.ReplicaKernel = "mykernel" }, `replica_kernel "mykernel"`},
		{"replica kernel of one chain", withMine, func(c *runspec.Config) { c.Sampler, c.ReplicaKernel = "mykernel", "mykernel" }, "needs sampler ptsghmc"},
		{"custom optimiser has no burn-in", withMine, func(c *runspec.Config) { c.Sampler, c.BurnIn, c.Temperature = "myopt", c.Steps, 0.5 }, "temperature does not apply"},
		{"custom rule, default registry", defaults, func(c *runspec.Config) { c.XTest = "always" }, `exchange_test "always": expected one of barker, resghmc`},
		{"custom rule", withMine, func(c *runspec.Config) { c.XTest, c.ReplicaKernel = "always", "mykernel" }, ""},
		{"empty rule is barker", defaults, func(c *runspec.Config) { c.XTest = "" }, ""},
	}
	for _, tc := range cases {
		c := smallConfig()
		tc.set(&c)
		err := c.Validate(tc.s)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	c := smallConfig()
	c.Sampler = "myopt"
	if !c.Optimiser(withMine.Kernels) || c.Optimiser(defaults.Kernels) {
		t.Error("myopt is an optimiser in the setup's registry and unknown in the default one")
	}
	if _, err := kernelFrom(c, withMine.Kernels, 100); err != nil {
		t.Errorf("kernel of the setup's registry: %v", err)
	}
	d := runspec.DefaultExchanges()
	d[0].Name = "changed"
	if runspec.DefaultExchanges()[0].Name != runspec.XTestBarker {
		t.Error("changing one DefaultExchanges slice changed the next")
	}
}

// TestCheckpointKernelState writes a checkpoint of a stateful kernel's
// rungs and restores it: each rung's kernel state comes back, and a
// kernel that keeps none refuses it.
func TestCheckpointKernelState(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	k := countKernel{}
	pt := &driver.Driver{Kernel: k, Schedule: driver.Fixed(k, 0.1, 1), PT: &tempering.PT{Temps: []float64{1, 2, 3}}}
	st, err := pt.Init([][]float64{{1, 2}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for j, s := range st.Rungs {
		s.Extra = uint8(10 + j)
	}
	batches := make([]datasets.Batches, 3)
	for j := range batches {
		batches[j] = datasets.Batches{N: 4, Size: 4, Order: []int{0, 1, 2, 3}}
	}
	cfg.Batch = 4
	c, err := checkpointOf(cfg, k, st, batches, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := restore(c, cfg, pt, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for j, s := range got.Rungs {
		if s.Extra != uint8(10+j) {
			t.Errorf("rung %d: kernel state %v, want %d", j+1, s.Extra, 10+j)
		}
	}
	pt.Kernel = sampler.SGLD{}
	if _, err := restore(c, cfg, pt, 2, 4); err == nil || !strings.Contains(err.Error(), "keeps no state") {
		t.Errorf("restore into a kernel without state: error %v", err)
	}
}

// countKernel is SGLD whose own state is one byte.
type countKernel struct{ sampler.SGLD }

func (countKernel) Init(s *sampler.State, _ *rand.Rand) { s.Extra = uint8(0) }
func (countKernel) MarshalExtra(s *sampler.State) ([]byte, error) {
	return []byte{s.Extra.(uint8)}, nil
}
func (countKernel) UnmarshalExtra(s *sampler.State, b []byte) error {
	if len(b) != 1 {
		return errors.ErrUnsupported
	}
	s.Extra = b[0]
	return nil
}
