package sampler

import "testing"

// TestKernelsRegistry checks every entry of Kernels builds a kernel of its
// name, names are unique, and the optimiser (sgd) has no thermostat for
// health watching to misread.
func TestKernelsRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Kernels {
		k := e.New(KernelParams{StepSize: 0.1, Diffusion: 1, SGLDStep: 0.01, Leapfrog: 3})
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
