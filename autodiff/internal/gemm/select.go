package gemm

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

type kernels struct {
	s kernel[float32]
	d kernel[float64]
}

var current atomic.Pointer[kernels]

func init() {
	s, d, _ := kernelsFor(best())
	current.Store(&kernels{s, d})
}

func sKernel() kernel[float32] { return current.Load().s }
func dKernel() kernel[float64] { return current.Load().d }

// Kernels lists the kernels this build has, fastest first; Runs says which
// this CPU runs.
func Kernels() []string { return []string{"avx512", "avx2", "go"} }

// Runs reports whether this CPU runs kernel name.
func Runs(name string) bool {
	_, _, ok := kernelsFor(name)
	return ok
}

// UseKernel makes the products run on kernel name ("avx512", "avx2" or
// "go"), which changes their speed and not one bit of their results. It is
// for tests and benchmarks; the default is the fastest the CPU runs.
func UseKernel(name string) error {
	if !slices.Contains(Kernels(), name) {
		return fmt.Errorf("gemm: unknown kernel %q (have %s)", name, strings.Join(Kernels(), ", "))
	}
	s, d, ok := kernelsFor(name)
	if !ok {
		return fmt.Errorf("gemm: this CPU (or a build without assembly) cannot run the %s kernel", name)
	}
	current.Store(&kernels{s, d})
	return nil
}
