package runspec

import (
	"strings"
	"testing"
)

// TestSamplerNames checks a run accepts exactly the names of SamplerNames
// (ptsghmc and the minibatch kernels of the registry; not hmc), and that
// the error for another name lists them.
func TestSamplerNames(t *testing.T) {
	want := "ptsghmc sgnht sghmc sgld sgd"
	if got := strings.Join(SamplerNames(), " "); got != want {
		t.Errorf("SamplerNames() = %s, want %s", got, want)
	}
	c := DefaultConfig()
	for _, name := range SamplerNames() {
		c.Sampler = name
		if err := c.Validate(); err != nil {
			t.Errorf("sampler %s: %v", name, err)
		}
		if SamplerDoc(name) == "" {
			t.Errorf("sampler %s has no description", name)
		}
	}
	for _, name := range []string{"hmc", "magic", ""} {
		c.Sampler = name
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), strings.Join(SamplerNames(), ", ")) {
			t.Errorf("sampler %q: error %v, want one listing %v", name, err, SamplerNames())
		}
	}
	for name, opt := range map[string]bool{"sgd": true, "sgnht": false, "ptsghmc": false, "sgld": false} {
		if c.Sampler = name; c.Optimiser() != opt {
			t.Errorf("sampler %s: optimiser %v, want %v", name, !opt, opt)
		}
	}
}
