package blasimpl

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/gemm"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The arithmetic modes.
const (
	// Pinned: products by package gemm, the same bits on every machine.
	Pinned = "pinned"
	// Native: the native BLAS library (OpenBLAS with cgo, gonum's pure Go
	// otherwise) with the kernel it picks for the CPU and its threads.
	Native = "native"
)

// Arithmetic describes what the process's matrix products compute with.
type Arithmetic struct {
	Mode    string // Pinned or Native
	Library string // "ptsghmc gemm", "openblas 0.3.21", "gonum"
	Kernel  string // the kernel in use: avx512, avx2, go; OpenBLAS's core name
	Threads int    // threads (pinned: goroutines) one product may use
	Go      string // Go version, GOARCH and GOAMD64 of the binary
}

// ID is the part of the arithmetic that decides the bits of a result: the
// pinned arithmetic's version (whatever kernel and threads run it), or the
// native library with its kernel and thread count.
func (a Arithmetic) ID() string {
	if a.Mode == Pinned {
		return gemm.Version
	}
	return fmt.Sprintf("native %s %s x%d", a.Library, a.Kernel, a.Threads)
}

// String describes the arithmetic in one line.
func (a Arithmetic) String() string {
	return fmt.Sprintf("%s (%s, kernel %s, %d threads; %s)", a.ID(), a.Library, a.Kernel, a.Threads, a.Go)
}

var (
	mu   sync.Mutex
	mode = Pinned
)

func init() { install(pinned{}) }

func install(impl G.BLAS) {
	blas64.Use(impl)
	blas32.Use(impl)
	G.Use(impl)
	tensor.Use(impl)
}

// Use makes the process's matrix products use mode (Pinned or Native).
// Evaluators take the products when they are built: call it before. Asked
// for the mode in use it changes nothing: gonum's, Gorgonia's and tensor's
// BLAS are package variables read without a lock, so a run built on one
// goroutine does not write them while another's evaluators read them.
func Use(m string) error {
	mu.Lock()
	defer mu.Unlock()
	if m == mode {
		return nil
	}
	switch m {
	case Pinned:
		install(pinned{})
	case Native:
		install(native())
	default:
		return fmt.Errorf("unknown arithmetic %q (want %s or %s)", m, Pinned, Native)
	}
	mode = m
	return nil
}

// Current returns the process's arithmetic.
func Current() Arithmetic {
	mu.Lock()
	m := mode
	mu.Unlock()
	a := Arithmetic{Mode: m, Go: goBuild()}
	if m == Pinned {
		a.Library, a.Kernel, a.Threads = "ptsghmc gemm", gemm.Kernel(), gemm.Workers()
		return a
	}
	a.Library, a.Kernel, a.Threads = nativeLibrary(), nativeKernel(), nativeThreads()
	return a
}

// SetThreads sets how many threads (goroutines, for the pinned products)
// one matrix product may use, in both arithmetics.
func SetThreads(n int) {
	gemm.SetWorkers(n)
	setNativeThreads(n)
}

// Threads returns how many threads one matrix product of the current
// arithmetic may use.
func Threads() int { return Current().Threads }

func goBuild() string {
	s := runtime.Version() + " " + runtime.GOARCH
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			if kv.Key == "GOAMD64" {
				s += " " + kv.Value
			}
		}
	}
	return s
}

// NativeBLAS returns the native library, its kernel and its threads.
func NativeBLAS() (library, kernel string, threads int) {
	return nativeLibrary(), nativeKernel(), nativeThreads()
}
