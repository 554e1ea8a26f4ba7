package sampler

import (
	"reflect"
	"strings"
	"testing"
)

// testSettings are run settings for every kernel of Kernels.
const testSettings = `{"friction": 0.01, "thermostat_inertia": 0.5, "leapfrog": 3, "lr": 0.02}`

// TestKernelsRegistry checks every entry of Kernels builds a kernel of its
// name, names are unique, and the optimiser (sgd) has no thermostat for
// health watching to misread.
func TestKernelsRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Kernels {
		p, err := e.NewParams([]byte(testSettings))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		k := p.Kernel(Rate{LR: 0.02, Examples: 100}, TemperNoise)
		if k.Name() != e.Name {
			t.Errorf("entry %q builds kernel %q", e.Name, k.Name())
		}
		if seen[e.Name] {
			t.Errorf("entry %q twice", e.Name)
		}
		seen[e.Name] = true
		if e.Doc == "" {
			t.Errorf("entry %q has no description", e.Name)
		}
		if _, ok := k.(Frictional); ok && !e.Sampler {
			t.Errorf("optimiser %q is Frictional", e.Name)
		}
		if got, ok := LookupKernel(e.Name); !ok || got.Name != e.Name {
			t.Errorf("LookupKernel(%q) = %q, %v", e.Name, got.Name, ok)
		}
	}
	if _, ok := LookupKernel("ptsghmc"); ok {
		t.Error("ptsghmc is PT over sgnht, not a kernel")
	}
}

// TestParamsSettings checks the settings each kernel's Params name, that
// decoding reads them and only them, and that Validate names the setting
// out of range.
func TestParamsSettings(t *testing.T) {
	for _, tc := range []struct {
		kernel   string
		settings []string
		bad      string // settings out of range
		badName  string // the setting Validate names
	}{
		{"sgnht", []string{"friction", "thermostat_inertia"}, `{"friction": 0.1, "thermostat_inertia": -1}`, "thermostat_inertia"},
		{"sgnht", []string{"friction", "thermostat_inertia"}, `{"friction": 1}`, "friction"},
		{"sghmc", []string{"friction"}, `{"friction": 0}`, "friction"},
		{"sgd", []string{"friction"}, `{"friction": -0.5}`, "friction"},
		{"sgld", []string{}, "", ""},
		{"hmc", []string{"leapfrog"}, `{"leapfrog": 0}`, "leapfrog"},
	} {
		e, ok := LookupKernel(tc.kernel)
		if !ok {
			t.Fatalf("no kernel %s", tc.kernel)
		}
		p, err := e.NewParams([]byte(testSettings))
		if err != nil {
			t.Fatal(err)
		}
		if got := Settings(p); !reflect.DeepEqual(got, tc.settings) {
			t.Errorf("%s: settings %v, want %v", tc.kernel, got, tc.settings)
		}
		if tc.bad == "" {
			continue
		}
		p, err = e.NewParams([]byte(tc.bad))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.badName) {
			t.Errorf("%s %s: Validate %v, want an error naming %s", tc.kernel, tc.bad, err, tc.badName)
		}
	}
	if _, err := Kernels[0].NewParams([]byte(`{"friction": "high"}`)); err == nil {
		t.Error("friction \"high\" decoded")
	}
}

// TestParamsKernel checks the kernels the settings build at a rate, field
// by field: the one mapping from a learning rate to a kernel's step.
func TestParamsKernel(t *testing.T) {
	r := Rate{LR: 0.02, Examples: 3000}
	h := r.Step(1)
	for _, tc := range []struct {
		p    Params
		want Kernel
	}{
		{SGNHTParams{Friction: 0.1, Inertia: 0.5}, SGNHT{StepSize: h, Diffusion: 0.1 / h, Inertia: 0.5, FrictionPerStep: 0.1, Tempering: TemperGradient}},
		{SGHMCParams{Friction: 0.1}, SGHMC{StepSize: h, Friction: 0.1 / h, FrictionPerStep: 0.1, Tempering: TemperGradient}},
		{SGDParams{Friction: 0.1}, SGD{StepSize: h, Friction: 0.1 / h, FrictionPerStep: 0.1}},
		{SGLDParams{}, SGLD{StepSize: 2 * 0.02 / 3000, Tempering: TemperGradient}},
		{HMCParams{Leapfrog: 4}, HMC{StepSize: h, Leapfrog: 4}},
	} {
		if got := tc.p.Kernel(r, TemperGradient); got != tc.want {
			t.Errorf("%T: %+v, want %+v", tc.p, got, tc.want)
		}
	}
}
