package runspec

import (
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestSamplerNames checks a run accepts exactly the names of SamplerNames
// (ptsghmc and the minibatch kernels of the registry; not hmc), and that
// the error for another name lists them.
func TestSamplerNames(t *testing.T) {
	want := "ptsghmc sgnht sghmc sgld sgd"
	if got := strings.Join(SamplerNames(sampler.Kernels), " "); got != want {
		t.Errorf("SamplerNames(sampler.Kernels) = %s, want %s", got, want)
	}
	c := DefaultConfig()
	for _, name := range SamplerNames(sampler.Kernels) {
		c.Sampler = name
		if err := c.Validate(DefaultSetup()); err != nil {
			t.Errorf("sampler %s: %v", name, err)
		}
		if SamplerDoc(name) == "" {
			t.Errorf("sampler %s has no description", name)
		}
	}
	for _, name := range []string{"hmc", "magic", ""} {
		c.Sampler = name
		err := c.Validate(DefaultSetup())
		if err == nil || !strings.Contains(err.Error(), strings.Join(SamplerNames(sampler.Kernels), ", ")) {
			t.Errorf("sampler %q: error %v, want one listing %v", name, err, SamplerNames(sampler.Kernels))
		}
	}
	for name, opt := range map[string]bool{"sgd": true, "sgnht": false, "ptsghmc": false, "sgld": false} {
		if c.Sampler = name; c.Optimiser(sampler.Kernels) != opt {
			t.Errorf("sampler %s: optimiser %v, want %v", name, !opt, opt)
		}
	}
}
