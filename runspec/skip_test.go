package runspec

import (
	"math"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
)

// TestNullSpaceSkipRefusals checks Validate's refusals of the skip branch's
// setting: without a null-space prior's scale, on an MLP, and a keep
// outside (0, 1); and that a CNN with the scale and a keep in range is
// accepted.
func TestNullSpaceSkipRefusals(t *testing.T) {
	cnn := func(c *Config) { c.Model, c.Arch, c.NullSpaceScale = "lenet", "", 10 }
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want string // "" for accepted
	}{
		{"a CNN with a scale", func(c *Config) { cnn(c); c.NullSpaceSkip = 0.9999 }, ""},
		{"no branch", func(c *Config) { cnn(c) }, ""},
		{"without --null-space-prior", func(c *Config) { cnn(c); c.NullSpaceScale, c.NullSpaceSkip = 0, 0.9999 }, "null_space_skip needs null_space_scale"},
		{"on an MLP", func(c *Config) { c.NullSpaceScale, c.NullSpaceSkip = 10, 0.9999 }, "null_space_skip needs a CNN (--model lenet or cnn3)"},
		{"keep 1", func(c *Config) { cnn(c); c.NullSpaceSkip = 1 }, "null_space_skip must be in (0, 1)"},
		{"keep 1.5", func(c *Config) { cnn(c); c.NullSpaceSkip = 1.5 }, "null_space_skip must be in (0, 1)"},
		{"negative keep", func(c *Config) { cnn(c); c.NullSpaceSkip = -0.5 }, "null_space_skip must be in (0, 1)"},
		{"keep NaN", func(c *Config) { cnn(c); c.NullSpaceSkip = math.NaN() }, "null_space_skip must be in (0, 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate(DefaultSetup())
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestNullSpaceSkipModel checks that a config with the skip branch builds
// its ConvNet with the branch learnable (skip.W last, of the images'
// values by the first dense layer's width, under a dense layer's prior of
// that fan-in) and unmapped, as eval, predict, serve and export read it;
// that a config without it builds the model as before; and that a model
// that is not a ConvNet is refused.
func TestNullSpaceSkipModel(t *testing.T) {
	c := DefaultConfig()
	c.Model, c.Arch, c.NullSpaceScale, c.Prior, c.PriorFanIn = "lenet", "", 10, 2, true
	plain, err := c.BuildModel(DefaultSetup().Models)
	if err != nil {
		t.Fatal(err)
	}
	if plain.NumParams() != 857738 || plain.Conv.Skip {
		t.Fatalf("lenet without the branch: %d parameters, skip %v", plain.NumParams(), plain.Conv.Skip)
	}
	c.NullSpaceSkip = 0.9999
	if ModelKey(c) == ModelKey(DefaultConfig()) {
		t.Error("the model key does not tell the branch")
	}
	m, err := c.BuildModel(DefaultSetup().Models)
	if err != nil {
		t.Fatal(err)
	}
	last := m.Layout[len(m.Layout)-1]
	if !m.Conv.Skip || m.Conv.SkipBasis != nil || last.Name != nn.SkipWeights || last.Shape[0] != 784 || last.Shape[1] != 256 {
		t.Fatalf("lenet with the branch: skip %v, basis %d values, last learnable %s %v", m.Conv.Skip, len(m.Conv.SkipBasis), last.Name, last.Shape)
	}
	if m.NumParams() != 857738+784*256 || m.Layout.String() != plain.Layout.String()+",skip.W:784x256" {
		t.Fatalf("lenet with the branch: %d parameters, layout %s", m.NumParams(), m.Layout)
	}
	if want := (nn.PriorConfig{Precision: 2, FanIn: true}).Prior(784); last.Prior != want {
		t.Errorf("the branch's prior %+v, a dense layer's of fan-in 784 is %+v", last.Prior, want)
	}
	reg := ModelRegistry{"opaque": func(p nn.PriorConfig) (nn.Model, error) {
		m, err := nn.LeNet(p).Model("opaque")
		m.Conv = nil // as an ONNX network's: no ConvNet to rebuild
		return m, err
	}}
	c.Model = "opaque"
	if _, err := c.BuildModel(reg); err == nil || !strings.Contains(err.Error(), "is not a ConvNet") {
		t.Errorf("the branch on a model that is not a ConvNet: %v", err)
	}
}
